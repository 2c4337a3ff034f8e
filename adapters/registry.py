"""Adapters by name: the built-in table, plus any installed package's adapters.

An adapter outside this package registers through the entry-point group
``agentspool.adapters``: the entry point's name is the provider name, its value
``module:attribute`` names the adapter class (instantiated with no arguments)::

    [project.entry-points."agentspool.adapters"]
    my-agent = "my_agent_adapter:MyAgent"

It then appears in ``providers()``, ``agentspool --help`` and ``setup``'s choices, and it
proves itself with the shipped suite (``agentspool.adapters.testing.AdapterConformance``).

Built-ins never pay for the entry-point scan (``importlib.metadata`` costs ~36 ms): it
runs only to list every name, or for a name that is not built in — once per process (a
watcher asks for every name each second; an adapter installed meanwhile is seen by the
next command). A built-in name cannot be taken over by an installed package.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from agentspool.errors import UnknownProviderError

if TYPE_CHECKING:
    from agentspool.core.seam import Adapter

ENTRY_POINT_GROUP = "agentspool.adapters"


def _claude_code() -> Adapter:
    from agentspool.adapters.claude_code import ClaudeCode

    return ClaudeCode()


def _codex() -> Adapter:
    from agentspool.adapters.codex import Codex

    return Codex()


# Typed: mypy checks each built-in adapter class against the ``Adapter`` Protocol.
BUILTIN: dict[str, Callable[[], Adapter]] = {
    "claude-code": _claude_code,
    "codex": _codex,
}
_loaded: dict[str, Adapter] = {}


@cache
def _installed() -> dict[str, Callable[[], type[Adapter]]]:
    """Adapter classes other packages registered, not yet imported (built-ins excluded)."""
    from importlib.metadata import entry_points

    return {
        entry.name: entry.load
        for entry in entry_points(group=ENTRY_POINT_GROUP)
        if entry.name not in BUILTIN
    }


def builtin_names() -> list[str]:
    return sorted(BUILTIN)


def names() -> list[str]:
    """Every provider name: built-in and installed."""
    return sorted({*BUILTIN, *_installed()})


def load(name: str) -> Adapter:
    """The adapter registered as ``name`` (one instance per process)."""
    adapter = _loaded.get(name)
    if adapter is None:
        factory = BUILTIN.get(name)
        if factory is None:
            installed = _installed().get(name)
            if installed is None:
                raise UnknownProviderError(name, names())
            factory = installed()
        adapter = _loaded[name] = factory()
    return adapter
