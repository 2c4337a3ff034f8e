"""Codex 0.169.0 adapter (``docs/providers/codex.md``)."""

from typing import TYPE_CHECKING

from agentspool.adapters.codex._adapter import Codex

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = Codex

__all__ = ["Codex"]
