"""Prices per model, from a table shipped with the package (``prices.toml``; ADR 0025).

``load_prices()`` reads the shipped table (or a file the user names); ``PriceTable.cost``
prices one API response's ``Usage``. Nothing here fetches anything: a model the table
does not list, or usage in a category the model's row has no price for, is priced
``None`` — shown as "no price", never as $0.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re

import msgspec

from agentspool.core.seam import Usage
from agentspool.spool.errors import SettingsError

__all__ = ["PRICES_FILE", "LongPrompt", "ModelPrice", "PriceTable", "load_prices"]

PRICES_FILE = "prices.toml"
# A plain file beside this module, as the package data of every install (a wheel, the
# editable link tree): read with open(), not importlib.resources, whose import (pathlib,
# zipfile, tempfile; ~6 ms) was most of the table's cost to a first ``usage`` (ADR 0058).
# The hook commands rely on the same: they run the package from its files (ADR 0002).
SHIPPED_PRICES = os.path.join(os.path.dirname(os.path.abspath(__file__)), PRICES_FILE)
_SNAPSHOT_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


class _Rates(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """US dollars per million tokens; ``None``: no price for that kind of token."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def cost(self, usage: Usage) -> float | None:
        read, written = usage.cached_input_tokens, usage.cache_write_tokens
        plain = usage.input_tokens - read - written
        total = plain * self.input + usage.output_tokens * self.output
        if read:
            if self.cache_read is None:
                return None
            total += read * self.cache_read
        if written:
            if self.cache_write is None:
                return None
            total += written * self.cache_write
        return total / 1_000_000


class LongPrompt(_Rates, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The prices of a request whose prompt is over ``over`` tokens."""

    over: int


class ModelPrice(_Rates, frozen=True, kw_only=True, forbid_unknown_fields=True):
    ids: list[str]
    since: dt.date | None = None
    """The first day (UTC) these prices apply; ``None``: before every dated row."""
    long_prompt: LongPrompt | None = None


class _PriceFile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    taken: dt.date
    model: list[ModelPrice]


class PriceTable:
    """A price table, indexed by model id."""

    def __init__(self, taken: dt.date, rows: list[ModelPrice]) -> None:
        self.taken = taken
        """The day the prices were read from the providers' pricing pages."""
        self._rows: dict[str, list[ModelPrice]] = {}
        for row in rows:
            for model_id in row.ids:
                self._rows.setdefault(model_id, []).append(row)
        for found in self._rows.values():
            found.sort(key=lambda r: r.since or dt.date.min)
        self._in_effect: dict[tuple[str, dt.date], ModelPrice | None] = {}
        """``price``'s answers: a report prices tens of thousands of entries of a few
        models on a few hundred days."""
        self._long_over: dict[tuple[str, dt.date], float] = {}
        """``long_prompt_over``'s answers, asked once per entry by the usage fold."""

    def rows(self, model: str) -> list[ModelPrice]:
        """The model's rows, oldest first: by its id, or by its id without a snapshot
        date (``claude-sonnet-4-5-20250929`` → ``claude-sonnet-4-5``)."""
        return self._rows.get(model) or self._rows.get(_SNAPSHOT_DATE.sub("", model)) or []

    def price(self, model: str, day: dt.date) -> ModelPrice | None:
        """The row in effect on ``day`` (UTC) for ``model``; ``None`` if it has none."""
        key = (model, day)
        try:
            return self._in_effect[key]
        except KeyError:
            pass
        found = None
        for row in self.rows(model):
            if row.since is None or row.since <= day:
                found = row
        self._in_effect[key] = found
        return found

    def long_prompt_over(self, model: str, day: dt.date) -> float:
        """The prompt size (input tokens) above which a response of ``model`` on ``day``
        is priced at the row's long-prompt rates (``inf``: it has none)."""
        over = self._long_over.get((model, day))
        if over is None:
            row = self.price(model, day)
            over = math.inf if row is None or row.long_prompt is None else row.long_prompt.over
            self._long_over[model, day] = over
        return over

    def cost(
        self, model: str, day: dt.date, usage: Usage, *, long_prompt: bool | None = None
    ) -> float | None:
        """US dollars for ``usage``; ``None``: not priced by this table. ``long_prompt``:
        whether it is priced at the long-prompt rates (``None``: one response's usage,
        judged by its own input tokens; the fold passes it for the sum of responses that
        are all long or all not)."""
        row = self.price(model, day)
        if row is None:
            return None
        if long_prompt is None:
            long_prompt = usage.input_tokens > self.long_prompt_over(model, day)
        rates = row.long_prompt if long_prompt and row.long_prompt is not None else row
        return rates.cost(usage)


def load_prices(path: str | None = None) -> PriceTable:
    """The shipped table, or the TOML file at ``path`` (same shape). A file that is not
    such a table raises ``SettingsError`` naming it."""
    try:
        with open(SHIPPED_PRICES if path is None else path, "rb") as fh:
            data = fh.read()
        where = PRICES_FILE if path is None else path
    except OSError as exc:
        raise SettingsError(path or PRICES_FILE, exc.strerror or str(exc)) from None
    try:
        table = msgspec.toml.decode(data, type=_PriceFile)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SettingsError(where, f"not a price table: {exc}") from None
    return PriceTable(table.taken, table.model)
