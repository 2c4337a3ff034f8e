"""An HTTP receiver on 127.0.0.1 for what agentspool (or a tool it drives) posts: a
webhook, apprise's ``json://``, an OTLP/HTTP collector, Alertmanager's receiver.

It records every POST it accepts (path, headers, body gunzipped, arrival time) and can
refuse the first ones, each in its own way: ``"500"`` answers HTTP 500, ``"close"``
hangs up without an answer (a receiver that went away mid-request).
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Post:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    """``time.monotonic()`` when it arrived."""

    def json(self) -> Any:
        return json.loads(self.body)


class Receiver:
    """Records the POSTs it accepts in ``posts``; ``refuse`` says how the first
    ``len(refuse)`` are refused (``"500"`` or ``"close"``), counted in ``refused``."""

    def __init__(self, refuse: Sequence[str] = (), *, reply_type: str = "") -> None:
        self.posts: list[Post] = []
        self.refused = 0
        self.seen = 0
        self.refusals = list(refuse)
        self.got = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with receiver.got:
                    how = (
                        receiver.refusals[receiver.seen]
                        if receiver.seen < len(receiver.refusals)
                        else ""
                    )
                    receiver.seen += 1
                    if how:
                        receiver.refused += 1
                    else:
                        headers = {k.lower(): v for k, v in self.headers.items()}
                        receiver.posts.append(Post(self.path, headers, body, time.monotonic()))
                    receiver.got.notify_all()
                if how == "close":
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self.send_response(500 if how else 200)
                if reply_type:
                    self.send_header("Content-Type", reply_type)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def json_url(self) -> str:
        """Where apprise's ``json://`` notifier posts to this receiver."""
        return f"json://127.0.0.1:{self.port}/hook"

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Post]:
        """The accepted posts, once there are ``count`` (or the timeout passed)."""
        with self.got:
            self.got.wait_for(lambda: len(self.posts) >= count, timeout)
            return list(self.posts)

    def wait_for_json(self, count: int, timeout: float = 30.0) -> list[Any]:
        """``wait_for``, each post's body decoded."""
        return [post.json() for post in self.wait_for(count, timeout)]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Receiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
