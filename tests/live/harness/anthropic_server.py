"""A scripted Anthropic Messages API server on 127.0.0.1 (stdlib only).

Usage::

    from harness import anthropic_server as api

    scenario = [
        api.tool_use("Bash", {"command": "echo hi > out.txt", "description": "Write"}),
        api.text("Done."),
    ]
    with api.AnthropicServer(scenario) as srv:
        env = {"ANTHROPIC_BASE_URL": srv.url, ...}
        ...                              # run claude
        srv.wait_main_requests(2)        # block until the 2nd main call arrived
        srv.requests                     # every request, recorded

A *scenario* is a list of :class:`Reply` objects; each POST ``/v1/messages`` that
belongs to the main conversation consumes the next one. Requests that are not the
main conversation ("side" requests: title/topic generation, quota probes …) get
``side_reply`` and never consume a scripted reply. When the scenario is exhausted,
main requests get ``default_reply``. Tests can also ``push()`` replies at any time.

What Claude Code 2.1.328 was observed to send (see README.md in this folder), with
``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` as ``harness.claude`` sets it:

* only ``POST /v1/messages?beta=true``, always ``"stream": true``; every request
  (main agent, subagents, the /compact summary) offered tools;
* no side request at all (no title generation, quota probe, ``count_tokens`` or
  ``HEAD /``). The default classifier :func:`is_main` ("offers tools") is kept as a
  safeguard so a tool-less side call would get ``side_reply`` instead of eating a
  scripted reply; override it with ``classify=``;
* a background subagent's first request races the main agent's next one: use
  ``routes=``/``router=`` to give it its own queue;
* after a 400 the same request is re-sent (6 requests in ``-p``): script errors with
  ``error(..., times=n)``.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "AnthropicServer",
    "RecordedRequest",
    "Reply",
    "blocks",
    "error",
    "is_main",
    "slow_text",
    "text",
    "tool_use",
]

DEFAULT_MODEL = "claude-sonnet-4-5"


# ---------------------------------------------------------------- replies ---


@dataclass
class Reply:
    """One scripted answer to one POST /v1/messages.

    ``content`` is a list of Anthropic content blocks (``{"type":"text","text":…}``
    or ``{"type":"tool_use","id":…,"name":…,"input":{…}}``). ``delay`` is the pause
    (seconds) between SSE deltas; ``first_delay`` the pause before the first byte.
    ``status`` ≠ 200 sends an error instead (``error_type``/``error_message``).
    """

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    delay: float = 0.0
    first_delay: float = 0.0
    chunk_chars: int = 12
    status: int = 200
    error_type: str = "invalid_request_error"
    error_message: str = "scripted error"
    should_retry: bool | None = None
    times: int = 1
    label: str = ""

    def resolved_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        if any(b.get("type") == "tool_use" for b in self.content):
            return "tool_use"
        return "end_turn"

    def describe(self) -> str:
        if self.label:
            return self.label
        if self.status != 200:
            return f"error {self.status} {self.error_type}"
        parts = []
        for b in self.content:
            if b.get("type") == "text":
                parts.append(f"text({b['text'][:30]!r})")
            elif b.get("type") == "tool_use":
                parts.append(f"tool_use({b['name']})")
            else:
                parts.append(str(b.get("type")))
        return "+".join(parts) or "empty"


def _tool_id() -> str:
    return "toolu_" + uuid.uuid4().hex[:24]


def text(s: str, *, delay: float = 0.0, label: str = "") -> Reply:
    """A plain assistant text answer (``stop_reason: end_turn``)."""
    return Reply(content=[{"type": "text", "text": s}], delay=delay, label=label)


def slow_text(s: str, *, delay: float = 0.5, chunk_chars: int = 3, label: str = "") -> Reply:
    """Text streamed slowly: ``delay`` seconds between deltas of ``chunk_chars``."""
    return Reply(
        content=[{"type": "text", "text": s}], delay=delay, chunk_chars=chunk_chars, label=label
    )


def tool_use(
    name: str,
    input: dict[str, Any],
    *,
    id: str | None = None,
    preface: str | None = None,
    delay: float = 0.0,
    label: str = "",
) -> Reply:
    """One tool call (optionally preceded by a text block ``preface``)."""
    content: list[dict[str, Any]] = []
    if preface:
        content.append({"type": "text", "text": preface})
    content.append({"type": "tool_use", "id": id or _tool_id(), "name": name, "input": input})
    return Reply(content=content, delay=delay, label=label)


def blocks(*content: dict[str, Any], delay: float = 0.0, label: str = "") -> Reply:
    """Several content blocks in one message. tool_use blocks get an id if missing."""
    out = []
    for block in content:
        b = dict(block)
        if b.get("type") == "tool_use":
            b.setdefault("id", _tool_id())
            b.setdefault("input", {})
        out.append(b)
    return Reply(content=out, delay=delay, label=label)


def error(
    status: int = 400,
    *,
    type: str | None = None,
    message: str = "scripted error",
    should_retry: bool | None = False,
    times: int = 1,
    label: str = "",
) -> Reply:
    """An HTTP error with an Anthropic-shaped body.

    ``should_retry=False`` sends ``x-should-retry: false`` so the client does not
    retry 5xx answers (otherwise a 500 is retried with back-off many times).
    ``times``: answer this many consecutive main requests with the error (Claude Code
    2.1.328 re-sends a request once after a 400, so ``times=1`` is not enough to make
    a turn fail).
    """
    default_type = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        500: "api_error",
        529: "overloaded_error",
    }.get(status, "api_error")
    return Reply(
        status=status,
        error_type=type or default_type,
        error_message=message,
        should_retry=should_retry,
        times=times,
        label=label,
    )


# -------------------------------------------------------------- recording ---


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text, or None
    time: float
    kind: str = ""  # "main" | "side" | "other"
    reply: str = ""  # what was answered (Reply.describe())

    @property
    def model(self) -> str:
        return self.body.get("model", "") if isinstance(self.body, dict) else ""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", []) if isinstance(self.body, dict) else []

    def system_text(self) -> str:
        if not isinstance(self.body, dict):
            return ""
        system = self.body.get("system", "")
        if isinstance(system, str):
            return system
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))

    def tool_names(self) -> list[str]:
        if not isinstance(self.body, dict):
            return []
        return [t.get("name", "") for t in self.body.get("tools", []) or []]

    def first_user_text(self) -> str:
        """Concatenated text of the first user message (a subagent's task prompt …)."""
        for m in self.messages:
            if m.get("role") != "user":
                continue
            c = m.get("content")
            if isinstance(c, str):
                return c
            return "\n".join(
                b.get("text", "")
                for b in c or []
                if isinstance(b, dict) and b.get("type") == "text"
            )
        return ""

    def last_user_text(self) -> str:
        """Concatenated text of the last user message (handy for assertions)."""
        for m in reversed(self.messages):
            if m.get("role") != "user":
                continue
            c = m.get("content")
            if isinstance(c, str):
                return c
            return "\n".join(
                b.get("text", "") if b.get("type") == "text" else json.dumps(b)
                for b in c
                if isinstance(b, dict)
            )
        return ""

    def summary(self) -> dict[str, Any]:
        """A small JSON-able digest (no system prompt / tool schemas)."""
        d: dict[str, Any] = {
            "method": self.method,
            "path": self.path,
            "kind": self.kind,
            "reply": self.reply,
            "time": round(self.time, 3),
        }
        if isinstance(self.body, dict):
            d["model"] = self.model
            d["stream"] = self.body.get("stream")
            d["n_messages"] = len(self.messages)
            d["tools"] = self.tool_names()
            d["system_head"] = self.system_text()[:160]
            d["last_user"] = self.last_user_text()[-300:]
            if "metadata" in self.body:
                d["metadata"] = self.body["metadata"]
        return d


def is_main(req: RecordedRequest) -> bool:
    """Default classifier: is this request part of an agent conversation?

    Main-agent, subagent and /compact calls offer tools; side calls (none seen with
    nonessential traffic disabled, e.g. title generation) would offer none.
    """
    return bool(req.tool_names())


# ----------------------------------------------------------------- server ---


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- plumbing
    def _read_body(self) -> Any:
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _record(self, body: Any) -> RecordedRequest:
        req = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            time=time.time(),
        )
        return req

    def _send_json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:24])
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    # -- verbs
    def do_HEAD(self) -> None:
        req = self._record(None)
        req.kind = "other"
        req.reply = "200 empty"
        self.server.owner._add(req)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        req = self._record(None)
        req.kind = "other"
        path = self.path.split("?")[0]
        if path.rstrip("/") == "/v1/models":
            obj: Any = {
                "data": [
                    {
                        "type": "model",
                        "id": DEFAULT_MODEL,
                        "display_name": "Scripted",
                        "created_at": "2025-01-01T00:00:00Z",
                    }
                ],
                "has_more": False,
                "first_id": DEFAULT_MODEL,
                "last_id": DEFAULT_MODEL,
            }
        else:
            obj = {}
        req.reply = "200 json"
        self.server.owner._add(req)
        self._send_json(200, obj)

    def do_POST(self) -> None:
        body = self._read_body()
        req = self._record(body)
        path = self.path.split("?")[0].rstrip("/")
        owner = self.server.owner
        if path == "/v1/messages/count_tokens":
            req.kind = "other"
            req.reply = "count_tokens"
            owner._add(req)
            n = len(json.dumps(body)) // 4 if body is not None else 1
            self._send_json(200, {"input_tokens": max(1, n)})
            return
        if path != "/v1/messages":
            req.kind = "other"
            req.reply = "200 {}"
            owner._add(req)
            self._send_json(200, {})
            return
        reply = owner._next_reply(req)
        req.reply = reply.describe()
        owner._add(req)
        try:
            self._answer_messages(req, reply)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError):
            owner._note_abort(req)

    def do_PUT(self) -> None:
        self.do_POST()

    def do_DELETE(self) -> None:
        req = self._record(None)
        req.kind = "other"
        req.reply = "200 {}"
        self.server.owner._add(req)
        self._send_json(200, {})

    # -- /v1/messages
    def _answer_messages(self, req: RecordedRequest, reply: Reply) -> None:
        body = req.body if isinstance(req.body, dict) else {}
        model = body.get("model") or DEFAULT_MODEL
        if reply.first_delay:
            time.sleep(reply.first_delay)
        if reply.status != 200:
            extra = {}
            if reply.should_retry is not None:
                extra["x-should-retry"] = "true" if reply.should_retry else "false"
            self._send_json(
                reply.status,
                {
                    "type": "error",
                    "error": {"type": reply.error_type, "message": reply.error_message},
                    "request_id": "req_" + uuid.uuid4().hex[:24],
                },
                extra,
            )
            return
        msg_id = "msg_" + uuid.uuid4().hex[:24]
        in_tokens = max(1, len(json.dumps(body.get("messages", []))) // 4)
        out_tokens = max(1, sum(len(json.dumps(b)) for b in reply.content) // 4)
        usage_start = {
            "input_tokens": in_tokens,
            "output_tokens": 1,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "service_tier": "standard",
        }
        stop_reason = reply.resolved_stop_reason()
        if not body.get("stream"):
            self._send_json(
                200,
                {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": reply.content,
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": {**usage_start, "output_tokens": out_tokens},
                },
            )
            return

        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:24])
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

        def event(name: str, data: dict[str, Any], pause: bool = False) -> None:
            if pause and reply.delay:
                time.sleep(reply.delay)
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage_start,
                },
            },
        )

        # Each content block streams as content_block_start (the block with its text or
        # input still empty), content_block_deltas that fill it, content_block_stop.
        def block_start(index: int, block: dict[str, Any]) -> None:
            event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )

        def block_delta(index: int, delta: dict[str, Any], pause: bool = True) -> None:
            event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
                pause=pause,
            )

        for i, b in enumerate(reply.content):
            kind = b.get("type")
            if kind == "text":
                block_start(i, {"type": "text", "text": ""})
                for chunk in _chunks(b["text"], reply.chunk_chars if reply.delay else 200):
                    block_delta(i, {"type": "text_delta", "text": chunk})
            elif kind == "tool_use":
                block_start(i, {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}})
                for chunk in _chunks(json.dumps(b.get("input", {})), 64):
                    block_delta(i, {"type": "input_json_delta", "partial_json": chunk})
            elif kind == "thinking":
                block_start(i, {"type": "thinking", "thinking": "", "signature": ""})
                for chunk in _chunks(b.get("thinking", ""), 200):
                    block_delta(i, {"type": "thinking_delta", "thinking": chunk})
                signature = b.get("signature", "c2lnbmF0dXJl")
                block_delta(i, {"type": "signature_delta", "signature": signature}, pause=False)
            else:
                raise ValueError(f"unsupported block type {kind!r}")
            event("content_block_stop", {"type": "content_block_stop", "index": i})
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": out_tokens},
            },
            pause=True,
        )
        event("message_stop", {"type": "message_stop"})


def _take(queue: list[Reply]) -> Reply:
    """Pop the head reply, or use one of its ``times`` and leave it at the head."""
    head = queue[0]
    if head.times > 1:
        head.times -= 1
        return head
    return queue.pop(0)


def _chunks(s: str, n: int) -> Iterator[str]:
    if not s:
        yield ""
        return
    for i in range(0, len(s), max(1, n)):
        yield s[i : i + n]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: AnthropicServer


class AnthropicServer:
    """Scripted Messages API server; a context manager (starts/stops the thread).

    ``scenario``: replies for main requests, consumed in order.
    ``side_reply``: answer to side requests (not consumed).
    ``default_reply``: answer to main requests once the scenario is exhausted.
    ``classify``: ``RecordedRequest -> bool`` (True = main), default :func:`is_main`.
    ``routes`` + ``router``: extra named queues. ``router(req)`` returns a route name
    (e.g. ``"sub"`` when the first user message holds a subagent's task marker) or
    ``None`` for the main queue; a routed request is recorded with ``kind=<route>``.
    ``log_path``: if set, one JSON line per request (``RecordedRequest.summary()``).
    """

    def __init__(
        self,
        scenario: Iterable[Reply] = (),
        *,
        side_reply: Reply | None = None,
        default_reply: Reply | None = None,
        classify: Callable[[RecordedRequest], bool] | None = None,
        routes: dict[str, Iterable[Reply]] | None = None,
        router: Callable[[RecordedRequest], str | None] | None = None,
        log_path: str | None = None,
        port: int = 0,
    ) -> None:
        self._queue: list[Reply] = list(scenario)
        self._routes: dict[str, list[Reply]] = {k: list(v) for k, v in (routes or {}).items()}
        self.router = router
        self.side_reply = side_reply or text("Scripted side answer.", label="side")
        self.default_reply = default_reply or text("OK.", label="default")
        self.classify = classify or is_main
        self.log_path = log_path
        self.requests: list[RecordedRequest] = []
        self.aborted: list[RecordedRequest] = []
        self._cond = threading.Condition()
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    # -- lifecycle
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> AnthropicServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="anthropic-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> AnthropicServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting
    def push(self, *replies: Reply) -> None:
        """Append replies to the scenario (thread-safe)."""
        with self._cond:
            self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        with self._cond:
            return len(self._queue)

    def push_route(self, route: str, *replies: Reply) -> None:
        """Append replies to a named route's queue (see ``router``)."""
        with self._cond:
            self._routes.setdefault(route, []).extend(replies)

    def _next_reply(self, req: RecordedRequest) -> Reply:
        try:
            main = self.classify(req)
        except Exception:  # noqa: BLE001 - a broken classifier must not kill the server
            main = True
        route = None
        if main and self.router is not None:
            try:
                route = self.router(req)
            except Exception:  # noqa: BLE001
                route = None
        with self._cond:
            req.kind = "main" if main else "side"
            if not main:
                return self.side_reply
            if route is not None:
                req.kind = route
                queue = self._routes.get(route)
                if queue:
                    return _take(queue)
                return self.default_reply
            if self._queue:
                return _take(self._queue)
            return self.default_reply

    def _add(self, req: RecordedRequest) -> None:
        with self._cond:
            self.requests.append(req)
            self._cond.notify_all()
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(req.summary()) + "\n")

    def _note_abort(self, req: RecordedRequest) -> None:
        with self._cond:
            self.aborted.append(req)
            self._cond.notify_all()

    # -- inspection
    def messages_requests(self, kind: str | None = "main") -> list[RecordedRequest]:
        with self._cond:
            return [
                r
                for r in self.requests
                if r.path.split("?")[0].rstrip("/") == "/v1/messages"
                and (kind is None or r.kind == kind)
            ]

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return self.messages_requests("main")

    def wait_main_requests(self, n: int, timeout: float = 30.0) -> list[RecordedRequest]:
        """Block until at least ``n`` main /v1/messages requests arrived."""
        return (
            self.wait_until(lambda: len(self.main_requests) >= n, timeout, f"{n} main requests")
            or self.main_requests
        )

    def wait_until(
        self, predicate: Callable[[], bool], timeout: float = 30.0, what: str = "condition"
    ) -> Any:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                # predicate may take the lock again via helpers: Condition uses an RLock
                if predicate():
                    return None
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"{what} not reached after {timeout}s; requests: "
                        + json.dumps([r.summary() for r in self.requests])[-3000:]
                    )
                self._cond.wait(min(left, 0.2))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
