"""What the scripted model servers share: a reply queue, the HTTP server thread, request records.

Stdlib only. ``chat_server``, ``gemini_server`` and ``responses_server`` each speak one
model API; this module holds the plumbing around it:

* :class:`ScriptedRequest` — one recorded HTTP request (each server subclasses it with
  readers for its own body shape);
* :class:`ScriptedServer` — the main reply queue (``add``, ``remaining``, the exhausted
  fallback), a ``ThreadingHTTPServer`` on a free port of 127.0.0.1 in a daemon thread
  (``start``/``stop``, a context manager), and the waits a test blocks on
  (``wait_for``, ``wait_for_requests``, ``wait_streaming``);
* :class:`ChunkedHandler` — the request handler base: quiet log, JSON answers, and
  chunked-transfer writes that raise :class:`ClientGoneError` when the CLI hangs up.

``anthropic_server`` keeps its own plumbing: it answers with ``Connection: close``
instead of chunks, queues replies that repeat (``times=``) and routes them by name.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Generic, Self, TypeVar


@dataclass
class ScriptedRequest:
    seq: int
    time: float
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    kind: str = ""
    reply_label: str = ""
    completed: bool = False
    """The whole reply was written (False: the client hung up, or it is still streaming)."""

    def summary(self) -> str:
        return f"{self.seq}:{self.method} {self.path} {self.kind} -> {self.reply_label}"

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "time": self.time,
            "method": self.method,
            "path": self.path,
            "kind": self.kind,
            "reply": self.reply_label,
            "completed": self.completed,
        }


RequestT = TypeVar("RequestT", bound=ScriptedRequest)
ReplyT = TypeVar("ReplyT")


class ClientGoneError(Exception):
    """The client closed the connection mid-answer (Esc in the TUI, or the CLI exited)."""


class ChunkedHandler(BaseHTTPRequestHandler):
    # HTTP/1.1 so the CLIs keep their connection and streams can use chunked encoding.
    protocol_version = "HTTP/1.1"
    owner: ScriptedServer[Any, Any]
    """The server this handler answers for (set by :meth:`ScriptedServer.start`)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the test output is for the test; every request is in ``server.requests``

    def _read_body(self) -> Any:
        """The parsed JSON body (see :func:`parse_json_body`)."""
        return parse_json_body(self._read_raw_body())

    def _read_raw_body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _lower_headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def _send_json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_scripted_error(self, status: int, error: dict[str, Any]) -> None:
        """A reply's scripted HTTP error: ``{"error": error}``, then the connection closes."""
        self.close_connection = True
        self._send_json(status, {"error": error})

    def _start_event_stream(self) -> None:
        """200 with the headers of a chunked SSE body; write it with :meth:`_chunk`."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        """One chunk of the body; ``b""`` is the last one."""
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError as exc:  # BrokenPipe, ConnectionReset: the CLI hung up (Esc)
            raise ClientGoneError from exc

    def _send_reply(self, req: ScriptedRequest, send: Callable[[], None]) -> None:
        """Run ``send`` (it writes the reply to ``req``) and note how it ended.

        Sets ``req.completed`` when all was written; when the client hung up first, drops
        the connection and tells the server (:meth:`ScriptedServer._client_gone`). Either
        way the reply no longer counts as streaming.
        """
        try:
            send()
            req.completed = True
        except ClientGoneError:
            self.close_connection = True
            self.owner._client_gone(req)
        finally:
            self.owner._set_streaming(req.seq, None)


def parse_json_body(raw: bytes) -> Any:
    """``None`` for an empty body, ``{"_raw": text}`` for one that is not JSON."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return {"_raw": raw.decode("utf-8", "replace")}


class ScriptedServer(Generic[RequestT, ReplyT]):
    """A model API server on 127.0.0.1 answering scripted replies; records every request.

    A subclass sets ``handler`` (its :class:`ChunkedHandler`, which reaches the server as
    ``self.owner``) and, where they differ, ``thread_name``, ``base_path`` and
    ``wait_timeout``.
    """

    handler: ClassVar[type[ChunkedHandler]]
    thread_name: ClassVar[str] = "scripted-server"
    base_path: ClassVar[str] = ""
    """What ``base_url`` adds after the port (e.g. ``/v1``)."""
    wait_timeout: ClassVar[float] = 30.0
    """Default timeout of ``wait_for_requests`` and ``wait_streaming``."""

    def __init__(self, replies: Iterable[ReplyT], *, exhausted_reply: ReplyT) -> None:
        # A Condition (its lock is an RLock): the handler threads notify every change, and a
        # ``wait_for`` predicate may call methods that take the lock again.
        self._lock = threading.Condition()
        self._main: list[ReplyT] = list(replies)
        self.exhausted_reply = exhausted_reply
        self.requests: list[RequestT] = []
        self.exhausted = 0
        self.streaming: dict[int, str] = {}
        """Request seq → label, while that reply streams (first piece sent, not done)."""
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None

    # -- scenario control
    def add(self, *replies: ReplyT) -> None:
        """Append replies to the main queue (while running)."""
        with self._lock:
            self._main.extend(replies)
            self._lock.notify_all()

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._main)

    # -- lifecycle
    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.base_path}"

    def start(self) -> Self:
        handler = type("Handler", (self.handler,), {"owner": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        threading.Thread(
            target=self._httpd.serve_forever, name=self.thread_name, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- observation
    def main_requests(self) -> list[RequestT]:
        with self._lock:
            return [r for r in self.requests if r.kind == "main"]

    def wait_for(self, predicate: Callable[[Self], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"scripted server: condition not met after {timeout}s; "
                        f"requests: {self.summary()}"
                    )
                self._lock.wait(min(left, 0.2))

    def wait_for_requests(self, n: int, timeout: float | None = None) -> list[RequestT]:
        """Wait until at least ``n`` main requests have arrived."""
        self.wait_for(
            lambda s: sum(r.kind == "main" for r in s.requests) >= n, self._or_default(timeout)
        )
        return self.main_requests()

    def wait_streaming(self, timeout: float | None = None) -> None:
        """Wait until some reply is being streamed right now (its first piece sent)."""
        self.wait_for(lambda s: bool(s.streaming), self._or_default(timeout))

    def summary(self) -> list[str]:
        return [r.summary() for r in self.requests]

    def dump(self, path: str) -> None:
        """Write every recorded request as JSONL."""
        with self._lock, open(path, "w") as fh:
            for r in self.requests:
                fh.write(json.dumps(r.to_json()) + "\n")

    # -- used by the handler
    def _or_default(self, timeout: float | None) -> float:
        return self.wait_timeout if timeout is None else timeout

    def _record(self, req: RequestT) -> None:
        with self._lock:
            self.requests.append(req)
            self._lock.notify_all()

    def _next_main_reply(self) -> ReplyT:
        """The next scripted reply, or ``exhausted_reply`` (counted) once there is none."""
        with self._lock:
            if self._main:
                return self._main.pop(0)
            self.exhausted += 1
            return self.exhausted_reply

    def _client_gone(self, req: RequestT) -> None:
        """The client hung up before the whole reply to ``req`` was written."""

    def _set_streaming(self, seq: int, label: str | None) -> None:
        with self._lock:
            if label is None:
                self.streaming.pop(seq, None)
            else:
                self.streaming[seq] = label
            self._lock.notify_all()


def split(s: str, n: int) -> list[str]:
    """``s`` cut into ``n`` pieces as even as can be (fewer when ``s`` is shorter)."""
    if n <= 1 or len(s) <= 1:
        return [s]
    n = min(n, len(s))
    size, rem = divmod(len(s), n)
    out, i = [], 0
    for k in range(n):
        j = i + size + (1 if k < rem else 0)
        out.append(s[i:j])
        i = j
    return out
