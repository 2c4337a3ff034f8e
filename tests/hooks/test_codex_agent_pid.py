"""The Codex hook names its agent: the process that ran it (Codex passes no pid).

Codex 0.169.0 runs a hook command through a shell, as a child of the native ``codex``
process; for the one-command line ``setup`` renders the shell execs the hook (observed:
the hook's parent is ``codex`` itself). A shell that does not exec stands between them
and is skipped. Here the test process plays ``codex``.
"""

from __future__ import annotations

import os
import shlex
import subprocess

import pytest

import agentspool
from agentspool.adapters.common.commands import hook_command
from agentspool.spool.read import SpoolReader


@pytest.mark.parametrize(
    "shell",
    [
        pytest.param(lambda cmd: ["/bin/sh", "-c", cmd], id="sh -c (execs the hook)"),
        pytest.param(lambda cmd: ["/bin/bash", "-c", f"{cmd}; true"], id="bash -c (waits)"),
        pytest.param(shlex.split, id="no shell"),
    ],
)
def test_the_agent_pid_is_the_process_that_ran_the_hook(runtime_dir, silent, shell) -> None:
    spawn = agentspool.setup("codex", "run-1", runtime_dir)
    command = hook_command("codex", "PreToolUse")
    proc = subprocess.run(
        shell(command),
        input=b'{"hook_event_name":"PreToolUse"}',
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", **spawn.env},
        cwd="/",
        check=False,
    )
    silent(proc)
    [record] = SpoolReader(spawn.run_dir).read()
    assert record.agent_pid == os.getpid()
    assert record.pid != os.getpid()
