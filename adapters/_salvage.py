"""Identifying fields from a hook payload the spool cut to head + tail (ADR 0001).

A cut payload is not valid JSON. The fields adapters need are short top-level strings
that agent CLIs write before (ids, tool name) or after (``tool_use_id``) the one huge
value, so they survive in the head or the tail; this finds them there.
"""

from __future__ import annotations

import re

import msgspec

_FIELD = re.compile(rb'"([a-z_]+)":\s*"((?:[^"\\]|\\.)*)"')


def salvage(payload: bytes, head_bytes: int, keys: frozenset[str]) -> dict[str, str]:
    """Top-level-looking ``"key": "string"`` pairs: first in the head, else last in the tail."""
    found: dict[str, str] = {}
    head, tail = payload[:head_bytes], payload[head_bytes:]
    for part, first in ((head, True), (tail, False)):
        for match in _FIELD.finditer(part):
            key = match.group(1).decode()
            if key not in keys or (first and key in found):
                continue
            try:
                found[key] = msgspec.json.decode(b'"' + match.group(2) + b'"', type=str)
            except msgspec.DecodeError:
                continue
    return found
