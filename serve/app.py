"""The ASGI app: ``/api/v1`` (JSON, the library's structs), ``/api/v1/events`` (SSE) and
the page at ``/``. Every endpoint is a read (GET); each JSON one returns what the
matching command's ``--json`` prints, built by the same library call.

Routes are a list (``routes``) and the transitions come from one ``TransitionHub``: a
later ``/metrics`` is one more route reading the hub, an exporter one more subscriber.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, get_args

import msgspec

import agentspool
from agentspool import (
    AgentspoolError,
    Chat,
    PendingApproval,
    PendingDialog,
    RunSummary,
    UnknownProviderError,
)
from agentspool.errors import EXIT_ERROR, EXIT_INTERNAL, EXIT_USAGE, exit_code
from agentspool.serve.hub import Attached, Published, TransitionHub
from agentspool.serve.schema import API, ErrorBody, ServerInfo, encode, openapi

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from agentspool.serve.fleet import Fleet

KEEPALIVE = 15.0
"""Seconds between comment lines on an idle event stream (proxies close silent ones)."""
RETRY_MS = 1000
"""What an event stream tells a browser to wait before reconnecting."""
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@dataclass
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    runtime_dir: str | None = None
    token: str = ""
    """Every request must carry it (``""``: none needed, a loopback bind)."""
    conversations: bool = True
    """``False`` (``--no-conversations``): states, usage and metrics; no message text."""
    cors_origins: list[str] = field(default_factory=list)
    event_window: int = 4096
    interval: float = 0.5
    metrics_max_runs: int = 100
    """Runs with per-run series on ``/metrics`` at most (ADR 0041)."""
    otlp: str | None = None
    """``--otlp``: the Collector's base URL (``""``: from ``OTEL_EXPORTER_OTLP_*``);
    ``None``: no push."""
    notify: list[str] = field(default_factory=list)
    """apprise URLs told when a run starts waiting on you."""
    notify_on: list[str] = field(default_factory=lambda: ["approval", "question", "turn"])
    remind_after: float | None = None
    """Seconds after which a wait still open is notified once more."""


class ApiError(Exception):
    """An error of the request itself, not the library's: its status and exit status."""

    def __init__(self, status: int, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def status_of(exc: BaseException) -> int:
    """The HTTP status an error is answered with."""
    from agentspool import (
        AmbiguousSessionError,
        RunIdError,
        RunNotFoundError,
        SessionNotFoundError,
        TranscriptGoneError,
    )

    if isinstance(exc, ApiError):
        return exc.status
    if isinstance(exc, RunIdError | UnknownProviderError):
        return 400
    if isinstance(exc, RunNotFoundError | SessionNotFoundError):
        return 404
    if isinstance(exc, AmbiguousSessionError):
        return 409
    if isinstance(exc, TranscriptGoneError):
        return 410
    return 500


def error_response(exc: BaseException) -> Response:
    from starlette.responses import Response

    if isinstance(exc, ApiError):
        body = ErrorBody(error=str(exc), status=exc.status, exit_code=exc.code)
    elif isinstance(exc, AgentspoolError | OSError):
        code = EXIT_USAGE if isinstance(exc, UnknownProviderError) else exit_code(exc)
        body = ErrorBody(error=str(exc), status=status_of(exc), exit_code=code)
    else:
        body = ErrorBody(error=_internal(exc), status=500, exit_code=EXIT_INTERNAL)
    return Response(encode(body), status_code=body.status, media_type="application/json")


def _internal(exc: BaseException) -> str:
    """The CLI's line for a bug of ours: the traceback goes to a private file."""
    import tempfile
    import traceback

    try:
        fd, path = tempfile.mkstemp(prefix="agentspool-traceback-", suffix=".txt")
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(f"agentspool {agentspool.__version__}: serve\n")
            fh.writelines(traceback.format_exception(exc))
        where = f"traceback in {path}"
    except OSError as write_error:
        where = f"(the traceback could not be written: {write_error})"
    return f"internal error {type(exc).__name__}: {exc}; {where}"


# -- --no-conversations: what is left of each struct without message text ------------------

S = TypeVar("S", bound=RunSummary)


def _approval(found: PendingApproval | None) -> PendingApproval | None:
    return None if found is None else msgspec.structs.replace(found, tool_input={})


def _dialog(found: PendingDialog | None) -> PendingDialog | None:
    if found is None:
        return None
    return msgspec.structs.replace(found, prompt="", options=[], questions=[])


def quiet_run(run: S) -> S:
    """The run without its title (the first prompt), its pending tool's input or its
    question's text: the state and what kind of wait it is stay."""
    return msgspec.structs.replace(
        run,
        title="",
        pending_approval=_approval(run.pending_approval),
        pending_dialog=_dialog(run.pending_dialog),
    )


def quiet_chat(chat: Chat) -> Chat:
    return msgspec.structs.replace(
        chat,
        messages=[],
        pending_approval=_approval(chat.pending_approval),
        pending_dialog=_dialog(chat.pending_dialog),
        evidence=[msgspec.structs.replace(e, detail="") for e in chat.evidence],
    )


# -- the app ---------------------------------------------------------------------------------


class Api:
    """The endpoints, over one hub and one configuration."""

    def __init__(self, config: ServeConfig, hub: TransitionHub, fleet: Fleet | None) -> None:
        self.config = config
        self.hub = hub
        self.fleet = fleet
        self.document = encode(openapi(conversations=config.conversations))
        self.info = ServerInfo(
            version=agentspool.__version__,
            conversations=config.conversations,
            token_required=bool(config.token),
            event_window=config.event_window,
            interval=config.interval,
        )
        self.streams: set[asyncio.Queue[Published | None]] = set()
        """The open event streams' queues (``end_streams`` ends them)."""

    def end_streams(self) -> None:
        """End every open event stream (the server is stopping); in the event loop."""
        for queue in self.streams:
            queue.put_nowait(None)

    # Sync endpoints: Starlette runs them in its thread pool, so a long read (a big
    # session, a first index) never stops the event streams.

    def server(self, request: Request) -> Response:
        return _json(self.info)

    def openapi(self, request: Request) -> Response:
        from starlette.responses import Response

        return Response(self.document, media_type="application/json")

    def runs(self, request: Request) -> Response:
        every = _flag(request, "all")
        found = self.hub.runs(include_ended=every)
        return _json(found if self.config.conversations else [quiet_run(r) for r in found])

    def run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        provider = self._provider(run_id)
        with self.hub.library:
            chat = agentspool.read_chat(provider, run_id, self.config.runtime_dir)
        return _json(chat if self.config.conversations else quiet_chat(chat))

    def explain(self, request: Request) -> Response:
        self._conversations("explain")
        run_id = request.path_params["run_id"]
        provider = self._provider(run_id)
        return _json(agentspool.explain(provider, run_id, self.config.runtime_dir))

    def replay(self, request: Request) -> Response:
        self._conversations("replay")
        run_id = request.path_params["run_id"]
        return _json(agentspool.replay(run_id, self.config.runtime_dir))

    def sessions(self, request: Request) -> Response:
        self._conversations("sessions")
        provider = _provider_query(request)
        with self.hub.library:
            _index()
            with agentspool.open_history() as store:
                found = store.sessions(
                    provider or None, include_subagents=_flag(request, "subagents")
                )
        return _json(found)

    def session(self, request: Request) -> Response:
        self._conversations("sessions")
        ref = request.path_params["session"]
        inactive = _flag(request, "include_inactive")
        with self.hub.library:
            view = agentspool.show_session(ref, include_inactive=inactive)
        return _json(view.detail)

    def usage(self, request: Request) -> Response:
        query = request.query_params
        by = query.get("by", get_args(agentspool.UsageGrouping)[0])
        if by not in get_args(agentspool.UsageGrouping):
            choices = ", ".join(get_args(agentspool.UsageGrouping))
            raise ApiError(400, f"by: invalid choice: {by!r} (choose from {choices})")
        providers = [_known_provider(p) for p in query.getlist("provider")]
        timezone = query.get("timezone") or None
        if timezone is not None:
            _check_zone(timezone)
        with self.hub.library:
            _index()
            report = agentspool.usage(
                by=by,
                since=_day(query, "since"),
                until=_day(query, "until"),
                providers=providers or None,
                timezone=timezone,
                index=False,
            )
        return _json(report)

    def search(self, request: Request) -> Response:
        self._conversations("search")
        text = request.query_params.get("q", "")
        if not text.strip(" *"):
            raise ApiError(400, "search: give at least one word")
        limit = _positive_int(request, "limit", 20)
        provider = _provider_query(request)
        with self.hub.library:
            _index()
            hits = agentspool.search_history(text, limit=limit, provider=provider or None)
        return _json(hits)

    async def events(self, request: Request) -> Response:
        from starlette.responses import StreamingResponse

        last = request.headers.get("last-event-id", "")
        return StreamingResponse(
            self._stream(last),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _stream(self, last_id: str) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Published | None] = asyncio.Queue()

        def deliver(published: Published) -> None:
            # the loop closing (RuntimeError): this stream is over
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(queue.put_nowait, published)

        attached, unsubscribe = self.hub.attach(deliver, last_id)
        self.streams.add(queue)
        try:
            yield f"retry: {RETRY_MS}\n\n".encode()
            for chunk in self._opening(attached):
                yield chunk
            while True:
                try:
                    published = await asyncio.wait_for(queue.get(), KEEPALIVE)
                except TimeoutError:
                    yield b": keepalive\n\n"
                    continue
                if published is None:
                    return  # the server is stopping
                yield self._message(published)
        finally:
            unsubscribe()
            self.streams.discard(queue)

    def _opening(self, attached: Attached) -> list[bytes]:
        if attached.resumed:
            return [self._message(p) for p in attached.backlog]
        quiet = self.config.conversations is False
        out = [_sse("reset", encode({"reason": attached.reason}))]
        out += [_sse("transition", encode(quiet_run(e) if quiet else e)) for e in attached.snapshot]
        head = self.hub.event_id(attached.head)
        out.append(_sse("ready", encode({"id": head}), head))
        return out

    def _message(self, published: Published) -> bytes:
        event = published.event if self.config.conversations else quiet_run(published.event)
        return _sse("transition", encode(event), self.hub.event_id(published.seq))

    def metrics(self, request: Request) -> Response:
        """Prometheus's text format (ADR 0041); states and usage, never message text."""
        from starlette.responses import Response

        if self.fleet is None:
            raise ApiError(404, "no metrics: this server was built without them", EXIT_ERROR)
        body, content_type = self.fleet.metrics.exposition()
        return Response(body, media_type=content_type)

    def page(self, request: Request) -> Response:
        return _static("index.html", "text/html; charset=utf-8")

    def script(self, request: Request) -> Response:
        return _static("app.js", "text/javascript; charset=utf-8")

    def style(self, request: Request) -> Response:
        return _static("style.css", "text/css; charset=utf-8")

    def _provider(self, run_id: str) -> str:
        """The run's provider: as the last tick saw it, else as its run dir says (a run
        set up since; a bad or unknown id raises)."""
        return self.hub.provider_of(run_id) or agentspool.run_provider(
            run_id, self.config.runtime_dir
        )

    def _conversations(self, what: str) -> None:
        if not self.config.conversations:
            raise ApiError(403, f"{what}: not served: started with --no-conversations", EXIT_ERROR)

    def routes(self) -> list[BaseRoute]:
        from starlette.routing import Route

        def get(path: str, endpoint: Callable[..., Any]) -> Route:
            return Route(path, _guarded(endpoint), methods=["GET"])

        return [
            get("/", self.page),
            get("/static/app.js", self.script),
            get("/static/style.css", self.style),
            get(f"{API}/server", self.server),
            get(f"{API}/openapi.json", self.openapi),
            get(f"{API}/runs", self.runs),
            get(f"{API}/runs/{{run_id}}", self.run),
            get(f"{API}/runs/{{run_id}}/explain", self.explain),
            get(f"{API}/runs/{{run_id}}/replay", self.replay),
            get(f"{API}/sessions", self.sessions),
            get(f"{API}/sessions/{{session}}", self.session),
            get(f"{API}/usage", self.usage),
            get(f"{API}/search", self.search),
            Route(f"{API}/events", self.events, methods=["GET"]),
            get("/metrics", self.metrics),
        ]


def build_app(config: ServeConfig, hub: TransitionHub, fleet: Fleet | None = None) -> Starlette:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.cors import CORSMiddleware

    from agentspool.serve.security import Guard, host_names

    api = Api(config, hub, fleet)
    # Outermost first: the Host check and the token come before anything, CORS headers
    # only for the origins asked for (none: no CORS at all).
    middleware = [Middleware(Guard, hosts=host_names(config.host, config.port), token=config.token)]
    if config.cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=config.cors_origins,
                allow_methods=["GET"],
                allow_headers=["Authorization", "Last-Event-ID"],
            )
        )

    async def not_found(request: Request, exc: Exception) -> Response:
        from starlette.exceptions import HTTPException

        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = {404: f"no such endpoint: {request.url.path}", 405: "read-only: GET only"}
        return error_response(ApiError(status, message.get(status, str(exc)), EXIT_ERROR))

    app = Starlette(
        routes=api.routes(),
        middleware=middleware,
        exception_handlers={404: not_found, 405: not_found},
    )
    app.state.api = api
    return app


def _guarded(endpoint: Callable[[Request], Response]) -> Callable[[Request], Response]:
    """Any error of a sync endpoint is a JSON answer, never a traceback."""

    def run(request: Request) -> Response:
        try:
            return endpoint(request)
        except Exception as exc:  # noqa: BLE001 - the one boundary, as the CLI's main()
            return error_response(exc)

    run.__name__ = getattr(endpoint, "__name__", "endpoint")
    return run


def _json(value: object) -> Response:
    from starlette.responses import Response

    return Response(encode(value), media_type="application/json")


def _sse(kind: str, data: bytes, event_id: str = "") -> bytes:
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {kind}\n".encode() + b"data: " + data + b"\n\n"


_PAGE: dict[str, bytes] = {}


def _static(name: str, media_type: str) -> Response:
    from importlib.resources import files

    from starlette.responses import Response

    if name not in _PAGE:
        _PAGE[name] = files("agentspool.serve.static").joinpath(name).read_bytes()
    return Response(_PAGE[name], media_type=media_type, headers=PAGE_HEADERS)


def _flag(request: Request, name: str) -> bool:
    value = request.query_params.get(name, "false").lower()
    if value not in ("true", "false", "1", "0", ""):
        raise ApiError(400, f"{name}: not true or false: {value!r}")
    return value in ("true", "1", "")


def _positive_int(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    if not text.isdigit() or int(text) < 1:
        raise ApiError(400, f"{name}: not a positive whole number: {text!r}")
    return int(text)


def _known_provider(name: str) -> str:
    known = agentspool.providers()
    if name not in known:
        raise UnknownProviderError(name, known)
    return name


def _provider_query(request: Request) -> str:
    name = request.query_params.get("provider", "")
    return _known_provider(name) if name else ""


def _day(query: Any, name: str) -> dt.date | None:
    text = query.get(name)
    if not text:
        return None
    digits = text.replace("-", "") if len(text) == 10 else text
    try:
        if len(digits) != 8 or not digits.isdigit():
            raise ValueError
        return dt.date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError:
        raise ApiError(400, f"{name}: not a date (YYYY-MM-DD or YYYYMMDD): {text!r}") from None


def _check_zone(text: str) -> None:
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ApiError(400, f"timezone: not an IANA time zone: {text!r}") from None


def _index() -> None:
    """Bring the history store up to date first, as ``usage``, ``search`` and ``show``
    do; another indexer at work: read it as it is."""
    agentspool.index_history(wait=False)
