"""Codex 0.169.0 adapter (``research/codex-0.169.0.md``)."""

from agentspool.adapters.codex._adapter import Codex

__all__ = ["Codex"]
