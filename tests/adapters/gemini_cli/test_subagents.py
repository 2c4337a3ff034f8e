"""A subagent (``invoke_agent``) from the real Gemini CLI 0.61.0 (capture
``tui-subagent``): its own chat file under ``chats/<session id>/``, read with its session
(``read_session_with_subagents``), shown under the call that ran it, stored and counted
with its session by the history (docs/providers/gemini-cli.md §4.1)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import agentspool
from agentspool.adapters.gemini_cli import GeminiCli
from agentspool.adapters.gemini_cli._chat import ChatParser
from agentspool.core.detail import assemble_session_detail

CAPTURE = Path(__file__).resolve().parents[2] / "live" / "captures" / "gemini-cli" / "tui-subagent"


def _files(chats: Path) -> tuple[Path, Path]:
    """(the session's chat file, its subagent's)."""
    [main] = chats.glob("session-*.jsonl")
    [child] = chats.glob("*/*.jsonl")
    return main, child


def _place(chats: Path) -> Path:
    """The capture's chat files where Gemini CLI keeps them; the session's file."""
    target = Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini" / "tmp" / "work" / "chats"
    shutil.copytree(chats, target)
    return _files(target)[0]


def _tokens(*paths: Path) -> tuple[int, int, int]:
    """(input, cached, output + thoughts) the files record, each record id once."""
    seen: dict[str, dict[str, int]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("type") == "gemini" and record.get("tokens"):
                seen[record["id"]] = record["tokens"]
    tokens = list(seen.values())
    return (
        sum(t["input"] for t in tokens),
        sum(t["cached"] for t in tokens),
        sum(t["output"] + t["thoughts"] for t in tokens),
    )


def _parse(path: Path) -> ChatParser:
    parser = ChatParser()
    parser.feed(memoryview(path.read_bytes()))
    return parser


def test_the_subagents_file_is_its_own_conversation_and_the_call_names_it() -> None:
    main, child = _files(CAPTURE / "chats")
    sub = _parse(child)
    assert sub.agent_id == sub.session_id == child.stem
    assert {m.agent_id for m in sub.messages} == {child.stem}
    spawner = _parse(main)
    assert spawner.agent_id == "" and not [m for m in spawner.messages if m.agent_id]
    (call,) = [m for m in spawner.messages if m.kind == "tool_call"]
    assert call.tool_name == "invoke_agent"
    assert spawner.spawned == {child.stem: call.tool_use_id}


def test_a_subagent_is_read_with_its_session_under_the_call_that_ran_it() -> None:
    main, child = _files(CAPTURE / "chats")
    adapter = GeminiCli()
    session = adapter.session_at(str(main))
    assert session is not None
    own = adapter.read_session(session)
    whole = adapter.read_session_with_subagents(session)
    assert whole.messages[: len(own.messages)] == own.messages
    assert [m.seq for m in whole.messages] == list(range(1, len(whole.messages) + 1))
    detail = assemble_session_detail(whole.messages)
    (group,) = detail.subagents
    (call,) = [t for t in detail.tools if t.call.tool_name == "invoke_agent"]
    assert (group.agent_id, group.spawned_by) == (child.stem, call.tool_use_id)
    assert [m.text for m in group.messages if m.kind == "text"] == ["Say SUBDONE"]
    assert [m.tool_name for m in group.messages if m.kind == "tool_call"] == ["complete_task"]
    inputs, cached, output = _tokens(main, child)
    assert (whole.usage.input_tokens, whole.usage.cached_input_tokens) == (inputs, cached)
    assert whole.usage.output_tokens == output
    assert whole.usage.input_tokens > own.usage.input_tokens


def test_while_the_subagent_runs_its_group_is_shown_without_a_call_yet() -> None:
    """The session's file names the subagent only once the call completed: until then
    the subagent's records stand in a group of their own, spawned by no call."""
    main, child = _files(CAPTURE / "chats-at-subagent-running")
    adapter = GeminiCli()
    session = adapter.session_at(str(main))
    assert session is not None
    detail = assemble_session_detail(adapter.read_session_with_subagents(session).messages)
    (group,) = detail.subagents
    assert (group.agent_id, group.spawned_by) == (child.stem, "")
    assert [m.text for m in group.messages if m.kind == "text"] == ["Say SUBDONE"]


def test_the_history_stores_and_counts_a_subagent_with_its_session() -> None:
    main = _place(CAPTURE / "chats")
    _, child = _files(main.parent)
    report = agentspool.usage(by="session", providers=["gemini-cli"], timezone="UTC")
    (row,) = report.rows
    assert row.path == str(main)
    inputs, cached, output = _tokens(main, child)
    # agentspool's input leaves the cache out (Gemini CLI's includes it).
    assert (row.input_tokens, row.cache_read_tokens) == (inputs - cached, cached)
    assert row.output_tokens == output
    with agentspool.open_history() as store:
        (stored,) = store.sessions()
        assert {m.agent_id for m in store.records(stored.id)} == {"", child.stem}


def test_a_null_agent_id_loses_the_link_not_the_call(tmp_path: Path) -> None:
    main, child = _files(CAPTURE / "chats")
    changed = tmp_path / main.name
    changed.write_bytes(
        main.read_bytes().replace(f'"agentId":"{child.stem}"'.encode(), b'"agentId":null')
    )
    parser = _parse(changed)
    assert parser.spawned == {} and parser.corrupt == 0
    assert [m.tool_name for m in parser.messages if m.kind == "tool_call"] == ["invoke_agent"]


class _Declaring:
    """A run's spool and chat files as Gemini CLI 0.61.0 leaves them around shell calls
    (docs/providers/gemini-cli.md §3, §4.1), at given times: hook records framed by the
    hook writer, a subagent's chat file with its model answers."""

    SESSION = "9d4b0000-0000-4000-8000-000000000001"
    SUBAGENT = "9d4b0000-0000-4000-8000-0000000000aa"

    def __init__(self, root: Path, runtime_dir: str) -> None:
        from agentspool.spool.layout import ensure_run_dir

        self.runtime_dir = runtime_dir
        self.run_dir = ensure_run_dir(runtime_dir, "run-1")
        self.chats = root / "chats"
        (self.chats / self.SESSION).mkdir(parents=True)
        self.main = self.chats / f"session-2026-12-02T01-00-{self.SESSION[:8]}.jsonl"
        self.main.write_text(
            json.dumps({"sessionId": self.SESSION, "startTime": _iso(0), "kind": "main"}) + "\n"
        )
        self.sub = self.chats / self.SESSION / f"{self.SUBAGENT}.jsonl"

    def hook(self, event: str, at: float, **payload: object) -> None:
        from unittest import mock

        from agentspool.spool import write

        body = {"session_id": self.SESSION, "transcript_path": str(self.main), **payload}
        data = json.dumps({"hook_event_name": event, **body}).encode()
        with mock.patch.object(write.time, "time_ns", lambda: int(at * 1e9)):
            record = write.frame(event, data, len(data), -1, 0, os.getpid())
        fd = write.open_run_dir(self.run_dir)
        try:
            write.append(fd, write.EVENTS_FILE, record)
        finally:
            os.close(fd)

    def call(self, event: str, at: float, tool: str, tool_input: dict[str, object]) -> None:
        self.hook(event, at, tool_name=tool, tool_input=tool_input)

    def subagent_answers(self, *times: float, done: bool = False) -> None:
        lines = [
            {"sessionId": self.SUBAGENT, "startTime": _iso(times[0] - 0.1), "kind": "subagent"}
        ]
        for n, at in enumerate(times):
            record: dict[str, object] = {
                "id": f"a{n}",
                "timestamp": _iso(at),
                "type": "gemini",
                "content": "",
            }
            if done and n == len(times) - 1:
                record["toolCalls"] = [{"id": "c", "name": "complete_task", "status": "success"}]
            lines.append(record)
        self.sub.write_text("".join(json.dumps(line) + "\n" for line in lines))

    def caller(self) -> str | None:
        return GeminiCli().lifecycle_caller("run-1", self.runtime_dir, os.getpid(), {})


def _iso(at: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


T0 = 1_796_000_000.0
AGENT = {"agent_name": "generalist", "prompt": "do it"}
DONE = {"command": "agentspool lifecycle done"}


def test_a_shell_call_made_after_the_subagent_answered_is_the_subagents(
    tmp_path: Path, runtime_dir: str
) -> None:
    run = _Declaring(tmp_path, runtime_dir)
    assert run.caller() is None, "no declaration open"
    run.call("BeforeTool", T0, "invoke_agent", AGENT)
    run.subagent_answers(T0 + 1.0)
    run.call("BeforeTool", T0 + 1.5, "run_shell_command", DONE)
    assert run.caller() == run.SUBAGENT
    run.call("AfterTool", T0 + 2.0, "run_shell_command", DONE)
    assert run.caller() is None, "the call closed"


def test_a_shell_call_made_beside_the_invoke_agent_is_the_main_agents(
    tmp_path: Path, runtime_dir: str
) -> None:
    """One model answer, two calls: the declaration was made before any subagent answer."""
    run = _Declaring(tmp_path, runtime_dir)
    run.call("BeforeTool", T0, "invoke_agent", AGENT)
    run.call("BeforeTool", T0 + 0.01, "run_shell_command", DONE)
    run.subagent_answers(T0 + 1.0)
    assert run.caller() == ""


def test_without_a_subagent_at_work_the_declaration_is_the_main_agents(
    tmp_path: Path, runtime_dir: str
) -> None:
    run = _Declaring(tmp_path, runtime_dir)
    run.call("BeforeTool", T0, "run_shell_command", {"command": "ls"})
    assert run.caller() is None, "not a declaration"
    run.call("BeforeTool", T0 + 1.0, "run_shell_command", DONE)
    assert run.caller() == "", "no invoke_agent open"
    run.call("BeforeTool", T0 + 2.0, "invoke_agent", AGENT)
    run.subagent_answers(T0 + 2.5, T0 + 3.0, done=True)
    run.call(
        "BeforeTool", T0 + 3.5, "run_shell_command", {"command": "agentspool lifecycle active"}
    )
    assert run.caller() == "", "the subagent had finished"
