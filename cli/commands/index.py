"""``agentspool index``: every transcript on this machine into the history store
(ADR 0022); and ``index_quietly``, which ``search``, ``usage`` and ``show`` run first."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import agentspool
from agentspool.cli import options
from agentspool.cli._terminal import one_line
from agentspool.cli.output import print_json

# A run that is over sooner shows no progress bar, and does not import rich for one: its
# import (~130 ms) would be most of an incremental run's cost (ADR 0023).
BAR_AFTER = 0.5


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "index",
        "index every transcript on this machine into the history store",
        "Find every transcript each installed adapter knows of (where its CLI keeps "
        "them: subagents' and compressed ones included) and bring the history store up "
        "to date: a file costs what it gained since the last run; a rewritten, truncated "
        "or replaced one is read again; a renamed one keeps its session; the sessions of "
        "deleted files are kept (marked gone). A progress bar on a terminal, one summary "
        "line otherwise.",
        run=run,
    )
    options.store_arg(p)
    options.flag(
        p, "--forget-gone", "remove the sessions whose transcript file is gone (kept by default)"
    )
    options.json_arg(
        p,
        "the IndexReport (files, new, appended, rewritten, unchanged, gone, moved, "
        "forgotten, failed, records, bytes_read, seconds, busy, errors)",
    )


def run(args: argparse.Namespace) -> int:
    report = index(args.store, forget_gone=args.forget_gone)
    warn(report, args.store)
    if args.json:
        print_json(report)
    else:
        print(summary(report))
    return options.EXIT_ERROR if report.failed else options.EXIT_OK


def index(
    store: str | None,
    *,
    forget_gone: bool = False,
    wait: bool = True,
    usage_first: bool = False,
    folder: Any = None,
) -> Any:
    """``index_history`` with a progress bar on a terminal once it has run ``BAR_AFTER``
    seconds with bytes left to read (rich: only then, ADR 0023)."""
    started = time.monotonic()
    bar: Any = None  # the rich Progress, once started
    task: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar, task
        if bar is None:
            if done >= total or time.monotonic() - started < BAR_AFTER:
                return
            from agentspool.cli.render import progress_bar

            bar, task = progress_bar(total)
        bar.update(task, completed=done, total=total)

    try:
        return agentspool.index_history(
            store,
            progress=progress if sys.stderr.isatty() else None,
            forget_gone=forget_gone,
            wait=wait,
            usage_first=usage_first,
            folder=folder,
        )
    finally:
        if bar is not None:
            bar.stop()


def summary(report: agentspool.IndexReport) -> str:
    gone = f", {report.gone} gone" + (
        f" ({report.forgotten} forgotten)" if report.forgotten else ""
    )
    failed = f", {report.failed} failed" if report.failed else ""
    moved = f"; {report.moved} of them moved" if report.moved else ""
    return (
        f"indexed {report.files} transcript files ({report.new} new, {report.appended} "
        f"appended, {report.rewritten} rewritten, {report.unchanged} unchanged{gone}{failed}"
        f"{moved}): "
        f"{report.records} records written, {report.bytes_read / 2**20:.1f} MB read in "
        f"{report.seconds:.1f} s"
    )


def warn(report: agentspool.IndexReport, store: str | None) -> None:
    if report.tightened:
        where = store or agentspool.default_store_path()
        print(
            f"agentspool: warning: history store {where} could be read by others "
            f"({report.tightened}); made private (0600, dir 0700)",
            file=sys.stderr,
        )
    for error in report.errors:
        print(f"agentspool: {one_line(error)}", file=sys.stderr)


def index_quietly(store: str | None, *, usage_first: bool = False, folder: Any = None) -> Any:
    """Bring the store up to date before reading it; another indexer at work: read it
    as it is. A file that could not be read is one line on stderr. ``usage_first``:
    only what ``usage`` reads (ADR 0043), folded by ``folder`` (ADR 0061)."""
    report = index(store, wait=False, usage_first=usage_first, folder=folder)
    warn(report, store)
    return report
