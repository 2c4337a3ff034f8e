"""Pi (``pi``, ``@mariozechner/pi-coding-agent``): agentspool's extension armed per run
with ``-e``, the session file as the transcript (docs/providers/pi.md)."""

from agentspool.adapters.pi._adapter import Pi

__all__ = ["Pi"]
