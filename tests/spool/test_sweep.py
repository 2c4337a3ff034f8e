"""``sweep_spools``: exactly the guarantees its module docstring states.

* never a run in ``keep``, nor one written within ``min_idle`` seconds;
* never a half-deleted run (rename to trash, re-check, delete; trash finished later);
* a write landing between the idle check and the rename puts the run back;
* hooks racing a sweep never fail;
* idempotent; ``dry_run`` changes nothing; ``archive`` keeps the spool.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentspool.core import ledger
from agentspool.core.events import TaskStateDeclared
from agentspool.spool import sweep as sweep_mod
from agentspool.spool import write
from agentspool.spool.read import SpoolReader
from agentspool.spool.sweep import sweep_spools

LONG_AGO = 1_000_000.0  # seconds: "idle for ages" relative to ``now``


def _append(run_dir: str, payload: bytes = b"{}") -> None:
    fd = write.open_run_dir(run_dir)
    try:
        write.append(
            fd, write.EVENTS_FILE, write.frame("Stop", payload, len(payload), -1, 0, os.getpid())
        )
    finally:
        os.close(fd)


@pytest.fixture
def runs(runtime_dir, make_claude_run):
    """Three runs with one record each, and a non-run file the sweep must not touch."""
    made = {name: make_claude_run(runtime_dir, name) for name in ("a", "b", "c")}
    for run in made.values():
        _append(run.run_dir)
    Path(runtime_dir, "faults.log").write_text("foreign\n")
    return made


def _names(runtime_dir: str) -> list[str]:
    return sorted(n for n in os.listdir(runtime_dir) if n != ".sweep.lock")


def test_removes_idle_runs_outside_keep(runtime_dir, runs):
    report = sweep_spools(runtime_dir, ["b"], min_idle=60, now=time.time() + LONG_AGO)
    assert (report.removed, report.kept, report.busy) == (["a", "c"], ["b"], [])
    assert _names(runtime_dir) == ["b", "faults.log"]
    assert len(runs["b"].records()) == 1


def test_recently_written_run_is_busy(runtime_dir, runs):
    report = sweep_spools(runtime_dir, [], min_idle=3600)
    assert (report.removed, report.busy) == ([], ["a", "b", "c"])
    assert _names(runtime_dir) == ["a", "b", "c", "faults.log"]


def test_dry_run_changes_nothing(runtime_dir, runs):
    report = sweep_spools(runtime_dir, ["a"], min_idle=0, dry_run=True)
    assert (report.removed, report.dry_run) == (["b", "c"], True)
    assert _names(runtime_dir) == ["a", "b", "c", "faults.log"]


def test_idempotent(runtime_dir, runs):
    sweep_spools(runtime_dir, ["a"], min_idle=0)
    second = sweep_spools(runtime_dir, ["a"], min_idle=0)
    assert (second.removed, second.kept, second.trash_finished) == ([], ["a"], 0)
    assert _names(runtime_dir) == ["a", "faults.log"]


def test_archive_keeps_the_evidence(runtime_dir, runs, tmp_path):
    archive = tmp_path / "archive"
    ledger.append(runs["c"].run_dir, TaskStateDeclared(task_state="done", at=1.0))
    report = sweep_spools(runtime_dir, ["a", "b"], min_idle=0, archive=str(archive))
    assert (report.removed, report.archived) == (["c"], ["c"])
    [kept] = list((archive / "c").iterdir())
    assert sorted(os.listdir(kept)) == ["events.spool", "ledger.spool", "provider"]
    assert (kept / "events.spool").read_bytes().startswith(b"\x1eAS1 Stop ")
    assert ledger.lifecycle(str(kept)).task_state == "done"


def test_a_run_with_only_its_ledger_left_is_archived(runtime_dir, runs, tmp_path):
    """``agentspool run`` sweeps the spool when the CLI exits; the ledger stays."""
    os.unlink(runs["c"].spool_path())
    ledger.append(runs["c"].run_dir, TaskStateDeclared(task_state="done", at=1.0))
    archive = tmp_path / "archive"
    report = sweep_spools(runtime_dir, ["a", "b"], min_idle=0, archive=str(archive))
    assert report.archived == ["c"]
    [kept] = list((archive / "c").iterdir())
    assert sorted(os.listdir(kept)) == ["ledger.spool", "provider"]


def test_archive_never_overwrites_a_run_swept_twice_in_one_second(
    runtime_dir, runs, tmp_path, make_claude_run
):
    archive = tmp_path / "archive"
    frozen = time.time() + 100  # one second on the clock the sweep reads, after every write
    sweep_spools(runtime_dir, ["a", "b"], min_idle=0, archive=str(archive), now=frozen)
    again = make_claude_run(runtime_dir, "c")  # the same run id, set up again
    _append(again.run_dir, b'{"second":true}')
    sweep_spools(runtime_dir, ["a", "b"], min_idle=0, archive=str(archive), now=frozen)
    archived = sorted(p.name for p in (archive / "c").iterdir())
    assert archived == [f"{int(frozen)}", f"{int(frozen)}.1"]
    second = archive / "c" / archived[1] / "events.spool"
    assert second.read_bytes().endswith(b'{"second":true}\n')


def test_trash_of_a_crashed_sweep_is_archived_when_archiving(runtime_dir, runs, tmp_path):
    trash = Path(runtime_dir, ".trash-c-1-1")
    os.rename(runs["c"].run_dir, trash)  # a sweep stopped between rename and archive
    archive = tmp_path / "archive"
    report = sweep_spools(runtime_dir, ["a", "b"], min_idle=0, archive=str(archive))
    assert report.trash_finished == 1
    [kept] = list((archive / "c").iterdir())
    assert (kept / "events.spool").read_bytes().startswith(b"\x1eAS1 Stop ")


def test_select_removes_only_what_it_accepts(runtime_dir, runs):
    asked: list[str] = []

    def select(run_id: str, path: str) -> bool:
        asked.append(run_id)
        assert path == os.path.join(runtime_dir, run_id)
        return run_id == "b"

    report = sweep_spools(runtime_dir, ["a"], min_idle=0, select=select)
    assert (asked, report.removed, report.kept) == (["b", "c"], ["b"], ["a", "c"])
    assert _names(runtime_dir) == ["a", "c", "faults.log"]


def test_a_declaration_written_after_select_keeps_the_run(runtime_dir, runs):
    """What ``select`` judged is re-checked by the take: a ledger append between its
    answer and the rename keeps the run (busy), as a spool append does."""

    def select(run_id: str, path: str) -> bool:
        ledger.append(path, TaskStateDeclared(task_state="active", at=2.0))
        return True

    report = sweep_spools(runtime_dir, [], min_idle=0, select=select)
    assert (report.removed, sorted(report.busy)) == ([], ["a", "b", "c"])
    assert _names(runtime_dir) == ["a", "b", "c", "faults.log"]


def test_the_take_holds_the_ledger_lock(runtime_dir, runs):
    """A ledger append in flight (holding its lock) keeps the run, like a spool append."""
    path = os.path.join(runs["c"].run_dir, "ledger.spool")
    ledger.append(runs["c"].run_dir, TaskStateDeclared(task_state="done", at=1.0))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({path!r}, os.O_WRONLY)\n"
            "fcntl.lockf(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        report = sweep_spools(runtime_dir, ["a", "b"], min_idle=0)
        assert (report.removed, report.busy) == ([], ["c"])
    finally:
        holder.communicate(b"")
    assert sweep_spools(runtime_dir, ["a", "b"], min_idle=0).removed == ["c"]


def test_leftover_trash_is_finished_and_never_read(runtime_dir, runs):
    trash = Path(runtime_dir, ".trash-x-1-1")
    trash.mkdir(mode=0o700)
    (trash / write.EVENTS_FILE).write_bytes(b"half")
    report = sweep_spools(runtime_dir, ["a", "b", "c"], min_idle=0)
    assert report.trash_finished == 1
    assert not trash.exists()


def test_symlink_and_foreign_names_are_ignored(runtime_dir, runs, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keepme").write_text("x")
    os.symlink(outside, Path(runtime_dir, "linked"))
    sweep_spools(runtime_dir, [], min_idle=0)
    assert (outside / "keepme").exists()
    assert _names(runtime_dir) == ["faults.log", "linked"]


def _write_after_idle_check(monkeypatch, run_dir: str, keep_mtime: bool) -> None:
    """Make a hook append one record right after the sweep's idle check of ``run_dir``."""
    real_stats = sweep_mod.entry_stats
    calls = []

    def racing_stats(path: str, *, hidden: bool = False) -> list[tuple[str, int, int, int]]:
        stats = real_stats(path, hidden=hidden)
        if path == run_dir and not calls:
            calls.append(path)
            spool = os.path.join(run_dir, write.EVENTS_FILE)
            st = os.stat(spool)
            _append(run_dir, b'{"late":true}')
            if keep_mtime:  # the append lands within the same timestamp tick
                os.utime(spool, ns=(st.st_atime_ns, st.st_mtime_ns))
        return stats

    monkeypatch.setattr(sweep_mod, "entry_stats", racing_stats)


@pytest.mark.parametrize("keep_mtime", [False, True], ids=["mtime-moved", "same-tick"])
def test_write_between_idle_check_and_take_keeps_the_run(
    runtime_dir, runs, monkeypatch, keep_mtime
):
    _write_after_idle_check(monkeypatch, runs["c"].run_dir, keep_mtime)
    report = sweep_spools(runtime_dir, ["a", "b"], min_idle=0)
    assert (report.removed, report.busy) == ([], ["c"])
    assert [r.payload for r in runs["c"].records()] == [b"{}", b'{"late":true}']
    assert _names(runtime_dir) == ["a", "b", "c", "faults.log"]
    assert not os.stat(runs["c"].run_dir).st_mode & write.SWEEP_MARK
    _append(runs["c"].run_dir, b'{"after":true}')  # the run takes records again
    assert len(runs["c"].records()) == 3


def test_failed_delete_leaves_trash_for_the_next_sweep(runtime_dir, runs, monkeypatch):
    """rmtree racing a hook that creates a file (ENOTEMPTY): no error, no half run."""
    monkeypatch.setattr(sweep_mod.shutil, "rmtree", lambda path, ignore_errors=False: None)
    report = sweep_spools(runtime_dir, ["a", "b"], min_idle=0)
    assert report.removed == ["c"]
    assert [n for n in _names(runtime_dir) if not n.startswith(".trash-")] == [
        "a",
        "b",
        "faults.log",
    ]
    monkeypatch.undo()
    assert sweep_spools(runtime_dir, ["a", "b"], min_idle=0).trash_finished == 1
    assert _names(runtime_dir) == ["a", "b", "faults.log"]


_HOOK_LOOP = """
import sys
from agentspool.spool import write
runtime, run_id, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    try:
        fd = write.open_run_dir(runtime + "/" + run_id)
    except OSError:
        continue  # the run is gone: a hook would note the fault and exit 0
    try:
        p = b"%d" % i
        write.append(fd, write.EVENTS_FILE, write.frame("Stop", p, len(p), -1, 0, 1))
    except OSError:
        pass
    finally:
        import os; os.close(fd)
"""


def test_sweeps_racing_live_writers(runtime_dir, runs, silent):
    """Writers append to a kept run and to a doomed run while ``min_idle=0`` sweeps loop.

    The doomed run is set up again each time a sweep removed it, so removals race
    appends many times. The kept run loses nothing; the doomed run is whole or gone,
    never half (every observation reads clean); no sweep raises; real hook processes
    racing it all exit 0 silently; once the writers stop, one more sweep leaves no trash.
    """
    writers = [
        subprocess.Popen([sys.executable, "-c", _HOOK_LOOP, runtime_dir, name, "3000"])
        for name in ("a", "c")
    ]
    hook_results: list[subprocess.CompletedProcess[bytes]] = []
    hooks_done = threading.Event()

    def real_hooks() -> None:
        for _ in range(40):
            hook_results.append(runs["c"].run(b"{}", "Stop"))
        hooks_done.set()

    thread = threading.Thread(target=real_hooks)
    thread.start()
    removals = 0
    while any(w.poll() is None for w in writers) or not hooks_done.is_set():
        removals += len(sweep_spools(runtime_dir, ["a"], min_idle=0).removed)
        if os.path.isdir(runs["c"].run_dir):
            reader = SpoolReader(runs["c"].run_dir)
            reader.read()
            assert reader.damaged == 0
        else:
            os.mkdir(runs["c"].run_dir, 0o700)  # what setup does for a new run
    thread.join()
    assert [w.wait() for w in writers] == [0, 0]
    for result in hook_results:
        silent(result)
    assert removals > 1
    assert len(runs["a"].records()) == 1 + 3000
    final = sweep_spools(runtime_dir, ["a"], min_idle=0)
    assert not [n for n in os.listdir(runtime_dir) if n.startswith(".trash-")]
    assert (final.kept, _names(runtime_dir)) == (["a"], ["a", "faults.log"])


def test_busy_run_outside_keep_survives_sweeps_with_live_writers(runtime_dir, runs):
    writer = subprocess.Popen([sys.executable, "-c", _HOOK_LOOP, runtime_dir, "b", "2000"])
    while writer.poll() is None:
        report = sweep_spools(runtime_dir, [], min_idle=3600)
        assert "b" in report.busy
    assert writer.wait() == 0
    assert len(runs["b"].records()) == 1 + 2000
