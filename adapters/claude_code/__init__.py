"""Claude Code 2.1.328 adapter (``docs/providers/claude-code.md``)."""

from agentspool.adapters.claude_code._adapter import ClaudeCode

__all__ = ["ClaudeCode"]
