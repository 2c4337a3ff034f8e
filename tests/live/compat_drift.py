"""pytest plugin for ``make compat`` (``-p compat_drift``): what each run's reads did not
know. Every ``read_chat`` the scenarios make is observed (not changed); at the end, the
union of the drift they composed — per source, type and field names, and the CLI
versions the transcripts named — is written as JSON to ``$AGENTSPOOL_COMPAT_DRIFT``."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from agentspool.core.seam import Chat, Drift

_SOURCES = ("transcript", "spool", "native")
_seen: dict[str, Any] = {
    "versions": set(),
    **{s: {"types": set(), "fields": set(), "corrupt": 0} for s in _SOURCES},
}


def _note(drift: Drift) -> None:
    if drift.cli_version:
        _seen["versions"].add(drift.cli_version)
    for name in _SOURCES:
        source = getattr(drift, name)
        seen = _seen[name]
        seen["types"].update(source.unknown_types)
        seen["fields"].update(source.unknown_fields)
        seen["corrupt"] = max(seen["corrupt"], source.corrupt)


def _observe(cls: Any) -> None:
    original = cls.read_chat

    def read_chat(self: Any, *args: Any, **kwargs: Any) -> Chat:
        chat: Chat = original(self, *args, **kwargs)
        _note(chat.drift)
        return chat

    cls.read_chat = read_chat


def pytest_configure(config: pytest.Config) -> None:
    from agentspool.adapters.claude_code import ClaudeCode
    from agentspool.adapters.codex import Codex
    from agentspool.adapters.gemini_cli import GeminiCli
    from agentspool.adapters.opencode import OpenCode

    _observe(ClaudeCode)
    _observe(Codex)
    _observe(GeminiCli)
    _observe(OpenCode)


def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get("AGENTSPOOL_COMPAT_DRIFT")
    if not out:
        return
    report = {
        "versions": sorted(_seen["versions"]),
        **{
            s: {
                "types": sorted(_seen[s]["types"]),
                "fields": sorted(_seen[s]["fields"]),
                "corrupt": _seen[s]["corrupt"],
            }
            for s in _SOURCES
        },
    }
    with open(out, "w") as fh:
        json.dump(report, fh)
