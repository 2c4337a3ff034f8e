"""Issue 22: what others wrote never drives the terminal, bad arguments and a bad history
store are one line each, and the store is kept private.

Every command runs as a user runs it (the installed ``agentspool``, a subprocess with a
timeout).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

CAPTURES = Path(__file__).resolve().parent / "live" / "captures"
ESCAPES = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x9b31m"
"""OSC 52 (write the clipboard), CSI 2J (clear the screen), a one-byte C1 CSI."""


def agentspool(*argv: str | bytes, env: dict[str, str] | None = None):
    script = os.path.join(os.path.dirname(sys.executable), "agentspool")
    return subprocess.run(
        [script, *argv],
        capture_output=True,
        env={**os.environ, **(env or {})},
        cwd="/",
        check=False,
        timeout=60,
    )


def one_line(proc) -> str:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 1, (proc.returncode, proc.stdout, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(err.splitlines()) == 1, err
    return err


def no_control(out: bytes) -> None:
    text = out.decode("utf-8")
    assert not any(c in text for c in "\x1b\x07\x9b"), text


@pytest.fixture
def hostile_transcript() -> Path:
    """A real Claude Code capture whose first prompt carries terminal escapes, where
    Claude Code keeps transcripts (the test's private ``$CLAUDE_CONFIG_DIR``)."""
    (source,) = CAPTURES.glob("claude-code/tui-multi-block/transcript/*.jsonl")
    text = source.read_text().replace(
        '"content":"run two commands"', '"content":' + json.dumps("run two commands " + ESCAPES)
    )
    target = Path(os.environ["CLAUDE_CONFIG_DIR"], "projects", "-work", source.name)
    target.parent.mkdir(parents=True)
    target.write_text(text)
    return target


def test_ls_shows_escapes_in_tool_input_never_sends_them(claude_run, silent) -> None:
    payload = {
        "session_id": "s1",
        "tool_name": "Bash",
        "tool_input": {"command": "echo " + ESCAPES},
    }
    silent(claude_run.run(json.dumps(payload).encode(), "PermissionRequest"))
    proc = agentspool("ls", "--runtime-dir", claude_run.runtime_dir)
    assert proc.returncode == 0, proc.stderr
    no_control(proc.stdout)
    assert b"approve Bash: echo ^[]52;c;ZXZpbA==^G^[[2J" in proc.stdout


def test_search_and_show_show_escapes_in_conversation_text(hostile_transcript) -> None:
    found = agentspool("search", "two", "commands")
    assert found.returncode == 0, found.stderr
    no_control(found.stdout)
    assert b"^[[2J" in found.stdout
    shown = agentspool("show", str(hostile_transcript))
    assert shown.returncode == 0, shown.stderr
    no_control(shown.stdout)


@pytest.mark.parametrize("command", ["show", "search"])
def test_an_argument_that_is_not_utf8_is_one_line(command) -> None:
    extra = ["--no-index"] if command == "search" else []
    proc = agentspool(command, b"\xff\xfe-not-utf8", *extra)
    if command == "search":
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
        assert b"no record holds" in proc.stderr
    else:
        assert "-not-utf8" in one_line(proc)


def _store() -> Path:
    return Path(os.environ["AGENTSPOOL_DATA_DIR"], "history.sqlite")


def test_a_store_others_can_read_is_made_private_and_said_so(hostile_transcript) -> None:
    assert agentspool("index").returncode == 0
    store = _store()
    store.chmod(0o644)  # a restored backup
    store.parent.chmod(0o755)
    proc = agentspool("index")
    assert proc.returncode == 0, proc.stderr
    (warning,) = proc.stderr.decode().splitlines()
    assert "could be read by others (mode 644, its dir mode 755); made private" in warning
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.parent.stat().st_mode) == 0o700
    for side in ("-wal", "-shm"):
        if os.path.exists(str(store) + side):
            assert stat.S_IMODE(os.stat(str(store) + side).st_mode) & 0o077 == 0


def test_a_store_another_account_owns_is_refused(adversary, shared_tmp) -> None:
    planted = shared_tmp / "history.sqlite"
    adversary.sh(f"touch {planted} && chmod 666 {planted}")
    err = one_line(agentspool("search", "x", "--no-index", "--store", str(planted)))
    assert f"owned by uid {adversary.uid}" in err
    assert planted.stat().st_size == 0


def test_a_store_damaged_mid_file_is_one_line(hostile_transcript) -> None:
    assert agentspool("index").returncode == 0
    store = _store()
    data = bytearray(store.read_bytes())
    page = 4096
    assert len(data) > 3 * page
    data[page : len(data)] = b"\x5a" * (len(data) - page)  # every page after the first
    store.write_bytes(bytes(data))
    for side in ("-wal", "-shm"):
        Path(str(store) + side).unlink(missing_ok=True)
    err = one_line(agentspool("search", "two", "--no-index"))
    assert str(store) in err and "damaged" in err


@pytest.fixture
def small_disk(tmp_path: Path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.getuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a full disk needs root to mount a small tmpfs")
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(mnt)],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_a_full_disk_under_the_store_says_disk_full(small_disk, hostile_transcript) -> None:
    # A transcript of ~1 MB of prompts: more than the 256 KiB the store may take.
    line = next(ln for ln in hostile_transcript.read_text().splitlines() if '"user"' in ln)
    record = json.loads(line)
    with hostile_transcript.open("a") as fh:
        for n in range(400):
            record["uuid"] = f"00000000-0000-0000-0000-{n:012d}"
            record["message"]["content"] = f"prompt {n} " + os.urandom(1200).hex()
            fh.write(json.dumps(record) + "\n")
    proc = agentspool("index", env={"AGENTSPOOL_DATA_DIR": str(small_disk / "data")})
    err = proc.stderr.decode()
    assert proc.returncode == 1, (proc.stdout, err)
    assert "Traceback" not in err and "no transaction is active" not in err, err
    assert "disk full" in err
