"""A hook never fails the agent: exit 0, nothing on stdout, whatever stdin and disk do.

Every test spawns the exact command ``setup`` rendered into the Claude Code settings and
checks the three things the agent and the reader see: the exit status, stdout, and what
is on disk afterwards.
"""

from __future__ import annotations

import errno
import os
import resource
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import agentspool
from agentspool.adapters.common.commands import hook_argv
from agentspool.errors import RunIdError
from agentspool.spool import write
from agentspool.spool.read import SpoolReader

TEN_MB = 10 * 1024 * 1024


def test_json_payload_is_spooled_raw(claude_run, silent):
    """The payload's exact bytes and the baked-in event name land as one record."""
    payload = b'{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_1"}'
    proc = claude_run.run(payload, "PostToolUse", env={"CLAUDE_PID": "4242"})
    silent(proc)
    [record] = claude_run.records()
    assert (record.event, record.payload, record.orig_len, record.truncated, record.agent_pid) == (
        "PostToolUse",
        payload,
        len(payload),
        False,
        4242,
    )
    assert record.pid not in (0, os.getpid())
    assert claude_run.log_text() == ""


def test_empty_stdin_is_an_empty_record(claude_run, silent):
    silent(claude_run.run(b"", "Stop"))
    [record] = claude_run.records()
    assert (record.event, record.payload, record.orig_len) == ("Stop", b"", 0)


def test_closed_stdin_is_an_empty_record(claude_run, silent):
    proc = subprocess.run(
        claude_run.argv("Stop"), stdin=subprocess.DEVNULL, capture_output=True, cwd="/", check=False
    )
    silent(proc)
    assert [(r.event, r.payload) for r in claude_run.records()] == [("Stop", b"")]


def test_ten_megabytes_are_cut_to_head_and_tail(claude_run, silent):
    """A huge tool_response is cut to the bounded head + tail the adapters read."""
    head = b'{"tool_name":"Read","tool_response":"'
    tail = b'","tool_use_id":"toolu_tail"}'
    payload = head + b"x" * (TEN_MB - len(head) - len(tail)) + tail
    silent(claude_run.run(payload))
    [record] = claude_run.records()
    assert record.orig_len == TEN_MB
    assert record.head_bytes == write.HEAD_BYTES
    assert len(record.payload) == write.MAX_PAYLOAD
    assert record.payload[: write.HEAD_BYTES] == payload[: write.HEAD_BYTES]
    assert record.payload[write.HEAD_BYTES :] == payload[-write.TAIL_BYTES :]
    assert os.path.getsize(claude_run.spool_path()) < write.MAX_PAYLOAD + 200


def test_binary_stdin_is_spooled_exactly(claude_run, silent):
    """Bytes that look like our own framing (\\x1e, 'AS1', newlines) cannot forge records:
    every byte is kept but 0x1e, which is stored as JSON writes it (ADR 0038)."""
    forged = b"\n\x1eAS1 Stop 1 2 3 4 - 5 5 00000000\nhello\n"
    payload = bytes(range(256)) * 4 + forged + b"\xff\xfe"
    silent(claude_run.run(payload))
    reader = SpoolReader(claude_run.run_dir)
    [record] = reader.read()
    assert (record.payload, reader.damaged) == (payload.replace(b"\x1e", b"\\u001e"), 0)


def test_invalid_json_is_spooled_unparsed(claude_run, silent):
    payload = b'{"tool_name": "Bash", "tool_input": {'
    silent(claude_run.run(payload, "PreToolUse"))
    assert [(r.event, r.payload) for r in claude_run.records()] == [("PreToolUse", payload)]


def test_missing_run_dir_is_never_created(claude_run, silent):
    """Hooks never create run dirs (ADR 0003): the fault goes to the runtime's faults.log."""
    shutil.rmtree(claude_run.run_dir)
    silent(claude_run.run(b"{}", "Stop"))
    assert not os.path.exists(claude_run.run_dir)
    faults = Path(claude_run.runtime_dir, write.RUNTIME_FAULT_LOG).read_text()
    assert "event=Stop" in faults
    assert "FileNotFoundError" in faults


def test_missing_runtime_dir_writes_nothing_anywhere(claude_run, silent):
    shutil.rmtree(claude_run.runtime_dir)
    silent(claude_run.run(b"{}", "Stop"))
    assert not os.path.exists(claude_run.runtime_dir)


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Callable[[str], None]]:
    """``read_only(dir)`` makes ``dir`` unwritable even for root (a read-only bind mount)."""
    mounted: list[str] = []

    def make(path: str) -> None:
        if os.getuid() != 0:
            os.chmod(path, 0o500)
            return
        for args in (["--bind", path, path], ["-o", "remount,ro,bind", path]):
            proc = subprocess.run(["mount", *args], capture_output=True, check=False)
            if proc.returncode != 0:
                pytest.skip(f"root ignores modes and mount fails: {proc.stderr.decode()}")
            if args[0] == "--bind":
                mounted.append(path)

    yield make
    for path in mounted:
        subprocess.run(["umount", path], check=False)


def test_unwritable_run_dir(claude_run, read_only, silent):
    """A run dir the hook cannot write to: exit 0, nothing written, nothing created."""
    read_only(claude_run.run_dir)
    silent(claude_run.run(b"{}", "Stop"))
    assert sorted(os.listdir(claude_run.run_dir)) == ["claude-code.settings.json", "provider"]


def test_run_dir_open_to_others_is_refused(claude_run, silent):
    """A run dir someone loosened (group/other bits) is not trusted with evidence."""
    os.chmod(claude_run.run_dir, 0o755)
    silent(claude_run.run(b"{}", "Stop"))
    assert not os.path.exists(claude_run.spool_path())
    faults = Path(claude_run.runtime_dir, write.RUNTIME_FAULT_LOG).read_text()
    assert "not a private directory" in faults


def test_symlinked_run_dir_is_not_followed(claude_run, tmp_path, silent):
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    shutil.rmtree(claude_run.run_dir)
    os.symlink(target, claude_run.run_dir)
    silent(claude_run.run(b"{}", "Stop"))
    assert list(target.iterdir()) == []
    faults = Path(claude_run.runtime_dir, write.RUNTIME_FAULT_LOG).read_text()
    assert "event=Stop" in faults


def test_symlinked_spool_file_is_not_followed(claude_run, tmp_path, silent):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    os.symlink(victim, claude_run.spool_path())
    silent(claude_run.run(b"{}", "Stop"))
    assert victim.read_bytes() == b"precious"
    assert "event=Stop" in claude_run.log_text()


def test_run_id_with_dot_dot_writes_nothing_outside(claude_run, runtime_dir, silent):
    """A hand-made command with ``../`` in the run id never escapes the runtime dir."""
    escape_dir = os.path.join(os.path.dirname(runtime_dir), "escaped")
    os.mkdir(escape_dir, 0o700)
    argv = hook_argv("claude_code", "Stop", runtime_dir, "../escaped")
    silent(claude_run.run(b"{}", argv=argv))
    assert os.listdir(escape_dir) == []
    faults = Path(runtime_dir, write.RUNTIME_FAULT_LOG).read_text()
    assert "run id '../escaped'" in faults


def test_setup_refuses_a_run_id_with_dot_dot(runtime_dir):
    with pytest.raises(RunIdError):
        agentspool.setup("claude-code", "../escaped", runtime_dir)
    assert os.listdir(runtime_dir) == []


def test_fault_log_is_capped(claude_run, silent):
    """A hook failing forever does not grow its log without bound."""
    os.mkdir(claude_run.spool_path())  # every append now fails with EISDIR
    log = os.path.join(claude_run.run_dir, write.FAULT_LOG)
    Path(log).write_bytes(b"x" * write.FAULT_LOG_CAP)
    before = os.path.getsize(log)
    silent(claude_run.run(b"{}", "Stop"))
    assert os.path.getsize(log) == before
    os.truncate(log, 0)
    silent(claude_run.run(b"{}", "Stop"))
    assert "IsADirectoryError" in claude_run.log_text()


def _fsize_limit(limit: int):
    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


def test_rlimit_fsize_mid_record_leaves_a_skippable_tear(claude_run, silent):
    """Past RLIMIT_FSIZE the write is cut short: exit 0, the torn record is skipped and
    the records before and after it read back whole."""
    silent(claude_run.run(b'{"n":1}', "UserPromptSubmit"))
    size = os.path.getsize(claude_run.spool_path())
    silent(
        claude_run.run(
            b'{"n":2,"pad":"' + b"p" * 5000 + b'"}',
            "PostToolUse",
            preexec_fn=_fsize_limit(size + 1000),
        )
    )
    assert size < os.path.getsize(claude_run.spool_path()) <= size + 1000  # a real tear
    assert "short write" in claude_run.log_text()
    silent(claude_run.run(b'{"n":3}', "Stop"))
    reader = SpoolReader(claude_run.run_dir)
    assert [r.payload for r in reader.read()] == [b'{"n":1}', b'{"n":3}']
    assert reader.damaged == 1


def test_rlimit_fsize_already_reached(claude_run, silent):
    """At the limit the kernel sends SIGXFSZ; the hook ignores it and still exits 0."""
    silent(claude_run.run(b'{"n":1}', "Stop"))
    size = os.path.getsize(claude_run.spool_path())
    silent(claude_run.run(b'{"n":2}', "Stop", preexec_fn=_fsize_limit(size)))
    assert os.path.getsize(claude_run.spool_path()) == size
    assert "EFBIG" in claude_run.log_text() or "File too large" in claude_run.log_text()


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if os.getuid() != 0 or shutil.which("mount") is None:
        pytest.skip("ENOSPC variant needs root to mount a tiny tmpfs")
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(mnt)],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_enospc_mid_record_leaves_a_skippable_tear(tiny_tmpfs, make_claude_run, silent):
    """Disk full mid-record: exit 0; once space is back, later records read whole."""
    run = make_claude_run(str(tiny_tmpfs / "rt"), "full")
    silent(run.run(b'{"n":1}', "Stop"))
    fd = os.open(tiny_tmpfs / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:  # fill the disk: the spool's last page keeps only the room it already had
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    silent(run.run(b'{"n":2,"pad":"' + b"p" * 20000 + b'"}', "PostToolUse"))
    os.unlink(tiny_tmpfs / "filler")
    silent(run.run(b'{"n":3}', "Stop"))
    reader = SpoolReader(run.run_dir)
    assert [r.payload for r in reader.read()] == [b'{"n":1}', b'{"n":3}']
    assert reader.damaged == 1  # the short write of record 2, skipped by length and CRC
