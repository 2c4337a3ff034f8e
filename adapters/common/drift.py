"""Counting schema drift: record types and fields a parser does not know (ADR 0014).

Cheap by construction, so a cold read of a long transcript pays nothing measurable: an
unknown record type is counted where the parser already fell through (it recognised
nothing), and fields are checked only on the *first* record of each shape — its top-level
keys, decoded as ``msgspec.Raw`` values (a skip), against the fields the parser knows for
that shape. A shape is a record type, or ``<type>:<kind>`` where a type has kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping

import msgspec

from agentspool.adapters.common.jsonl import split_lines
from agentspool.core.seam import SourceDrift

_decode_object = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError)


def object_keys(raw: bytes | memoryview | msgspec.Raw) -> dict[str, msgspec.Raw] | None:
    """A JSON object's members as raw values (``None`` if it is not an object)."""
    try:
        return _decode_object(raw)
    except _DECODE_ERRORS:
        return None


class DriftCounter:
    """One source's drift, accumulated in the order records are read.

    ``known`` maps each shape the parser reads to its known fields; a shape not in it is
    an unknown type, every record of it counted."""

    __slots__ = ("_fields", "_known", "_types", "checked", "corrupt")

    def __init__(self, known: Mapping[str, frozenset[str]]) -> None:
        self._known = known
        self._types: dict[str, int] = {}
        self._fields: set[str] = set()
        self.checked: set[str] = set()
        """Shapes whose first record was checked (the parser tests this before calling)."""
        self.corrupt = 0
        """Unreadable records, where the parser keeps no count of its own."""

    def see(
        self,
        shape: str,
        raw: bytes | memoryview,
        members: Callable[[bytes | memoryview], Iterable[str] | None] = object_keys,
    ) -> None:
        """A record of a shape not checked yet (the parser tests ``checked`` first): of a
        known shape, its members not known for it are drift (and the shape is checked
        from now on); of an unknown shape, it is counted, as every later one will be."""
        if shape not in self._known:
            self._types[shape] = self._types.get(shape, 0) + 1
            return
        self.check(shape, members(raw) or ())

    def check(self, shape: str, members: Iterable[str]) -> None:
        """The members of the first record of a known ``shape``; those not known for it
        are drift. The shape is checked from now on."""
        self.checked.add(shape)
        known = self._known.get(shape, frozenset())
        for name in members:
            if name not in known:
                self._fields.add(f"{shape}.{name}")

    def unknown_type(self, shape: str) -> None:
        self._types[shape] = self._types.get(shape, 0) + 1

    def reads(self, shape: str, read: Container[str], left: Container[str] = ()) -> bool:
        """Whether a record of ``shape`` is one the parser reads. One it neither reads nor
        knows to leave (``left``) is an unknown type, counted (``"?"``: it names none)."""
        if shape in read:
            return True
        if shape not in left:
            self.unknown_type(shape or "?")
        return False

    def unknown_field(self, path: str) -> None:
        self._fields.add(path)

    def snapshot(self, corrupt: int = 0) -> SourceDrift:
        """What was counted so far, plus the parser's own count of unreadable records."""
        corrupt += self.corrupt
        if not (self._types or self._fields or corrupt):
            return _NONE
        return SourceDrift(
            unknown_types=dict(self._types),
            unknown_fields=sorted(self._fields),
            corrupt=corrupt,
        )


_NONE = SourceDrift()


def check_first_lines(
    drift: DriftCounter,
    block: bytes | memoryview,
    shapes: Iterable[str],
    needle: Callable[[str], tuple[bytes, ...]],
    members: Callable[[bytes, str], Iterable[str] | None],
) -> None:
    """Check the fields of the first line of each shape in ``block``, a block a parser
    decoded in one call (a decoded line keeps no bytes). ``needle(shape)`` is bytes such
    a line holds, in each spelling the writers use, so only candidate lines are decoded;
    ``members(raw, shape)`` the line's members if it is of that shape, else ``None``.

    ``shapes`` come in the order the parser met them, so each is looked for from the
    line the one before was found on: one pass over the block, not one per shape (a
    rollout's first ``turn_aborted`` 170 KiB in made eleven shapes scan 780 KiB)."""
    data, end = _searchable(block)
    start = 0
    for shape in shapes:
        for wanted in needle(shape):
            found = _check_first(drift, data, shape, wanted, members, start=start, end_of_data=end)
            if found < 0 and start:
                found = _check_first(drift, data, shape, wanted, members, start=0, end_of_data=end)
            if found >= 0:
                start = found
                break
        else:
            # Not as expected in the bytes (another spelling): the slow way.
            for raw in split_lines(memoryview(data)[:end]):
                found_members = members(raw, shape)
                if found_members is not None:
                    drift.check(shape, found_members)
                    break


def _searchable(block: bytes | memoryview) -> tuple[bytes | bytearray, int]:
    """``block`` as something ``find`` runs on, and where its bytes end there. A follower
    hands a view of the start of its read buffer: that buffer itself, not a copy (a
    fresh megabyte copied at each cold read cost more than the checks)."""
    if isinstance(block, memoryview):
        base = block.obj
        if isinstance(base, bytes | bytearray) and base.startswith(block):
            return base, len(block)
        return block.tobytes(), len(block)
    return block, len(block)


def _check_first(
    drift: DriftCounter,
    data: bytes | bytearray,
    shape: str,
    wanted: bytes,
    members: Callable[[bytes, str], Iterable[str] | None],
    *,
    start: int,
    end_of_data: int,
) -> int:
    """Check the first line from ``start`` on of ``shape`` holding ``wanted``; where that
    line starts (``-1``: none)."""
    at = data.find(wanted, start, end_of_data)
    while at >= 0:
        line_start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at, end_of_data)
        end = end_of_data if end < 0 else end
        found = members(bytes(data[line_start:end]), shape)
        if found is not None:
            drift.check(shape, found)
            return line_start
        at = data.find(wanted, end, end_of_data)
    return -1
