"""The chat-file fold on its own: what a line the parser does not know does (ADR 0014),
and the fold rules a capture holds only one case of."""

from __future__ import annotations

import json
from pathlib import Path

from agentspool.adapters.gemini_cli._chat import ChatParser

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "gemini-cli"


def _lines(scenario: str) -> list[bytes]:
    [path] = (CAPTURES / scenario / "chats").iterdir()
    return path.read_bytes().splitlines()


def _parse(lines: list[bytes], *, lifecycle: bool = True) -> ChatParser:
    parser = ChatParser(lifecycle=lifecycle)
    for raw in lines:
        parser.feed_line(raw)
    return parser


def test_unknown_types_fields_and_unreadable_lines_are_counted_never_fatal() -> None:
    lines = _lines("tui-approve")
    extra = [
        b"{not json",
        json.dumps({"id": "x1", "type": "hint", "content": "?"}).encode(),
        json.dumps({"$branch": "b"}).encode(),
    ]
    # A field the pinned CLI never wrote, on the first record of its shape.
    first_user = next(
        i for i, raw in enumerate(lines) if raw.startswith(b'{"id"') and b'"type":"user"' in raw
    )
    record = json.loads(lines[first_user])
    lines[first_user] = json.dumps({**record, "pinned": True}).encode()
    parser = _parse([*lines[:3], *extra, *lines[3:]])
    drift = parser.drift.snapshot(parser.corrupt)
    assert drift.unknown_types == {"hint": 1, "?": 1}
    assert drift.unknown_fields == ["user.pinned"]
    assert drift.corrupt == 1
    assert [m.text for m in parser.messages if m.role == "assistant" and m.kind == "text"] == [
        "The file was created."
    ]


def test_the_pinned_clis_files_hold_nothing_unknown() -> None:
    for chats in CAPTURES.glob("*/chats"):
        for path in chats.rglob("*.jsonl"):  # subagents' own files too
            parser = _parse(path.read_bytes().splitlines())
            drift = parser.drift.snapshot(parser.corrupt)
            assert not drift, f"{path}: {drift.describe()}"


def test_seq_never_moves_and_a_message_handed_out_is_replaced_not_changed() -> None:
    lines = _lines("tui-rewind")
    parser = ChatParser()
    seen: dict[str, tuple[int, str]] = {}
    handed = []
    for raw in lines:
        parser.feed_line(raw)
        for message in parser.messages:
            assert seen.setdefault(message.id, (message.seq, message.kind)) == (
                message.seq,
                message.kind,
            )
        handed.append(list(parser.messages))
    second = next(m for m in handed[-1] if m.text == "second prompt")
    assert second.visibility == "inactive"
    before = next(ms for ms in handed if any(m.text == "second prompt" for m in ms))
    assert next(m for m in before if m.text == "second prompt").visibility == "visible"


def test_rewind_to_an_unknown_id_drops_everything() -> None:
    lines = _lines("tui-rewind")
    cut = next(i for i, raw in enumerate(lines) if b"$rewindTo" in raw)
    parser = _parse([*lines[:cut], json.dumps({"$rewindTo": "not-a-message"}).encode()])
    assert {m.visibility for m in parser.messages} == {"hidden", "inactive"}


def test_live_the_file_adds_only_what_no_hook_shows() -> None:
    """With hooks the file neither opens nor ends a turn, except where nothing fires:
    the cancelled call and the "Request cancelled." record."""
    live = _parse(_lines("tui-approval-esc"), lifecycle=False)
    assert [(type(e).__name__, e.source) for e in live.events] == [
        ("SessionStarted", "transcript:metadata"),
        ("InputResolved", "transcript:toolCalls(cancelled)"),
        ("TurnStopped", "transcript:info(Request cancelled.)"),
    ]
    stopped = live.events[-1]
    assert (stopped.turn_id, stopped.outcome) == ("", "interrupted")  # type: ignore[union-attr]
    assert [(type(e).__name__) for e in _parse(_lines("tui-approve"), lifecycle=False).events] == [
        "SessionStarted"
    ]
