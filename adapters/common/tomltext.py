"""TOML the user wrote, read with its style kept (tomlkit) and checked by the stricter
standard reader first, whose messages are the clearer (Codex's and Kimi Code's
``config.toml``)."""

from __future__ import annotations

import tomllib
from typing import Any

from agentspool.adapters.common import jsontext
from agentspool.spool.errors import SettingsError


def parse_toml(text: str, path: str) -> Any:
    """The document, style kept (tomlkit); ``SettingsError`` naming line and column."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        tomllib.loads(text)
        return tomlkit.parse(text)
    except tomllib.TOMLDecodeError as exc:
        problem = str(exc)
        if problem.endswith("(at end of document)"):
            problem = problem.replace("end of document", jsontext.where(text, len(text)))
    except ParseError as exc:
        problem = f"{str(exc).split(' at line ')[0]} (at line {exc.line}, column {exc.col})"
    raise SettingsError(path, f"not valid TOML: {problem}; left untouched")
