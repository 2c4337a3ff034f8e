"""OpenCode's own server, for a run started with ``--port``: what waits on the operator now.

``opencode --port N`` serves its API on 127.0.0.1:N (docs/providers/opencode.md §4):
``GET /permission`` lists the permission prompts open now, ``GET /question`` the question
forms, each naming its session and tool call. Read after the spool, the answer is newer
than anything the spool holds, so it is folded as a snapshot of *now*: what it lists is
open, and when it lists nothing, nothing is (a reply the spool missed is closed).

Not read: ``GET /session/status``. It turns ``busy`` a moment (up to ~200 ms seen) after
the prompt's message row is written, so an ``idle`` answer cannot tell a finished turn
from one about to start; the session log and the spool say when a turn ends. Not
followed: ``GET /event`` (a stream needs a process that stays; the plugin spool records
the same events).

Only 127.0.0.1 is ever asked (``localhost`` is taken to mean it); each request gives up
after ``TIMEOUT`` seconds, and any failure means "no server evidence", never an error.
The server asks for the password OpenCode was started with (``OPENCODE_SERVER_PASSWORD``,
user ``opencode``): ``setup`` chooses one per run and keeps it in the run dir.
"""

from __future__ import annotations

import os

import msgspec

from agentspool.adapters.opencode._signals import Payload, asked
from agentspool.core import events as ev

TIMEOUT = 0.5
LOCAL = frozenset({"127.0.0.1", "localhost"})
USER = "opencode"
PASSWORD_FILE = "opencode-server-password"  # noqa: S105 - a name, not a secret


_decode = msgspec.json.Decoder(list[Payload]).decode


def started_with_port(pid: int) -> bool:
    """The OpenCode process was given ``--port N`` with N > 0 (``--port 0`` and no
    ``--port`` leave the server off, or on a port it does not say)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return False
    for i, arg in enumerate(argv):
        value = None
        if arg == b"--port" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith(b"--port="):
            value = arg[len(b"--port=") :]
        if value is not None and value.isdigit() and int(value) > 0:
            return True
    return False


def password(run_dir: str) -> str:
    try:
        with open(os.path.join(run_dir, PASSWORD_FILE), encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def _get(port: int, path: str, secret: str) -> list[Payload] | None:
    # Imported here: every agentspool command loads this adapter, few ask its server
    # (http.client and the email package it pulls in cost ~15 ms).
    import http.client

    headers = {"Accept": "application/json"}
    if secret:
        import base64

        token = base64.b64encode(f"{USER}:{secret}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            return None
        return _decode(body)
    except (OSError, http.client.HTTPException, msgspec.DecodeError):
        return None
    finally:
        conn.close()


def snapshot(
    url: str, secret: str, sessions: set[str], agent_of: dict[str, str], at: float
) -> list[ev.Event]:
    """What the server at ``url`` says waits now in ``sessions`` (a top-level session and
    its subagents'; ``agent_of`` maps a subagent's session to its ``agent_id``), as
    events stamped ``at``. ``[]`` when the server cannot be asked or does not answer."""
    # Here, not at import: every command that loads the adapters paid 2 ms for it.
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname not in LOCAL or not parts.port:
        return []
    permissions = _get(parts.port, "/permission", secret)
    questions = _get(parts.port, "/question", secret) if permissions is not None else None
    if permissions is None or questions is None:
        return []
    out: list[ev.Event] = [
        asked(question, request, agent_of.get(request.sessionID, ""), at=at, source=source)
        for question, source, requests in (
            (False, "server:permission", permissions),
            (True, "server:question", questions),
        )
        for request in requests
        if request.sessionID in sessions
    ]
    if not out:
        out.append(ev.InputResolved(at=at, source="server:permission"))
    return out
