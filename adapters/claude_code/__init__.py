"""Claude Code 2.1.328 adapter (``docs/providers/claude-code.md``)."""

from typing import TYPE_CHECKING

from agentspool.adapters.registry import exported_on_use

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.adapters.claude_code._adapter import ClaudeCode
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = ClaudeCode

__all__ = ["ClaudeCode"]


# The class is imported on first use, not with the package (ADR 0062).
__getattr__ = exported_on_use(__name__, "ClaudeCode")
