"""The ``agentspool`` command: a later ``usage --json`` that nothing has changed since
the last one is answered before the CLI is imported (``usage_kept``, ADR 0043): its
imports (argparse, msgspec, the adapters) cost ten times the check. Everything else
runs ``cli.main``.

``usage`` ends its process without the interpreter's teardown (``_exit``) once its
answer is flushed: freeing a first run's objects (every response of the history) cost
~16 ms of its ~0.45 s (benchmarks/usage_vs_ccusage.py), where nothing was left to do —
the command starts no thread, registers no exit handler and has closed its store."""

from __future__ import annotations

import os
import sys


def main() -> int:
    argv = sys.argv[1:]
    usage = argv[:1] == ["usage"]
    if usage:
        from agentspool.cli import usage_kept

        if usage_kept.answer(argv):
            return 0
    _import_msgspec()
    from agentspool.cli.main import main as run

    code = run(argv)
    if usage:
        _exit_now(code)
    return code


def _import_msgspec() -> None:
    """msgspec, imported without typing_extensions, which it would import first and
    which imports ``inspect`` (with ``ast``, ``dis`` and ``tokenize``): ~10 ms of every
    command's ~40 ms of imports. msgspec takes three names from it, ``get_type_hints``,
    ``Required`` and ``NotRequired``, and falls back to ``typing``'s own; on Python 3.11
    and later they are the same (typing_extensions' ``get_type_hints`` calls typing's
    with the ``include_extras=True`` msgspec always passes). typing_extensions is hidden
    for that one import: textual or starlette, imported later, load it as usual."""
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]
    try:
        import msgspec  # noqa: F401
    finally:
        del sys.modules["typing_extensions"]


def _exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib costs the kept answer (above) 3 ms
            stream.flush()
        except (OSError, ValueError):  # the reader left (the boundary said so), or closed
            pass
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
