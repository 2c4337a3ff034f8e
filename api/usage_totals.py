"""Token usage and its cost, from live runs and the history store.

A module of the public API (``agentspool``); the facade re-exports its names.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from agentspool.adapters import registry
from agentspool.spool.errors import (
    AgentspoolError,
)

if TYPE_CHECKING:
    from agentspool.core.store import KeptUsage, SessionStore, StoredSession
    from agentspool.core.usage import (
        SessionFold,
        SessionFolder,
        SessionInfo,
        UsageGrouping,
        UsageReport,
    )

__all__ = ["usage"]


from agentspool.history import index_history, open_history


def usage(
    *,
    by: UsageGrouping = "day",
    since: dt.date | None = None,
    until: dt.date | None = None,
    providers: Sequence[str] | None = None,
    timezone: str | None = None,
    prices: str | None = None,
    store: str | None = None,
    index: bool | Callable[[SessionFolder], object] = True,
) -> UsageReport:
    """Token totals — input, output, cache reads and cache writes kept apart — and their
    cost, per day, session, model or project (``by``), over every session of the history
    store (ADR 0025; ``agentspool.core.usage`` states every rule): sessions whose file
    is gone still count.

    ``since``/``until``: keep the days within them, both inclusive. Days are counted in
    ``timezone`` (an IANA name; ``None``: the machine's local time). ``providers``: only
    these (``None``: every registered one). ``prices``: a price table file of the shipped
    table's shape (``None``: the shipped table). A model without a price is shown with
    ``cost_usd=None``, never 0, and every cost says how many tokens it leaves out.
    ``store``: the history store (``None``: ``default_store_path()``); ``index``: bring
    it up to date first (``index_history(store, wait=False, usage_first=True)``: only
    what usage reads of files never read before, ADR 0043; if another indexer is at
    work, what is indexed already), else read what is indexed; a callable indexes
    instead (the CLI's, with its progress bar), given the report's ``SessionFolder`` to
    pass to ``index_history(..., folder=)``: the files it parses are folded where they
    are parsed, and their usage is not read back (ADR 0061). A report is kept in the
    store until the store changes (except with ``prices``).

    Raises ``SettingsError`` for a price file that is not a table,
    ``UnknownProviderError`` for a provider not registered,
    ``zoneinfo.ZoneInfoNotFoundError`` for a zone that does not exist, and
    ``StoreError`` for a store that cannot be read.
    """
    from agentspool.core.pricing import load_prices
    from agentspool.core.usage import SessionFolder, usage_report

    table = load_prices(prices)
    zone = None
    if timezone is not None:
        import zoneinfo

        zone = zoneinfo.ZoneInfo(timezone)
    names = list(providers) if providers is not None else registry.names()
    if providers is not None:
        for name in names:
            registry.load(name)  # an unknown name fails before anything is read
    folder = SessionFolder(table, since=since, until=until, tz=zone)
    if callable(index):
        index(folder)
    elif index:
        index_history(store, wait=False, usage_first=True, folder=folder)
    import msgspec

    from agentspool.core.usage import UsageReport

    # The report is a function of the store's contents and these arguments: kept in the
    # store, it stands until the store changes (ADR 0043). A price file given may change
    # under the same name, so that report is not kept.
    key = None
    if prices is None:
        key = msgspec.json.encode(
            [
                "usage",
                _version(),
                by,
                str(since),
                str(until),
                sorted(names),
                timezone,
                os.environ.get("TZ"),
            ]
        ).decode()
    with open_history(store) as opened:
        kept = opened.remembered(key) if key else None
        if kept is not None:
            return msgspec.json.decode(kept, type=UsageReport)
        # Another process may have written since the index: then its folds may not be
        # what the store holds.
        folded = folder.folded if opened.generation() == folder.generation else {}
        report = usage_report(
            _stored_usage(opened, names, since, folded),
            prices=table,
            by=by,
            since=since,
            until=until,
            tz=zone,
        )
        if key:
            opened.remember(key, msgspec.json.encode(report))
        return report


def _version() -> list[int]:
    """The code that makes the report, as its files stand (an upgrade or an edit of a
    counting rule must not find a report an older one kept)."""
    from agentspool.core import pricing, usage

    shipped = os.path.join(os.path.dirname(pricing.__file__), pricing.PRICES_FILE)
    files = [usage.__file__, pricing.__file__, __file__, shipped]
    return [n for path in files for st in [os.stat(path)] for n in (st.st_mtime_ns, st.st_size)]


def _unique_response_ids(provider: str) -> bool:
    """Whether the provider's response ids are unique across sessions (its capability;
    ``False`` for a provider no longer registered: the safe reading)."""
    try:
        return registry.load(provider).capabilities.unique_response_ids
    except AgentspoolError:
        return False


def _stored_usage(
    store: SessionStore,
    providers: Sequence[str],
    since: dt.date | None,
    folded: Mapping[int, SessionFold],
) -> Iterator[tuple[SessionInfo, list[KeptUsage] | SessionFold]]:
    """Usage's one input: every session of ``providers`` in the store, with its records
    that carry usage (the store's usage index; no conversation is read) — or their fold,
    where this run's index folded each of its files (``folded``, by file id) and none of
    their responses is in another file.

    A usage session is the CLI's session id: every file that carries it counts in it —
    a Claude Code subagent's own file carries its parent's (so its usage counts in its
    parent session), a Codex sub-agent's rollout its own thread's (its own session).
    Its path and project are its main file's (the one that is no subagent's).

    ``since``: a session whose last record is two days before it holds no record on or
    after it in any time zone, so its records are not read."""
    from agentspool.core.usage import SessionInfo, merged_folds

    cutoff = None
    if since is not None:
        start = dt.datetime.combine(since - dt.timedelta(days=2), dt.time(), dt.UTC)
        cutoff = start.timestamp()
    groups: dict[tuple[str, str], list[StoredSession]] = {}
    wanted = set(providers)
    for stored in store.sessions():
        if stored.provider in wanted:
            key = stored.session_id or stored.key  # no id named: the file alone
            groups.setdefault((stored.provider, key), []).append(stored)
    chosen = {
        key: sorted(members, key=lambda s: (s.agent_id != "", s.path))
        for key, members in groups.items()
        if cutoff is None or max(s.updated for s in members) >= cutoff
    }
    files = [s for members in chosen.values() for s in members]
    records = store.usage_by_session([s.id for s in files if s.id not in folded])
    as_folded = _standing_folds(chosen, folded, records)
    # A session some of whose files were folded, but not all its folds stand: read back.
    unfolded = [s for group, members in chosen.items() if group not in as_folded for s in members]
    records.update(store.usage_by_session([s.id for s in unfolded if s.id in folded]))
    unique: dict[str, bool] = {}  # asked of the providers with sessions only (ADR 0062)
    for group, members in chosen.items():
        provider = group[0]
        if provider not in unique:
            unique[provider] = _unique_response_ids(provider)
        main = members[0]
        started = [s.started for s in members if s.started]
        info = SessionInfo(
            provider=provider,
            session_id=main.session_id,
            project=main.cwd or next((s.cwd for s in members if s.cwd), ""),
            path=main.path,
            started=min(started, default=0.0),
            updated=max(s.updated for s in members),
            unique_ids=unique[provider],
            # A main file naming a parent session is a copy of it (a Codex fork); a
            # subagent's file names the session that spawned it, and is no copy.
            copied_from="" if main.agent_id else main.parent_session_id,
        )
        if group in as_folded:
            yield info, merged_folds(folded[s.id] for s in members)
        else:
            yield info, [r for s in members for r in records.get(s.id, ())]


def _standing_folds(
    chosen: Mapping[tuple[str, str], list[StoredSession]],
    folded: Mapping[int, SessionFold],
    records: Mapping[int, list[KeptUsage]],
) -> set[tuple[str, str]]:
    """The sessions to count by their files' folds (ADR 0061): every file folded and
    spanned, and none of their responses in another file (the copy rule needs the
    records of those). ``records``: the usage of every file not folded."""
    if not folded:
        return set()
    seen: set[str] = set()
    shared: set[str] = set()  # the response ids more than one file holds
    for members in chosen.values():
        for s in members:
            ids = (
                folded[s.id].ids
                if s.id in folded
                else (r.message_id for r in records.get(s.id, ()))
            )
            mine = set(ids)
            mine.discard("")
            shared |= seen & mine
            seen |= mine
    return {
        group
        for group, members in chosen.items()
        if all(
            s.id in folded and s.started and s.updated and shared.isdisjoint(folded[s.id].ids)
            for s in members
        )
    }


# -- the history (issue 14, ADR 0022) ------------------------------------------------------
