"""Copilot CLI sessions no hook armed, from the CLI's own files (capture ``tui-unarmed``:
a run started by hand with no hook at all, its session folders at each checkpoint).

The session's folder holds ``inuse.<pid>.lock`` while a copilot process has it open; the
test lays the captured transcript out under a private ``COPILOT_HOME`` with a lock naming
a process of its choosing, as the CLI would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentspool
from agentspool.adapters.copilot import Copilot
from agentspool.core.reader import read_session
from tests.adapters.copilot.conftest import CAPTURES

UNARMED = CAPTURES / "tui-unarmed"


def _session_of(checkpoint: str) -> Path:
    (transcript,) = (UNARMED / f"at-{checkpoint}").glob("*/events.jsonl")
    return transcript


def _lay_out(home: Path, transcript: Path, pid: int = 0) -> Path:
    folder = home / "session-state" / transcript.parent.name
    folder.mkdir(parents=True)
    shutil.copyfile(transcript, folder / "events.jsonl")
    if pid:
        (folder / f"inuse.{pid}.lock").write_text(f"{pid}\n")
        (folder / f"inuse.{pid}.hold").write_text("")
    return folder


@pytest.fixture
def home() -> Path:
    return Path(os.environ["COPILOT_HOME"])


@pytest.fixture
def copilot_process() -> Iterator[int]:
    """A live process standing for copilot (started before its lock is written)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield child.pid
    child.kill()
    child.wait()


def test_the_files_name_the_native_copilot_as_the_lock_holder() -> None:
    """The capture's own listing: a lock from the TUI's start, moved to the new session
    at ``/clear``, gone at exit; its pid is the process the loader started."""
    started = (UNARMED / "files-started.txt").read_text()
    assert "inuse.<pid>.lock  content='<pid>\\n'  (child of the loader tmux runs)" in started
    cleared = (UNARMED / "files-cleared.txt").read_text().splitlines()
    locked = {line.split("/")[0] for line in cleared if "inuse.<pid>.lock" in line}
    with_transcript = {line.split("/")[0] for line in cleared if line.endswith("/events.jsonl")}
    assert len(locked) == 1 and locked.isdisjoint(with_transcript)  # the new, empty session
    assert "inuse." not in (UNARMED / "files-exit.txt").read_text()


def test_a_session_open_in_a_live_process_reads_its_approval(
    home: Path, copilot_process: int
) -> None:
    transcript = _session_of("dialog")
    time.sleep(0.05)  # the lock is younger than its process, as copilot writes it
    _lay_out(home, transcript, copilot_process)
    (session,) = Copilot().sessions(time.time())
    assert (session.session_id, session.pid, session.process) == (
        transcript.parent.name,
        copilot_process,
        "alive",
    )
    chat = read_session(Copilot(), session)
    assert chat.state == "needs_input" and chat.pending_approval is not None
    assert chat.pending_approval.tool_input.get("command") == "echo hi > out.txt"
    assert chat.cwd.endswith("/work") and chat.process == "alive"
    (listed,) = agentspool.list_runs()
    assert (listed.run_id, listed.state, listed.session_id) == (
        "",
        "needs_input",
        session.session_id,
    )


def test_a_lock_left_by_a_dead_process_ends_the_session(home: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    _lay_out(home, _session_of("dialog"), dead.pid)
    (session,) = Copilot().sessions(0.0)
    assert session.process == "gone"
    chat = read_session(Copilot(), session)
    assert (chat.state, chat.pending_approval) == ("ended", None)
    assert agentspool.list_runs() == []


def test_a_lock_older_than_its_process_names_a_reused_pid(home: Path, copilot_process: int) -> None:
    folder = _lay_out(home, _session_of("dialog"), copilot_process)
    past = time.time() - 3600
    os.utime(folder / f"inuse.{copilot_process}.lock", (past, past))
    (session,) = Copilot().sessions(0.0)
    assert session.process == "gone"


def test_a_session_no_process_holds_is_listed_when_recent(home: Path) -> None:
    _lay_out(home, _session_of("idle"))
    assert [s.process for s in Copilot().sessions(0.0)] == ["unknown"]
    assert Copilot().sessions(time.time() + 60) == []


def test_session_at_names_every_captured_transcript(tmp_path: Path) -> None:
    adapter = Copilot()
    for path in sorted(CAPTURES.glob("*/session-state/*/events.jsonl")):
        session = adapter.session_at(str(path))
        assert session is not None, path
        assert session.session_id == path.parent.name
        assert session.session_id == adapter.read_chat("r", "", str(path)).transcript_id
    other = tmp_path / "events.jsonl"
    other.write_text('{"type": "user.message", "data": {}}\n')
    assert adapter.session_at(str(other)) is None


def test_a_watcher_sees_the_session_move_from_its_approval_to_idle(
    home: Path, copilot_process: int
) -> None:
    """``watch`` and ``serve`` poll: the session's file grew, so it is read again."""
    time.sleep(0.05)
    folder = _lay_out(home, _session_of("dialog"), copilot_process)
    first = agentspool.poll_runs()
    (key,) = first.listed
    assert first.runs[key].pending_approval is not None
    assert agentspool.poll_runs(first).changed == []  # nothing moved: nothing read
    shutil.copyfile(_session_of("idle"), folder / "events.jsonl")
    moved = agentspool.poll_runs(first)
    assert moved.changed == [key]
    assert (moved.runs[key].state, moved.runs[key].pending_approval) == ("needs_input", None)
