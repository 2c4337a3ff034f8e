"""The ``agentspool`` command: a later ``usage --json`` that nothing has changed since
the last one is answered before the CLI is imported (``usage_kept``, ADR 0043): its
imports (argparse, msgspec, the adapters) cost ten times the check. Everything else
runs ``cli.main``."""

from __future__ import annotations

import sys


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["usage"]:
        from agentspool.cli import usage_kept

        if usage_kept.answer(argv):
            return 0
    from agentspool.cli.main import main as run

    return run(argv)


if __name__ == "__main__":
    raise SystemExit(main())
