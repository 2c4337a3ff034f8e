"""Claude Code 2.1.328 adapter (``docs/providers/claude-code.md``)."""

from typing import TYPE_CHECKING

from agentspool.adapters.claude_code._adapter import ClaudeCode

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = ClaudeCode

__all__ = ["ClaudeCode"]
