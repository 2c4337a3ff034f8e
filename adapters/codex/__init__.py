"""Codex 0.169.0 adapter (``docs/providers/codex.md``)."""

from typing import TYPE_CHECKING

from agentspool.adapters.registry import exported_on_use

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.adapters.codex._adapter import Codex
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = Codex

__all__ = ["Codex"]


# The class is imported on first use, not with the package (ADR 0062).
__getattr__ = exported_on_use(__name__, "Codex")
