"""Gemini CLI 0.61.0 adapter (``docs/providers/gemini-cli.md``), registered through the
``agentspool.adapters`` entry-point group as any adapter from outside would be. It also
reads the older releases' chat file, one JSON document (§7)."""

from agentspool.adapters.gemini_cli._adapter import GeminiCli

__all__ = ["GeminiCli"]
