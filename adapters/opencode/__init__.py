"""OpenCode 1.18.33 adapter (``docs/providers/opencode.md``), registered like an adapter
from another package: through the ``agentspool.adapters`` entry-point group."""

from typing import TYPE_CHECKING

from agentspool.adapters.opencode._adapter import OpenCode

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = OpenCode

__all__ = ["OpenCode"]
