"""``agentspool usage``: the table, ``--json``, its options and its one-line errors, on
a corpus laid out as the CLIs lay out their files (tests/support/usage_corpus.py)."""

from __future__ import annotations

import json
import os

import pytest
import usage_corpus as corpus

from agentspool.cli.main import main


@pytest.fixture(autouse=True)
def _written() -> None:
    corpus.write_claude(os.environ["CLAUDE_CONFIG_DIR"])
    corpus.write_codex(os.environ["CODEX_HOME"])


def test_json_by_session_has_the_four_token_kinds_and_null_for_no_price(capsys) -> None:
    assert main(["usage", "--by", "session", "--json", "--timezone", "UTC"]) == 0
    out, err = capsys.readouterr()
    found = json.loads(out)
    assert (found["by"], found["timezone"], found["prices_taken"]) == (
        "session",
        "UTC",
        "2026-12-01",
    )
    rows = {row["key"]: row for row in found["rows"]}
    assert set(rows) == {
        corpus.ALPHA,
        corpus.FORK,
        corpus.BETA,
        corpus.LEGACY,
        corpus.CODEX_MAIN,
        corpus.CODEX_CHILD,
        corpus.GAMMA,
        corpus.GAMMA_FORK,
    }
    fork = rows[corpus.FORK]
    assert [fork[k] for k in ("input_tokens", "output_tokens")] == [2, 70]
    assert [fork[k] for k in ("cache_read_tokens", "cache_write_tokens")] == [6600, 800]
    assert fork["total_tokens"] == 2 + 70 + 6600 + 800
    assert fork["cost_usd"] == pytest.approx((2 * 3 + 70 * 15 + 6600 * 0.30 + 800 * 3.75) / 1e6)
    assert found["total"]["unpriced_models"] == [corpus.UNKNOWN_MODEL]
    assert err == ""


def test_a_model_without_a_price_reads_no_price_and_the_total_says_what_it_leaves_out(
    capsys,
) -> None:
    assert main(["usage", "--by", "model", "--provider", "claude-code"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith(corpus.UNKNOWN_MODEL))
    assert line.endswith(" no price")
    assert "$0.00" not in line
    total = next(line for line in out.splitlines() if line.startswith("Total"))
    assert total.endswith("*")
    assert f"* leaves out {900 + 45 + 100:,} tokens of models without a price: " in out
    assert corpus.UNKNOWN_MODEL in out.splitlines()[-1]


def test_days_and_both_date_spellings(capsys) -> None:
    argv = ["usage", "--since", "20261002", "--until", "2026-10-03", "--timezone", "UTC"]
    assert main([*argv, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [row["key"] for row in found["rows"]] == ["2026-10-02", "2026-10-03"]
    assert (found["since"], found["until"]) == ("2026-10-02", "2026-10-03")
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[:4]] == ["Date", "2026-10-02", "2026-10-03", "Total"]
    assert lines[4] == "prices as of 2026-12-01; days in UTC time; 2026-10-02 to 2026-10-03"


def test_nothing_in_the_span_says_so(capsys) -> None:
    assert main(["usage", "--since", "2030-01-01"]) == 0
    assert capsys.readouterr().out == "no usage recorded; since 2030-01-01\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--since", "2026-13-01"], "argument --since: not a date"),
        (["--until", "yesterday"], "argument --until: not a date"),
        (["--timezone", "Mars/Olympus"], "argument --timezone: not an IANA time zone"),
        (["--by", "week"], "argument --by: invalid choice"),
    ],
)
def test_bad_options_are_usage_errors(capsys, argv, message) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["usage", *argv])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_a_bad_price_table_is_one_line_naming_it(tmp_path, capsys) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text("taken = 2027-01-01\n")
    assert main(["usage", "--prices", str(prices)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"agentspool: {prices}: not a price table") and err.count("\n") == 1
