"""Reading the spool back: whole records from a cursor, torn or corrupt ones skipped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from agentspool.spool import write
from agentspool.spool.read import SpoolReader, parse_records


def _frame(event: str, payload: bytes) -> bytes:
    return write.frame(event, payload, len(payload), -1, 0, 1234)


def _append(run_dir: Path, data: bytes) -> None:
    fd = os.open(run_dir / write.EVENTS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        assert os.write(fd, data) == len(data)
    finally:
        os.close(fd)


def test_cursor_returns_only_new_records(tmp_path):
    reader = SpoolReader(str(tmp_path))
    assert reader.read() == []  # no spool yet
    _append(tmp_path, _frame("A", b"1") + _frame("B", b"2"))
    assert [r.event for r in reader.read()] == ["A", "B"]
    assert reader.read() == []
    _append(tmp_path, _frame("C", b"3"))
    [record] = reader.read()
    assert (record.event, record.payload, reader.damaged) == ("C", b"3", 0)


def test_offsets_are_stable_and_ordered(tmp_path):
    _append(tmp_path, _frame("A", b"x" * 10) + _frame("B", b"y"))
    first = SpoolReader(str(tmp_path)).read()
    again = SpoolReader(str(tmp_path)).read()
    assert [r.offset for r in first] == [r.offset for r in again]
    assert first[0].offset == 0 < first[1].offset


def test_record_still_being_written_waits_for_the_next_read(tmp_path):
    """A half-visible record is neither returned nor counted as damage yet."""
    whole = _frame("Stop", b'{"last":true}')
    _append(tmp_path, _frame("A", b"1") + whole[:20])
    reader = SpoolReader(str(tmp_path))
    assert [r.event for r in reader.read()] == ["A"]
    assert reader.damaged == 0
    _append(tmp_path, whole[20:])
    assert [(r.event, r.payload) for r in reader.read()] == [("Stop", b'{"last":true}')]
    assert reader.damaged == 0


def test_torn_tail_is_skipped_once_a_record_follows(tmp_path):
    """A writer died mid-record (partial frame by hand): later records still read."""
    torn = _frame("PostToolUse", b"p" * 5000)
    _append(tmp_path, _frame("A", b"1"))
    _append(tmp_path, torn[: len(torn) // 2])
    reader = SpoolReader(str(tmp_path))
    assert [r.event for r in reader.read()] == ["A"]
    _append(tmp_path, _frame("B", b"2") + _frame("C", b"3"))
    assert [r.event for r in reader.read()] == ["B", "C"]
    assert reader.damaged == 1
    # a fresh reader sees the same file the same way
    fresh = SpoolReader(str(tmp_path))
    assert ([r.event for r in fresh.read()], fresh.damaged) == (["A", "B", "C"], 1)


def test_torn_header_is_skipped(tmp_path):
    _append(tmp_path, _frame("A", b"1") + b"\x1eAS1 Post")
    _append(tmp_path, _frame("B", b"2"))
    reader = SpoolReader(str(tmp_path))
    assert ([r.event for r in reader.read()], reader.damaged) == (["A", "B"], 1)


def test_writer_killed_mid_write_leaves_readable_spool(tmp_path):
    """SIGKILL a process in the middle of appending a huge record through the write path.

    Whether the kill lands inside the one write(2) or between writes, every record
    after it reads back whole and nothing before it is lost.
    """
    script = (
        "import sys\n"
        "from agentspool.spool import write\n"
        "fd = write.open_run_dir(sys.argv[1])\n"
        "big = write.frame('PostToolUse', b'z' * (64 << 20), 64 << 20, -1, 0, 1)\n"
        "print('ready', flush=True)\n"
        "write.append(fd, write.EVENTS_FILE, big)\n"
    )
    tmp_path.chmod(0o700)
    _append(tmp_path, _frame("A", b"before"))
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    _append(tmp_path, _frame("B", b"after"))
    reader = SpoolReader(str(tmp_path))
    records = reader.read()
    assert [(r.event, r.payload) for r in records if r.event != "PostToolUse"] == [
        ("A", b"before"),
        ("B", b"after"),
    ]
    assert all(r.payload == b"z" * (64 << 20) for r in records if r.event == "PostToolUse")


def test_corrupt_payload_fails_its_crc_and_is_skipped(tmp_path):
    bad = bytearray(_frame("B", b"hello"))
    bad[-3] ^= 0xFF
    _append(tmp_path, _frame("A", b"1") + bytes(bad) + _frame("C", b"3"))
    reader = SpoolReader(str(tmp_path))
    assert ([r.event for r in reader.read()], reader.damaged) == (["A", "C"], 1)


def test_garbage_between_records_is_skipped(tmp_path):
    _append(tmp_path, b"garbage\n" + _frame("A", b"1") + b"\x00\x01junk" + _frame("B", b"2"))
    reader = SpoolReader(str(tmp_path))
    assert ([r.event for r in reader.read()], reader.damaged) == (["A", "B"], 2)


def test_replaced_spool_restarts_the_cursor(tmp_path):
    """Even when the new file reuses the old inode number and has the same size."""
    _append(tmp_path, _frame("A", b"1"))
    reader = SpoolReader(str(tmp_path))
    assert len(reader.read()) == 1
    os.unlink(tmp_path / write.EVENTS_FILE)
    _append(tmp_path, _frame("B", b"2"))
    assert [r.event for r in reader.read()] == ["B"]


def test_symlinked_spool_reads_as_empty(tmp_path):
    target = tmp_path / "target"
    target.write_bytes(_frame("A", b"1"))
    os.symlink(target, tmp_path / write.EVENTS_FILE)
    assert SpoolReader(str(tmp_path)).read() == []


def test_truncated_flag_round_trips():
    payload = b"h" * 10 + b"t" * 5
    [record], _, damaged = parse_records(write.frame("E", payload, 999, 10, 7, 8))
    assert (record.truncated, record.head_bytes, record.orig_len, record.agent_pid) == (
        True,
        10,
        999,
        7,
    )
    assert damaged == 0


def test_frame_refuses_an_event_name_that_could_break_the_header():
    for event in ("", "Stop Now", "Stop\n", "../x"):
        try:
            write.frame(event, b"", 0, -1, 0, 1)
        except ValueError:
            continue
        raise AssertionError(f"accepted {event!r}")


payloads = st.lists(st.binary(max_size=300), min_size=1, max_size=12)


@given(payloads, st.lists(st.integers(min_value=1, max_value=400), max_size=30))
def test_any_split_of_the_stream_reads_the_same_records(tmp_path_factory, items, cuts):
    """Reading while writes arrive in arbitrary pieces yields every record, once, whole."""
    run_dir = tmp_path_factory.mktemp("split")
    stream = b"".join(_frame("E", p) for p in items)
    reader = SpoolReader(str(run_dir))
    got = []
    pos = 0
    for cut in [*cuts, len(stream)]:
        _append(run_dir, stream[pos : pos + cut]) if stream[pos : pos + cut] else None
        pos = min(len(stream), pos + cut)
        got += reader.read()
    got += reader.read()
    # 0x1e, the magic's first byte, is stored as JSON's \u001e (ADR 0038)
    assert [r.payload for r in got] == [p.replace(b"\x1e", b"\\u001e") for p in items]
    assert reader.damaged == 0
