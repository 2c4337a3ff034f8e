"""Kimi Code 2.1.0 adapter (``docs/providers/kimi-code.md``)."""

from typing import TYPE_CHECKING

from agentspool.adapters.registry import exported_on_use

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.adapters.kimi_code._adapter import KimiCode
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = KimiCode

__all__ = ["KimiCode"]


# The class is imported on first use, not with the package (ADR 0062).
__getattr__ = exported_on_use(__name__, "KimiCode")
