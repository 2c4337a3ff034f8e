"""``agentspool serve``: one local, read-only daemon — the JSON API under ``/api/v1``, live
transitions as Server-Sent Events, and a web page at ``/`` (docs/adr/0035-serve.md,
0036-serve-events.md).

Imported only by the ``serve`` command: Starlette and uvicorn are imported here and in
the modules below, never by the library or the hooks.
"""

from __future__ import annotations

import socket
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentspool.serve.app import ServeConfig

__all__ = ["serve"]


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, made here so that the address is known (``--port 0``: any
    free one) before anything is printed, and refusals come before it."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def serve(config: ServeConfig, *, announce: Any = None) -> int:
    """Bind, follow the runs, and serve until SIGINT or SIGTERM. ``config.token`` must be
    set already for a bind other than loopback (the command checks it, before this)."""
    import uvicorn

    from agentspool import RunFollower
    from agentspool.serve.app import build_app
    from agentspool.serve.fleet import Fleet
    from agentspool.serve.hub import TransitionHub

    sock = _bind(config.host, config.port)
    config.port = sock.getsockname()[1]
    follower = RunFollower(config.runtime_dir, interval=config.interval)
    hub = TransitionHub(follower, window=config.event_window)
    fleet = Fleet.attach(config, hub)
    hub.start()
    app = build_app(config, hub, fleet)

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # Open event streams never end by themselves: end them (in the loop, not in
            # this signal handler), so the graceful shutdown does not wait for them.
            import asyncio
            import contextlib

            with contextlib.suppress(RuntimeError):  # no loop running yet: no stream open
                asyncio.get_running_loop().call_soon_threadsafe(app.state.api.end_streams)
            super().handle_exit(sig, frame)

    server = Server(
        uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
            server_header=False,
        )
    )
    line = f"agentspool serve: {url_of(config.host, config.port)}"
    (announce or _print)(line)
    try:
        server.run(sockets=[sock])
    finally:
        hub.close()
        fleet.close()
        sock.close()
    return 0


def _print(line: str) -> None:
    print(line, flush=True)
    sys.stdout.flush()
