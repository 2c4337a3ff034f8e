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
    ``unpriced_models``; a row's ``cost_usd`` is the sum of its priced entries (exact,
    ``math.fsum``: the same whatever order they come in), ``None`` when none of them is
    priced. So a cost never silently includes a zero for a model
    without a price, and a row says how many of its tokens its cost leaves out.
    A session's entries that one row counts and one set of rates prices (the same
    model, UTC date and prompt size class, each with or without cache reads and cache
    writes) are priced as one: their tokens summed, then priced — the cost of each
    entry, rounded once instead of once per entry.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Iterable
from typing import Literal, Protocol

import msgspec

from agentspool.core.pricing import PriceTable
from agentspool.core.seam import Usage

__all__ = [
    "Charged",
    "SessionFold",
    "SessionFolder",
    "SessionInfo",
    "UsageGrouping",
    "UsageReport",
    "UsageRow",
    "merged_folds",
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
    """Epoch seconds of the session's first record with a time (in file order, ADR
    0057), when the records given are not all of its records (0: the records given say)."""
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


def _entries(messages: Iterable[Charged]) -> list[Charged]:
    """A session's entries: its records with tokens, each response once (its first
    record with usage for a ``message_id``; one without an id counts on its own)."""
    entries: list[Charged] = []
    seen: set[str] = set()
    for message in messages:
        usage = message.usage
        if usage is None or not (usage.input_tokens or usage.output_tokens):
            continue  # no tokens at all: a synthetic error message
        message_id = message.message_id
        if message_id:
            if message_id in seen:
                continue
            seen.add(message_id)
        entries.append(message)
    return entries


def _session_entries(
    info: SessionInfo, messages: Iterable[Charged]
) -> tuple[list[Charged], float, float]:
    """The session's entries (``_entries``) and its first and last record's moment
    (epoch seconds; 0: none has a time): the first and the last record with a time in the
    order given, the file's (ADR 0057)."""
    first, last = info.started, info.updated
    # A span the store gives holds every record's time already (the records given are
    # the ones with usage): reading each record's time again would find nothing new.
    if first and last:
        return _entries(messages), first, last
    messages = list(messages)
    for message in messages:
        moment = _moment(message.timestamp) if message.timestamp else None
        if moment is not None:
            last = moment.timestamp()
            first = first or last
    return _entries(messages), first, last


def _once(
    sessions: Iterable[tuple[SessionInfo, Iterable[Charged] | SessionFold]],
) -> list[tuple[SessionInfo, list[Charged] | SessionFold]]:
    """Every session's entries (or its fold), in the order sessions count (module
    docstring), a response copied into several sessions counted once. A session given
    folded holds no response another session holds (``SessionFold``): it keeps them all."""
    collected: list[tuple[tuple[float, float, str, str], SessionInfo, list[Charged] | SessionFold]]
    collected = []
    ids: list[set[str]] = []
    for info, messages in sessions:
        if isinstance(messages, SessionFold):
            if not (info.started and info.updated):
                raise ValueError(f"session {info.session_id}: folded without its span")
            if messages.groups:
                collected.append(
                    ((info.started, info.updated, info.provider, info.session_id), info, messages)
                )
            continue
        entries, first, last = _session_entries(info, messages)
        if entries:
            collected.append(((first, last, info.provider, info.session_id), info, entries))
            ids.append({e.message_id for e in entries if e.message_id})
    collected.sort(key=lambda found: found[0])
    if sum(map(len, ids)) == len(set().union(*ids)):
        # No response id in two sessions (the usual history): nothing is a copy.
        return [(info, entries) for _, info, entries in collected]
    seen: set[tuple[str, str, str]] = set()
    counted: set[tuple[str, str]] = set()
    kept: list[tuple[SessionInfo, list[Charged] | SessionFold]] = []
    for _, info, held in collected:
        if isinstance(held, SessionFold):
            kept.append((info, held))
            continue
        own = []
        for entry in held:
            if entry.message_id:
                stamp = "" if info.unique_ids else entry.timestamp
                key = (info.provider, entry.message_id, stamp)
                response = key[:2]
                if key in seen or (info.copied_from and response in counted):
                    continue
                seen.add(key)
                counted.add(response)
            own.append(entry)
        kept.append((info, own))
    return kept


_from_iso = dt.datetime.fromisoformat


def _moment(stamp: str) -> dt.datetime | None:
    try:
        moment = _from_iso(stamp)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


class _Days:
    """An entry's day in the report's zone (and as ``YYYY-MM-DD``) and its UTC day
    (prices change by UTC day), from its timestamp; ``None`` for a time that does not
    read.

    Tens of thousands of entries fall in a few thousand minutes: the days of a UTC stamp
    (``…THH:MM…Z``) are worked out once per minute. Exact because a zone's offset is a
    whole number of minutes and changes on a minute (tzdata since 1972)."""

    def __init__(self, tz: dt.tzinfo | None) -> None:
        self._tz = tz
        self._by_minute: dict[str, tuple[dt.date, str, dt.date]] = {}

    def of(self, stamp: str) -> tuple[dt.date, str, dt.date] | None:
        # A minute met before: the stamp is still read whole (a time that does not read
        # has no day), but not made aware and converted (a third of the fold's time).
        known = self._by_minute.get(stamp[:16])
        if known is not None and stamp[-1:] == "Z":
            try:
                _from_iso(stamp)
            except ValueError:
                return None
            return known
        moment = _moment(stamp) if stamp else None
        if moment is None:
            return None
        minute = stamp[:16] if stamp[-1:] == "Z" and stamp[13:14] == ":" else ""
        # No zone: the machine's rules for that moment (its offset then, DST and all).
        day = moment.astimezone(self._tz).date()
        days = (day, day.isoformat(), moment.astimezone(dt.UTC).date())
        if minute:
            self._by_minute[minute] = days
        return days


def _widened(first: str, last: str, other_first: str, other_last: str) -> tuple[str, str]:
    """The first and the last timestamp of two sets of entries, each ``""`` where a set
    has none (the empty string sorts first: it never wins ``first``)."""
    if other_first and (not first or other_first < first):
        first = other_first
    return first, max(last, other_last)


_Alike = tuple[str, str, dt.date, bool, bool, bool]
"""What decides a session's entries' row and rates: the day's name, the model, the UTC
price day, a long prompt or not, cache reads or not, cache writes or not."""


class _Priced(msgspec.Struct, array_like=True, gc=False):
    """A session's entries that one row counts and one set of rates prices: their tokens
    summed, the first and last timestamp, the place of the first in the report (in its
    session, for a ``SessionFold``)."""

    place: int
    first: str = ""
    last: str = ""
    everything: int = 0
    """``Usage.input_tokens``, cache reads and writes included."""
    output: int = 0
    read: int = 0
    written: int = 0

    def usage(self) -> Usage:
        return Usage(
            input_tokens=self.everything,
            output_tokens=self.output,
            cached_input_tokens=self.read,
            cache_write_tokens=self.written,
        )

    def take(self, other: _Priced) -> None:
        """Add ``other``'s entries, which come after this one's first."""
        self.everything += other.everything
        self.output += other.output
        self.read += other.read
        self.written += other.written
        self.first, self.last = _widened(self.first, self.last, other.first, other.last)


class SessionFold(msgspec.Struct, array_like=True, gc=False):
    """A session's entries summed by ``SessionFolder.fold`` before the report is made: a
    first ``usage`` folds each file on the core that parses it (ADR 0061). Given to
    ``usage_report`` for a session none of whose responses another session holds (it is
    no copy, and nothing is a copy of it) and whose span its ``SessionInfo`` gives."""

    count: int
    """Its entries within the report's dates: the places its ``groups`` number from 0."""
    groups: list[tuple[_Alike, _Priced]]
    """Its sums, in the order of each one's first entry."""
    ids: list[str]
    """Its entries' response ids (those that have one)."""


def merged_folds(folds: Iterable[SessionFold]) -> SessionFold:
    """The fold of one session's files read one after another (none repeats a response
    of another): what folding their entries in that order gives."""
    groups: dict[_Alike, _Priced] = {}
    count = 0
    ids: list[str] = []
    for fold in folds:
        for key, priced in fold.groups:
            held = groups.get(key)
            if held is None:
                groups[key] = msgspec.structs.replace(priced, place=priced.place + count)
            else:
                held.take(priced)
        count += fold.count
        ids += fold.ids
    return SessionFold(count=count, groups=list(groups.items()), ids=ids)


class SessionFolder:
    """What each session's entries give the report alone — their sums by row and rates —
    for the report's dates, zone and prices. ``usage_report`` folds every session it is
    given records of; a first ``usage`` folds each file as it is parsed (``fold``), and
    the index keeps the folds by the store's file (``folded``)."""

    def __init__(
        self,
        prices: PriceTable,
        *,
        since: dt.date | None = None,
        until: dt.date | None = None,
        tz: dt.tzinfo | None = None,
    ) -> None:
        self.prices, self.since, self.until = prices, since, until
        self._days_of = _Days(tz).of
        self.folded: dict[int, SessionFold] = {}
        """The folds of the files an index read, by the store's id of each file."""
        self.generation = -1
        """The store's generation when that index ended (``SessionStore.generation``):
        the folds stand for the store while it is still at it."""

    def fold(self, records: Iterable[Charged]) -> SessionFold:
        """The fold of one session's (or one file's) records, in their order."""
        entries = _entries(records)
        alike, count = self.alike(entries, 0)
        ids = [e.message_id for e in entries if e.message_id]
        return SessionFold(count=count, groups=list(alike.items()), ids=ids)

    def alike(self, entries: Iterable[Charged], place: int) -> tuple[dict[_Alike, _Priced], int]:
        """``entries`` (each with tokens) summed by what prices and counts them alike,
        within the dates, each sum's place that of its first entry (counted on from
        ``place``); and the place after the last."""
        since, until = self.since, self.until
        filtered = since is not None or until is not None
        days_of = self._days_of
        long_over = self.prices.long_prompt_over
        # An entry's model and price day are most often the one's before it.
        last_model, last_day, over = "", None, 0.0
        alike: dict[_Alike, _Priced] = {}
        for entry in entries:
            stamp = entry.timestamp
            days = days_of(stamp)
            if days is None:
                if filtered:
                    continue
                name, price_day = "", dt.date.max
            else:
                day, name, price_day = days
                if (since is not None and day < since) or (until is not None and day > until):
                    continue
            usage = entry.usage
            assert usage is not None  # an entry has tokens (``_entries``)
            model, everything = entry.model, usage.input_tokens
            read, written = usage.cached_input_tokens, usage.cache_write_tokens
            if model != last_model or price_day != last_day:
                last_model, last_day, over = model, price_day, long_over(model, price_day)
            key = (name, model, price_day, everything > over, read > 0, written > 0)
            priced = alike.get(key)
            if priced is None:
                priced = alike[key] = _Priced(place)
            priced.everything += everything
            priced.output += usage.output_tokens
            priced.read += read
            priced.written += written
            if stamp:
                if not priced.first or stamp < priced.first:
                    priced.first = stamp
                # Not max(): the call is a fifth of this loop (8 ms of 36 k entries).
                if stamp > priced.last:  # noqa: PLR1730
                    priced.last = stamp
            place += 1
        return alike, place


class _Tally:
    """One row's running totals (module docstring: what counts, and cost)."""

    __slots__ = (
        "costs",
        "first",
        "last",
        "models",
        "output",
        "plain",
        "provider",
        "read",
        "unpriced_models",
        "unpriced_tokens",
        "written",
    )

    def __init__(self) -> None:
        self.provider: str | None = None
        self.plain = self.output = self.read = self.written = 0
        self.costs: list[float] = []
        self.unpriced_tokens = 0
        self.models: dict[str, int] = {}
        """Each model of the row, and the place of its first entry in the report."""
        self.unpriced_models: dict[str, int] = {}
        self.first = self.last = ""

    def add(
        self, provider: str, model: str, priced: _Priced, cost: float | None, place: int
    ) -> None:
        """Add ``priced``, the entries of ``provider`` that ``cost`` prices together, the
        first of them at ``place`` in the report."""
        if self.provider != provider:
            self.provider = provider if self.provider is None else ""
        read, written, output = priced.read, priced.written, priced.output
        plain = priced.everything - read - written
        self.plain += plain
        self.output += output
        self.read += read
        self.written += written
        self.models.setdefault(model, place)
        if cost is None:
            self.unpriced_tokens += plain + output + read + written
            self.unpriced_models.setdefault(model, place)
        else:
            self.costs.append(cost)
        self.first, self.last = _widened(self.first, self.last, priced.first, priced.last)

    @classmethod
    def total(cls, rows: Iterable[_Tally]) -> _Tally:
        """The tally of every entry of ``rows``."""
        total = cls()
        for row in rows:
            if total.provider != row.provider:
                total.provider = row.provider if total.provider is None else ""
            total.plain += row.plain
            total.output += row.output
            total.read += row.read
            total.written += row.written
            total.costs += row.costs
            total.unpriced_tokens += row.unpriced_tokens
            for mine, theirs in (
                (total.models, row.models),
                (total.unpriced_models, row.unpriced_models),
            ):
                for model, place in theirs.items():
                    mine[model] = min(mine.get(model, place), place)
            total.first, total.last = _widened(total.first, total.last, row.first, row.last)
        return total

    def row(self, key: str, *, project: str = "", path: str = "") -> UsageRow:
        plain, output, read, written = self.plain, self.output, self.read, self.written
        return UsageRow(
            key=key,
            provider=self.provider or "",
            project=project,
            path=path,
            first=self.first,
            last=self.last,
            models=sorted(self.models, key=self.models.__getitem__),
            input_tokens=plain,
            output_tokens=output,
            cache_read_tokens=read,
            cache_write_tokens=written,
            total_tokens=plain + output + read + written,
            # Summed exactly: a row's cost is its entries' whatever order they came in.
            cost_usd=math.fsum(self.costs) if self.costs else None,
            unpriced_tokens=self.unpriced_tokens,
            unpriced_models=sorted(self.unpriced_models, key=self.unpriced_models.__getitem__),
        )


_KEYS: dict[str, Callable[[SessionInfo, str, str], tuple[str, str]]] = {
    "day": lambda info, model, day: ("", day),
    # A session id is unique within its provider.
    "session": lambda info, model, day: (info.provider, info.session_id),
    "model": lambda info, model, day: ("", model),
    "project": lambda info, model, day: ("", info.project),
}
"""A row's key, by grouping (from the session, the model and the day's name): the
provider it is unique within, and its name."""


def usage_report(
    sessions: Iterable[tuple[SessionInfo, Iterable[Charged] | SessionFold]],
    *,
    prices: PriceTable,
    by: UsageGrouping = "day",
    since: dt.date | None = None,
    until: dt.date | None = None,
    tz: dt.tzinfo | None = None,
) -> UsageReport:
    """Totals per ``by`` group, and over all (module docstring: every rule). A session
    may come folded already (``SessionFold``, by a ``SessionFolder`` of the same dates,
    zone and prices)."""
    tallies: dict[tuple[str, str], tuple[_Tally, SessionInfo]] = {}
    folder = SessionFolder(prices, since=since, until=until, tz=tz)
    key_of = _KEYS[by]
    place = 0
    for info, entries in _once(sessions):
        # Each sum of alike entries is priced and counted once.
        if isinstance(entries, SessionFold):
            groups: Iterable[tuple[_Alike, _Priced]] = entries.groups
            offset, place = place, place + entries.count
        else:
            alike, place_after = folder.alike(entries, place)
            groups, offset, place = alike.items(), 0, place_after
        for (name, model, price_day, long_prompt, _, _), priced in groups:
            row_key = key_of(info, model, name)
            found = tallies.get(row_key)
            if found is None:
                found = tallies[row_key] = (_Tally(), info)
            cost = prices.cost(model, price_day, priced.usage(), long_prompt=long_prompt)
            found[0].add(info.provider, model, priced, cost, priced.place + offset)
    rows = []
    for (_, name), (tally, info) in tallies.items():
        if by == "session":
            rows.append(tally.row(name, project=info.project, path=info.path))
        else:
            rows.append(tally.row(name, project=name if by == "project" else ""))
    ordered = sorted(rows, key=lambda r: (r.first, r.key) if by == "session" else (r.key,))
    return UsageReport(
        by=by,
        since=since.isoformat() if since else "",
        until=until.isoformat() if until else "",
        timezone=str(tz) if tz is not None else "local",
        prices_taken=prices.taken.isoformat(),
        rows=ordered,
        total=_Tally.total(tally for tally, _ in tallies.values()).row("total"),
    )
