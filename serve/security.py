"""What keeps ``agentspool serve`` safe by default (docs/adr/0035-serve.md).

- It binds loopback unless told otherwise; any other ``--host`` needs the token, made by
  ``serve --token`` and kept 0600 in the data dir: without one, serve refuses to start,
  before it binds anything.
- With a token, every request carries it: ``Authorization: Bearer <token>``, or the
  cookie the page sets when opened once as ``/?token=<token>`` (a browser's
  ``EventSource`` cannot send a header). A wrong or missing one is 401.
- The ``Host`` header must name the bound address (a page on another site that a DNS
  rebinding points at 127.0.0.1 names its own host): else 421.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

from agentspool.errors import SettingsError

DEFAULT_HOSTS = ("127.0.0.1", "localhost", "::1")
"""The loopback names serve binds without a token. Only these: 127.0.0.2 is loopback too,
but someone who names it chose an address, and gets the token like any other."""
TOKEN_FILE = "serve-token"  # noqa: S105 - the file's name, not a token
COOKIE = "agentspool_token"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def token_path() -> str:
    """``serve-token`` in agentspool's data dir (where the history store lives)."""
    from agentspool import default_store_path

    return os.path.join(os.path.dirname(default_store_path()), TOKEN_FILE)


def make_token(path: str) -> str:
    """The token in ``path``, made first if there is none (32 random bytes, 0600)."""
    try:
        return read_token(path)
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return read_token(path)  # another serve made it meanwhile
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(token + "\n")
    return token


def read_token(path: str) -> str:
    """The token ``path`` holds. Raises ``FileNotFoundError`` when there is none, and
    ``SettingsError`` when the file is not this user's own, private one, or empty."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, encoding="ascii", errors="replace") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise SettingsError(path, "the token file is not a file of this user's; refused")
        if info.st_mode & 0o077:
            raise SettingsError(
                path,
                f"the token file is readable by others (mode {info.st_mode & 0o777:o}); "
                "chmod 600 it or remove it and run `agentspool serve --token`",
            )
        token = fh.read(4096).strip()
    if not token:
        raise SettingsError(path, "the token file is empty; remove it and run serve --token")
    return token


def required_token(path: str) -> str:
    """The token a non-loopback bind needs; refuses (``SettingsError``) when none was made."""
    try:
        return read_token(path)
    except FileNotFoundError:
        raise SettingsError(
            path,
            "no token yet: a bind other than 127.0.0.1, ::1 or localhost needs one; "
            "`agentspool serve --token` makes it and prints it",
        ) from None


def host_names(host: str, port: int) -> frozenset[str]:
    """The ``Host`` header values that name the bound address (lower case)."""
    names = {host.lower()}
    if host in DEFAULT_HOSTS:
        names |= {"127.0.0.1", "localhost", "::1"}
    shown = {f"[{n}]" if ":" in n else n for n in names}
    return frozenset({f"{n}:{port}" for n in shown} | (shown if port == 80 else set()))


def _json_error(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
    from starlette.responses import Response

    from agentspool.errors import EXIT_ERROR
    from agentspool.serve.schema import ErrorBody, encode

    body = encode(ErrorBody(error=message, status=status, exit_code=EXIT_ERROR))
    return Response(body, status_code=status, media_type="application/json", headers=headers)


class Guard:
    """ASGI middleware: the ``Host`` check, then the token (when there is one)."""

    def __init__(self, app: ASGIApp, *, hosts: frozenset[str], token: str) -> None:
        self.app = app
        self.hosts = hosts
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "").lower()
        if host not in self.hosts:
            shown = host or "(none)"
            response = _json_error(421, f"Host {shown!r} does not name this server; refused")
            await response(scope, receive, send)
            return
        if self.token and not self._authorized(headers):
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            given = query.get("token", [""])[0]
            if scope["path"] == "/" and given and self._same(given):
                await self._hand_over(scope, receive, send)
                return
            response = _json_error(
                401,
                "a token is needed: Authorization: Bearer <token> (`agentspool serve --token` "
                "prints it), or open the page once as /?token=<token>",
                {"WWW-Authenticate": 'Bearer realm="agentspool"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _same(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self.token.encode())

    def _authorized(self, headers: dict[str, str]) -> bool:
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and given and self._same(given.strip()):
            return True
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE and value and self._same(value):
                return True
        return False

    async def _hand_over(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``/?token=…``: keep it in a cookie only this site gets, and leave the URL."""
        from starlette.responses import RedirectResponse

        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", path="/")
        await response(scope, receive, send)
