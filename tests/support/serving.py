"""A real ``agentspool serve`` process on 127.0.0.1 for tests and benchmarks, and clients
of it: plain HTTP (``http.client``) and a Server-Sent Events reader."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

SERVE = [sys.executable, "-m", "agentspool.cli.main", "serve"]


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Served:
    """``agentspool serve --port 0 ARGS`` until ``stop``; its URL from its first line."""

    def __init__(self, args: Sequence[str] = (), env: Mapping[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*SERVE, "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().decode()
        if not first.startswith("agentspool serve: http://"):
            self.stop()
            raise RuntimeError(f"serve did not start: {first!r} {self.stderr}")
        self.url = first.split(": ", 1)[1].strip()
        parts = urlsplit(self.url)
        self.host = parts.hostname or ""
        self.port = parts.port or 80

    def get(
        self, path: str, headers: Mapping[str, str] | None = None, method: str = "GET"
    ) -> Answer:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        try:
            conn.request(method, path, headers=dict(headers or {}))
            response = conn.getresponse()
            return Answer(
                response.status,
                {k.lower(): v for k, v in response.getheaders()},
                response.read(),
            )
        finally:
            conn.close()

    def events(self, last_id: str = "", headers: Mapping[str, str] | None = None) -> EventStream:
        return EventStream(self.host, self.port, last_id, headers)

    def stop(self) -> int:
        """SIGTERM, as systemd stops it; its exit status. ``stderr`` holds what it said."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None and not pipe.closed:
                if pipe is self.proc.stderr:
                    self.stderr = pipe.read().decode(errors="replace")
                pipe.close()
        return self.proc.returncode

    stderr = ""

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Message:
    event: str
    data: str
    id: str = ""

    def json(self) -> Any:
        return json.loads(self.data)


class EventStream:
    """``GET /api/v1/events``, read by a thread into a queue of ``Message``s."""

    def __init__(
        self, host: str, port: int, last_id: str = "", headers: Mapping[str, str] | None = None
    ) -> None:
        self.conn = http.client.HTTPConnection(host, port, timeout=300)
        sent = {"Accept": "text/event-stream", **(headers or {})}
        if last_id:
            sent["Last-Event-ID"] = last_id
        self.conn.request("GET", "/api/v1/events", headers=sent)
        self.sock = self.conn.sock  # the response keeps reading it; close() shuts it
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.messages: queue.Queue[Message | None] = queue.Queue()
        self.last_id = ""
        if self.status == 200:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        event, data, given = "message", [], ""
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\r\n")
                if not line:
                    if data:
                        self.messages.put(Message(event, "\n".join(data), given))
                    event, data, given = "message", [], ""
                elif line.startswith(":"):
                    continue
                else:
                    name, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    if name == "event":
                        event = value
                    elif name == "data":
                        data.append(value)
                    elif name == "id":
                        given = value
        except Exception:  # noqa: BLE001 - a hang-up mid-chunk: the stream ended
            pass
        self.messages.put(None)

    def next(self, timeout: float = 30.0) -> Message:
        message = self.messages.get(timeout=timeout)
        if message is None:
            raise EOFError("the event stream ended")
        if message.id:
            self.last_id = message.id
        return message

    def until(self, kind: str, timeout: float = 30.0) -> list[Message]:
        """Every message up to and with the first of ``kind``."""
        out = []
        while True:
            out.append(self.next(timeout))
            if out[-1].event == kind:
                return out

    def transition(self, timeout: float = 30.0) -> dict[str, Any]:
        message = self.next(timeout)
        assert message.event == "transition", message
        found: dict[str, Any] = message.json()
        return found

    def close(self) -> None:
        """Hang up (the reading thread sees the end at once)."""
        if self.sock is not None:
            with contextlib.suppress(OSError):  # already closed by the server
                self.sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()
        self.response.close()
