"""What goes on the wire: the library's own structs, two of serve's own (``ErrorBody``,
``ServerInfo``), and the OpenAPI document generated from them."""

from __future__ import annotations

from typing import Any

import msgspec

import agentspool
from agentspool import (
    Chat,
    Explanation,
    Replay,
    RunEvent,
    RunSummary,
    SearchHit,
    SessionDetail,
    StoredSession,
    UsageReport,
)

API = "/api/v1"

_encoder = msgspec.json.Encoder()


def encode(value: object) -> bytes:
    return _encoder.encode(value)


class ErrorBody(msgspec.Struct, kw_only=True):
    """Every error: the CLI's one line, the HTTP status, and the exit status the same
    error gives the matching command (``agentspool.errors.exit_code``: 1 an error, 2 bad
    usage, 3 the transcript is gone, 70 an internal error)."""

    error: str
    status: int
    exit_code: int


class ServerInfo(msgspec.Struct, kw_only=True):
    """What this ``serve`` is (the page reads it first)."""

    version: str
    conversations: bool
    """``False`` with ``--no-conversations``: no message text is served."""
    token_required: bool
    event_window: int
    interval: float


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }


def _path(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
        "description": description,
    }


def openapi(*, conversations: bool) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``/api/v1``; its schemas are msgspec's of the structs."""
    shapes: dict[str, Any] = {
        "runs": list[RunSummary],
        "chat": Chat,
        "explanation": Explanation,
        "replay": Replay,
        "sessions": list[StoredSession],
        "detail": SessionDetail,
        "usage": UsageReport,
        "hits": list[SearchHit],
        "event": RunEvent,
        "error": ErrorBody,
        "server": ServerInfo,
    }
    names = list(shapes)
    found, components = msgspec.json.schema_components(
        [shapes[n] for n in names], ref_template="#/components/schemas/{name}"
    )
    schema = dict(zip(names, found, strict=True))
    paths = _routes(schema)
    _add_parameters(paths)
    paths[f"{API}/events"] = _events_route(schema)
    what = "" if conversations else " (started with --no-conversations: no message text)"
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "agentspool",
            "version": agentspool.__version__,
            "description": "What each coding-agent CLI run is doing, read-only" + what,
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
        },
    }


_ERROR = {"$ref": "#/components/schemas/ErrorBody"}


def _failure(status: int) -> dict[str, Any]:
    return {"description": _STATUS[status], "content": {"application/json": {"schema": _ERROR}}}


def _routes(schema: dict[str, Any]) -> dict[str, Any]:
    """Every ``GET`` route but the event stream, each with its answer and failures."""

    def answer(shape: str, *failures: int, summary: str) -> dict[str, Any]:
        responses: dict[str, Any] = {
            "200": {"description": "OK", "content": {"application/json": {"schema": schema[shape]}}}
        }
        # Any request can be refused (401, 421), badly put (400) or fail (500).
        for status in sorted({*failures, 400, 401, 421, 500}):
            responses[str(status)] = _failure(status)
        return {"get": {"summary": summary, "responses": responses}}

    return {
        f"{API}/server": answer("server", summary="this server: version, what it serves"),
        f"{API}/runs": answer("runs", 500, summary="every run, most urgent first (`ls --json`)"),
        f"{API}/runs/{{run_id}}": answer(
            "chat", 400, 404, 410, 500, summary="one run's composed Chat (`read --json`)"
        ),
        f"{API}/runs/{{run_id}}/explain": answer(
            "explanation", 400, 403, 404, 410, 500, summary="its evidence (`explain --json`)"
        ),
        f"{API}/runs/{{run_id}}/replay": answer(
            "replay", 400, 403, 404, 500, summary="its transitions (`replay --json`)"
        ),
        f"{API}/sessions": answer(
            "sessions", 400, 403, 500, summary="the sessions of the history store"
        ),
        f"{API}/sessions/{{session}}": answer(
            "detail", 403, 404, 409, 410, 500, summary="one session (`show --json`)"
        ),
        f"{API}/usage": answer("usage", 400, 500, summary="token totals and cost (`usage --json`)"),
        f"{API}/search": answer(
            "hits", 400, 403, 500, summary="full-text search (`search --json`)"
        ),
    }


def _add_parameters(paths: dict[str, Any]) -> None:
    """The routes' path and query parameters."""
    from typing import get_args

    run_id = _path("run_id", "the run's id (as `agentspool ls` lists it)")
    provider = {"type": "string", "enum": agentspool.providers()}
    paths[f"{API}/runs"]["get"]["parameters"] = [
        _query("all", {"type": "boolean"}, "also the runs that ended (`ls --all`)")
    ]
    for route in ("", "/explain", "/replay"):
        paths[f"{API}/runs/{{run_id}}{route}"]["get"]["parameters"] = [run_id]
    paths[f"{API}/sessions"]["get"]["parameters"] = [
        _query("provider", provider, "only this provider's"),
        _query("subagents", {"type": "boolean"}, "also the subagents' own files"),
    ]
    paths[f"{API}/sessions/{{session}}"]["get"]["parameters"] = [
        _path("session", "a session id, the start of one"),
        _query("include_inactive", {"type": "boolean"}, "also superseded records"),
    ]
    day = {"type": "string", "pattern": r"^(\d{4}-\d{2}-\d{2}|\d{8})$"}
    paths[f"{API}/usage"]["get"]["parameters"] = [
        _query(
            "by", {"type": "string", "enum": list(get_args(agentspool.UsageGrouping))}, "rows per"
        ),
        _query("since", day, "from this day"),
        _query("until", day, "up to this day, included"),
        _query("provider", provider, "only this provider's (repeatable)"),
        _query("timezone", {"type": "string"}, "an IANA time zone (default: local time)"),
    ]
    paths[f"{API}/search"]["get"]["parameters"] = [
        {**_query("q", {"type": "string"}, "the words (word* a prefix)"), "required": True},
        _query("limit", {"type": "integer", "minimum": 1}, "at most this many (default 20)"),
        _query("provider", provider, "only this provider's"),
    ]


def _events_route(schema: dict[str, Any]) -> dict[str, Any]:
    """``/events``: the live transitions as Server-Sent Events."""
    return {
        "get": {
            "summary": "live transitions as Server-Sent Events (`watch --json` lines)",
            "description": (
                "Each `transition` event's data is a RunEvent, its id `<epoch>:<n>`. "
                "Reconnecting with `Last-Event-ID` sends exactly the events missed within "
                "the window; otherwise a `reset` event, a `seen` transition per run, then "
                "`ready` (whose id is the last event's)."
            ),
            "parameters": [
                {
                    "name": "Last-Event-ID",
                    "in": "header",
                    "required": False,
                    "schema": {"type": "string"},
                }
            ],
            "responses": {
                "200": {
                    "description": "the stream",
                    "content": {"text/event-stream": {"schema": schema["event"]}},
                },
                "401": _failure(401),
                "421": _failure(421),
            },
        }
    }


_STATUS = {
    400: "bad input: a run id, query or date that does not parse",
    401: "no token, or a wrong one",
    403: "not served: started with --no-conversations",
    404: "no such run or session",
    409: "an id prefix several sessions share",
    410: "the run's transcript is gone",
    421: "the Host header does not name this server",
    500: "an error reading the evidence, or an internal one",
}
