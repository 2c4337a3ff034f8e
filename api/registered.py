"""The providers registered: built-in and installed. A module of its own, holding the
registry and nothing else, because every command line asks for them — a parser's
choices, ``--help`` — and ``api.py`` beside it costs a reader (the reducer, replay,
the ledger; ~15 ms) that a command listing names never runs (ADR 0058).

A module of the public API (``agentspool``); the facade re-exports ``providers``.
"""

from __future__ import annotations

from agentspool.adapters import registry

__all__ = ["providers"]


def providers() -> list[str]:
    """The names of every registered provider adapter (built-in and installed)."""
    return registry.names()
