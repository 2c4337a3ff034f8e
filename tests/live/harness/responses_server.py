"""A scripted OpenAI Responses API server on 127.0.0.1, for driving the real ``codex``.

Stdlib only (the plumbing it shares with the other scripted servers is in
``scripted.py``). Usage::

    from harness import responses_server as rs

    with rs.ResponsesServer([rs.text("hello"), rs.exec_command("touch x", escalated=True),
                             rs.text("done")]) as server:
        ...  # point codex at server.base_url ("http://127.0.0.1:PORT/v1")
        server.wait_for_requests(2, kind="main")

A *scenario* is a list of :class:`Reply`; one is consumed per **main-conversation**
request (``kind == "main"``). Codex also makes side calls that must not eat scripted
replies; :func:`classify` sorts every request into a kind:

``main``      a request of a root thread's turn (the conversation the test scripts)
``subagent``  a request of a sub-agent thread (``session-id`` header != ``thread-id``,
              turn metadata ``thread_source: "subagent"``);
              served from the ``subagent_replies`` queue, else a default text reply
``title``     the TUI's hidden title-generation call (turn metadata ``thread_source:
              "thread_title"``; "Generate a concise, single-line task title" in the
              input); default reply: a short title
``compact``   an inline compaction request (turn metadata ``request_kind: "compaction"``;
              "CONTEXT CHECKPOINT COMPACTION" in the last user message); default reply:
              a summary text

When the main queue is empty the server answers with ``exhausted_reply`` (a plain text),
so codex always finishes its turn, and records the fact in ``server.exhausted``.

Every request is recorded (:class:`Request`: path, headers, parsed body, kind, the reply
it got) in ``server.requests``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .scripted import (
    ChunkedHandler,
    ScriptedRequest,
    ScriptedServer,
    parse_json_body,
    split,
)

TITLE_MARKER = "Generate a concise, single-line task title"
COMPACT_MARKER = "CONTEXT CHECKPOINT COMPACTION"


# --------------------------------------------------------------------------- replies


@dataclass
class Item:
    """One output item of a reply: an assistant message or a function call."""

    type: str  # "message" | "function_call"
    text: str = ""
    name: str = ""
    arguments: str = ""
    namespace: str | None = None
    call_id: str | None = None


@dataclass
class Reply:
    """One scripted model response.

    ``chunk_delay`` (seconds) is slept between streamed deltas; ``chunks`` is how many
    pieces message text is cut into. ``http_status`` other than 200 answers with that
    status and a JSON error body instead of SSE; ``fail_message`` streams
    ``response.created`` and then ``response.failed``. ``gate`` (a threading.Event),
    when set, is waited on (up to ``gate_timeout``) after the first delta, before the
    rest is streamed; a test can hold the stream open until it has pressed a key.
    """

    items: list[Item] = field(default_factory=list)
    chunk_delay: float = 0.0
    chunks: int = 1
    http_status: int = 200
    error_message: str = "scripted server error"
    fail_message: str | None = None
    gate: threading.Event | None = None
    gate_timeout: float = 120.0
    usage: dict[str, Any] | None = None
    label: str = ""
    dynamic: Callable[[Request], Reply] | None = None


def text(s: str, *, chunk_delay: float = 0.0, chunks: int = 1, label: str = "") -> Reply:
    """An assistant text reply."""
    return Reply(
        [Item("message", text=s)], chunk_delay=chunk_delay, chunks=chunks, label=label or "text"
    )


def slow_text(
    s: str, *, seconds: float = 30.0, chunks: int = 60, label: str = "slow_text"
) -> Reply:
    """Text streamed in ``chunks`` pieces spread over about ``seconds``."""
    return Reply(
        [Item("message", text=s)], chunk_delay=seconds / max(chunks, 1), chunks=chunks, label=label
    )


def function_call(
    name: str,
    arguments: dict[str, Any] | str,
    *,
    namespace: str | None = None,
    call_id: str | None = None,
    preface: str | None = None,
    label: str = "",
) -> Reply:
    """A reply with one function call (optionally preceded by an assistant message)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    items = [Item("message", text=preface)] if preface else []
    items.append(
        Item("function_call", name=name, arguments=args, namespace=namespace, call_id=call_id)
    )
    return Reply(items, label=label or name)


def exec_command(
    cmd: str,
    *,
    escalated: bool = False,
    justification: str | None = None,
    yield_time_ms: int | None = None,
    call_id: str | None = None,
    workdir: str | None = None,
) -> Reply:
    """An ``exec_command`` call; ``escalated`` asks for ``require_escalated``."""
    args: dict[str, Any] = {"cmd": cmd}
    if escalated:
        args["sandbox_permissions"] = "require_escalated"
        args["justification"] = justification or f"Need to run {cmd!r} outside the sandbox"
    elif justification:
        args["justification"] = justification
    if yield_time_ms is not None:
        args["yield_time_ms"] = yield_time_ms
    if workdir is not None:
        args["workdir"] = workdir
    return function_call(
        "exec_command",
        args,
        call_id=call_id,
        label="exec_command(escalated)" if escalated else "exec_command",
    )


def request_user_input(
    questions: Sequence[dict[str, Any]] | None = None, *, call_id: str | None = None
) -> Reply:
    """A ``request_user_input`` call. Default: one question "color" with Red / Blue."""
    if questions is None:
        questions = [
            {
                "id": "color",
                "header": "Color",
                "question": "Which color do you prefer?",
                "options": [
                    {"label": "Red", "description": "warm"},
                    {"label": "Blue", "description": "cool"},
                ],
            }
        ]
    return function_call("request_user_input", {"questions": list(questions)}, call_id=call_id)


def spawn_agent(message: str, *, call_id: str | None = None, **extra: Any) -> Reply:
    """``multi_agent_v1.spawn_agent`` (a namespaced function call)."""
    return function_call(
        "spawn_agent",
        {"message": message, **extra},
        namespace="multi_agent_v1",
        call_id=call_id,
        label="spawn_agent",
    )


def wait_agent(
    targets: Sequence[str] | None = None,
    *,
    timeout_ms: int | None = None,
    call_id: str | None = None,
) -> Reply:
    """``multi_agent_v1.wait_agent`` (``targets`` is required by codex).

    With ``targets=None`` the reply is built when consumed: the agent ids are taken from
    the ``spawn_agent`` outputs in that request's input (``{"agent_id": ...}``).
    """

    def build(req: Request) -> Reply:
        ids = list(targets) if targets is not None else spawned_agent_ids(req)
        args: dict[str, Any] = {"targets": ids}
        if timeout_ms is not None:
            args["timeout_ms"] = timeout_ms
        return function_call(
            "wait_agent", args, namespace="multi_agent_v1", call_id=call_id, label="wait_agent"
        )

    return Reply(dynamic=build, label="wait_agent")


def spawned_agent_ids(req: Request) -> list[str]:
    """Agent ids found in the ``function_call_output``s of a request (spawn_agent results)."""
    ids: list[str] = []
    for out in req.function_outputs().values():
        try:
            obj = json.loads(out)
        except ValueError:
            continue
        if isinstance(obj, dict):
            for k in ("agent_id", "id", "thread_id"):
                v = obj.get(k)
                if isinstance(v, str) and v not in ids:
                    ids.append(v)
                    break
    return ids


def dynamic(build: Callable[[Request], Reply], label: str = "dynamic") -> Reply:
    """A reply computed from the request that consumes it."""
    return Reply(dynamic=build, label=label)


def http_error(status: int = 500, message: str = "scripted server error") -> Reply:
    return Reply(http_status=status, error_message=message, label=f"http_{status}")


def failed(message: str = "scripted response.failed") -> Reply:
    return Reply(fail_message=message, label="response.failed")


# --------------------------------------------------------------------------- records


class Request(ScriptedRequest):
    @property
    def turn_metadata(self) -> dict[str, Any]:
        raw = self.headers.get("x-codex-turn-metadata")
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return {}

    def input_texts(self) -> list[str]:
        return _input_texts(self.body)

    def last_user_text(self) -> str:
        texts = [t for role, t in _input_messages(self.body) if role == "user"]
        return texts[-1] if texts else ""

    def function_outputs(self) -> dict[str, str]:
        """call_id -> output of every ``function_call_output`` in the input."""
        out: dict[str, str] = {}
        if isinstance(self.body, dict):
            for it in self.body.get("input") or []:
                if isinstance(it, dict) and it.get("type") == "function_call_output":
                    o = it.get("output")
                    out[str(it.get("call_id"))] = o if isinstance(o, str) else json.dumps(o)
        return out

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "headers": self.headers, "body": self.body}


def _input_messages(body: Any) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if not isinstance(body, dict):
        return out
    for it in body.get("input") or []:
        if not isinstance(it, dict) or it.get("type", "message") != "message":
            continue
        content = it.get("content")
        if isinstance(content, str):
            out.append((str(it.get("role")), content))
        elif isinstance(content, list):
            parts = [c.get("text", "") for c in content if isinstance(c, dict)]
            out.append((str(it.get("role")), "".join(p for p in parts if isinstance(p, str))))
    return out


def _input_texts(body: Any) -> list[str]:
    return [t for _, t in _input_messages(body)]


def classify(headers: dict[str, str], body: Any) -> str:
    """Sort a ``POST /v1/responses`` into main / subagent / title / compact.

    Observed (0.169.0): every request carries ``session-id``, ``thread-id`` and the JSON
    header ``x-codex-turn-metadata`` (``thread_source``: ``user`` | ``subagent`` |
    ``thread_title``; ``request_kind``: ``turn``). The title call runs on its own thread
    (session-id == thread-id, a fresh id) with ``thread_source: "thread_title"``; a
    sub-agent's requests carry the parent's session-id, the child's thread-id and
    ``thread_source: "subagent"``.
    """
    try:
        meta = json.loads(headers.get("x-codex-turn-metadata") or "{}")
    except ValueError:
        meta = {}
    if not isinstance(meta, dict):
        meta = {}
    texts = _input_texts(body)
    if meta.get("thread_source") == "thread_title" or any(TITLE_MARKER in t for t in texts):
        return "title"
    users = [t for role, t in _input_messages(body) if role == "user"]
    if meta.get("request_kind") == "compaction" or (users and COMPACT_MARKER in users[-1]):
        return "compact"
    sid = headers.get("session-id") or headers.get("session_id")
    tid = headers.get("thread-id") or headers.get("thread_id")
    if sid and tid and sid != tid:
        return "subagent"
    if meta.get("thread_source") == "subagent":
        return "subagent"
    return "main"


# --------------------------------------------------------------------------- server


class _Handler(ChunkedHandler):
    owner: ResponsesServer

    # ---- helpers
    def _read_body(self) -> Any:
        """As :meth:`ChunkedHandler._read_body`, after undoing a gzip or deflate encoding."""
        raw = self._read_raw_body()
        enc = (self.headers.get("Content-Encoding") or "").lower()
        if enc == "gzip":
            import gzip

            raw = gzip.decompress(raw)
        elif enc == "deflate":
            import zlib

            raw = zlib.decompress(raw)
        elif enc:
            return {"_undecoded_content_encoding": enc, "_size": len(raw)}
        return parse_json_body(raw)

    def _event(self, etype: str, payload: dict[str, Any]) -> None:
        payload = {"type": etype, **payload}
        self._chunk(f"event: {etype}\ndata: {json.dumps(payload)}\n\n".encode())

    # ---- verbs
    def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
        owner = self.owner
        req = Request(
            next(owner._ids),
            time.time(),
            "GET",
            self.path,
            self._lower_headers(),
            None,
            kind="models",
        )
        owner._record(req)
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": []})
            req.reply_label = "models"
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            req.reply_label = "404"
        req.completed = True
        owner._notify()

    def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches to
        owner = self.owner
        headers = self._lower_headers()
        body = self._read_body()
        seq = next(owner._ids)
        req = Request(seq, time.time(), "POST", self.path, headers, body)
        if not self.path.rstrip("/").endswith("/responses"):
            req.kind = "other"
            owner._record(req)
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        req.kind = owner.classifier(headers, body)
        reply = owner._next_reply(req.kind)
        if reply.dynamic is not None:
            reply = reply.dynamic(req)
        req.reply_label = reply.label
        owner._record(req)
        self._send_reply(req, lambda: self._serve_reply(seq, reply))

    def _serve_reply(self, seq: int, reply: Reply) -> None:
        owner = self.owner
        if reply.http_status != 200:
            self._send_scripted_error(
                reply.http_status,
                {"message": reply.error_message, "type": "server_error", "code": "server_error"},
            )
            return
        self._start_event_stream()
        resp_id = f"resp_{seq}"
        base = {
            "id": resp_id,
            "object": "response",
            "created_at": int(time.time()),
            "model": "gpt-5-codex",
        }
        self._event(
            "response.created", {"response": {**base, "status": "in_progress", "output": []}}
        )
        if reply.fail_message is not None:
            self._event(
                "response.failed",
                {
                    "response": {
                        **base,
                        "status": "failed",
                        "output": [],
                        "error": {"code": "server_error", "message": reply.fail_message},
                    }
                },
            )
            self._chunk(b"")
            return
        done_items: list[dict[str, Any]] = []
        first_delta = True
        for idx, item in enumerate(reply.items):
            if item.type == "message":
                item_id = f"msg_{seq}_{idx}"
                self._event(
                    "response.output_item.added",
                    {
                        "output_index": idx,
                        "item": {
                            "type": "message",
                            "id": item_id,
                            "role": "assistant",
                            "status": "in_progress",
                            "content": [],
                        },
                    },
                )
                for piece in split(item.text, reply.chunks):
                    self._event(
                        "response.output_text.delta",
                        {
                            "item_id": item_id,
                            "output_index": idx,
                            "content_index": 0,
                            "delta": piece,
                        },
                    )
                    if first_delta:
                        first_delta = False
                        owner._set_streaming(seq, reply.label)
                        if reply.gate is not None:
                            reply.gate.wait(reply.gate_timeout)
                    if reply.chunk_delay:
                        time.sleep(reply.chunk_delay)
                self._event(
                    "response.output_text.done",
                    {
                        "item_id": item_id,
                        "output_index": idx,
                        "content_index": 0,
                        "text": item.text,
                    },
                )
                done = {
                    "type": "message",
                    "id": item_id,
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": item.text, "annotations": []}],
                }
            else:
                call_id = item.call_id or f"call_{seq}_{idx}"
                item_id = f"fc_{call_id}"
                added: dict[str, Any] = {
                    "type": "function_call",
                    "id": item_id,
                    "call_id": call_id,
                    "name": item.name,
                    "arguments": "",
                    "status": "in_progress",
                }
                if item.namespace:
                    added["namespace"] = item.namespace
                self._event("response.output_item.added", {"output_index": idx, "item": added})
                if first_delta:
                    first_delta = False
                    owner._set_streaming(seq, reply.label)
                self._event(
                    "response.function_call_arguments.delta",
                    {"item_id": item_id, "output_index": idx, "delta": item.arguments},
                )
                self._event(
                    "response.function_call_arguments.done",
                    {"item_id": item_id, "output_index": idx, "arguments": item.arguments},
                )
                done = {**added, "arguments": item.arguments, "status": "completed"}
            self._event("response.output_item.done", {"output_index": idx, "item": done})
            done_items.append(done)
        usage = reply.usage or {
            "input_tokens": 120,
            "input_tokens_details": {"cached_tokens": 20},
            "output_tokens": 30,
            "output_tokens_details": {"reasoning_tokens": 5},
            "total_tokens": 150,
        }
        self._event(
            "response.completed",
            {"response": {**base, "status": "completed", "output": done_items, "usage": usage}},
        )
        self._chunk(b"")  # end of chunked body


class ResponsesServer(ScriptedServer[Request, Reply]):
    handler = _Handler
    thread_name = "responses-server"
    base_path = "/v1"

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        subagent_replies: Iterable[Reply] = (),
        exhausted_reply: Reply | None = None,
        title: str = "Scripted test session",
        classifier: Callable[[dict[str, str], Any], str] = classify,
    ) -> None:
        super().__init__(
            replies,
            exhausted_reply=exhausted_reply
            or text("(scripted server: no more replies)", label="exhausted"),
        )
        self._sub: list[Reply] = list(subagent_replies)
        self.title = title
        self.classifier = classifier

    # -- scenario control
    def add_subagent(self, *replies: Reply) -> None:
        with self._lock:
            self._sub.extend(replies)

    # -- observation
    def responses_requests(self, kind: str | None = None) -> list[Request]:
        with self._lock:
            return self._matching(kind)

    def wait_for_requests(
        self, n: int, timeout: float | None = None, *, kind: str | None = "main"
    ) -> list[Request]:
        """Wait until at least ``n`` POST /responses of ``kind`` (None: any) have arrived."""
        self.wait_for(lambda s: len(s._matching(kind)) >= n, self._or_default(timeout))
        return self.responses_requests(kind)

    def _matching(self, kind: str | None) -> list[Request]:
        return [
            r
            for r in self.requests
            if r.path.endswith("/responses") and (kind is None or r.kind == kind)
        ]

    # -- internals used by the handler
    def _next_reply(self, kind: str) -> Reply:
        if kind == "main":
            return self._next_main_reply()
        if kind == "subagent":
            with self._lock:
                if self._sub:
                    return self._sub.pop(0)
            return text("Sub-agent finished its task.", label="subagent-default")
        if kind == "title":
            return text(self.title, label="title-default")
        if kind == "compact":
            return text(
                "Summary of the conversation so far: the user ran scripted tests.",
                label="compact-default",
            )
        return text("ok", label=f"{kind}-default")

    def _notify(self) -> None:
        with self._lock:
            self._lock.notify_all()
