"""Evidence only from the user's own files (ADR 0013).

Every reader — ``read_chat``, ``locate_transcript``, ``spool_sig``, the sweep — refuses a
runtime dir or run dir that is a symlink, another user's, or writable by group or
others, with ``RuntimeDirError``; hooks write nothing there and still exit 0 silently.
A spool forged in such a dir never shows up in a composed state. Readers create and
repair nothing. The forged dirs are built by ``tests/support/unsafe_dirs.py``.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import msgspec
import pytest
from unsafe_dirs import CASES, OTHER_UID, forge, make_unsafe, needs_root

import agentspool
from agentspool.core.events import RunEnded, TaskStateDeclared
from agentspool.core.ledger import LEDGER_FILE
from agentspool.errors import RuntimeDirError
from agentspool.spool import write

PROVIDERS = ["claude-code", "codex"]


def _refused(problem: str, call, *args) -> None:
    with pytest.raises(RuntimeDirError) as caught:
        call(*args)
    assert re.fullmatch(problem, str(caught.value)), str(caught.value)


def test_the_forgery_is_believed_in_a_private_dir(claude_run, tmp_path):
    """The control: planted in the run's own private dir, the forgery would be evidence —
    so the refusals below are what keeps it out of the composed state."""
    forge(claude_run.run_dir, str(tmp_path / "forged.jsonl"))
    (tmp_path / "forged.jsonl").write_bytes(b"")
    run_id, runtime = claude_run.run_id, claude_run.runtime_dir
    assert agentspool.locate_transcript("claude-code", run_id, runtime) == str(
        tmp_path / "forged.jsonl"
    )
    chat = agentspool.read_chat("claude-code", run_id, runtime, "")
    assert chat.state == "needs_input"
    assert chat.pending_approval is not None
    assert chat.pending_approval.tool_name == "Bash"


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("case", CASES)
def test_every_reader_refuses(case, provider, claude_run, tmp_path):
    unsafe = make_unsafe(case, claude_run, tmp_path)
    honest = tmp_path / "honest.jsonl"
    honest.write_bytes(b"")
    args = (provider, unsafe.run_id, unsafe.runtime_dir)
    _refused(unsafe.problem, agentspool.read_chat, *args, "")
    _refused(unsafe.problem, agentspool.read_chat, *args, str(honest))
    _refused(unsafe.problem, agentspool.locate_transcript, *args)
    _refused(unsafe.problem, agentspool.spool_sig, *args)


@pytest.mark.parametrize("case", CASES)
def test_an_ended_run_is_still_read_from_its_transcript(case, claude_run, tmp_path):
    """Transcript-only reads never touch the spool, so the refusal does not block them."""
    unsafe = make_unsafe(case, claude_run, tmp_path)
    chat = agentspool.read_chat(
        "claude-code", unsafe.run_id, unsafe.runtime_dir, unsafe.forged_transcript, ended=True
    )
    assert (chat.state, chat.pending_approval) == ("ended", None)


@pytest.mark.parametrize("case", CASES)
def test_a_reader_that_trusted_the_dir_before_stops_at_once(case, claude_run, tmp_path, silent):
    """A long-lived watcher (one adapter, its spool view cached) read the honest run; once
    the dir turns unsafe its next read refuses instead of folding the forgery in."""
    silent(claude_run.run(b'{"session_id": "s", "prompt_id": "p1"}', "UserPromptSubmit"))
    before = agentspool.read_chat("claude-code", claude_run.run_id, claude_run.runtime_dir, "")
    assert (before.state, before.pending_approval) == ("working", None)
    unsafe = make_unsafe(case, claude_run, tmp_path)
    for _ in range(2):  # and again: a refusal is not cached as "checked"
        _refused(
            unsafe.problem,
            agentspool.read_chat,
            "claude-code",
            unsafe.run_id,
            unsafe.runtime_dir,
            "",
        )


@pytest.mark.parametrize("case", CASES)
def test_readers_create_and_repair_nothing(case, claude_run, tmp_path):
    unsafe = make_unsafe(case, claude_run, tmp_path)
    modes = {
        path: os.lstat(path)[:5]  # mode, ino, dev, nlink, uid
        for path in (unsafe.runtime_dir, os.path.join(unsafe.runtime_dir, unsafe.run_id))
    }
    listing = sorted(os.listdir(unsafe.runtime_dir))
    where = ("claude-code", unsafe.run_id, unsafe.runtime_dir)
    reads = [
        lambda: agentspool.read_chat(*where, ""),
        lambda: agentspool.locate_transcript(*where),
        lambda: agentspool.spool_sig(*where),
    ]
    for read in reads:
        with pytest.raises(RuntimeDirError):
            read()
    assert {path: os.lstat(path)[:5] for path in modes} == modes
    assert sorted(os.listdir(unsafe.runtime_dir)) == listing


def test_a_missing_runtime_dir_is_no_evidence_and_is_not_created(tmp_path):
    runtime = str(tmp_path / "not-yet")
    assert agentspool.locate_transcript("claude-code", "r", runtime) == ""
    assert agentspool.spool_sig("claude-code", "r", runtime) == "absent"
    assert agentspool.read_chat("claude-code", "r", runtime, "").state == "idle"
    assert not os.path.exists(runtime)


def test_a_spool_file_another_user_planted_is_refused(claude_run, tmp_path):
    """The run dir was group-writable for a while: another account replaced the spool
    with its own file. Re-arming the run re-privatises the dir; the file stays theirs."""
    needs_root()
    spool = forge(claude_run.run_dir, str(tmp_path / "forged.jsonl"))
    os.chown(spool, OTHER_UID, OTHER_UID)
    agentspool.setup("claude-code", claude_run.run_id, claude_run.runtime_dir)
    problem = (
        rf"^runtime dir {claude_run.runtime_dir}: run dir {claude_run.run_id}: events.spool "
        rf"is owned by uid {OTHER_UID}, not 0; refused$"
    )
    _refused(
        problem, agentspool.read_chat, "claude-code", claude_run.run_id, claude_run.runtime_dir, ""
    )


def test_a_spool_file_others_may_write_is_refused(claude_run, tmp_path, silent):
    silent(claude_run.run(b"{}", "Stop"))
    os.chmod(claude_run.spool_path(), 0o622)
    problem = (
        rf"^runtime dir {claude_run.runtime_dir}: run dir {claude_run.run_id}: events.spool "
        r"is writable by group or others \(mode 622\); refused$"
    )
    _refused(
        problem,
        agentspool.locate_transcript,
        "claude-code",
        claude_run.run_id,
        claude_run.runtime_dir,
    )


def test_a_run_dir_others_may_only_read_is_still_read(claude_run, silent):
    """Readers guard the evidence's integrity: a dir others may read but not write holds
    only what this user's hooks wrote (hooks themselves refuse it: confidentiality)."""
    silent(claude_run.run(b'{"session_id": "s", "prompt_id": "p1"}', "UserPromptSubmit"))
    os.chmod(claude_run.run_dir, 0o755)
    os.chmod(claude_run.runtime_dir, 0o755)
    chat = agentspool.read_chat("claude-code", claude_run.run_id, claude_run.runtime_dir, "")
    assert chat.state == "working"


@pytest.mark.parametrize("case", CASES)
def test_hooks_write_nothing_there_and_exit_0_silently(case, claude_run, tmp_path, silent):
    unsafe = make_unsafe(case, claude_run, tmp_path)
    before = Path(unsafe.spool).read_bytes()
    silent(claude_run.run(b'{"session_id": "s"}', "Stop"))
    assert Path(unsafe.spool).read_bytes() == before
    faults = os.path.join(unsafe.runtime_dir, write.RUNTIME_FAULT_LOG)
    if "run dir" in case:
        # The runtime dir is sound: the refusal is noted there.
        assert re.search(
            rf"event=Stop (PermissionError|NotADirectoryError): .*{unsafe.run_id}",
            Path(faults).read_text(),
        )
    else:
        # Nothing is written into a runtime dir that is not trusted, not even a fault.
        assert not os.path.lexists(faults)


@pytest.mark.parametrize("case", [c for c in CASES if "runtime dir" in c])
def test_sweep_refuses_an_unsafe_runtime_dir(case, claude_run, tmp_path):
    unsafe = make_unsafe(case, claude_run, tmp_path)
    listing = sorted(os.listdir(unsafe.runtime_dir))
    with pytest.raises(RuntimeDirError):
        agentspool.sweep_spools(unsafe.runtime_dir, keep=[], min_idle=0)
    assert sorted(os.listdir(unsafe.runtime_dir)) == listing
    assert os.path.exists(unsafe.spool)


def test_sweep_never_follows_a_symlinked_run_dir(claude_run, tmp_path):
    unsafe = make_unsafe("symlinked run dir", claude_run, tmp_path)
    agentspool.sweep_spools(unsafe.runtime_dir, keep=[], min_idle=0)
    assert os.path.exists(unsafe.spool)
    assert stat.S_IMODE(os.stat(os.path.dirname(unsafe.spool)).st_mode) == 0o700


def _forge_ledger(run_dir: str) -> None:
    """A ledger saying the task is done and the run ended, planted as another account would."""
    records = b"".join(
        write.frame("Ledger", payload, len(payload), -1, 0, 4242)
        for payload in (
            msgspec.json.encode(TaskStateDeclared(task_state="done")),
            msgspec.json.encode(RunEnded(exit_status=0)),
        )
    )
    fd = os.open(os.path.join(run_dir, LEDGER_FILE), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, records)
    finally:
        os.close(fd)


def test_the_forged_ledger_is_believed_in_a_private_dir(claude_run, tmp_path):
    """The control for the test below: the ledger decides ``ended`` and the task state."""
    _forge_ledger(claude_run.run_dir)
    transcript = tmp_path / "honest.jsonl"
    transcript.write_bytes(b"")
    chat = agentspool.read_chat(
        "claude-code", claude_run.run_id, claude_run.runtime_dir, str(transcript), live=False
    )
    assert (chat.state, chat.task_state) == ("ended", "done")


@pytest.mark.parametrize("case", CASES)
def test_a_ledger_in_an_unsafe_dir_is_refused_even_transcript_only(case, claude_run, tmp_path):
    """The ledger is read even when live signals are off: it goes through the same check."""
    unsafe = make_unsafe(case, claude_run, tmp_path)
    _forge_ledger(os.path.dirname(unsafe.spool))
    transcript = tmp_path / "honest.jsonl"
    transcript.write_bytes(b"")
    _refused(
        unsafe.problem,
        lambda: agentspool.read_chat(
            "claude-code", unsafe.run_id, unsafe.runtime_dir, str(transcript), live=False
        ),
    )
