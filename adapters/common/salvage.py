"""Identifying fields from a hook payload the spool cut to head + tail (ADR 0001).

A cut payload is not valid JSON. The fields adapters need are short top-level strings
that agent CLIs write before (ids, tool name) or after (``tool_use_id``) the one huge
value, so they survive in the head or the tail; this finds them there.
"""

from __future__ import annotations

import re
from typing import Generic, TypeVar, get_type_hints

import msgspec

from agentspool.spool.read import SpoolRecord

View = TypeVar("View", bound=msgspec.Struct)

_FIELD = re.compile(rb'"([A-Za-z_]+)":\s*"((?:[^"\\]|\\.)*)"')


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


class HookDecoder(Generic[View]):
    """Spool record → a provider's hook-payload view; ``None`` if nothing is readable.

    A whole payload is decoded through the view. A cut one (ADR 0001) is salvaged for
    the view's string fields — the short identifying values adapters need.
    """

    def __init__(self, view: type[View]) -> None:
        self._view = view
        self._decode = msgspec.json.Decoder(view).decode
        hints = get_type_hints(view)
        # The names the payload spells (a camelCase view's ``sessionId``), as convert reads them.
        self._keys = frozenset(
            spelled
            for name, spelled in zip(
                view.__struct_fields__, view.__struct_encode_fields__, strict=True
            )
            if hints[name] in (str, str | None)
        )

    def __call__(self, record: SpoolRecord) -> View | None:
        if record.truncated:
            fields = salvage(record.payload, record.head_bytes, self._keys)
            return msgspec.convert(fields, self._view) if fields else None
        try:
            return self._decode(record.payload)
        except (msgspec.DecodeError, UnicodeDecodeError):
            return None
