"""A scripted Gemini API server on 127.0.0.1, for driving the real ``gemini`` CLI.

Stdlib only (the plumbing it shares with the other scripted servers is in
``scripted.py``). Usage::

    from harness import gemini_server as gs

    with gs.GeminiServer([gs.shell("touch x"), gs.text("done")]) as server:
        ...  # GOOGLE_GEMINI_BASE_URL=server.base_url
        server.wait_for_requests(2)

Gemini CLI 0.61.0 sends two kinds of ``POST /v1beta/models/<model>:<method>``:

``main``  ``:streamGenerateContent?alt=sse`` — a turn of the conversation (it offers
          tools); one scripted :class:`Reply` is consumed per request, answered as SSE
          (``data: <GenerateContentResponse>`` events, the last one with
          ``finishReason`` and ``usageMetadata``)
``side``  ``:generateContent`` — the CLI's own helpers (the model router's complexity
          score, ``/compress``'s summary, …): never consume a scripted reply. A request
          that asks for JSON (``generationConfig.responseJsonSchema``) gets an object
          filled from that schema (``side_answers`` overrides fields by name), any other
          a short text.

When the main queue is empty the server answers ``exhausted_reply`` (a plain text), so
the CLI always finishes its turn, and counts it in ``server.exhausted``. Every request
is recorded (:class:`Request`) in ``server.requests``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .scripted import ChunkedHandler, ScriptedRequest, ScriptedServer, split

# What every scripted answer reports, as the research mock did (the CLI records it).
USAGE = {
    "promptTokenCount": 120,
    "candidatesTokenCount": 12,
    "cachedContentTokenCount": 64,
    "thoughtsTokenCount": 3,
    "totalTokenCount": 135,
}
MODEL_VERSION = "gemini-scripted"
SIDE_ANSWERS: dict[str, Any] = {
    "complexity_reasoning": "scripted",
    "complexity_score": 10,  # low: the router keeps the default model
    "next_speaker": "user",  # never let the CLI continue a turn on its own
    "reasoning": "scripted",
}


@dataclass
class Reply:
    """One scripted model answer: ``parts`` (Gemini ``Part`` objects) streamed in order.

    A text part is cut into ``chunks`` deltas with ``chunk_delay`` seconds between them;
    ``gate`` (a ``threading.Event``), when given, holds the stream after its first delta
    until set (or ``gate_timeout``). ``http_status`` other than 200 answers with that
    status and a Google error body instead. ``dynamic`` builds the reply from the
    request that consumes it.
    """

    parts: list[dict[str, Any]] = field(default_factory=list)
    chunk_delay: float = 0.0
    chunks: int = 1
    http_status: int = 200
    error_message: str = "scripted server error"
    gate: threading.Event | None = None
    gate_timeout: float = 120.0
    usage: dict[str, Any] | None = None
    label: str = ""
    dynamic: Callable[[Request], Reply] | None = None


def text(s: str, *, chunk_delay: float = 0.0, chunks: int = 1, label: str = "") -> Reply:
    return Reply([{"text": s}], chunk_delay=chunk_delay, chunks=chunks, label=label or "text")


def slow_text(
    s: str, *, seconds: float = 30.0, chunks: int = 60, label: str = "slow_text"
) -> Reply:
    """Text streamed in ``chunks`` pieces spread over about ``seconds``."""
    return Reply([{"text": s}], chunk_delay=seconds / max(chunks, 1), chunks=chunks, label=label)


def function_call(
    name: str, args: dict[str, Any], *, preface: str | None = None, label: str = ""
) -> Reply:
    parts: list[dict[str, Any]] = [{"text": preface}] if preface else []
    parts.append({"functionCall": {"name": name, "args": args}})
    return Reply(parts, label=label or name)


def shell(command: str, *, description: str | None = None) -> Reply:
    """A ``run_shell_command`` call (Gemini asks before running one, in default mode)."""
    args: dict[str, Any] = {"command": command}
    if description is not None:
        args["description"] = description
    return function_call("run_shell_command", args, label=f"shell({command})")


def dynamic(build: Callable[[Request], Reply], label: str = "dynamic") -> Reply:
    return Reply(dynamic=build, label=label)


def http_error(status: int = 500, message: str = "scripted server error") -> Reply:
    return Reply(http_status=status, error_message=message, label=f"http_{status}")


class Request(ScriptedRequest):
    @property
    def model(self) -> str:
        name = self.path.split("/models/", 1)[-1]
        return name.split(":", 1)[0]

    def contents(self) -> list[dict[str, Any]]:
        found = self.body.get("contents") if isinstance(self.body, dict) else None
        return [c for c in found or () if isinstance(c, dict)]

    def last_user_text(self) -> str:
        for content in reversed(self.contents()):
            if content.get("role") == "user":
                texts = [p.get("text") for p in content.get("parts") or () if isinstance(p, dict)]
                joined = "".join(t for t in texts if isinstance(t, str))
                if joined:
                    return joined
        return ""

    def function_responses(self) -> list[dict[str, Any]]:
        return [
            p["functionResponse"]
            for c in self.contents()
            for p in c.get("parts") or ()
            if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
        ]

    def summary(self) -> str:
        return f"{self.seq}:{self.kind} {self.model} -> {self.reply_label}"

    def to_json(self) -> dict[str, Any]:
        return {
            **super().to_json(),
            "last_user_text": self.last_user_text()[-200:],
            "function_responses": self.function_responses(),
        }


def classify(path: str) -> str:
    if ":streamGenerateContent" in path:
        return "main"
    if ":generateContent" in path:
        return "side"
    return "other"


def fill(schema: Any, answers: dict[str, Any], name: str = "") -> Any:
    """A value that satisfies a (Gemini-flavoured) JSON schema; ``answers`` by field name."""
    if name in answers:
        return answers[name]
    if not isinstance(schema, dict):
        return None
    kind = str(schema.get("type", "")).upper()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "OBJECT":
        props = schema.get("properties") or {}
        return {key: fill(sub, answers, key) for key, sub in props.items()}
    if kind == "ARRAY":
        return []
    if kind in ("INTEGER", "NUMBER"):
        return 1
    if kind == "BOOLEAN":
        return False
    return "scripted"


class _Handler(ChunkedHandler):
    owner: GeminiServer

    def _event(self, payload: dict[str, Any]) -> None:
        self._chunk(b"data: " + json.dumps(payload).encode() + b"\r\n\r\n")

    def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
        req = Request(next(self.owner._ids), time.time(), "GET", self.path, {}, None, "other")
        self.owner._record(req)
        self._send_json(200, {})
        req.completed = True

    def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches to
        owner = self.owner
        body = self._read_body()
        headers = self._lower_headers()
        seq = next(owner._ids)
        req = Request(seq, time.time(), "POST", self.path, headers, body, classify(self.path))
        if req.kind == "side":
            req.reply_label = "side"
            owner._record(req)
            self._send_json(200, self._side_answer(body))
            req.completed = True
            return
        if req.kind != "main":
            req.reply_label = "404"
            owner._record(req)
            self._send_json(
                404, {"error": {"code": 404, "message": "no route", "status": "NOT_FOUND"}}
            )
            return
        reply = owner._next_main_reply()
        if reply.dynamic is not None:
            reply = reply.dynamic(req)
        req.reply_label = reply.label
        owner._record(req)
        self._send_reply(req, lambda: self._stream(seq, reply))

    def _side_answer(self, body: Any) -> dict[str, Any]:
        config = body.get("generationConfig") if isinstance(body, dict) else None
        schema = (config or {}).get("responseJsonSchema") or (config or {}).get("responseSchema")
        if schema:
            answer = json.dumps(fill(schema, self.owner.side_answers))
        else:
            answer = self.owner.side_text
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": answer}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
            "modelVersion": MODEL_VERSION,
        }

    def _stream(self, seq: int, reply: Reply) -> None:
        owner = self.owner
        if reply.http_status != 200:
            self._send_scripted_error(
                reply.http_status,
                {"code": reply.http_status, "message": reply.error_message, "status": "INTERNAL"},
            )
            return
        self._start_event_stream()
        pieces: list[dict[str, Any]] = []
        for part in reply.parts:
            if isinstance(part.get("text"), str):
                pieces += [{**part, "text": t} for t in split(part["text"], reply.chunks)]
            else:
                pieces.append(part)
        response_id = f"resp-{seq}"
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            event: dict[str, Any] = {
                "candidates": [{"content": {"role": "model", "parts": [piece]}, "index": 0}],
                "modelVersion": MODEL_VERSION,
                "responseId": response_id,
            }
            if last:
                event["candidates"][0]["finishReason"] = "STOP"
                event["usageMetadata"] = reply.usage or USAGE
            self._event(event)
            if index == 0:
                owner._set_streaming(seq, reply.label)
                if reply.gate is not None:
                    reply.gate.wait(reply.gate_timeout)
            if reply.chunk_delay and not last:
                time.sleep(reply.chunk_delay)
        if not pieces:
            self._event(
                {
                    "candidates": [
                        {
                            "content": {"role": "model", "parts": [{"text": ""}]},
                            "finishReason": "STOP",
                            "index": 0,
                        }
                    ],
                    "usageMetadata": reply.usage or USAGE,
                    "modelVersion": MODEL_VERSION,
                    "responseId": response_id,
                }
            )
        self._chunk(b"")


class GeminiServer(ScriptedServer[Request, Reply]):
    handler = _Handler
    thread_name = "gemini-server"

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        exhausted_reply: Reply | None = None,
        side_answers: dict[str, Any] | None = None,
        side_text: str = "Summary: the user ran scripted tests.",
    ) -> None:
        super().__init__(
            replies,
            exhausted_reply=exhausted_reply
            or text("(scripted server: no more replies)", label="exhausted"),
        )
        self.side_answers = {**SIDE_ANSWERS, **(side_answers or {})}
        self.side_text = side_text
