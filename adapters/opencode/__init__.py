"""OpenCode 1.18.33 adapter (``docs/providers/opencode.md``), registered like an adapter
from another package: through the ``agentspool.adapters`` entry-point group."""

from agentspool.adapters.opencode._adapter import OpenCode

__all__ = ["OpenCode"]
