"""Pi (``pi``, ``@mariozechner/pi-coding-agent``): agentspool's extension armed per run
with ``-e``, the session file as the transcript (docs/providers/pi.md)."""

from typing import TYPE_CHECKING

from agentspool.adapters.registry import exported_on_use

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.adapters.pi._adapter import Pi
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = Pi

__all__ = ["Pi"]


# The class is imported on first use, not with the package (ADR 0062).
__getattr__ = exported_on_use(__name__, "Pi")
