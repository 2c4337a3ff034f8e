"""A scripted OpenAI chat-completions server on 127.0.0.1, for driving the real ``opencode``.

Stdlib only (the plumbing it shares with the other scripted servers is in
``scripted.py``). OpenCode reaches it through a custom provider built on
``@ai-sdk/openai-compatible`` (``harness/opencode.py`` writes that config)::

    from harness import chat_server as cs

    with cs.ChatServer([cs.tool_call("bash", {"command": "touch x"}), cs.text("done")]) as srv:
        ...  # srv.base_url is "http://127.0.0.1:PORT/v1"
        srv.wait_for_requests(2)

A *scenario* is a list of :class:`Reply`, one consumed per **main** request (a turn of
the conversation). OpenCode also asks the same model for a session title; such a request
(its system prompt asks for a title) is answered with ``title`` and consumes nothing.
When the main queue is empty the server answers ``exhausted_reply`` and counts it.

Streaming follows the chat-completions SSE shape: ``data: {chunk}`` lines, a last chunk
with ``usage`` (``prompt_tokens``, ``completion_tokens``,
``prompt_tokens_details.cached_tokens``), then ``data: [DONE]``. A client that hangs up
mid-stream (Esc in the TUI) is recorded in ``aborted``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .scripted import ChunkedHandler, ScriptedRequest, ScriptedServer, split

TITLE_MARKERS = ("title generator", "Generate a title", "generate a short title")
MODEL = "mock-model"
USAGE = {"prompt_tokens": 120, "completion_tokens": 12, "cached_tokens": 64}


@dataclass
class ToolCall:
    name: str
    arguments: str
    call_id: str = ""


@dataclass
class Reply:
    """One scripted model response: text (in ``chunks`` pieces, ``chunk_delay`` apart)
    and/or tool calls. ``gate``, when given, is waited on (up to ``gate_timeout``) after
    the first piece is sent, so a test can hold the stream open. ``http_status`` other
    than 200 answers with that status and a JSON error body."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    chunks: int = 1
    chunk_delay: float = 0.0
    gate: threading.Event | None = None
    gate_timeout: float = 120.0
    http_status: int = 200
    error_message: str = "scripted server error"
    usage: dict[str, int] = field(default_factory=lambda: dict(USAGE))
    label: str = ""


def text(s: str, *, chunks: int = 1, chunk_delay: float = 0.0, label: str = "") -> Reply:
    return Reply(text=s, chunks=chunks, chunk_delay=chunk_delay, label=label or "text")


def slow_text(s: str, *, seconds: float = 30.0, chunks: int = 60) -> Reply:
    """Text streamed in ``chunks`` pieces spread over about ``seconds``."""
    return Reply(text=s, chunks=chunks, chunk_delay=seconds / max(chunks, 1), label="slow_text")


def tool_call(
    name: str, arguments: dict[str, Any], *, call_id: str = "", preface: str = ""
) -> Reply:
    return Reply(
        text=preface,
        tool_calls=[ToolCall(name, json.dumps(arguments), call_id)],
        label=f"tool_call({name})",
    )


def bash(command: str, *, description: str = "", call_id: str = "") -> Reply:
    """OpenCode's ``bash`` tool (its input: ``command``, ``description``)."""
    return tool_call(
        "bash",
        {"command": command, "description": description or f"Runs {command}"},
        call_id=call_id,
    )


def http_error(status: int = 500, message: str = "scripted server error") -> Reply:
    return Reply(http_status=status, error_message=message, label=f"http_{status}")


class Request(ScriptedRequest):
    def messages(self) -> list[dict[str, Any]]:
        found = self.body.get("messages") if isinstance(self.body, dict) else None
        return [m for m in found or [] if isinstance(m, dict)]

    def texts(self, role: str) -> list[str]:
        out = []
        for message in self.messages():
            if message.get("role") != role:
                continue
            content = message.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out.append("".join(str(c.get("text", "")) for c in content if isinstance(c, dict)))
        return out

    def last_user_text(self) -> str:
        users = self.texts("user")
        return users[-1] if users else ""

    def tool_results(self) -> dict[str, str]:
        """tool_call_id -> content of every ``role: tool`` message."""
        return {
            str(m.get("tool_call_id")): str(m.get("content"))
            for m in self.messages()
            if m.get("role") == "tool"
        }


def classify(body: Any) -> str:
    """``title`` for OpenCode's title request (its system prompt asks for a title),
    ``main`` otherwise."""
    if not isinstance(body, dict):
        return "main"
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "system":
            content = message.get("content")
            system = content if isinstance(content, str) else json.dumps(content)
            if any(marker in system for marker in TITLE_MARKERS):
                return "title"
    return "main"


class _Handler(ChunkedHandler):
    owner: ChatServer

    def _data(self, obj: Any) -> None:
        self._chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")

    def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
        req = Request(
            next(self.owner._ids), time.time(), "GET", self.path, dict(self.headers), None
        )
        req.kind = "other"
        self.owner._record(req)
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
        req.completed = True

    def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches to
        owner = self.owner
        body = self._read_body()
        seq = next(owner._ids)
        req = Request(seq, time.time(), "POST", self.path, dict(self.headers), body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            req.kind = "other"
            owner._record(req)
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        req.kind = classify(body)
        if req.kind == "main" and owner.side is not None and owner.side(body):
            req.kind = "side"  # a CLI's own side query (Qwen Code's memory pass): no turn
        reply = owner._next_reply(req.kind)
        req.reply_label = reply.label
        owner._record(req)
        stream = bool(isinstance(body, dict) and body.get("stream"))
        self._send_reply(req, lambda: self._serve(seq, req, reply, stream))

    def _serve(self, seq: int, req: Request, reply: Reply, stream: bool) -> None:
        if reply.http_status != 200:
            self._send_scripted_error(
                reply.http_status, {"message": reply.error_message, "type": "server_error"}
            )
            return
        usage = {
            "prompt_tokens": reply.usage["prompt_tokens"],
            "completion_tokens": reply.usage["completion_tokens"],
            "total_tokens": reply.usage["prompt_tokens"] + reply.usage["completion_tokens"],
            "prompt_tokens_details": {"cached_tokens": reply.usage["cached_tokens"]},
        }
        finish = "tool_calls" if reply.tool_calls else "stop"
        calls = [
            {
                "id": call.call_id or f"call_{seq}_{i}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for i, call in enumerate(reply.tool_calls)
        ]
        base = {"id": f"chatcmpl-{seq}", "created": int(time.time()), "model": MODEL}
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if calls:
                message["tool_calls"] = calls
            self._send_json(
                200,
                {
                    **base,
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage,
                },
            )
            return
        self._start_event_stream()
        chunk = {**base, "object": "chat.completion.chunk"}

        def delta(d: dict[str, Any], finish_reason: str | None = None) -> None:
            self._data(
                {**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": finish_reason}]}
            )

        first = True

        def started() -> None:
            nonlocal first
            if first:
                first = False
                if req.kind == "main":
                    self.owner._set_streaming(seq, reply.label)
                if reply.gate is not None:
                    reply.gate.wait(reply.gate_timeout)

        delta({"role": "assistant", "content": ""})
        for piece in split(reply.text, reply.chunks) if reply.text else []:
            delta({"content": piece})
            started()
            if reply.chunk_delay:
                time.sleep(reply.chunk_delay)
        for i, call in enumerate(calls):
            delta(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
            started()
            delta(
                {
                    "tool_calls": [
                        {"index": i, "function": {"arguments": call["function"]["arguments"]}}
                    ]
                }
            )
        delta({}, finish)
        self._data({**chunk, "choices": [], "usage": usage})
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")


class ChatServer(ScriptedServer[Request, Reply]):
    handler = _Handler
    thread_name = "chat-server"
    base_path = "/v1"
    wait_timeout = 60.0

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        exhausted_reply: Reply | None = None,
        title: str = "Scripted test session",
        side: Callable[[Any], bool] | None = None,
    ) -> None:
        super().__init__(
            replies,
            exhausted_reply=exhausted_reply
            or text("(scripted server: no more replies)", label="exhausted"),
        )
        self.title = title
        self.side = side
        self.aborted: list[Request] = []

    def _next_reply(self, kind: str) -> Reply:
        if kind == "title":
            return text(self.title, label="title")
        if kind == "side":
            return text("", label="side")  # an empty next-prompt suggestion shows none
        return self._next_main_reply()

    def _client_gone(self, req: Request) -> None:
        with self._lock:
            self.aborted.append(req)
            self._lock.notify_all()
