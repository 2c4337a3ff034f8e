"""``tidy``: which runs are finished (declared done, and ended), and removing them.

A module of the public API (``agentspool``); the facade re-exports its names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import msgspec

from agentspool.adapters import registry
from agentspool.core.seam import (
    Adapter,
)
from agentspool.spool.errors import (
    AgentspoolError,
    TranscriptGoneError,
)

if TYPE_CHECKING:
    pass

__all__ = ["TidyReport", "TidyRun", "tidy"]


from agentspool.api import _runtime

TidyVerdict = Literal["remove", "keep", "busy"]


class TidyRun(msgspec.Struct, frozen=True, kw_only=True):
    """One run as ``tidy`` judged it."""

    run_id: str
    provider: str
    verdict: TidyVerdict
    """``remove`` (with ``dry_run``: would remove), ``keep``, or ``busy``: judged
    removable, but written to while tidy took it, so left alone."""
    why: str


class TidyReport(msgspec.Struct, kw_only=True):
    """What ``tidy`` did (or, with ``dry_run``, would do)."""

    dry_run: bool
    removed: list[str]
    """The runs removed (``dry_run``: that would be)."""
    archived: list[str]
    """The removed runs whose evidence and ledger went to the archive."""
    runs: list[TidyRun]
    """Every run tidy looked at, in name order, with why it is removed or kept."""


def tidy(
    runtime_dir: str | None = None, *, dry_run: bool = True, archive: str | None = None
) -> TidyReport:
    """Remove the runs that are finished: the latest declaration is ``done`` and the run
    ended — its ledger records the end (``RunEnded``), or its agent process is gone.

    Never a run whose latest declaration is ``active`` or ``blocked``, never one never
    declared (process exit never means done), never one whose agent process still runs,
    never one whose ledger holds records this version cannot read. ``dry_run`` (the
    default) only reports. The removal is the sweep's (ADR 0015): each run is judged under
    the sweep lock, then taken only if nothing was written to it since; with ``archive``
    its spool, ledger and provider file are moved there first (ADR 0018).
    """
    from agentspool.core import runs
    from agentspool.spool.sweep import sweep_spools as sweep

    runtime = _runtime(runtime_dir)
    names = registry.names()
    providers = {ref.run_id: ref.provider for ref in runs.run_dirs(runtime, names)}
    fresh: dict[str, Adapter] = {}
    judged: dict[str, TidyRun] = {}

    def select(run_id: str, path: str) -> bool:
        provider = providers.get(run_id, "")
        try:
            why, removable = _tidy_judgement(provider, run_id, runtime, path, fresh)
        except (AgentspoolError, OSError) as exc:
            # One unreadable run (another user's, opened up, damaged) is kept and named;
            # it must not stop the others from being judged.
            why, removable = f"cannot be read: {exc}", False
        judged[run_id] = TidyRun(
            run_id=run_id, provider=provider, verdict="remove" if removable else "keep", why=why
        )
        return removable

    report = sweep(runtime, (), min_idle=0.0, dry_run=dry_run, archive=archive, select=select)
    for run_id in report.busy:
        before = judged.get(run_id)
        judged[run_id] = TidyRun(
            run_id=run_id,
            provider=providers.get(run_id, ""),
            verdict="busy",
            why="written to while tidy took it; left alone"
            + (f" (it was: {before.why})" if before else ""),
        )
    return TidyReport(
        dry_run=dry_run,
        removed=report.removed,
        archived=report.archived,
        runs=[judged[run_id] for run_id in sorted(judged)],
    )


def _tidy_judgement(
    provider: str, run_id: str, runtime: str, path: str, fresh: dict[str, Adapter]
) -> tuple[str, bool]:
    """(why, whether the run is finished and may go)."""
    from agentspool.core import ledger

    life = ledger.lifecycle(path)
    if life.undecodable:
        return f"its ledger holds {life.undecodable} records this version cannot read", False
    if life.declared is None:
        return "its task state was never declared (process exit never means done)", False
    if life.task_state != "done":
        reason = f": {life.task_reason}" if life.task_reason else ""
        return f"its latest declaration is {life.task_state}{reason}", False
    if not provider:
        return "done, but no registered adapter reads it (its agent process is unknown)", False
    adapter = fresh.get(provider)
    if adapter is None:
        # A fresh adapter: tidy must not fill (or read stale) the shared read caches.
        adapter = fresh[provider] = type(registry.load(provider))()
    transcript = adapter.locate_transcript(run_id, runtime)
    try:
        chat = adapter.read_chat(run_id, runtime, transcript)
    except TranscriptGoneError:
        chat = adapter.read_chat(run_id, runtime, "")
    if chat.process == "alive":
        return f"done, but its agent process {chat.pid} still runs", False
    if life.ended is not None:
        status = life.ended.exit_status
        return "done, and the run ended" + (
            f" (exit status {status})" if status is not None else ""
        ), True
    if chat.process == "gone":
        return f"done, and its agent process {chat.pid} is gone", True
    return "done, but nothing shows its agent process ended", False
