"""The ``agentspool`` command: a later ``usage --json`` that nothing has changed since
the last one is answered before the CLI is imported (``usage_kept``, ADR 0043): its
imports (argparse, msgspec, the adapters) cost ten times the check. Everything else
runs ``cli.main``.

``usage`` ends its process without the interpreter's teardown (``_exit``) once its
answer is flushed: freeing a first run's objects (every response of the history) cost
~16 ms of its ~0.45 s (benchmarks/usage_vs_ccusage.py), where nothing was left to do —
the command starts no thread, registers no exit handler and has closed its store."""

from __future__ import annotations

import contextlib
import os
import sys


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["usage"]:
        from agentspool.cli import usage_kept

        if usage_kept.answer(argv):
            return 0
    from agentspool.cli.main import main as run

    code = run(argv)
    if argv[:1] == ["usage"]:
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        # The reader left (the error boundary said so already), or the stream is closed.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
