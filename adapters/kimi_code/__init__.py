"""Kimi Code 2.1.0 adapter (``docs/providers/kimi-code.md``)."""

from typing import TYPE_CHECKING

from agentspool.adapters.kimi_code._adapter import KimiCode

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = KimiCode

__all__ = ["KimiCode"]
