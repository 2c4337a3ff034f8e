"""Qwen Code 0.24.4 adapter (``docs/providers/qwen-code.md``)."""

from typing import TYPE_CHECKING

from agentspool.adapters.qwen_code._adapter import QwenCode

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = QwenCode

__all__ = ["QwenCode"]
