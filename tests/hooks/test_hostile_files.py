"""Issue 22: whatever another process put where a hook writes, the hook ends at once.

Each case runs the exact command ``setup`` rendered (``claude_run``), or the Codex hook
as Codex runs it, in a subprocess with a timeout well inside the hook's own budget (the
templates give 10 s): before these fixes a FIFO made the hook's ``open`` wait for a
reader that never came, and the agent waited with it.
"""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

from agentspool.adapters.common.commands import hook_argv
from agentspool.spool import write
from agentspool.spool.read import SpoolReader

BUDGET = 5  # seconds; the hook takes milliseconds, the templates allow 10


def _run(claude_run, *, stdin: bytes = b"{}", event: str = "Stop"):
    # subprocess.run's timeout raises TimeoutExpired (the test fails) if the hook hangs.
    return subprocess.run(
        claude_run.argv(event),
        input=stdin,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        check=False,
        timeout=BUDGET,
    )


def test_a_fifo_for_the_spool_ends_at_once(claude_run, silent):
    os.mkfifo(claude_run.spool_path(), 0o600)
    silent(_run(claude_run))
    assert "events.spool" in claude_run.log_text()


def test_a_fifo_with_a_reader_for_the_spool_gets_no_record(claude_run, silent):
    """A FIFO someone holds open for reading opens at once: it is refused as no file."""
    os.mkfifo(claude_run.spool_path(), 0o600)
    reader = os.open(claude_run.spool_path(), os.O_RDONLY | os.O_NONBLOCK)
    try:
        silent(_run(claude_run, stdin=b'{"secret":"prompt"}'))
        try:
            leaked = os.read(reader, 4096)
        except BlockingIOError:
            leaked = b""
    finally:
        os.close(reader)
    assert leaked == b""
    assert "not a regular file" in claude_run.log_text()


def test_a_fifo_for_the_run_log_ends_at_once(claude_run, silent):
    os.mkdir(claude_run.spool_path())  # every append fails: the fault goes to hooks.log
    os.mkfifo(os.path.join(claude_run.run_dir, write.FAULT_LOG), 0o600)
    silent(_run(claude_run))


def test_a_fifo_for_the_runtime_fault_log_ends_at_once(claude_run, silent):
    os.rename(claude_run.run_dir, claude_run.run_dir + ".gone")  # the fault: no run dir
    os.mkfifo(os.path.join(claude_run.runtime_dir, write.RUNTIME_FAULT_LOG), 0o600)
    silent(_run(claude_run))


def test_a_fifo_for_the_provider_file_ends_at_once(tmp_path, silent):
    """Gemini CLI's installed hook reads a wrapped run's ``provider`` file."""
    runtime = tmp_path / "rt"
    (runtime / "wrapped").mkdir(parents=True, mode=0o700)
    runtime.chmod(0o700)
    os.mkfifo(runtime / "wrapped" / write.PROVIDER_FILE, 0o600)
    env = {
        "PATH": "/usr/bin:/bin",
        write.RUNTIME_DIR_ENV: str(runtime),
        write.RUN_ID_ENV: "wrapped",
    }
    proc = subprocess.run(
        hook_argv("gemini_cli", "BeforeAgent", installed=True),
        input=b"{}",
        capture_output=True,
        env=env,
        cwd="/",
        check=False,
        timeout=BUDGET,
    )
    silent(proc)


def test_a_newline_in_the_run_id_stays_on_one_log_line(tmp_path, silent):
    """``AGENTSPOOL_RUN_ID`` is the environment's: a newline in it must not forge a
    second ``faults.log`` line."""
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    env = {
        "PATH": "/usr/bin:/bin",
        write.RUNTIME_DIR_ENV: str(runtime),
        write.RUN_ID_ENV: "r1\n0.000 run=forged pid=1 event=Stop forged",
    }
    proc = subprocess.run(
        hook_argv("codex", "Stop"),
        input=b"{}",
        capture_output=True,
        env=env,
        cwd="/",
        check=False,
        timeout=BUDGET,
    )
    silent(proc)
    lines = (runtime / write.RUNTIME_FAULT_LOG).read_text().splitlines()
    assert len(lines) == 1, lines
    assert "run=r1\\n0.000 run=forged" in lines[0]


def test_a_record_inside_a_torn_payload_is_not_evidence(claude_run, silent):
    """A payload carrying a whole, CRC-correct record (a file the agent read, a prompt)
    whose own record is torn right after it: the reader resynchronises past the tear,
    and must not land on the forged record."""
    silent(claude_run.run(b'{"n":1}', "UserPromptSubmit"))
    forged = write.frame(
        "PermissionRequest", b'{"tool_name":"Bash","tool_input":{"command":"x"}}', 49, -1, 1, 1
    )
    payload = b'{"n":2,"tool_response":"' + forged + b"p" * 5000 + b'"}'
    size = os.path.getsize(claude_run.spool_path())
    limit = size + 200 + len(forged) + 100  # past the forged record, short of the rest

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    silent(claude_run.run(payload, "PostToolUse", preexec_fn=cap))
    assert "short write" in claude_run.log_text()
    silent(claude_run.run(b'{"n":3}', "Stop"))
    reader = SpoolReader(claude_run.run_dir)
    assert [r.event for r in reader.read()] == ["UserPromptSubmit", "Stop"]


def test_the_magic_in_a_whole_payload_is_escaped_as_json_does(claude_run, silent):
    payload = b'{"text":"a\x1eAS1 b"}'
    silent(claude_run.run(payload))
    [record] = claude_run.records()
    assert record.payload == b'{"text":"a\\u001eAS1 b"}'
    assert Path(claude_run.spool_path()).read_bytes().count(b"\x1e") == 1
