"""Sweeps at ``min_idle=0`` racing real hook processes lose no record (ADR 0015).

Every hook here is the command ``setup`` rendered, spawned as the CLI spawns it. A record
a hook wrote is either in a run that was kept or in the archive; a write the sweep
refused is in the runtime dir's ``faults.log`` under the hook's pid, and the hook still
exited 0 silently. Nothing else may happen to it.

Where ``strace`` is installed, hooks are also held at the exact syscalls that matter
(``delay_enter`` injection, nothing else changed): with the run dir open but the spool
not yet, with the spool open but not yet locked, and locked but not yet written. That
forces the interleavings a quiet machine rarely produces; the first and last lost the
record before ADR 0015.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentspool.spool import write
from agentspool.spool.read import parse_records
from agentspool.spool.sweep import sweep_spools

STRACE = shutil.which("strace")
needs_strace = pytest.mark.skipif(STRACE is None, reason="needs strace to hold a hook mid-way")


def _hold(point: str, run_dir: str, micros: int) -> list[str]:
    """strace arguments that delay the hook on entering one syscall, and trace nothing else."""
    assert STRACE is not None
    spool = os.path.join(run_dir, write.EVENTS_FILE)
    syscall, paths = {
        "spool-open": ("openat", [write.EVENTS_FILE]),  # relative to the run dir's fd
        "lock": ("fcntl", [spool]),  # matched through the descriptor's path
        "write": ("write", []),  # the record is the hook's first write(2)
    }[point]
    args = [STRACE, "-qq"]
    for path in paths:
        args += ["-P", path]
    return [*args, "-e", f"trace={syscall}", "-e", f"inject={syscall}:delay_enter={micros}"]


@dataclass
class Hook:
    proc: subprocess.Popen[bytes]
    pid: int
    """The hook's own pid (under strace, strace's child): what records and faults carry."""
    payload: bytes

    def finish(self) -> tuple[int, bytes, bytes]:
        assert self.proc.stdout is not None and self.proc.stderr is not None
        out, err = self.proc.stdout.read(), self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return self.proc.wait(timeout=60), out, err


def _spawn(argv: list[str], payload: bytes, hold: list[str] | None = None) -> Hook:
    trace_dir = tempfile.mkdtemp(prefix="strace-")
    if hold:
        # -ff names a file after each traced process as it is attached: the hook's pid.
        hold = [*hold, "-ff", "-o", os.path.join(trace_dir, "hook")]
    proc = subprocess.Popen(
        [*(hold or []), *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={},
        cwd="/",
    )
    assert proc.stdin is not None
    proc.stdin.write(payload)
    proc.stdin.close()
    pid = proc.pid
    if hold:
        _wait_for(lambda: os.listdir(trace_dir), "strace's attach")
        [name] = os.listdir(trace_dir)
        pid = int(name.rsplit(".", 1)[1])
    shutil.rmtree(trace_dir)
    return Hook(proc, pid, payload)


def _wait_for(predicate, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 30
    while not predicate():
        assert time.monotonic() < deadline, f"hook never reached: {what}"
        time.sleep(0.001)


def _open_paths(pid: int) -> set[str]:
    paths = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile
            paths.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
    return paths


def _holds_lock(pid: int) -> bool:
    return any(line.split()[4] == str(pid) for line in Path("/proc/locks").read_text().splitlines())


def _faults(runtime_dir: str) -> str:
    path = Path(runtime_dir, write.RUNTIME_FAULT_LOG)
    return path.read_text() if path.exists() else ""


def _fault_pids(text: str) -> list[int]:
    return [int(p) for p in re.findall(r"\bpid=(\d+) ", text)]


def _archived(archive: Path) -> list[bytes]:
    payloads = []
    for path in sorted(archive.glob("*/*/events.spool")):
        records, _, damaged = parse_records(path.read_bytes())
        assert damaged == 0
        payloads += [r.payload for r in records]
    return payloads


# --- each interleaving, forced ------------------------------------------------------


@needs_strace
def test_hook_holding_the_run_dir_is_refused_and_says_so(runtime_dir, claude_run, tmp_path):
    """Run dir open, spool not yet: the sweep takes the run; the hook's write is refused
    before it happens and noted in ``faults.log`` (it used to vanish with the run)."""
    archive = tmp_path / "archive"
    hook = _spawn(
        claude_run.argv("Stop"),
        b'{"late":1}',
        _hold("spool-open", claude_run.run_dir, 1_000_000),
    )
    _wait_for(lambda: claude_run.run_dir in _open_paths(hook.pid), "its run dir open")
    report = sweep_spools(runtime_dir, [], min_idle=0, archive=str(archive))
    assert report.removed == [claude_run.run_id]
    assert hook.finish() == (0, b"", b"")
    assert _archived(archive) == []
    [line] = _faults(runtime_dir).splitlines()
    assert f"run={claude_run.run_id} pid={hook.pid} event=Stop" in line


@needs_strace
def test_hook_holding_the_unlocked_spool_is_refused(runtime_dir, claude_run, tmp_path, silent):
    """Spool open, lock not yet taken: the sweep takes the run; the hook then gets the lock
    on a file in a marked dir, and refuses."""
    silent(claude_run.run(b'{"first":1}', "Stop"))
    archive = tmp_path / "archive"
    hook = _spawn(
        claude_run.argv("Stop"), b'{"late":1}', _hold("lock", claude_run.run_dir, 1_000_000)
    )
    _wait_for(lambda: claude_run.spool_path() in _open_paths(hook.pid), "its spool open")
    report = sweep_spools(runtime_dir, [], min_idle=0, archive=str(archive))
    assert report.removed == [claude_run.run_id]
    assert hook.finish() == (0, b"", b"")
    assert _archived(archive) == [b'{"first":1}']
    [line] = _faults(runtime_dir).splitlines()
    assert f"pid={hook.pid} event=Stop RunSweptError" in line


@needs_strace
def test_hook_holding_the_lock_keeps_the_run(runtime_dir, claude_run, silent):
    """Locked, not yet written: the sweep leaves the run (busy), and the record lands in
    it (it used to go into a deleted file)."""
    silent(claude_run.run(b'{"first":1}', "Stop"))
    hook = _spawn(
        claude_run.argv("Stop"), b'{"late":1}', _hold("write", claude_run.run_dir, 1_000_000)
    )
    _wait_for(lambda: _holds_lock(hook.pid), "the spool's lock")
    report = sweep_spools(runtime_dir, [], min_idle=0)
    assert (report.removed, report.busy) == ([], [claude_run.run_id])
    assert hook.finish() == (0, b"", b"")
    assert [r.payload for r in claude_run.records()] == [b'{"first":1}', b'{"late":1}']
    assert not os.stat(claude_run.run_dir).st_mode & write.SWEEP_MARK
    assert _faults(runtime_dir) == ""


def test_marked_run_refuses_real_hooks_into_the_runtime_log(claude_run, silent):
    """What a hook meets in a run a sweep is taking: exit 0, no record, no run-dir log."""
    os.chmod(claude_run.run_dir, 0o700 | write.SWEEP_MARK)
    silent(claude_run.run(b"{}", "Stop"))
    assert not os.path.exists(claude_run.spool_path())
    assert claude_run.log_text() == ""
    assert "RunSweptError" in _faults(claude_run.runtime_dir)


def test_mark_left_by_a_crashed_sweep_is_cleared_on_runs_that_stay(
    runtime_dir, make_claude_run, silent
):
    kept, fresh = make_claude_run(runtime_dir, "kept"), make_claude_run(runtime_dir, "fresh")
    for run in (kept, fresh):
        os.chmod(run.run_dir, 0o700 | write.SWEEP_MARK)
    report = sweep_spools(runtime_dir, ["kept"], min_idle=3600)
    assert (report.kept, report.busy) == (["kept"], ["fresh"])
    for run in (kept, fresh):
        assert os.stat(run.run_dir).st_mode & 0o7777 == 0o700
        silent(run.run(b"{}", "Stop"))
        assert len(run.records()) == 1


def test_setup_clears_a_mark_when_it_rearms_a_run(runtime_dir, claude_run, make_claude_run):
    os.chmod(claude_run.run_dir, 0o700 | write.SWEEP_MARK)
    make_claude_run(runtime_dir, claude_run.run_id)
    assert os.stat(claude_run.run_dir).st_mode & 0o7777 == 0o700


# --- many hooks, many sweeps ----------------------------------------------------------

HOOKS = 12


@pytest.mark.parametrize(
    ("held", "rounds"),
    [
        pytest.param(False, 10, id="as-scheduled"),
        pytest.param(True, 24, id="held", marks=needs_strace),
    ],
)
def test_no_record_is_lost_to_sweeps_racing_real_hooks(
    runtime_dir, make_claude_run, tmp_path, held, rounds
):
    """Hooks of one run are released while ``sweep_spools(min_idle=0)`` loops over it; the
    run is set up again whenever a sweep took it, so takes race appends many times. With
    ``held``, most hooks are delayed at a random critical syscall for a random time.

    Every hook exits 0 silently, and its record is in the archive exactly once, or its
    refusal is in ``faults.log`` — never both, never neither.
    """
    rng = random.Random(20261201)
    archive = tmp_path / "archive"
    refused_after_mark = takes = busy = 0
    for round_no in range(rounds):
        run = make_claude_run(runtime_dir, f"race-{round_no}")
        hooks = []
        for n in range(HOOKS):
            point = rng.choice(["spool-open", "lock", "write", None]) if held else None
            hold = _hold(point, run.run_dir, rng.randrange(200, 20_000)) if point else None
            payload = b'{"round":%d,"hook":%d}' % (round_no, n)
            hooks.append(_spawn(run.argv("Stop"), payload, hold))
        while any(h.proc.poll() is None for h in hooks):
            report = sweep_spools(runtime_dir, [], min_idle=0, archive=str(archive))
            takes += len(report.removed)
            busy += len(report.busy)
            if not os.path.isdir(run.run_dir):
                os.mkdir(run.run_dir, 0o700)  # what setup does for the run
        for hook in hooks:
            assert hook.finish() == (0, b"", b""), hook.payload
        sweep_spools(runtime_dir, [], min_idle=0, archive=str(archive))

        archived = _archived(archive)
        faults = _faults(runtime_dir)
        refused = _fault_pids(faults)
        for hook in hooks:
            stored = archived.count(hook.payload)
            assert (stored, refused.count(hook.pid)) in {(1, 0), (0, 1)}, (hook, faults)
        refused_after_mark += faults.count("RunSweptError")
        Path(runtime_dir, write.RUNTIME_FAULT_LOG).unlink(missing_ok=True)  # under its cap

    assert takes >= rounds
    assert sorted(os.listdir(runtime_dir)) == [".sweep.lock"]
    if held:  # the forced interleavings really happened
        assert refused_after_mark > 0
        assert busy > 0
