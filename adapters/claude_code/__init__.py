"""Claude Code 2.1.328 adapter (``research/claude-code-2.1.328.md``)."""

from agentspool.adapters.claude_code._adapter import ClaudeCode

__all__ = ["ClaudeCode"]
