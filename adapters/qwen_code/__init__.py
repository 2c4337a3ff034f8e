"""Qwen Code 0.24.4 adapter (``docs/providers/qwen-code.md``)."""

from agentspool.adapters.qwen_code._adapter import QwenCode

__all__ = ["QwenCode"]
