"""The hook's import budget, checked deterministically through ``sys.modules``.

A hook costs about what the bare interpreter costs only while it imports (almost)
nothing: msgspec, filelock, json, typing, re and pathlib each cost milliseconds to tens
of milliseconds (`python -X importtime`; ADR 0004). This runs the hook's own bootstrap (the
command ``setup`` renders, with a real payload) and then prints what got imported.
"""

from __future__ import annotations

import ast
import shlex
import subprocess
import sys

import pytest

from agentspool.adapters.common.commands import hook_argv

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

_EXIT = ";import posix;posix._exit(0)"
_REPORT = (
    ";sys.stderr.write(repr((sys.path, [getattr(sys.modules[p], '__file__', None) "
    "for p in ('agentspool', 'agentspool.hooks', 'agentspool.spool')])) + '\\n')"
    ";sys.stderr.write('\\n'.join(sorted(sys.modules)))" + _EXIT
)
"""Put in the hook's own bootstrap before its exit: where it looked for modules, whether
the three packages' ``__init__`` files ran, and what it loaded."""


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
    argv = hook_argv(module, "PostToolUse", claude_run.runtime_dir, claude_run.run_id)
    assert argv[4].count(_EXIT) == 1
    argv[4] = argv[4].replace(_EXIT, _REPORT)
    probe = subprocess.run(
        argv,
        input=b'{"tool_name":"Bash","tool_response":{"stdout":"hi"}}',
        capture_output=True,
        check=True,
        cwd="/",
        env={},
    )
    report, *loaded = probe.stderr.decode().split("\n")
    assert probe.stdout == b""
    assert [r.event for r in claude_run.records()] == ["PostToolUse"]  # main really ran
    # The packages are bare modules: no __init__ ran, the root was never on sys.path.
    path, init_files = ast.literal_eval(report)
    assert (root in path, init_files) == (False, [None, None, None])
    assert FORBIDDEN & set(loaded) == set()
    assert set(loaded) - bare - {f"agentspool.hooks.{module}"} <= ALLOWED_EXTRA
    assert sys.executable == interpreter
