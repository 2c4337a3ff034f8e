"""Kimi Code 2.1.0 adapter (``docs/providers/kimi-code.md``)."""

from agentspool.adapters.kimi_code._adapter import KimiCode

__all__ = ["KimiCode"]
