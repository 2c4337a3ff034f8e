"""A rollout line's shape and fields, for the drift check of each shape's first line
(ADR 0014; ``common/drift.check_first_lines`` finds the line).

A shape is the line's ``type``, or ``type:<payload type>`` where payloads have kinds
(``KINDED``); its members are the envelope's keys and ``payload.<key>`` for the
payload's. Most first lines hold only fields known for their shape, so each known shape
has a validating view too (``_fits``): one decode that succeeds only on a line of that
shape whose every field is known, the values skipped. Only a line it refuses is taken
apart key by key (``shape_and_members``), which costs several decodes and a list.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from agentspool.adapters.codex._records import DECODE_ERRORS
from agentspool.adapters.codex._schema import ROLLOUT_FIELDS
from agentspool.adapters.common.drift import object_keys

KINDED = frozenset({"response_item", "event_msg", "retained_context"})


@functools.cache
def shape_needle(shape: str) -> tuple[bytes, ...]:
    """Bytes every line of ``shape`` holds. A rollout written with a space after each
    colon (the real-world corpus holds some) is found by the second spelling, not by
    decoding every line."""
    name = shape.rpartition(":")[2].encode()
    return b'"type":"%s"' % name, b'"type": "%s"' % name


def shape_and_members(raw: bytes | memoryview) -> tuple[str, list[str]] | None:
    """A line's shape and its members (``None``: not an object with a ``type``)."""
    envelope = object_keys(raw)
    if envelope is None or "type" not in envelope:
        return None
    try:
        kind = msgspec.json.decode(envelope["type"], type=str)
    except DECODE_ERRORS:
        return None
    names = list(envelope)
    payload = object_keys(envelope["payload"]) if "payload" in envelope else None
    if payload is not None:
        names += [f"payload.{key}" for key in payload]
        if kind in KINDED and "type" in payload:
            try:
                kind += ":" + msgspec.json.decode(payload["type"], type=str)
            except DECODE_ERRORS:
                return None
    return kind, names


def shape_members(raw: bytes, shape: str) -> tuple[str, ...] | list[str] | None:
    """The line's members if it is of ``shape`` (``()`` when every one is known for
    it: nothing to report), else ``None``."""
    fits = _fits(shape)
    if fits is not None:
        try:
            fits(raw)
        except DECODE_ERRORS:
            pass  # another shape, or a field not known: looked at key by key
        else:
            return ()
    found = shape_and_members(raw)
    return found[1] if found is not None and found[0] == shape else None


_SKIPPED = msgspec.Raw(b"null")


def _view(
    name: str,
    skipped: list[str],
    more: tuple[str, Any] | tuple[str, Any, Any] | None = None,
    kind: str | None = None,
) -> type:
    """A view holding ``skipped`` (each value skipped), ``more``, and ``type`` equal to
    ``kind`` if one is given (a required field: a struct's own tag may be left out),
    refusing any other key. Field names are JSON's (``rename``), whatever they spell."""
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = [
        (f"f{i}", msgspec.Raw, _SKIPPED) for i in range(len(skipped))
    ]
    if more:
        fields.append(more)
    if kind:
        fields.append(("type", Literal[kind]))
    return msgspec.defstruct(
        name,
        fields,
        rename={f"f{i}": field for i, field in enumerate(skipped)},
        forbid_unknown_fields=True,
        kw_only=True,
        gc=False,
    )


@functools.cache
def _fits(shape: str) -> Callable[[bytes], object] | None:
    """The decode that succeeds only on a line of ``shape`` whose members are all known
    for it: its ``type`` (and its payload's, for a kinded shape) required to be the
    shape's. ``None`` for a shape not known, or one for which ``type`` or ``payload``
    is no known field (the view could not tell what key by key tells). Made at the
    shape's first check."""
    known = ROLLOUT_FIELDS.get(shape)
    if known is None:
        return None
    kind, _, payload_kind = shape.partition(":")
    inner = sorted(name.removeprefix("payload.") for name in known if name.startswith("payload."))
    outer = sorted(name for name in known if "." not in name)
    if not {"type", "payload"} <= set(outer) or (payload_kind and "type" not in inner):
        return None
    outer = [name for name in outer if name not in ("type", "payload")]
    if payload_kind:  # the payload must be there, of that kind
        inner.remove("type")
        payload = _view("Payload", inner, kind=payload_kind)
        envelope = _view("Envelope", outer, ("payload", payload), kind=kind)
    else:
        payload = _view("Payload", inner)
        envelope = _view("Envelope", outer, ("payload", payload | None, None), kind=kind)
    return msgspec.json.Decoder(envelope).decode
