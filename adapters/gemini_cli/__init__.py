"""Gemini CLI 0.61.0 adapter (``docs/providers/gemini-cli.md``), registered through the
``agentspool.adapters`` entry-point group as any adapter from outside would be. It also
reads the older releases' chat file, one JSON document (§7)."""

from typing import TYPE_CHECKING

from agentspool.adapters.registry import exported_on_use

if TYPE_CHECKING:  # mypy checks the class against the whole seam here (registry.BUILTIN)
    from agentspool.adapters.gemini_cli._adapter import GeminiCli
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = GeminiCli

__all__ = ["GeminiCli"]


# The class is imported on first use, not with the package (ADR 0062).
__getattr__ = exported_on_use(__name__, "GeminiCli")
