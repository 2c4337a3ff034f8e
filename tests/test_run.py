"""``agentspool run``: the spawn wrapper as a command.

Where the agent CLI is not what is tested (the argv and environment it gets, its status
passed through, the end recorded), ``pytest-subprocess`` stands in for it; signal
forwarding needs a real process to receive the signal. The real CLIs run in
``tests/live/test_run_real_clis.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import agentspool
from agentspool.core import ledger
from agentspool.core.events import RunEnded


@pytest.fixture
def fake_claude(tmp_path: Path) -> str:
    """An executable named like the CLI (``run`` resolves it on PATH before spawning)."""
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return str(path)


def test_run_spawns_the_cli_with_the_run_and_returns_its_status(
    fp, runtime_dir: str, fake_claude: str
) -> None:
    seen: dict[str, object] = {}

    def record(process) -> None:
        seen["argv"], seen["env"] = list(process.args), dict(process.kwargs["env"])

    fp.register([fake_claude, fp.any()], returncode=7, callback=record)
    status = agentspool.run(
        "claude-code",
        ["-p", "hi there"],
        run_id="r1",
        runtime_dir=runtime_dir,
        executable=fake_claude,
    )
    assert status == 7
    settings = os.path.join(runtime_dir, "r1", "claude-code.settings.json")
    assert seen["argv"] == [fake_claude, "--settings", settings, "-p", "hi there"]
    env = seen["env"]
    assert isinstance(env, dict)
    assert (env["AGENTSPOOL_RUN_ID"], env["AGENTSPOOL_RUNTIME_DIR"]) == ("r1", runtime_dir)
    assert env["PATH"] == os.environ["PATH"]  # the caller's environment, plus the run's
    [end] = ledger.read(os.path.join(runtime_dir, "r1"))
    assert isinstance(end, RunEnded) and end.exit_status == 7
    # swept: only the ledger stays, so the run still reads ended
    assert os.listdir(os.path.join(runtime_dir, "r1")) == [ledger.LEDGER_FILE]
    chat = agentspool.read_chat("claude-code", "r1", runtime_dir)
    assert chat.state == "ended"
    assert chat.evidence[0].detail == "the run ended (exit status 7)"


def test_keep_keeps_the_spool_and_settings(fp, runtime_dir: str, fake_claude: str) -> None:
    fp.register([fake_claude, fp.any()], returncode=0)
    agentspool.run(
        "claude-code", [], run_id="r2", runtime_dir=runtime_dir, keep=True, executable=fake_claude
    )
    assert sorted(os.listdir(os.path.join(runtime_dir, "r2"))) == [
        "claude-code.settings.json",
        ledger.LEDGER_FILE,
    ]


def test_a_missing_cli_is_one_clear_error_and_arms_nothing(runtime_dir: str, tmp_path) -> None:
    with pytest.raises(agentspool.UnsupportedError, match="not found"):
        agentspool.run(
            "claude-code", [], runtime_dir=runtime_dir, executable=str(tmp_path / "nope")
        )
    assert os.listdir(runtime_dir) == []


def _cli(tmp_path: Path, body: str) -> str:
    path = tmp_path / "cli"
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return str(path)


def _start_run(runtime_dir: str, cli: str, tmp_path: Path) -> subprocess.Popen[bytes]:
    """``agentspool run`` in its own session (no controlling terminal), as a supervisor
    would start it."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentspool.cli.main",
            "run",
            "claude-code",
            "--run-id",
            "sig",
            "--runtime-dir",
            runtime_dir,
            "--cli",
            cli,
        ],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signals_sent_to_the_wrapper_reach_the_cli(runtime_dir: str, tmp_path: Path, sig) -> None:
    ready = tmp_path / "ready"
    cli = _cli(
        tmp_path,
        f"""\
        trap 'echo got > {tmp_path}/got; exit 42' {sig.name.removeprefix("SIG")}
        touch {ready}
        while :; do sleep 0.05; done
        """,
    )
    wrapper = _start_run(runtime_dir, cli, tmp_path)
    deadline = time.monotonic() + 30
    while not ready.exists():
        assert time.monotonic() < deadline and wrapper.poll() is None, "the CLI never started"
        time.sleep(0.05)
    wrapper.send_signal(sig)
    assert wrapper.wait(timeout=30) == 42  # the CLI's own status, passed through
    assert (tmp_path / "got").read_text() == "got\n"
    [end] = ledger.read(os.path.join(runtime_dir, "sig"))
    assert isinstance(end, RunEnded) and end.exit_status == 42


def test_a_cli_killed_by_a_signal_exits_128_plus_n(runtime_dir: str, tmp_path: Path) -> None:
    cli = _cli(tmp_path, "kill -KILL $$\n")
    wrapper = _start_run(runtime_dir, cli, tmp_path)
    assert wrapper.wait(timeout=30) == 128 + signal.SIGKILL
    [end] = ledger.read(os.path.join(runtime_dir, "sig"))
    assert isinstance(end, RunEnded) and end.exit_status == 128 + signal.SIGKILL
