"""GitHub Copilot CLI (``copilot``): hooks armed per run through ``--plugin-dir``, the
session's ``events.jsonl`` as the transcript (docs/providers/copilot.md)."""

from agentspool.adapters.copilot._adapter import Copilot

__all__ = ["Copilot"]
