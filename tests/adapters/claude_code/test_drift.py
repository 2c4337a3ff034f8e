"""Schema drift on real Claude Code 2.1.328 captures (ADR 0014): what the real CLI wrote
reads with no drift; record types and fields injected into it are counted per source —
transcript, hook spool, native status file — and the count is the same on every re-read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from replay import CAPTURES, claude_captures, claude_transcripts

from agentspool.adapters.claude_code import ClaudeCode, _signals
from agentspool.core.seam import Chat, SourceDrift
from agentspool.spool import write
from agentspool.spool.layout import ensure_run_dir

RUN = "run-1"
SCENARIO = "tui-permission-approve"
CAPTURE = CAPTURES / "claude-code" / SCENARIO


def _lines(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_bytes().splitlines() if line.strip()]


def _dump(records: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)


class World:
    """A real capture laid out as the CLI keeps it: the transcript under
    ``<claude dir>/projects/<slug>/``, the status file under ``<claude dir>/sessions/`` for
    a live pid (this process), the hooks in the run's spool through the real write path."""

    def __init__(self, root: Path) -> None:
        self.claude_dir = root / "claude"
        projects = self.claude_dir / "projects" / "slug"
        projects.mkdir(parents=True)
        (self.claude_dir / "sessions").mkdir()
        source = claude_transcripts(SCENARIO)[0]
        self.transcript = projects / os.path.basename(source)
        self.records = _lines(source)
        self.hooks = _lines(CAPTURE / "hooks.jsonl")
        self.status = json.loads((CAPTURE / "session-dialog-open.json").read_text())
        self.runtime_dir = str(root / "runtime")
        self.run_dir = ensure_run_dir(self.runtime_dir, RUN)

    def write(self) -> World:
        self.transcript.write_bytes(_dump(self.records))
        pid = os.getpid()
        status = {**self.status, "pid": pid, "procStart": _signals.process_start(pid)}
        (self.claude_dir / "sessions" / f"{pid}.json").write_text(json.dumps(status))
        fd = write.open_run_dir(self.run_dir)
        try:
            for hook in self.hooks:
                payload = {**hook["payload"], "transcript_path": str(self.transcript)}
                body = json.dumps(payload).encode()
                record = write.frame(hook["event"], body, len(body), -1, pid, pid)
                write.append(fd, write.EVENTS_FILE, record)
        finally:
            os.close(fd)
        return self

    def read(self, adapter: ClaudeCode | None = None) -> Chat:
        return (adapter or ClaudeCode()).read_chat(RUN, self.runtime_dir, str(self.transcript))

    def first(self, records: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
        return next(r for r in records if all(r.get(k) == v for k, v in match.items()))


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


@pytest.mark.parametrize("scenario", claude_captures())
def test_what_the_real_cli_wrote_has_no_drift(scenario: str, tmp_path: Path) -> None:
    for path in claude_transcripts(scenario):
        chat = ClaudeCode().read_chat(RUN, "", path)
        assert chat.drift.transcript == SourceDrift(), path
        assert chat.drift.cli_version == "2.1.328"
    translator = _signals.HookTranslator()
    for hook in _lines(CAPTURES / "claude-code" / scenario / "hooks.jsonl"):
        body = json.dumps(hook["payload"]).encode()
        translator.translate(_record(hook["event"], body))
    assert translator.drift.snapshot(translator.undecodable) == SourceDrift()
    for status_file in sorted((CAPTURES / "claude-code" / scenario).glob("session-*.json")):
        status = json.loads(status_file.read_text())
        if status is None:
            continue
        counter = _signals.native_drift()
        raw = status_file.read_bytes()
        _signals._check_native(raw, _signals.NativeStatus(**_native_fields(status)), counter)
        assert counter.snapshot() == SourceDrift(), status_file


def _native_fields(status: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in status.items() if k in _signals.NativeStatus.__struct_fields__}


def _record(event: str, body: bytes) -> Any:
    from agentspool.spool.read import SpoolRecord

    return SpoolRecord(event, 0, 0, 0, 0, -1, len(body), body, 0)


def test_the_live_read_of_the_unmodified_capture_has_no_drift(world: World) -> None:
    chat = world.write().read()
    assert chat.state == "needs_input"
    assert not chat.drift
    assert chat.drift.cli_version == "2.1.328"


def test_injected_types_and_fields_are_counted_per_source(world: World) -> None:
    # transcript: a record type and a system subtype not known, twice and once; a field
    # on the first assistant record; one line that is not JSON
    unknown = {**world.first(world.records, type="user"), "type": "future-record"}
    world.records[3:3] = [unknown, unknown]
    system = world.first(world.records, type="system")
    world.records.append({**system, "subtype": "future_subtype"})
    world.first(world.records, type="assistant")["futureField"] = {"x": 1}
    world.first(world.records, type="user")["futureFlag"] = True
    # spool: a field on the first PreToolUse payload
    world.first(world.hooks, event="PreToolUse")["payload"]["future_hook_key"] = 1
    # native status: a field, and a waitingFor value not known
    world.status["futureStatusKey"] = "x"
    world.status["waitingFor"] = "future wait"
    world.write()
    with open(world.transcript, "ab") as fh:
        fh.write(b"not json\n")

    drift = world.read().drift
    assert drift.cli_version == "2.1.328"
    assert drift.transcript == SourceDrift(
        unknown_types={"future-record": 2, "system:future_subtype": 1},
        unknown_fields=["assistant.futureField", "user.futureFlag"],
        corrupt=1,
    )
    assert drift.spool == SourceDrift(unknown_fields=["PreToolUse.future_hook_key"])
    assert drift.native == SourceDrift(
        unknown_types={"waitingFor:future wait": 1}, unknown_fields=["status-file.futureStatusKey"]
    )


def test_drift_is_the_same_on_every_re_read_and_grows_with_the_file(world: World) -> None:
    world.first(world.records, type="assistant")["futureField"] = 1
    world.write()
    adapter = ClaudeCode()
    first = world.read(adapter).drift
    assert world.read(adapter).drift == first == world.read(ClaudeCode()).drift
    with open(world.transcript, "ab") as fh:
        fh.write(_dump([{**world.first(world.records, type="user"), "type": "future-record"}]))
    grown = world.read(adapter).drift
    assert grown.transcript.unknown_types == {"future-record": 1}
    assert grown == world.read(ClaudeCode()).drift


def test_only_the_first_record_of_a_shape_is_checked(world: World) -> None:
    """The hot path's price (ADR 0014): a field first seen on a later record of a type
    already checked is not listed."""
    assistants = [r for r in world.records if r.get("type") == "assistant"]
    assert len(assistants) >= 2
    assistants[-1]["lateField"] = 1
    assert not world.write().read().drift


def test_the_cli_version_is_the_latest_a_record_names(world: World) -> None:
    # A session resumed by a newer CLI: the later records name it.
    for record in world.records[len(world.records) // 2 :]:
        if "version" in record:
            record["version"] = "2.1.999"
    world.write()
    assert world.read().drift.cli_version == "2.1.999"
