"""Token counts as a CLI writes them, a JSON object of numbers, read into ``Usage``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentspool.core.seam import Usage


def count_at(raw: Mapping[str, Any], key: str) -> int:
    """The count under ``key``; 0 when it is missing or not a whole number."""
    value = raw.get(key)
    return value if isinstance(value, int) else 0


def folded_usage(
    raw: Mapping[str, Any], *, uncached: str, output: str, cache_read: str, cache_write: str
) -> Usage:
    """Usage from counts whose input leaves out the cache reads and writes (Pi, Kimi
    Code): both folded into ``input_tokens``, as every adapter reports it."""
    read, written = count_at(raw, cache_read), count_at(raw, cache_write)
    return Usage(
        input_tokens=count_at(raw, uncached) + read + written,
        output_tokens=count_at(raw, output),
        cached_input_tokens=read,
        cache_write_tokens=written,
    )
