"""Qwen Code 0.24.4 adapter (``docs/providers/qwen-code.md``)."""

from typing import TYPE_CHECKING

from agentspool.adapters.registry import exported_on_use

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.adapters.qwen_code._adapter import QwenCode
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = QwenCode

__all__ = ["QwenCode"]


# The class is imported on first use, not with the package (ADR 0062).
__getattr__ = exported_on_use(__name__, "QwenCode")
