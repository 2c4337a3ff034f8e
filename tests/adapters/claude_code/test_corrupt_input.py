"""Damaged transcripts give a correct state or TranscriptGoneError, never a traceback."""

import os
import shutil
from pathlib import Path

import pytest
from replay import claude_transcripts

from agentspool.adapters.claude_code import ClaudeCode
from agentspool.errors import TranscriptGoneError


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """A real transcript (one approved Bash call, then the final answer)."""
    path = tmp_path / "session.jsonl"
    shutil.copy(claude_transcripts("tui-permission-approve")[0], path)
    return path


def _kinds(chat: object) -> list[str]:
    return [m.kind for m in chat.messages]  # type: ignore[attr-defined]


def test_torn_last_line_is_left_for_the_next_read(transcript: Path) -> None:
    whole = ClaudeCode().read_chat("r", "", str(transcript))
    data = transcript.read_bytes()
    # Cut inside the final assistant record: the reader must not see it yet.
    cut = next(
        i
        for i in range(len(data) - 2, 0, -1)
        if data[i : i + 1] == b"\n" and b'"type":"assistant"' in data[i:]
    )
    transcript.write_bytes(data[: cut + 40])
    adapter = ClaudeCode()
    torn = adapter.read_chat("r", "", str(transcript))
    assert torn.messages == whole.messages[: len(torn.messages)]
    assert len(torn.messages) < len(whole.messages)
    transcript.write_bytes(data)
    healed = adapter.read_chat("r", "", str(transcript))
    assert [(m.seq, m.id) for m in healed.messages] == [(m.seq, m.id) for m in whole.messages]


def test_invalid_utf8_line_is_skipped_and_counted(transcript: Path) -> None:
    lines = transcript.read_bytes().splitlines(keepends=True)
    lines.insert(3, b'{"type":"user","message":{"role":"user","content":"\xff\xfe bad"}}\n')
    transcript.write_bytes(b"".join(lines))
    chat = ClaudeCode().read_chat("r", "", str(transcript))
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    assert "tool_call" in _kinds(chat) and "tool_result" in _kinds(chat)


def test_a_50mb_single_line_is_read_not_fatal(transcript: Path) -> None:
    big = (
        b'{"type":"user","uuid":"u-big","promptId":"p-big","sessionId":"s",'
        b'"timestamp":"2026-11-29T00:00:00.000Z","message":{"role":"user","content":"'
        + b"x" * (50 << 20)
        + b'"}}\n'
    )
    with transcript.open("ab") as fh:
        fh.write(big)
    chat = ClaudeCode().read_chat("r", "", str(transcript))
    assert chat.messages[-1].id == "u-big"
    assert len(chat.messages[-1].text) == 50 << 20


def test_garbage_lines_do_not_break_the_read(transcript: Path) -> None:
    with transcript.open("ab") as fh:
        fh.write(b'not json at all\n{"type": 42}\n[1,2,3]\n\n')
    chat = ClaudeCode().read_chat("r", "", str(transcript))
    assert (chat.state, chat.activity) == ("needs_input", "idle")


def test_file_replaced_between_reads_is_read_afresh(transcript: Path, tmp_path: Path) -> None:
    adapter = ClaudeCode()
    first = adapter.read_chat("r", "", str(transcript))
    other = tmp_path / "other.jsonl"
    shutil.copy(claude_transcripts("print-text")[0], other)
    os.replace(other, transcript)  # same path, new inode, different conversation
    second = adapter.read_chat("r", "", str(transcript))
    assert second.transcript_id != first.transcript_id
    assert [m.seq for m in second.messages] == list(range(1, len(second.messages) + 1))
    assert second.messages == ClaudeCode().read_chat("r", "", str(transcript)).messages


def test_file_deleted_between_reads_raises_transcript_gone(transcript: Path) -> None:
    adapter = ClaudeCode()
    adapter.read_chat("r", "", str(transcript))
    transcript.unlink()
    with pytest.raises(TranscriptGoneError):
        adapter.read_chat("r", "", str(transcript))
