"""OpenCode 1.18.33 adapter (``docs/providers/opencode.md``), registered like an adapter
from another package: through the ``agentspool.adapters`` entry-point group."""

from typing import TYPE_CHECKING

from agentspool.adapters.registry import exported_on_use

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.adapters.opencode._adapter import OpenCode
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = OpenCode

__all__ = ["OpenCode"]


# The class is imported on first use, not with the package (ADR 0062).
__getattr__ = exported_on_use(__name__, "OpenCode")
