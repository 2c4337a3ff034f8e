"""Codex 0.169.0 adapter (``docs/providers/codex.md``)."""

from agentspool.adapters.codex._adapter import Codex

__all__ = ["Codex"]
