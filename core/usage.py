"""``usage_report``: token totals and their cost, from canonical records (ADR 0025).

Input: one ``(SessionInfo, records)`` pair per session — who wrote it, and its canonical
records (a session's subagents' included): every ``Message`` of an adapter's full read,
or only those carrying usage as the history store's usage index holds them
(``UsageRecord``; then ``SessionInfo.started``/``updated`` give the session's span).
Nothing here reads a file or checks a provider.

What counts (an *entry*)
    A record whose ``usage`` has tokens: one API response's usage, which the adapter put
    on one record of that response (``Message.usage``). Every visibility counts — a
    superseded or hidden exchange was still paid for. A record with usage and no tokens
    at all (a synthetic error message) adds nothing and names no model.

Each response counts once
    Within a session, the first record (stream order) carrying usage for a
    ``message_id`` counts; a record with usage and an empty ``message_id`` counts on its
    own (the rule of ``core/detail.py``). Across sessions, a response is the same
    response when ``(provider, message_id, timestamp)`` are the same: a session resumed
    into a new file (a fork) copies earlier records with their ids and times, and
    those count once, in the session that comes first — sessions ordered by their
    first record's moment, then their last record's (the session that stopped earlier is
    the one the others copied), then provider and session id. The timestamp is part of
    the key because an id alone is not unique across files written by test servers
    that number their responses — unless the session's ids are the API's own
    (``SessionInfo.unique_ids``): a CLI may stamp a copy with the time it copied it
    (Claude Code 1.0.x ``--continue``), so then ``(provider, message_id)`` is the key.
    A session that states it was copied from another (``SessionInfo.copied_from``: a
    Codex fork, whose ids are no API's) holds its copies under new times too: an entry
    of it whose ``(provider, message_id)`` a session before it in that order has counted
    is a copy, whatever its time.

The four token kinds are kept apart
    ``input_tokens`` here is plain input: neither read from nor written to the cache
    (``Usage.input_tokens - cached_input_tokens - cache_write_tokens``);
    ``cache_read_tokens`` and ``cache_write_tokens`` beside it; ``output_tokens``
    (reasoning included, as providers bill it). ``total_tokens`` is their sum.

Days and date filters
    An entry's day is its timestamp's date in ``tz`` (``None``: the machine's local
    time, as its zone rules had it at that moment). ``since``/``until`` keep entries
    whose day is within them, both inclusive.
    An entry with no readable timestamp has day ``""`` and is dropped by either filter.

Cost
    Per entry, from ``prices`` at the entry's UTC date (``core/pricing.py``). An entry
    the table cannot price adds its tokens to ``unpriced_tokens`` and its model to
    ``unpriced_models``; a row's ``cost_usd`` is the sum of its priced entries, ``None``
    when none of them is priced. So a cost never silently includes a zero for a model
    without a price, and a row says how many of its tokens its cost leaves out.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Literal, Protocol

import msgspec

from agentspool.core.pricing import PriceTable
from agentspool.core.seam import Usage

__all__ = [
    "Charged",
    "SessionInfo",
    "UsageGrouping",
    "UsageReport",
    "UsageRow",
    "usage_report",
]

UsageGrouping = Literal["day", "session", "model", "project"]


class SessionInfo(msgspec.Struct, frozen=True, kw_only=True):
    """Who wrote a session's records, and where."""

    provider: str
    session_id: str
    project: str = ""
    """The agent's working directory as its evidence names it (``""``: not named)."""
    path: str = ""
    """The session's transcript (its main file when it has subagent files too)."""
    started: float = 0.0
    """Epoch seconds of the session's first record with a time, when the records given
    are not all of its records (0: the records given say)."""
    updated: float = 0.0
    """Epoch seconds of its last record with a time (0: the records given say)."""
    unique_ids: bool = False
    """Its records' ``message_id`` values are unique across sessions (the provider's
    ``Capabilities.unique_response_ids``): a copy is known by its id alone."""
    copied_from: str = ""
    """The session this one's transcript says it was copied from (a fork), ``""`` for
    none: its records that repeat an earlier session's responses count there only,
    even under another time (the fork re-stamped them)."""


class Charged(Protocol):
    """What a record gives usage: a ``Message``, or a store's ``UsageRecord``."""

    @property
    def timestamp(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def message_id(self) -> str: ...
    @property
    def usage(self) -> Usage | None: ...


class UsageRow(msgspec.Struct, kw_only=True):
    """One group's totals (module docstring: what counts, and cost)."""

    key: str
    """The day (``YYYY-MM-DD``), session id, model or project the row totals."""
    provider: str = ""
    """The provider, when every entry of the row is one provider's."""
    project: str = ""
    path: str = ""
    """``by="session"``: the session's transcript."""
    first: str = ""
    """The first and last entry's timestamp, as the records state them."""
    last: str = ""
    models: list[str] = []
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = None
    """The priced entries' cost; ``None`` when no entry of the row has a price."""
    unpriced_tokens: int = 0
    """Tokens of entries the price table cannot price: not in ``cost_usd``."""
    unpriced_models: list[str] = []


class UsageReport(msgspec.Struct, kw_only=True):
    by: UsageGrouping
    since: str = ""
    until: str = ""
    timezone: str
    """The zone days are counted in (``local``: the machine's)."""
    prices_taken: str
    """The day the price table's prices were read."""
    rows: list[UsageRow]
    total: UsageRow


class _Entry(msgspec.Struct, kw_only=True, gc=False):
    session: SessionInfo
    timestamp: str
    model: str
    message_id: str
    usage: Usage
    moment: dt.datetime | None
    """The timestamp read as a moment (``None``: no readable time), read once."""


def _has_tokens(usage: Usage) -> bool:
    return bool(usage.input_tokens or usage.output_tokens)


def _session_entries(
    info: SessionInfo, messages: Iterable[Charged]
) -> tuple[list[_Entry], float, float]:
    """The session's entries (each response once) and its first and last record's moment
    (epoch seconds; 0: none has a time)."""
    entries: list[_Entry] = []
    seen: set[str] = set()
    first, last = info.started, info.updated
    for message in messages:
        stamp = message.timestamp
        moment = _moment(stamp) if stamp else None
        if moment is not None:
            at = moment.timestamp()
            first = min(first, at) if first else at
            last = max(last, at)
        usage = message.usage
        if usage is None or not _has_tokens(usage):
            continue
        if message.message_id:
            if message.message_id in seen:
                continue
            seen.add(message.message_id)
        entries.append(
            _Entry(
                session=info,
                timestamp=stamp,
                model=message.model,
                message_id=message.message_id,
                usage=usage,
                moment=moment,
            )
        )
    return entries, first, last


def _once(sessions: Iterable[tuple[SessionInfo, Iterable[Charged]]]) -> list[_Entry]:
    """Every entry of every session, a response copied into several sessions once."""
    collected = []
    for info, messages in sessions:
        entries, first, last = _session_entries(info, messages)
        if entries:
            collected.append(((first, last, info.provider, info.session_id), entries))
    collected.sort(key=lambda pair: pair[0])
    seen: set[tuple[str, str, str]] = set()
    counted: set[tuple[str, str]] = set()
    kept = []
    for _, entries in collected:
        for entry in entries:
            if entry.message_id:
                stamp = "" if entry.session.unique_ids else entry.timestamp
                key = (entry.session.provider, entry.message_id, stamp)
                response = key[:2]
                if key in seen or (entry.session.copied_from and response in counted):
                    continue
                seen.add(key)
                counted.add(response)
            kept.append(entry)
    return kept


def _moment(stamp: str) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _key(entry: _Entry, by: UsageGrouping, day: str) -> tuple[str, str]:
    """The row's key, and the provider it is unique within (sessions only)."""
    if by == "day":
        return "", day
    if by == "session":
        return entry.session.provider, entry.session.session_id
    if by == "model":
        return "", entry.model
    return "", entry.session.project


def _add(
    row: UsageRow, entry: _Entry, figures: tuple[int, int, int, int], cost: float | None
) -> None:
    """Add one entry to a row; ``figures``: its plain input, output, cache read and cache
    write tokens (computed once for the entry's row and the total)."""
    provider, model, stamp = entry.session.provider, entry.model, entry.timestamp
    if not row.total_tokens:  # the row's first entry (every entry has tokens)
        row.provider = provider
    elif row.provider != provider:
        row.provider = ""
    plain, output, read, written = figures
    row.input_tokens += plain
    row.output_tokens += output
    row.cache_read_tokens += read
    row.cache_write_tokens += written
    tokens = plain + output + read + written
    row.total_tokens += tokens
    if model not in row.models:
        row.models.append(model)
    if cost is None:
        row.unpriced_tokens += tokens
        if model not in row.unpriced_models:
            row.unpriced_models.append(model)
    else:
        row.cost_usd = (row.cost_usd or 0.0) + cost
    if stamp and (not row.first or stamp < row.first):
        row.first = stamp
    row.last = max(row.last, stamp)


def usage_report(
    sessions: Iterable[tuple[SessionInfo, Iterable[Charged]]],
    *,
    prices: PriceTable,
    by: UsageGrouping = "day",
    since: dt.date | None = None,
    until: dt.date | None = None,
    tz: dt.tzinfo | None = None,
) -> UsageReport:
    """Totals per ``by`` group, and over all (module docstring: every rule)."""
    rows: dict[tuple[str, str], UsageRow] = {}
    total = UsageRow(key="total")
    filtered = since is not None or until is not None
    for entry in _once(sessions):
        moment = entry.moment
        # No zone: the machine's rules for that moment (its offset then, DST and all).
        day = moment.astimezone(tz).date() if moment is not None else None
        if filtered and (
            day is None
            or (since is not None and day < since)
            or (until is not None and day > until)
        ):
            continue
        price_day = moment.astimezone(dt.UTC).date() if moment is not None else dt.date.max
        usage = entry.usage
        cost = prices.cost(entry.model, price_day, usage)
        key = _key(entry, by, day.isoformat() if day is not None else "")
        row = rows.get(key)
        if row is None:
            row = rows[key] = UsageRow(key=key[1])
            if by == "session":
                row.project, row.path = entry.session.project, entry.session.path
            elif by == "project":
                row.project = key[1]
        read, written = usage.cached_input_tokens, usage.cache_write_tokens
        figures = (usage.input_tokens - read - written, usage.output_tokens, read, written)
        _add(row, entry, figures, cost)
        _add(total, entry, figures, cost)
    ordered = sorted(rows.values(), key=lambda r: (r.first, r.key) if by == "session" else (r.key,))
    return UsageReport(
        by=by,
        since=since.isoformat() if since else "",
        until=until.isoformat() if until else "",
        timezone=str(tz) if tz is not None else "local",
        prices_taken=prices.taken.isoformat(),
        rows=ordered,
        total=total,
    )
