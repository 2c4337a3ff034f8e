"""Adapters by name, imported on first use (no entry-point scan: ``importlib.metadata``
alone costs ~36 ms). Registering a name here enrolls the adapter in the Tier-1 suite."""

from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import TYPE_CHECKING

from agentspool.errors import UnknownProviderError

if TYPE_CHECKING:
    from agentspool.adapters.seam import Adapter

_KNOWN = {
    "claude-code": "agentspool.adapters.claude_code:ClaudeCode",
    "codex": "agentspool.adapters.codex:Codex",
}
known = MappingProxyType(_KNOWN)
_loaded: dict[str, Adapter] = {}


def names() -> list[str]:
    return sorted(_KNOWN)


def load(name: str) -> Adapter:
    adapter = _loaded.get(name)
    if adapter is None:
        target = _KNOWN.get(name)
        if target is None:
            raise UnknownProviderError(name, names())
        module, _, attr = target.partition(":")
        adapter = getattr(importlib.import_module(module), attr)()
        _loaded[name] = adapter
    return adapter
