"""The part of a provider's hook translator that every provider's is.

A translator turns spool records into canonical events, in spool order. Each record is
decoded through the provider's payload view (``HookDecoder``: a cut payload salvaged), an
undecodable one counted and skipped, and the first record of each hook checked for
fields the provider does not know (ADR 0014). What the record then means is the
provider's: its translator looks the hook's name up in a table of small handlers, one a
hook.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

import msgspec

from agentspool.adapters.common.drift import DriftCounter
from agentspool.adapters.common.salvage import HookDecoder
from agentspool.spool.read import SpoolRecord


class HookFields(msgspec.Struct):
    """The payload fields every provider's hooks carry (each view adds its own)."""

    session_id: str = ""
    cwd: str = ""
    source: str = ""
    reason: str = ""
    tool_name: str = ""


class CamelHookFields(HookFields, rename="camel"):
    """``HookFields`` of payloads written camelCase (``sessionId``: Copilot CLI's hooks,
    Pi's extension), and every field a view adds on them. The shared fields of more than
    one word are named again: a renaming applies to the fields its class declares."""

    session_id: str = ""
    tool_name: str = ""


Payload = TypeVar("Payload", bound=msgspec.Struct)
Base = dict[str, Any]
"""The fields every event of a record shares: ``at``, ``source``, ``epoch``."""

NOT_LOCATING = frozenset({"SessionEnd"})
"""Hooks whose ``transcript_path`` is not the session going on: ``/clear``'s
``SessionEnd`` names the one ending (its ``SessionStart`` names the next)."""


def hook_base(record: SpoolRecord, epoch: str) -> Base:
    """What every event of ``record`` says: when (the record's wall time), which hook."""
    return {"at": record.wall_ns / 1e9, "source": f"hook:{record.event}", "epoch": epoch}


class HookReader(Generic[Payload]):
    """What a translator knows of the run from every record, and the reading of one."""

    def __init__(self, decode: HookDecoder[Payload], known: Mapping[str, frozenset[str]]) -> None:
        self._decode = decode
        self.transcript_path = ""
        self.cwd = ""
        self.agent_pid = 0
        self.undecodable = 0
        self.drift = DriftCounter(known)

    def _payload(self, record: SpoolRecord) -> Payload | None:
        """The record's payload; ``None`` (counted) if nothing of it is readable."""
        hook = self._decode(record)
        if hook is None:
            self.undecodable += 1
            return None
        if record.event not in self.drift.checked and not record.truncated:
            self.drift.see(record.event, record.payload)
        return hook

    def _locate(self, path: str, event: str, not_locating: frozenset[str] = NOT_LOCATING) -> None:
        """The transcript a hook names is the run's, but for hooks ``not_locating``."""
        if path and event not in not_locating:
            self.transcript_path = path
