"""A small, hand-numbered corpus of Claude Code transcripts and Codex rollouts for usage.

The record shapes are what Claude Code 2.1.328 and Codex 0.169.0 write
(tests/live/captures/; docs/providers/claude-code.md §4 and §9, docs/providers/codex.md §6),
with every usage case a usage report must get right, each in one named session:

Claude Code (``write_claude(config_dir)``, ``$CLAUDE_CONFIG_DIR/projects/<slug>/…``)
    ``ALPHA`` (cwd ``/srv/alpha``): an API message written as three content-block lines
    repeating its usage (text, thinking, tool_use); cache writes and reads; two models
    (Sonnet, then Opus); a turn one minute before midnight UTC; a synthetic API-error
    record (``<synthetic>``, zero usage); a message cut mid-stream (``isAbortedMidStream``,
    ``stop_reason: null``); an Agent call whose subagent writes its own file
    (``<session>/subagents/agent-<id>.jsonl``, sidechain records, Haiku).
    ``FORK``: ``--resume ALPHA --fork-session``: ALPHA's records up to the subagent copied
    with the same ``uuid``/``message.id``/``requestId`` and ``sessionId`` rewritten, then
    a turn of its own.
    ``BETA`` (cwd ``/srv/beta``): a model no price table knows, and a second day.
    ``LEGACY`` (cwd ``/srv/beta``): an older CLI's file, where a subagent's records are in
    the main file (``isSidechain: true``), one with usage; and a message of two content
    blocks without ``requestId``.
    ``GAMMA`` and ``GAMMA_FORK`` (cwd ``/srv/gamma``): a fork again, whose session id
    sorts before its original's (ALPHA's fork sorts after ALPHA).

Codex (``write_codex(codex_home)``, ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…``)
    ``CODEX_MAIN`` (cwd ``/srv/alpha``): two turns, the model switched between them by a
    ``turn_context``; cached input; a function call and its output between two
    responses.
    ``CODEX_CHILD``: a sub-agent's own rollout (``parent_thread_id`` = the main thread).

Timestamps are fixed (October 2026), so date filters and day groups are exact.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ALPHA = "a1a1a1a1-0000-4000-8000-00000000a1a1"
FORK = "f0f0f0f0-0000-4000-8000-00000000f0f0"
BETA = "b2b2b2b2-0000-4000-8000-00000000b2b2"
LEGACY = "c3c3c3c3-0000-4000-8000-00000000c3c3"
GAMMA = "e7e7e7e7-0000-4000-8000-00000000e7e7"
GAMMA_FORK = "0d0d0d0d-0000-4000-8000-000000000d0d"
SUBAGENT = "a5ub0000000000001"
CODEX_MAIN = "01a22000-0000-7000-8000-00000000c0de"
CODEX_CHILD = "01a22000-0000-7000-8000-00000000c1d0"

SONNET = "claude-sonnet-4-5-20250929"
OPUS = "claude-opus-4-1-20250805"
HAIKU = "claude-haiku-4-5-20251001"
UNKNOWN_MODEL = "claude-mystery-9"


def _usage(inp: int, out: int, write: int = 0, read: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "output_tokens": out,
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": write},
    }


class _Claude:
    """One transcript file being written: records chain by ``parentUuid``."""

    def __init__(self, session: str, cwd: str, *, sidechain: bool = False, agent: str = ""):
        self.session, self.cwd, self.sidechain, self.agent = session, cwd, sidechain, agent
        self.lines: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.n = 0

    def _uuid(self) -> str:
        self.n += 1
        tag = (self.agent or self.session)[:8]
        return f"{tag}-{self.n:04d}-4000-8000-{self.n:012d}"

    def _base(self, kind: str, stamp: str, **extra: Any) -> dict[str, Any]:
        uid = self._uuid()
        line = {
            "parentUuid": self.parent,
            "isSidechain": self.sidechain,
            **({"agentId": self.agent} if self.agent else {}),
            "type": kind,
            "uuid": uid,
            "timestamp": stamp,
            "userType": "external",
            "entrypoint": "cli",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.1.328",
            "gitBranch": "main",
            **extra,
        }
        self.parent = uid
        self.lines.append(line)
        return line

    def prompt(self, stamp: str, text: str) -> None:
        self._base("user", stamp, promptId=f"p-{self.n}", message={"role": "user", "content": text})

    def tool_result(self, stamp: str, tool_use_id: str, text: str = "ok") -> None:
        content = [{"tool_use_id": tool_use_id, "type": "tool_result", "content": text}]
        self._base("user", stamp, message={"role": "user", "content": content})

    def reply(
        self,
        stamp: str,
        ids: tuple[str, str],
        model: str,
        usage: dict[str, Any],
        blocks: list[dict[str, Any]],
        *,
        stop_reason: str | None = "end_turn",
        **extra: Any,
    ) -> None:
        """One API message (``ids``: its ``message.id`` and ``requestId``): one line per
        content block, each repeating the usage."""
        message_id, request_id = ids
        for index, block in enumerate(blocks):
            self._base(
                "assistant",
                stamp,
                message={
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [block],
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": usage,
                },
                **({"requestId": request_id} if request_id else {}),
                **({"apiBlockIndex": index} if request_id else {}),
                **extra,
            )

    def api_error(self, stamp: str, message_id: str, request_id: str) -> None:
        self._base(
            "assistant",
            stamp,
            message={
                "id": message_id,
                "model": "<synthetic>",
                "role": "assistant",
                "stop_reason": "stop_sequence",
                "type": "message",
                "content": [{"type": "text", "text": "API Error: 500 server error"}],
                "usage": _usage(0, 0),
            },
            requestId=request_id,
            isApiErrorMessage=True,
            error="server_error",
        )

    def bookkeeping(self, kind: str, **fields: Any) -> None:
        self.lines.append({"type": kind, "sessionId": self.session, **fields})

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as fh:
            for line in self.lines:
                fh.write(json.dumps(line, separators=(",", ":")) + "\n")


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _tool(tool_id: str, name: str = "Bash", **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def _alpha_history(alpha: _Claude) -> None:
    """ALPHA up to its subagent: what ``--fork-session`` copies into FORK."""
    alpha.bookkeeping("permission-mode", permissionMode="default")
    alpha.prompt("2026-10-01T09:00:00.000Z", "list the files")
    alpha.reply(
        "2026-10-01T09:00:04.000Z",
        ("msg_alpha_1", "req_alpha_1"),
        SONNET,
        _usage(12, 340, write=5000),
        [
            _text("Listing."),
            {"type": "thinking", "thinking": "ls it"},
            _tool("toolu_a1", command="ls"),
        ],
        stop_reason="tool_use",
    )
    alpha.tool_result("2026-10-01T09:00:05.000Z", "toolu_a1", "a.txt\nb.txt")
    alpha.reply(
        "2026-10-01T09:00:07.000Z",
        ("msg_alpha_2", "req_alpha_2"),
        SONNET,
        _usage(3, 120, write=400, read=5000),
        [_text("Two files.")],
    )
    # The Opus turn, one minute before midnight UTC: its day depends on the time zone.
    alpha.prompt("2026-10-01T23:59:00.000Z", "/model opus, then explain b.txt")
    alpha.reply(
        "2026-10-01T23:59:30.000Z",
        ("msg_alpha_3", "req_alpha_3"),
        OPUS,
        _usage(8, 900, write=1200, read=5400),
        [{"type": "thinking", "thinking": "read it"}, _text("b.txt holds b.")],
    )


def write_claude(config_dir: str | os.PathLike[str]) -> None:
    """Every Claude Code session of the corpus under ``config_dir/projects``."""
    projects = Path(config_dir) / "projects"
    alpha = _Claude(ALPHA, "/srv/alpha")
    _alpha_history(alpha)
    copied = len(alpha.lines)
    alpha.prompt("2026-10-02T10:00:00.000Z", "try again")
    alpha.api_error("2026-10-02T10:00:01.000Z", "0b5e0c1e-0000-4000-8000-00000000e500", "req_e")
    alpha.prompt("2026-10-02T10:01:00.000Z", "write a long essay")
    alpha.reply(
        "2026-10-02T10:01:03.000Z",
        ("msg_alpha_4", "req_alpha_4"),
        OPUS,
        _usage(5, 1, read=6600),
        [_text("Once upon")],
        stop_reason=None,
        isAbortedMidStream=True,
    )
    alpha.prompt("2026-10-02T10:01:04.000Z", "[Request interrupted by user]")
    alpha.prompt("2026-10-02T10:02:00.000Z", "ask a helper to count lines")
    alpha.reply(
        "2026-10-02T10:02:02.000Z",
        ("msg_alpha_5", "req_alpha_5"),
        OPUS,
        _usage(6, 80, write=300, read=6600),
        [_tool("toolu_agent", "Agent", description="count", prompt="wc -l *")],
        stop_reason="tool_use",
    )
    alpha.tool_result("2026-10-02T10:02:03.000Z", "toolu_agent", "launched")
    alpha.write(projects / "-srv-alpha" / f"{ALPHA}.jsonl")

    sub = _Claude(ALPHA, "/srv/alpha", sidechain=True, agent=SUBAGENT)
    sub.prompt("2026-10-02T10:02:03.500Z", "wc -l *")
    sub.reply(
        "2026-10-02T10:02:05.000Z",
        ("msg_sub_1", "req_sub_1"),
        HAIKU,
        _usage(40, 60, write=2100),
        [_tool("toolu_s1", command="wc -l a.txt b.txt")],
        stop_reason="tool_use",
    )
    sub.tool_result("2026-10-02T10:02:06.000Z", "toolu_s1", "2 total")
    sub.reply(
        "2026-10-02T10:02:08.000Z",
        ("msg_sub_2", "req_sub_2"),
        HAIKU,
        _usage(4, 25, read=2100),
        [_text("2 lines in all.")],
    )
    sub.write(projects / "-srv-alpha" / ALPHA / "subagents" / f"agent-{SUBAGENT}.jsonl")

    fork = _Claude(FORK, "/srv/alpha")
    for line in alpha.lines[:copied]:
        fork.lines.append({**line, "sessionId": FORK} if "sessionId" in line else dict(line))
    fork.parent = alpha.lines[copied - 1]["uuid"]
    fork.n = 100
    fork.prompt("2026-10-03T08:00:00.000Z", "now in the fork: delete a.txt")
    fork.reply(
        "2026-10-03T08:00:02.000Z",
        ("msg_fork_1", "req_fork_1"),
        SONNET,
        _usage(2, 70, write=800, read=6600),
        [_text("Deleted.")],
    )
    fork.write(projects / "-srv-alpha" / f"{FORK}.jsonl")

    beta = _Claude(BETA, "/srv/beta")
    beta.prompt("2026-10-02T14:00:00.000Z", "hello")
    beta.reply(
        "2026-10-02T14:00:02.000Z",
        ("msg_beta_1", "req_beta_1"),
        UNKNOWN_MODEL,
        _usage(900, 45, write=100),
        [_text("Hi from a model no table prices.")],
    )
    beta.prompt("2026-10-03T09:00:00.000Z", "again")
    beta.reply(
        "2026-10-03T09:00:02.000Z",
        ("msg_beta_2", "req_beta_2"),
        SONNET,
        _usage(30, 15, read=900),
        [_text("Hi again.")],
    )
    beta.write(projects / "-srv-beta" / f"{BETA}.jsonl")

    legacy = _Claude(LEGACY, "/srv/beta")
    legacy.prompt("2026-10-04T11:00:00.000Z", "review this")
    legacy.reply(
        "2026-10-04T11:00:02.000Z",
        ("msg_legacy_1", "req_legacy_1"),
        SONNET,
        _usage(50, 30, write=700),
        [_tool("toolu_l1", "Task", description="review", prompt="review")],
        stop_reason="tool_use",
    )
    legacy.sidechain = True
    legacy.prompt("2026-10-04T11:00:03.000Z", "review")
    legacy.reply(
        "2026-10-04T11:00:05.000Z",
        ("msg_legacy_side", "req_legacy_side"),
        SONNET,
        _usage(20, 11, write=650),
        [_text("Looks fine.")],
    )
    legacy.sidechain = False
    legacy.tool_result("2026-10-04T11:00:06.000Z", "toolu_l1", "Looks fine.")
    legacy.reply(
        "2026-10-04T11:00:08.000Z",
        ("msg_legacy_2", "req_legacy_2"),
        SONNET,
        _usage(6, 9, read=700),
        [_text("Reviewed.")],
    )
    legacy.prompt("2026-10-04T11:01:00.000Z", "and the tests?")
    legacy.reply(  # no requestId: older CLIs wrote none
        "2026-10-04T11:01:02.000Z",
        ("msg_legacy_3", ""),
        SONNET,
        _usage(7, 13, read=1350),
        [_text("They pass."), _text("All of them.")],
    )
    legacy.write(projects / "-srv-beta" / f"{LEGACY}.jsonl")

    gamma = _Claude(GAMMA, "/srv/gamma")
    gamma.prompt("2026-10-08T09:00:00.000Z", "plan the release")
    gamma.reply(
        "2026-10-08T09:00:03.000Z",
        ("msg_gamma_1", "req_gamma_1"),
        SONNET,
        _usage(9, 400, write=3000),
        [_text("Step one, step two.")],
    )
    gamma.prompt("2026-10-08T09:05:00.000Z", "shorter")
    gamma.reply(
        "2026-10-08T09:05:02.000Z",
        ("msg_gamma_2", "req_gamma_2"),
        SONNET,
        _usage(4, 90, write=500, read=3000),
        [_text("Two steps.")],
    )
    gamma.write(projects / "-srv-gamma" / f"{GAMMA}.jsonl")
    gamma_fork = _Claude(GAMMA_FORK, "/srv/gamma")
    gamma_fork.lines = [{**line, "sessionId": GAMMA_FORK} for line in gamma.lines]
    gamma_fork.parent = gamma.lines[-1]["uuid"]
    gamma_fork.n = 100
    gamma_fork.prompt("2026-10-08T11:00:00.000Z", "now write it down")
    gamma_fork.reply(
        "2026-10-08T11:00:04.000Z",
        ("msg_gamma_fork_1", "req_gamma_fork_1"),
        SONNET,
        _usage(3, 600, write=700, read=3500),
        [_text("Written.")],
    )
    gamma_fork.write(projects / "-srv-gamma" / f"{GAMMA_FORK}.jsonl")


class _Rollout:
    """One Codex rollout: ``ordinal`` counts from 0; usage per response."""

    def __init__(self, thread: str, cwd: str, *, parent: str = "") -> None:
        self.thread, self.lines, self.ordinal = thread, [], 0
        self.total = dict.fromkeys(
            (
                "input_tokens",
                "cached_input_tokens",
                "cache_write_input_tokens",
                "output_tokens",
                "reasoning_output_tokens",
                "total_tokens",
            ),
            0,
        )
        meta: dict[str, Any] = {
            "session_id": thread,
            "id": thread,
            "timestamp": "",
            "cwd": cwd,
            "originator": "codex_exec",
            "cli_version": "0.169.0",
            "source": "exec",
            "thread_source": "subagent" if parent else "user",
            "model_provider": "local",
        }
        if parent:
            meta["parent_thread_id"] = parent
        self.meta = meta

    def line(self, stamp: str, kind: str, payload: dict[str, Any]) -> None:
        if not self.lines:
            self.meta["timestamp"] = stamp
            self.lines.append(
                {"timestamp": stamp, "ordinal": 0, "type": "session_meta", "payload": self.meta}
            )
            self.ordinal = 1
        self.lines.append(
            {"timestamp": stamp, "ordinal": self.ordinal, "type": kind, "payload": payload}
        )
        self.ordinal += 1

    def turn(self, stamp: str, turn: str, model: str, cwd: str, prompt: str) -> None:
        self.line(stamp, "event_msg", {"type": "task_started", "turn_id": turn})
        self.line(stamp, "turn_context", {"turn_id": turn, "cwd": cwd, "model": model})
        self.line(
            stamp,
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": prompt}],
            },
        )

    def answer(self, stamp: str, item_id: str, text: str) -> None:
        self.line(
            stamp,
            "response_item",
            {
                "type": "message",
                "id": item_id,
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            },
        )

    def usage(
        self, stamp: str, turn: str, response: str, tokens: tuple[int, int, int, int]
    ) -> None:
        """One response's usage (``tokens``: input with cached, cached, output, reasoning),
        as a usage record and a ``token_count`` event."""
        inp, cached, out, reasoning = tokens
        last = {
            "input_tokens": inp,
            "cached_input_tokens": cached,
            "cache_write_input_tokens": 0,
            "output_tokens": out,
            "reasoning_output_tokens": reasoning,
            "total_tokens": inp + out,
        }
        for key, value in last.items():
            self.total[key] += value
        self.line(
            stamp,
            "token_usage_record",
            {
                "thread_id": self.thread,
                "turn_id": turn,
                "session_id": self.thread,
                "root_turn_id": turn,
                "response_id": response,
                "usage": last,
                "turn_token_usage": last,
                "thread_token_usage": dict(self.total),
            },
        )
        self.line(
            stamp,
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": dict(self.total),
                    "last_token_usage": last,
                    "model_context_window": 258400,
                },
                "rate_limits": None,
            },
        )

    def done(self, stamp: str, turn: str) -> None:
        self.line(stamp, "event_msg", {"type": "task_complete", "turn_id": turn})

    def write(self, home: Path, stamp: str) -> None:
        day = home / "sessions" / stamp[:4] / stamp[5:7] / stamp[8:10]
        day.mkdir(parents=True, exist_ok=True)
        name = f"rollout-{stamp[:19].replace(':', '-')}-{self.thread}.jsonl"
        with open(day / name, "w") as fh:
            for line in self.lines:
                fh.write(json.dumps(line, separators=(",", ":")) + "\n")


def write_codex(codex_home: str | os.PathLike[str]) -> None:
    """Every Codex rollout of the corpus under ``codex_home/sessions``."""
    home = Path(codex_home)
    main = _Rollout(CODEX_MAIN, "/srv/alpha")
    main.turn("2026-10-05T12:00:00.000Z", "t1", "gpt-5-codex", "/srv/alpha", "fix the bug")
    main.line(
        "2026-10-05T12:00:01.000Z",
        "response_item",
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "x"}]},
    )
    main.line(
        "2026-10-05T12:00:01.000Z",
        "response_item",
        {
            "type": "function_call",
            "id": "fc_1",
            "name": "exec_command",
            "arguments": json.dumps({"cmd": "make test"}),
            "call_id": "call_1",
        },
    )
    main.usage("2026-10-05T12:00:01.500Z", "t1", "resp_1", (12000, 8000, 300, 120))
    main.line(
        "2026-10-05T12:00:03.000Z",
        "response_item",
        {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
    )
    main.answer("2026-10-05T12:00:04.000Z", "msg_c1", "Fixed.")
    main.usage("2026-10-05T12:00:04.500Z", "t1", "resp_2", (12500, 12000, 40, 0))
    main.done("2026-10-05T12:00:05.500Z", "t1")
    main.turn("2026-10-06T08:30:00.000Z", "t2", "gpt-5.1-codex-mini", "/srv/alpha", "and docs")
    main.answer("2026-10-06T08:30:02.000Z", "msg_c2", "Documented.")
    main.usage("2026-10-06T08:30:02.500Z", "t2", "resp_4", (13000, 12500, 220, 60))
    main.done("2026-10-06T08:30:03.000Z", "t2")
    main.write(home, "2026-10-05T12:00:00.000Z")

    child = _Rollout(CODEX_CHILD, "/srv/alpha", parent=CODEX_MAIN)
    child.turn("2026-10-05T12:00:02.000Z", "t1c", "gpt-5-codex", "/srv/alpha", "run the tests")
    child.answer("2026-10-05T12:00:02.500Z", "msg_k1", "Tests pass.")
    child.usage("2026-10-05T12:00:02.800Z", "t1c", "resp_k1", (3000, 0, 90, 30))
    child.done("2026-10-05T12:00:03.000Z", "t1c")
    child.write(home, "2026-10-05T12:00:02.000Z")
