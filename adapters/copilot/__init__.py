"""GitHub Copilot CLI (``copilot``): hooks armed per run through ``--plugin-dir``, the
session's ``events.jsonl`` as the transcript (docs/providers/copilot.md)."""

from typing import TYPE_CHECKING

from agentspool.adapters.registry import exported_on_use

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.adapters.copilot._adapter import Copilot
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = Copilot

__all__ = ["Copilot"]


# The class is imported on first use, not with the package (ADR 0062).
__getattr__ = exported_on_use(__name__, "Copilot")
