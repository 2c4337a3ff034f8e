"""The shipped price table (core/prices.toml) and its loader: its shape, a few prices as
the providers' pricing pages state them, and how a model id finds its row."""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from importlib import resources

import pytest

from agentspool.core.pricing import PRICES_FILE, load_prices
from agentspool.core.seam import Usage
from agentspool.errors import SettingsError

DAY = dt.date(2026, 11, 1)


def _shipped_text() -> str:
    return resources.files("agentspool.core").joinpath(PRICES_FILE).read_text()


def test_the_table_is_shipped_dated_and_says_where_its_prices_come_from() -> None:
    table = load_prices()
    text = _shipped_text()
    assert table.taken == tomllib.loads(text)["taken"]
    assert 'Claude API docs, "Pricing" page' in text
    assert 'OpenAI API docs, "Pricing" page' in text
    assert re.search(r"^# Updating", text, re.MULTILINE)


def test_no_model_has_two_rows_for_the_same_day() -> None:
    rows = tomllib.loads(_shipped_text())["model"]
    seen = set()
    for row in rows:
        for model_id in row["ids"]:
            key = (model_id, row.get("since"))
            assert key not in seen, key
            seen.add(key)
        assert row["input"] > 0 and row["output"] > 0


@pytest.mark.parametrize(
    ("model", "rates"),
    [
        ("claude-sonnet-4-5-20250929", (3.0, 15.0, 0.30, 3.75)),
        ("claude-opus-4-1-20250805", (15.0, 75.0, 1.50, 18.75)),
        ("claude-opus-4-5", (5.0, 25.0, 0.50, 6.25)),
        ("claude-haiku-4-5-20251001", (1.0, 5.0, 0.10, 1.25)),
        ("claude-opus-5-5", (4.0, 20.0, 0.20, 5.0)),
        ("claude-3-5-haiku-20241022", (0.80, 4.0, 0.08, 1.0)),
        ("gpt-5-codex", (1.25, 10.0, 0.125, None)),
        ("gpt-5-2025-08-07", (1.25, 10.0, 0.125, None)),
        ("gpt-5.1-codex-mini", (0.25, 2.0, 0.025, None)),
    ],
)
def test_known_prices_by_the_id_a_transcript_names(model: str, rates: tuple) -> None:
    row = load_prices().price(model, DAY)
    assert row is not None
    assert (row.input, row.output, row.cache_read, row.cache_write) == rates


def test_a_model_not_in_the_table_has_no_price() -> None:
    table = load_prices()
    assert table.price("claude-mystery-9", DAY) is None
    assert table.cost("claude-mystery-9", DAY, Usage(input_tokens=1)) is None
    assert table.price("", DAY) is None


def test_a_long_prompt_is_priced_at_its_band_on_every_token() -> None:
    table = load_prices()
    short = Usage(input_tokens=100_000, output_tokens=1000, cached_input_tokens=90_000)
    long = Usage(input_tokens=100_001, output_tokens=1000, cached_input_tokens=90_000)
    assert table.cost("claude-haiku-5-5", DAY, short) == pytest.approx(
        (10_000 * 0.10 + 1000 * 0.50 + 90_000 * 0.01) / 1e6
    )
    assert table.cost("claude-haiku-5-5", DAY, long) == pytest.approx(
        (10_001 * 0.50 + 1000 * 2.50 + 90_000 * 0.05) / 1e6
    )


def test_a_user_table_replaces_the_shipped_one(tmp_path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text('taken = 2027-01-01\n[[model]]\nids = ["m"]\ninput = 1.0\noutput = 2.0\n')
    table = load_prices(str(path))
    assert (table.taken, table.cost("m", DAY, Usage(input_tokens=10, output_tokens=5))) == (
        dt.date(2027, 1, 1),
        pytest.approx(20e-6),
    )
    assert table.price("claude-sonnet-4-5", DAY) is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("taken = 2027-01-01\n", "not a price table"),
        ('taken = 2027-01-01\n[[model]]\nids = ["m"]\ninput = 1.0\n', "not a price table"),
        ('taken = 2027-01-01\n[[model]]\nids = ["m"]\ninput = 1\noutput = 2\ncache = 3\n', "cache"),
        ("taken = [", "not a price table"),
    ],
)
def test_a_table_that_is_not_one_is_one_error_naming_the_file(tmp_path, text, problem) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(SettingsError, match=re.escape(str(path)) + ".*" + problem):
        load_prices(str(path))
    with pytest.raises(SettingsError, match=r"nope\.toml: "):
        load_prices(str(tmp_path / "nope.toml"))
