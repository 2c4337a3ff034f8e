"""The drift check of a shape's first line (ADR 0014, 0056): the one validating decode
that passes a line whose every field is known must say exactly what reading the line
key by key says — no field missed, no line taken for another shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentspool.adapters.codex._schema import ROLLOUT_FIELDS
from agentspool.adapters.codex._shapes import KINDED, shape_and_members, shape_members


def _line(shape: str, **extra: Any) -> dict[str, Any]:
    """A line of ``shape`` holding every field known for it (each ``null``)."""
    kind, _, payload_kind = shape.partition(":")
    known = ROLLOUT_FIELDS[shape]
    payload: dict[str, Any] = {
        name.removeprefix("payload."): None for name in known if name.startswith("payload.")
    }
    if payload_kind:
        payload["type"] = payload_kind
    line: dict[str, Any] = {name: None for name in known if "." not in name}
    return {**line, "type": kind, "payload": payload, **extra}


def _raw(line: dict[str, Any]) -> bytes:
    return json.dumps(line).encode()


@pytest.mark.parametrize("shape", sorted(ROLLOUT_FIELDS))
def test_a_line_of_known_fields_reports_none(shape: str) -> None:
    raw = _raw(_line(shape))
    assert shape_members(raw, shape) == ()
    found = shape_and_members(raw)
    assert found is not None and found[0] == shape
    assert set(found[1]) <= ROLLOUT_FIELDS[shape]


@pytest.mark.parametrize("shape", sorted(ROLLOUT_FIELDS))
def test_a_field_not_known_is_reported_wherever_it_is(shape: str) -> None:
    in_payload = _line(shape)
    in_payload["payload"]["field_of_a_later_release"] = 1
    members = shape_members(_raw(in_payload), shape)
    assert members is not None and "payload.field_of_a_later_release" in members
    on_envelope = _line(shape, envelope_field_of_a_later_release=2)
    members = shape_members(_raw(on_envelope), shape)
    assert members is not None and "envelope_field_of_a_later_release" in members


@pytest.mark.parametrize("shape", sorted(ROLLOUT_FIELDS))
def test_a_line_of_another_shape_is_not_taken_for_it(shape: str) -> None:
    kind = shape.partition(":")[0]
    assert shape_members(_raw(_line(shape, type="another_type")), shape) is None
    untyped = _line(shape)
    del untyped["type"]
    assert shape_members(_raw(untyped), shape) is None
    if kind in KINDED:
        other = _line(shape)
        other["payload"]["type"] = "another_kind"
        assert shape_members(_raw(other), shape) is None
        del other["payload"]["type"]
        assert shape_members(_raw(other), shape) is None
        assert shape_members(_raw({**_line(shape), "payload": None}), shape) is None
