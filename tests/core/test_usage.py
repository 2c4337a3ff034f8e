"""``usage_report``: the rules of core/usage.py, on hand-built canonical records, and
``agentspool.usage`` over a corpus the adapters read as the CLIs wrote it
(tests/support/usage_corpus.py), with totals worked out by hand from its numbers."""

from __future__ import annotations

import datetime as dt
import os
import zoneinfo
from typing import Any

import msgspec
import pytest
import usage_corpus as corpus

import agentspool
from agentspool.core.pricing import load_prices
from agentspool.core.seam import Message, Usage
from agentspool.core.usage import (
    SessionFold,
    SessionFolder,
    SessionInfo,
    UsageReport,
    merged_folds,
    usage_report,
)

PRICES = load_prices()
SONNET = (3.0, 15.0, 0.30, 3.75)  # $/MTok input, output, cache read, cache write
SONNET_LONG = (6.0, 22.50, 0.60, 7.50)  # claude-sonnet-4-5 over 200k prompt tokens
OPUS_4_1 = (15.0, 75.0, 1.50, 18.75)
HAIKU_4_5 = (1.0, 5.0, 0.10, 1.25)


def _dollars(rates: tuple[float, float, float, float], inp: int, out: int, read: int, write: int):
    return (inp * rates[0] + out * rates[1] + read * rates[2] + write * rates[3]) / 1e6


def reply(
    message_id: str,
    stamp: str,
    inp: int = 10,
    out: int = 5,
    *,
    read: int = 0,
    write: int = 0,
    model: str = "claude-sonnet-4-5",
    **more: Any,
) -> Message:
    """A record carrying one response's usage, ``inp`` being the plain input."""
    usage = Usage(
        input_tokens=inp + read + write,
        output_tokens=out,
        cached_input_tokens=read,
        cache_write_tokens=write,
    )
    return Message(
        id=more.pop("id", message_id),
        kind="text",
        role="assistant",
        timestamp=stamp,
        usage=usage,
        message_id=message_id,
        model=model,
        **more,
    )


def session(session_id: str, *records: Message, provider: str = "claude-code", project: str = ""):
    return SessionInfo(provider=provider, session_id=session_id, project=project), list(records)


def report(*sessions: tuple[SessionInfo, list[Message]], **options: Any) -> UsageReport:
    return usage_report(sessions, prices=PRICES, **options)


def tokens(row: Any) -> tuple[int, int, int, int]:
    return (row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens)


# -- what counts, once ------------------------------------------------------------------


def test_a_response_counts_once_per_session_and_every_visibility_counts() -> None:
    found = report(
        session(
            "s1",
            reply("m1", "2026-10-01T09:00:00Z", 10, 5, write=100),
            reply("m1", "2026-10-01T09:00:00Z", 10, 5, write=100, id="m1:1"),
            reply("m2", "2026-10-01T09:01:00Z", 1, 1, visibility="hidden"),
            reply("m3", "2026-10-01T09:02:00Z", 2, 2, visibility="inactive"),
            reply("", "2026-10-01T09:03:00Z", 4, 4),
            reply("", "2026-10-01T09:04:00Z", 4, 4),
        ),
        by="session",
    )
    assert tokens(found.total) == (10 + 1 + 2 + 4 + 4, 5 + 1 + 2 + 4 + 4, 0, 100)
    assert found.total.total_tokens == 21 + 16 + 100


def test_a_record_with_usage_and_no_tokens_adds_nothing_and_names_no_model() -> None:
    synthetic = reply("e1", "2026-10-01T09:00:00Z", 0, 0, model="<synthetic>")
    found = report(session("s1", synthetic, reply("m1", "2026-10-01T09:01:00Z")), by="model")
    assert [row.key for row in found.rows] == ["claude-sonnet-4-5"]
    assert report(session("s2", synthetic)).rows == []


def test_a_response_copied_into_a_later_session_counts_in_the_first_one() -> None:
    history = [
        reply("m1", "2026-10-01T09:00:00Z", 10, 5),
        reply("m2", "2026-10-01T09:05:00Z", 20, 5),
    ]
    original = session("zz-original", *history, reply("m3", "2026-10-01T10:00:00Z", 7, 7))
    fork = session("aa-fork", *history, reply("m4", "2026-10-02T08:00:00Z", 3, 3))
    for order in ((original, fork), (fork, original)):
        found = {row.key: tokens(row) for row in report(*order, by="session").rows}
        # Both start with the copied records; the original stopped first.
        assert found == {"zz-original": (37, 17, 0, 0), "aa-fork": (3, 3, 0, 0)}


def test_the_same_response_id_at_another_time_is_another_response() -> None:
    # A scripted model server numbers its responses resp_1, resp_2… in every session.
    first = session("s1", reply("resp_1", "2026-10-01T09:00:00Z", 10, 5), provider="codex")
    second = session("s2", reply("resp_1", "2026-10-01T11:00:00Z", 10, 5), provider="codex")
    other = session("s3", reply("resp_1", "2026-10-01T09:00:00Z", 10, 5))
    found = report(first, second, other, by="session")
    assert [tokens(row) for row in found.rows] == [(10, 5, 0, 0)] * 3


def test_a_fork_that_re_stamps_its_copies_counts_them_in_the_earlier_session() -> None:
    # A Codex fork copies its parent's responses under the fork's own time; the
    # transcript says it was forked (``copied_from``), so the same id is the same
    # response whatever the time. A session that says nothing keeps the time rule.
    parent = session(
        "parent",
        reply("total:10", "2026-10-01T09:00:00Z", 10, 5),
        reply("total:30", "2026-10-01T09:05:00Z", 20, 5),
        provider="codex",
    )
    copies = [
        reply("total:10", "2026-10-02T08:00:00.001Z", 10, 5),
        reply("total:30", "2026-10-02T08:00:00.002Z", 20, 5),
        reply("total:33", "2026-10-02T08:01:00Z", 3, 3),
    ]
    fork_info, fork_records = session("fork", *copies, provider="codex")
    fork = (msgspec.structs.replace(fork_info, copied_from="parent"), fork_records)
    unrelated = session("other", *copies[:1], provider="codex")
    found = {row.key: tokens(row) for row in report(parent, fork, unrelated, by="session").rows}
    assert found == {"parent": (30, 10, 0, 0), "fork": (3, 3, 0, 0), "other": (10, 5, 0, 0)}


# -- days and filters ----------------------------------------------------------------------


def test_days_are_counted_in_the_zone_and_the_filters_keep_whole_days() -> None:
    late = session(
        "s1",
        reply("m1", "2026-10-01T14:59:59.999Z", 1, 0),  # 23:59 in Tokyo
        reply("m2", "2026-10-01T15:00:00.000Z", 2, 0),  # 00:00 the next day in Tokyo
        reply("m3", "2026-10-02T23:00:00.000Z", 4, 0),
    )
    utc = zoneinfo.ZoneInfo("UTC")
    tokyo = zoneinfo.ZoneInfo("Asia/Tokyo")
    by_day = {r.key: r.input_tokens for r in report(late, tz=utc).rows}
    assert by_day == {"2026-10-01": 3, "2026-10-02": 4}
    by_day = {r.key: r.input_tokens for r in report(late, tz=tokyo).rows}
    assert by_day == {"2026-10-01": 1, "2026-10-02": 2, "2026-10-03": 4}
    one_day = report(late, tz=tokyo, since=dt.date(2026, 10, 2), until=dt.date(2026, 10, 2))
    assert (one_day.total.input_tokens, one_day.since, one_day.until) == (
        2,
        "2026-10-02",
        "2026-10-02",
    )
    assert report(late, tz=utc, since=dt.date(2026, 10, 2)).total.input_tokens == 4
    assert report(late, tz=utc, until=dt.date(2026, 9, 30)).rows == []


def test_local_days_follow_the_machine_zone_of_each_moment(monkeypatch) -> None:
    import time

    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    try:
        summer = reply("m1", "2026-07-01T22:30:00Z", 1, 0)  # 00:30 CEST, July 2nd
        winter = reply("m2", "2026-12-01T22:30:00Z", 2, 0)  # 23:30 CET, December 1st
        found = report(session("s1", summer, winter))
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert {r.key: r.input_tokens for r in found.rows} == {"2026-07-02": 1, "2026-12-01": 2}
    assert found.timezone == "local"


def test_an_entry_without_a_time_has_no_day_and_no_filter_keeps_it() -> None:
    found = report(session("s1", reply("m1", "", 5, 1)))
    assert [(r.key, r.input_tokens) for r in found.rows] == [("", 5)]
    assert report(session("s1", reply("m1", "", 5, 1)), since=dt.date(2000, 1, 1)).rows == []


def test_a_time_that_does_not_read_has_no_day_though_its_minute_has_one() -> None:
    # The days of a minute are worked out once; a later stamp of that minute is still
    # read whole, and one that does not read has no day.
    stamps = ["2026-11-29T23:50:13.987Z", "2026-11-29T23:50:7x.000Z", "2026-11-29T23:50:59.5Z"]
    replies = [reply(f"m{n}", stamp, 5, 1) for n, stamp in enumerate(stamps)]
    found = report(session("s1", *replies))
    assert [(r.key, r.input_tokens) for r in found.rows] == [("", 5), ("2026-11-29", 10)]
    kept = report(session("s1", *replies), since=dt.date(2026, 11, 29))
    assert [(r.key, r.input_tokens) for r in kept.rows] == [("2026-11-29", 10)]


# -- cost ----------------------------------------------------------------------------------


def test_cost_per_entry_and_a_model_without_a_price_is_never_zero() -> None:
    priced = reply("m1", "2026-10-01T09:00:00Z", 100, 50, read=1000, write=200)
    unpriced = reply("m2", "2026-10-01T09:01:00Z", 7, 3, model="claude-mystery-9")
    found = report(session("s1", priced, unpriced), by="model")
    rows = {row.key: row for row in found.rows}
    assert rows["claude-sonnet-4-5"].cost_usd == pytest.approx(_dollars(SONNET, 100, 50, 1000, 200))
    mystery = rows["claude-mystery-9"]
    assert (mystery.cost_usd, mystery.unpriced_tokens, mystery.unpriced_models) == (
        None,
        10,
        ["claude-mystery-9"],
    )
    total = found.total
    assert total.cost_usd == pytest.approx(_dollars(SONNET, 100, 50, 1000, 200))
    assert (total.unpriced_tokens, total.unpriced_models) == (10, ["claude-mystery-9"])


def test_cache_writes_on_a_model_without_a_cache_write_price_are_not_guessed() -> None:
    cached = reply("r1", "2026-10-01T09:00:00Z", 100, 10, read=900, model="gpt-5-codex")
    written = reply("r2", "2026-10-01T09:01:00Z", 100, 10, write=900, model="gpt-5-codex")
    rows = report(session("s1", cached), session("s2", written), by="session").rows
    assert rows[0].cost_usd == pytest.approx((100 * 1.25 + 10 * 10.0 + 900 * 0.125) / 1e6)
    assert (rows[1].cost_usd, rows[1].unpriced_tokens) == (None, 1010)


def test_entries_priced_together_are_priced_as_each_would_be() -> None:
    """A session's entries of one model and day are summed before they are priced: only
    those one set of rates prices alike. A long prompt, a cache write the model has no
    price for, and plain entries, all in one row, each priced as on its own."""
    entries = [
        reply("m1", "2026-10-01T09:00:00Z", 100, 50, read=1000),
        reply("m2", "2026-10-01T09:01:00Z", 300_000, 40),  # a long prompt
        reply("m3", "2026-10-01T09:02:00Z", 200, 60, read=2000, write=500),
        reply("m4", "2026-10-01T09:03:00Z", 100, 10, read=900, model="gpt-5-codex"),
        reply("m5", "2026-10-01T09:04:00Z", 100, 10, write=900, model="gpt-5-codex"),  # no price
        reply("m6", "2026-10-01T09:05:00Z", 5, 1, model="gpt-5-codex"),
    ]
    [row] = report(session("s1", *entries), by="session").rows
    gpt = (1.25, 10.0, 0.125, 0.0)
    assert row.cost_usd == pytest.approx(
        _dollars(SONNET, 100, 50, 1000, 0)
        + _dollars(SONNET_LONG, 300_000, 40, 0, 0)
        + _dollars(SONNET, 200, 60, 2000, 500)
        + _dollars(gpt, 100, 10, 900, 0)
        + _dollars(gpt, 5, 1, 0, 0),
        rel=1e-12,
    )
    assert (row.unpriced_tokens, row.unpriced_models) == (1010, ["gpt-5-codex"])
    assert row.models == ["claude-sonnet-4-5", "gpt-5-codex"]
    assert (row.first, row.last) == ("2026-10-01T09:00:00Z", "2026-10-01T09:05:00Z")


def test_cache_reads_without_a_price_are_priced_apart(tmp_path) -> None:
    """A user's table may leave cache reads unpriced: a response that reads the cache is
    then unpriced, and is never summed with one of the same model that does not."""
    table = tmp_path / "prices.toml"
    table.write_text('taken = 2026-10-01\n[[model]]\nids = ["m"]\ninput = 1.0\noutput = 2.0\n')
    entries = [
        reply("r1", "2026-10-01T09:00:00Z", 100, 10, model="m"),
        reply("r2", "2026-10-01T09:01:00Z", 100, 10, read=500, model="m"),
    ]
    [row] = usage_report([session("s1", *entries)], prices=load_prices(str(table))).rows
    assert (row.cost_usd, row.unpriced_tokens) == (pytest.approx(120 / 1e6), 610)


def test_the_price_in_effect_on_the_entry_day_applies() -> None:
    # Claude Sonnet 5.5's cache reads went from $0.20 to $0.10 on 2026-10-07 (UTC).
    before = reply("m1", "2026-10-06T23:59:59Z", 0, 1, read=1_000_000, model="claude-sonnet-5-5")
    after = reply("m2", "2026-10-07T00:00:00Z", 0, 1, read=1_000_000, model="claude-sonnet-5-5")
    tokyo = zoneinfo.ZoneInfo("Asia/Tokyo")  # the day shown is not the day priced
    rows = report(session("s1", before, after), by="day", tz=tokyo).rows
    assert [(r.key, r.cost_usd) for r in rows] == [
        ("2026-10-07", pytest.approx(0.20 + 10e-6 + 0.10 + 10e-6))
    ]


# -- groups ------------------------------------------------------------------------------


def test_rows_per_group_and_what_each_names() -> None:
    one = session("s1", reply("m1", "2026-10-01T09:00:00Z", 1, 1), project="/srv/a")
    two = session(
        "s2",
        reply("r1", "2026-10-02T09:00:00Z", 2, 2, model="gpt-5-codex"),
        provider="codex",
        project="/srv/a",
    )
    three = session("s3", reply("m2", "2026-09-30T09:00:00Z", 4, 4), project="")
    sessions = (one, two, three)
    by_session = report(*sessions, by="session").rows
    assert [(r.key, r.provider, r.project) for r in by_session] == [
        ("s3", "claude-code", ""),
        ("s1", "claude-code", "/srv/a"),
        ("s2", "codex", "/srv/a"),
    ]
    by_project = report(*sessions, by="project").rows
    assert [(r.key, r.provider, r.input_tokens) for r in by_project] == [
        ("", "claude-code", 4),
        ("/srv/a", "", 3),
    ]
    by_model = report(*sessions, by="model").rows
    assert [(r.key, r.provider, r.models) for r in by_model] == [
        ("claude-sonnet-4-5", "claude-code", ["claude-sonnet-4-5"]),
        ("gpt-5-codex", "codex", ["gpt-5-codex"]),
    ]
    assert report(*sessions).total.models == ["claude-sonnet-4-5", "gpt-5-codex"]


# -- the corpus, read by the adapters -------------------------------------------------------


@pytest.fixture
def written() -> None:
    corpus.write_claude(os.environ["CLAUDE_CONFIG_DIR"])
    corpus.write_codex(os.environ["CODEX_HOME"])


ALPHA = (12 + 3 + 8 + 5 + 6 + 40 + 4, 340 + 120 + 900 + 1 + 80 + 60 + 25)
ALPHA_CACHE = (5000 + 5400 + 6600 + 6600 + 2100, 5000 + 400 + 1200 + 300 + 2100)


@pytest.mark.usefixtures("written")
def test_every_session_of_the_corpus_with_its_subagents_and_a_fork_counted_once() -> None:
    found = agentspool.usage(by="session", timezone="UTC")
    rows = {row.key: row for row in found.rows}
    assert {key: tokens(row) for key, row in rows.items()} == {
        corpus.ALPHA: (*ALPHA, *ALPHA_CACHE),
        corpus.FORK: (2, 70, 6600, 800),
        corpus.BETA: (900 + 30, 45 + 15, 900, 100),
        corpus.LEGACY: (50 + 20 + 6 + 7, 30 + 11 + 9 + 13, 700 + 1350, 700 + 650),
        corpus.CODEX_MAIN: (4000 + 500 + 500, 300 + 40 + 220, 8000 + 12000 + 12500, 0),
        corpus.CODEX_CHILD: (3000, 90, 0, 0),
        corpus.GAMMA: (9 + 4, 400 + 90, 3000, 3000 + 500),
        corpus.GAMMA_FORK: (3, 600, 3500, 700),
    }
    alpha = rows[corpus.ALPHA]
    assert (alpha.provider, alpha.project) == ("claude-code", "/srv/alpha")
    assert alpha.path.endswith(f"/projects/-srv-alpha/{corpus.ALPHA}.jsonl")
    assert alpha.models == [corpus.SONNET, corpus.OPUS, corpus.HAIKU]
    assert alpha.cost_usd == pytest.approx(
        _dollars(SONNET, 12, 340, 0, 5000)
        + _dollars(SONNET, 3, 120, 5000, 400)
        + _dollars(OPUS_4_1, 8, 900, 5400, 1200)
        + _dollars(OPUS_4_1, 5, 1, 6600, 0)
        + _dollars(OPUS_4_1, 6, 80, 6600, 300)
        + _dollars(HAIKU_4_5, 40, 60, 0, 2100)
        + _dollars(HAIKU_4_5, 4, 25, 2100, 0)
    )
    assert (rows[corpus.CODEX_MAIN].project, rows[corpus.BETA].project) == (
        "/srv/alpha",
        "/srv/beta",
    )
    beta = rows[corpus.BETA]
    assert (beta.unpriced_tokens, beta.unpriced_models) == (900 + 45 + 100, [corpus.UNKNOWN_MODEL])
    assert beta.cost_usd == pytest.approx(_dollars(SONNET, 30, 15, 900, 0))


@pytest.mark.usefixtures("written")
def test_the_corpus_per_day_in_two_zones_and_filtered() -> None:
    utc = agentspool.usage(timezone="UTC", providers=["claude-code"])
    assert {r.key: r.input_tokens for r in utc.rows} == {
        "2026-10-01": 12 + 3 + 8,
        "2026-10-02": 5 + 6 + 40 + 4 + 900,
        "2026-10-03": 2 + 30,
        "2026-10-04": 50 + 20 + 6 + 7,
        "2026-10-08": 9 + 4 + 3,
    }
    tokyo = agentspool.usage(
        timezone="Asia/Tokyo",
        since=dt.date(2026, 10, 2),
        until=dt.date(2026, 10, 2),
        providers=["claude-code"],
    )
    # Opus at 23:59:30 UTC is the next day in Tokyo.
    assert [(r.key, r.input_tokens) for r in tokyo.rows] == [
        ("2026-10-02", 8 + 5 + 6 + 40 + 4 + 900)
    ]
    assert agentspool.usage(since=dt.date(2026, 10, 9)).rows == []


@pytest.mark.usefixtures("written")
def test_a_provider_not_asked_for_is_not_read() -> None:
    found = agentspool.usage(by="model", providers=["codex"])
    assert [r.key for r in found.rows] == ["gpt-5-codex", "gpt-5.1-codex-mini"]
    with pytest.raises(agentspool.UnknownProviderError):
        agentspool.usage(providers=["nope"])


# -- folded before the report (ADR 0061) --------------------------------------------------


def _spanned(session_id: str, *files: list[Message]) -> SessionInfo:
    """A session whose span the store would give: its first and last record's moment."""
    stamps = [dt.datetime.fromisoformat(m.timestamp).timestamp() for f in files for m in f]
    return SessionInfo(
        provider="claude-code", session_id=session_id, started=min(stamps), updated=max(stamps)
    )


FIRST_FILE = [
    reply("m1", "2026-10-01T23:30:00Z", 10, 5, read=100),
    reply("m2", "2026-10-01T23:40:00Z", 250_000, 7, model="claude-sonnet-4-5"),  # long prompt
    reply("m2", "2026-10-01T23:41:00Z", 99, 99),  # the same response again: not counted
    reply("m3", "2026-10-02T00:10:00Z", 4, 3, write=50, model="claude-haiku-4-5"),
]
SECOND_FILE = [  # a subagent's file of the same session
    reply("s1", "2026-10-02T01:00:00Z", 8, 2, model="claude-opus-4-1"),
    # Priced as m1 is, and written earlier than m1 (clocks step back).
    reply("s0", "2026-10-01T22:00:00Z", 5, 5, read=10),
    reply("s2", "2026-10-02T01:05:00Z", 6, 1, read=40, write=10),
    reply("", "2026-10-02T01:06:00Z", 1, 1),  # no id: counts on its own
    reply("", "2026-10-02T01:07:00Z", 1, 1),
]
LATER_SESSION = [
    reply("o1", "2026-10-03T09:00:00Z", 30, 20, model="gpt-5-codex"),
    reply("o2", "2026-10-03T09:00:30Z", 3, 2, model="claude-haiku-4-5"),
]


@pytest.mark.parametrize(
    "options",
    [
        {"by": "day"},
        {"by": "session"},
        {"by": "model"},
        {"by": "day", "tz": zoneinfo.ZoneInfo("America/New_York")},
        {"by": "day", "since": dt.date(2026, 10, 2), "until": dt.date(2026, 10, 2)},
    ],
)
def test_sessions_folded_file_by_file_report_what_their_records_report(options: Any) -> None:
    """A first ``usage`` folds each file where it is parsed and merges a session's files
    in order: every total, cost, model (in order of first use) and time is the fold of
    the records themselves."""
    main, later = _spanned("s-main", FIRST_FILE, SECOND_FILE), _spanned("s-later", LATER_SESSION)
    expected = report((main, FIRST_FILE + SECOND_FILE), (later, LATER_SESSION), **options)
    folder = SessionFolder(
        PRICES, since=options.get("since"), until=options.get("until"), tz=options.get("tz")
    )
    # Through msgpack, as a forked worker hands a fold back.
    decode = msgspec.msgpack.Decoder(SessionFold).decode
    folds = [decode(msgspec.msgpack.encode(folder.fold(f))) for f in (FIRST_FILE, SECOND_FILE)]
    folded = report((main, merged_folds(folds)), (later, folder.fold(LATER_SESSION)), **options)
    assert folded == expected
    assert expected.total.total_tokens > 0
    if options == {"by": "day"}:
        # Places count on across files and sessions: the later session's model is last.
        assert expected.total.models == [
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
            "claude-opus-4-1",
            "gpt-5-codex",
        ]


def test_a_session_folded_without_its_span_is_refused() -> None:
    """Sessions count in the order of their span; a fold holds no record's place in its
    file, so a session given folded must come with the span its store gives."""
    info = SessionInfo(provider="claude-code", session_id="s")
    with pytest.raises(ValueError, match="folded without its span"):
        report((info, SessionFolder(PRICES).fold(LATER_SESSION)))  # type: ignore[arg-type]
