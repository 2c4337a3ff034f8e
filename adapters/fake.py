"""``ScriptedAdapter``: a fake of the seam for testing code that sits on top of it.

Core's tests use it instead of real transcripts. Its "transcript" is a JSONL file of
canonical messages and events (``{"message": {...}}`` / ``{"event": {...}}`` lines) and
its live signals are real spool records whose payload is one canonical event, so it
keeps every rule of the contract with real files — and it passes the same Tier-1 suite.
"""

from __future__ import annotations

import os
from typing import ClassVar

import msgspec

from agentspool.adapters.common.jsonl import JsonlFollower, split_lines
from agentspool.adapters.common.spooled import DeclaredAdapter
from agentspool.core.compose import compose_chat
from agentspool.core.events import Event
from agentspool.core.merge import EventMerger
from agentspool.core.seam import (
    Capabilities,
    Chat,
    Message,
    Spawn,
    Trust,
)
from agentspool.spool import signature
from agentspool.spool.errors import TranscriptGoneError
from agentspool.spool.files import write_private_file
from agentspool.spool.layout import ensure_run_dir, run_dir
from agentspool.spool.read import SpoolReader
from agentspool.spool.write import append_record

SPOOL_EVENT = "Canonical"


class Line(msgspec.Struct, omit_defaults=True):
    message: Message | None = None
    event: Event | None = None
    located: str | None = None


_decode = msgspec.json.Decoder(Line).decode
_encode = msgspec.json.Encoder().encode


def write_line(path: str, line: Line) -> None:
    with open(path, "ab") as fh:
        fh.write(_encode(line) + b"\n")


def emit(runtime_dir: str, run_id: str, event: Event) -> None:
    """Append one canonical event to the run's spool, as a hook would."""
    append_record(run_dir(runtime_dir, run_id), SPOOL_EVENT, _encode(Line(event=event)))


def locate(runtime_dir: str, run_id: str, transcript_path: str) -> None:
    """Name the run's transcript in its spool, as a provider's hooks do."""
    append_record(run_dir(runtime_dir, run_id), SPOOL_EVENT, _encode(Line(located=transcript_path)))


class ScriptedAdapter(DeclaredAdapter):
    """The required core of the seam and no optional part: it reads its whole spool on
    every call, so it keeps nothing per run either."""

    name: ClassVar[str] = "fake"
    capabilities: ClassVar[Capabilities] = Capabilities(live_signals=True)
    executable: ClassVar[str] = ""

    def _arm(self, run_id: str, runtime_dir: str, trust: Trust, config_home: str | None) -> Spawn:
        path = os.path.join(ensure_run_dir(runtime_dir, run_id), "fake.settings.json")
        write_private_file(path, b"{}\n")
        return Spawn(
            args=["--settings", path], settings_path=path, run_dir=run_dir(runtime_dir, run_id)
        )

    def _spool_lines(self, run_id: str, runtime_dir: str) -> list[Line]:
        lines = []
        for record in SpoolReader(run_dir(runtime_dir, run_id)).read():
            try:
                lines.append(_decode(record.payload))
            except msgspec.DecodeError:
                continue
        return lines

    def spool_sig(self, run_id: str, runtime_dir: str) -> str:
        # The located transcript's stat too, as the spool-backed adapters fold it (the
        # fake reads its whole spool on every call anyway).
        sig = signature.spool_sig(run_id, runtime_dir)
        located = self.locate_transcript(run_id, runtime_dir) if sig != signature.ABSENT else ""
        return f"{sig}+{signature.paths_sig((located,))}" if located else sig

    def locate_transcript(self, run_id: str, runtime_dir: str) -> str:
        if not runtime_dir:
            return ""
        located = [ln.located for ln in self._spool_lines(run_id, runtime_dir) if ln.located]
        return located[-1] if located and os.path.exists(located[-1]) else ""

    def read_chat(self, run_id: str, runtime_dir: str, transcript_path: str | None) -> Chat:
        if transcript_path is None:
            transcript_path = self.locate_transcript(run_id, runtime_dir)
        if transcript_path and not os.path.exists(transcript_path):
            raise TranscriptGoneError(run_id, transcript_path)
        merger = EventMerger()
        messages: list[Message] = []
        if transcript_path:
            events: list[Event] = []

            def on_lines(block: memoryview) -> None:
                for raw in split_lines(block):
                    try:
                        line = _decode(raw)
                    except msgspec.DecodeError:
                        continue
                    if line.message is not None:
                        messages.append(
                            msgspec.structs.replace(line.message, seq=len(messages) + 1)
                        )
                    if line.event is not None:
                        events.append(line.event)

            JsonlFollower(transcript_path, run_id).read(on_lines, messages.clear)
            merger.add("transcript", events)
        if runtime_dir:
            merger.add(
                "spool",
                [ln.event for ln in self._spool_lines(run_id, runtime_dir) if ln.event is not None],
            )
        return compose_chat(merger.state(), messages, transcript_path=transcript_path)
