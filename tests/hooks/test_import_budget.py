"""The hook's import budget, checked deterministically through ``sys.modules``.

A hook costs about what the bare interpreter costs only while it imports (almost)
nothing: msgspec, filelock, json, typing, re and pathlib each cost milliseconds to tens
of milliseconds (`python -X importtime`; ADR 0004). This runs the hook's own bootstrap —
the same interpreter flags, the same ``sys.path`` insertion, the same ``main`` call with
a real payload — then prints what got imported.
"""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

FORBIDDEN = {"msgspec", "filelock", "json", "typing", "re", "pathlib", "os"}
# What the hook may add to a bare ``python -I -S``: our own modules and two built-ins.
ALLOWED_EXTRA = {
    "agentspool",
    "agentspool.hooks",
    "agentspool.hooks._entry",
    "agentspool.spool",
    "agentspool.spool.write",
    "binascii",
    "_signal",
}

_PROBE = (
    "import sys, posix\n"
    "sys.path.insert(0,sys.argv[1])\n"
    "posix._exit = lambda status: sys.stderr.write(repr(status) + '\\n')\n"
    "from agentspool.hooks.{module} import main\n"
    "main(sys.argv[2:])\n"
    "sys.stderr.write('\\n'.join(sorted(sys.modules)))\n"
)
"""The hook's bootstrap, with the hook's ``_exit`` (``run`` ends the process) turned into
a report of its status, so that the probe lives on to list what got imported."""


def _modules(argv: list[str]) -> set[str]:
    proc = subprocess.run(argv, capture_output=True, check=True, cwd="/", env={})
    return set(proc.stderr.decode().split("\n"))


@pytest.mark.parametrize("module", ["claude_code", "codex", "gemini_cli"])
def test_hook_main_loads_no_costly_module(claude_run, module):
    command = shlex.split(claude_run.commands["PostToolUse"])
    interpreter, flags, root = command[0], command[1:3], command[5]
    assert (flags, command[3]) == (["-I", "-S"], "-c")
    bare = _modules(
        [interpreter, *flags, "-c", "import sys; sys.stderr.write('\\n'.join(sorted(sys.modules)))"]
    )
    args = [claude_run.runtime_dir, claude_run.run_id, "PostToolUse"]
    probe = subprocess.run(
        [interpreter, *flags, "-c", _PROBE.format(module=module), root, *args],
        input=b'{"tool_name":"Bash","tool_response":{"stdout":"hi"}}',
        capture_output=True,
        check=True,
        cwd="/",
        env={},
    )
    status, *loaded = probe.stderr.decode().split("\n")
    assert (status, probe.stdout) == ("0", b"")
    assert [r.event for r in claude_run.records()] == ["PostToolUse"]  # main really ran
    assert FORBIDDEN & set(loaded) == set()
    assert set(loaded) - bare - {f"agentspool.hooks.{module}"} <= ALLOWED_EXTRA
    assert sys.executable == interpreter
