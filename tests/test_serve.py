"""``agentspool serve``'s JSON API, against a real serve process on 127.0.0.1 over runs
written by the real hook commands and transcripts laid out as the CLIs lay them out:
every endpoint's JSON equals the matching command's ``--json`` for the same runs, the
OpenAPI document is valid and every response validates against it, and bad input is a
JSON error with the CLI's own message and exit status, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import usage_corpus as corpus
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate as validate_spec
from serving import Answer, Served

MARK = "zebracorn"
"""In every piece of conversation text the runs hold: a prompt, a reply, a command, a
question. ``--no-conversations`` must never send it."""
MARKED = "d00d0000-0000-4000-8000-00000000d00d"
"""The session whose transcript holds the marks (and the runs' evidence names)."""
COMMAND = f"rm -rf build/{MARK}"
QUESTION = {
    "tool_name": "AskUserQuestion",
    "tool_use_id": "toolu_q",
    "tool_input": {
        "questions": [
            {
                "question": f"Which {MARK} database?",
                "header": "db",
                "options": [{"label": f"Postgres {MARK}"}, {"label": "SQLite"}],
            }
        ]
    },
}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentspool.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def cli_json(*args: str) -> Any:
    done = cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _marked_transcript(config_dir: str) -> Path:
    session = corpus._Claude(MARKED, "/srv/mark")
    session.prompt("2026-10-06T09:00:00.000Z", f"please tidy the {MARK} build")
    session.reply(
        "2026-10-06T09:00:03.000Z",
        ("msg_mark_1", "req_mark_1"),
        corpus.SONNET,
        corpus._usage(10, 20),
        [corpus._text(f"Removing the {MARK} dir."), corpus._tool("toolu_b", command=COMMAND)],
        stop_reason="tool_use",
    )
    path = Path(config_dir) / "projects" / "-srv-mark" / f"{MARKED}.jsonl"
    session.write(path)
    return path


def hooks(run, silent, *events: tuple[str, dict[str, Any]]) -> None:
    for event, payload in events:
        silent(run.run(json.dumps(payload).encode(), event))


@pytest.fixture
def world(runtime_dir, make_claude_run, silent, tmp_path) -> dict[str, Any]:
    """Runs in three states, written by the real hooks, and a history of sessions."""
    import os

    config = os.environ["CLAUDE_CONFIG_DIR"]
    corpus.write_claude(config)
    corpus.write_codex(os.environ["CODEX_HOME"])
    marked = _marked_transcript(config)
    base = {"session_id": MARKED, "transcript_path": str(marked), "cwd": "/srv/mark"}
    turn = {**base, "prompt_id": "p1"}
    approves = make_claude_run(runtime_dir, "approves")
    bash = {
        **turn,
        "tool_name": "Bash",
        "tool_use_id": "toolu_b",
        "tool_input": {"command": COMMAND},
    }
    hooks(
        approves,
        silent,
        ("SessionStart", base),
        ("UserPromptSubmit", {**turn, "prompt": f"please tidy the {MARK} build"}),
        ("PreToolUse", bash),
        ("PermissionRequest", bash),
    )
    asks = make_claude_run(runtime_dir, "asks")
    other = tmp_path / "asks.jsonl"
    other.write_text("")
    asked = {"session_id": "s-asks", "transcript_path": str(other), "cwd": "/srv/asks"}
    hooks(
        asks,
        silent,
        ("SessionStart", asked),
        ("UserPromptSubmit", {**asked, "prompt_id": "p1"}),
        ("PreToolUse", {**asked, **QUESTION, "prompt_id": "p1"}),
        ("PermissionRequest", {**asked, **QUESTION, "prompt_id": "p1"}),
    )
    idle = make_claude_run(runtime_dir, "idle")
    hooks(idle, silent, ("SessionStart", {"session_id": "s-idle", "transcript_path": ""}))
    return {"runtime": runtime_dir, "marked": marked}


@pytest.fixture
def served(world) -> Iterator[Served]:
    with Served(["--runtime-dir", world["runtime"]]) as server:
        yield server


# -- OpenAPI ---------------------------------------------------------------------------------


class Contract:
    """The served OpenAPI document, and each answer checked against it."""

    def __init__(self, document: dict[str, Any]) -> None:
        validate_spec(document)  # valid OpenAPI 3.1 itself
        self.document = document

    def check(self, template: str, answer: Answer, status: int = 200) -> Any:
        assert answer.status == status, (template, answer.status, answer.body[:300])
        operation = self.document["paths"][template]["get"]
        assert str(answer.status) in operation["responses"], (template, answer.status)
        declared = operation["responses"][str(answer.status)]["content"]
        assert answer.headers["content-type"].startswith("application/json")
        schema = {
            **declared["application/json"]["schema"],
            "components": self.document["components"],
        }
        body = answer.json()
        OAS31Validator(schema).validate(body)
        return body


@pytest.fixture
def contract(served) -> Contract:
    answer = served.get("/api/v1/openapi.json")
    assert answer.status == 200
    return Contract(answer.json())


def test_every_endpoint_equals_the_cli_json_and_validates(served, world, contract) -> None:
    runtime = world["runtime"]
    runs = contract.check("/api/v1/runs", served.get("/api/v1/runs"))
    assert runs == cli_json("ls", "--runtime-dir", runtime)
    # most urgent first: the question, then the approval
    assert [r["run_id"] for r in runs][:2] == ["asks", "approves"]
    every = contract.check("/api/v1/runs", served.get("/api/v1/runs?all=true"))
    assert every == cli_json("ls", "--all", "--runtime-dir", runtime)
    # with all: the corpus's sessions too, whose files changed this hour
    assert {corpus.BETA, corpus.CODEX_MAIN} <= {r["session_id"] for r in every if not r["run_id"]}

    for run_id in ("approves", "asks", "idle"):
        chat = contract.check("/api/v1/runs/{run_id}", served.get(f"/api/v1/runs/{run_id}"))
        assert chat == cli_json("read", "claude-code", "--run-id", run_id, "--runtime-dir", runtime)
        found = contract.check(
            "/api/v1/runs/{run_id}/explain", served.get(f"/api/v1/runs/{run_id}/explain")
        )
        assert found == cli_json(
            "explain", "claude-code", "--run-id", run_id, "--runtime-dir", runtime
        )
        history = contract.check(
            "/api/v1/runs/{run_id}/replay", served.get(f"/api/v1/runs/{run_id}/replay")
        )
        assert history == cli_json("replay", run_id, "--runtime-dir", runtime)
    approval = served.get("/api/v1/runs/approves").json()["pending_approval"]
    assert (approval["tool_name"], approval["tool_input"]) == ("Bash", {"command": COMMAND})

    for session in (MARKED, corpus.ALPHA, corpus.CODEX_MAIN):
        detail = contract.check(
            "/api/v1/sessions/{session}", served.get(f"/api/v1/sessions/{session}")
        )
        assert detail == cli_json("show", session)
    inactive = served.get(f"/api/v1/sessions/{corpus.ALPHA}?include_inactive=true")
    assert contract.check("/api/v1/sessions/{session}", inactive) == cli_json(
        "show", corpus.ALPHA, "--include-inactive"
    )
    sessions = contract.check("/api/v1/sessions", served.get("/api/v1/sessions"))
    assert {corpus.ALPHA, corpus.BETA, corpus.CODEX_MAIN, MARKED} <= {
        s["session_id"] for s in sessions
    }
    codex = served.get("/api/v1/sessions?provider=codex").json()
    assert {s["provider"] for s in codex} == {"codex"}

    for query, args in (
        ("", ()),
        ("?by=session&timezone=UTC", ("--by", "session", "--timezone", "UTC")),
        ("?by=model&provider=claude-code", ("--by", "model", "--provider", "claude-code")),
        (
            "?by=project&since=2026-10-02&until=20261003&timezone=Europe/Paris",
            (
                "--by",
                "project",
                "--since",
                "2026-10-02",
                "--until",
                "20261003",
                "--timezone",
                "Europe/Paris",
            ),
        ),
    ):
        report = contract.check("/api/v1/usage", served.get(f"/api/v1/usage{query}"))
        assert report == cli_json("usage", *args), query
        assert report["rows"], query

    for words, args in (
        ("list files", ()),
        ("fix*", ("--limit", "1")),
        (MARK, ("--provider", "claude-code")),
    ):
        query = f"?q={quote(words)}" + "".join(
            f"&{a.removeprefix('--')}={quote(v)}"
            for a, v in zip(args[::2], args[1::2], strict=True)
        )
        hits = contract.check("/api/v1/search", served.get(f"/api/v1/search{query}"))
        assert hits == cli_json("search", *words.split(), *args), words
        assert hits, words

    info = contract.check("/api/v1/server", served.get("/api/v1/server"))
    assert (info["conversations"], info["token_required"]) == (True, False)


def _cli_error(*args: str) -> tuple[str, int]:
    done = cli(*args)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    return done.stderr.strip().removeprefix("agentspool: "), done.returncode


def test_bad_input_is_a_json_error_with_the_cli_message_and_status(served, world, contract) -> None:
    runtime = world["runtime"]

    def error(template: str, path: str, status: int) -> dict[str, Any]:
        answer = served.get(path)
        body = contract.check(template, answer, status)
        assert body["status"] == status and b"Traceback" not in answer.body
        return body

    # The same error the command reports, the same exit status it exits with.
    nobody = error("/api/v1/runs/{run_id}/replay", "/api/v1/runs/nobody/replay", 404)
    assert (nobody["error"], nobody["exit_code"]) == _cli_error(
        "replay", "nobody", "--runtime-dir", runtime
    )
    for route in ("", "/explain"):
        assert error("/api/v1/runs/{run_id}" + route, f"/api/v1/runs/nobody{route}", 404) == nobody

    bad = error("/api/v1/runs/{run_id}", "/api/v1/runs/no%20such", 400)
    assert (bad["error"], bad["exit_code"]) == _cli_error(
        "replay", "no such", "--runtime-dir", runtime
    )

    missing = error("/api/v1/sessions/{session}", "/api/v1/sessions/ffffffff-nope", 404)
    assert (missing["error"], missing["exit_code"]) == _cli_error("show", "ffffffff-nope")
    prefix = corpus.CODEX_MAIN[:13]  # the start of two sessions' ids
    both = error("/api/v1/sessions/{session}", f"/api/v1/sessions/{prefix}", 409)
    assert (both["error"], both["exit_code"]) == _cli_error("show", prefix)

    for path, says in (
        (
            "/api/v1/usage?since=yesterday",
            "since: not a date (YYYY-MM-DD or YYYYMMDD): 'yesterday'",
        ),
        (
            "/api/v1/usage?until=2026-13-01",
            "until: not a date (YYYY-MM-DD or YYYYMMDD): '2026-13-01'",
        ),
        (
            "/api/v1/usage?by=week",
            "by: invalid choice: 'week' (choose from day, session, model, project)",
        ),
        ("/api/v1/usage?timezone=Mars/Olympus", "timezone: not an IANA time zone: 'Mars/Olympus'"),
        ("/api/v1/usage?provider=nobody", "unknown provider 'nobody'"),
    ):
        body = error("/api/v1/usage", path, 400)
        assert body["error"].startswith(says) and body["exit_code"] == 2, body
    for path in ("/api/v1/search", "/api/v1/search?q=%20", "/api/v1/search?q=x&limit=0"):
        assert error("/api/v1/search", path, 400)["exit_code"] == 2
    assert error("/api/v1/runs", "/api/v1/runs?all=maybe", 400)["exit_code"] == 2

    unknown = served.get("/api/v1/nothing-here")
    assert (
        unknown.status == 404
        and unknown.json()["error"] == "no such endpoint: /api/v1/nothing-here"
    )
    # Read-only: nothing but GET.
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        refused = served.get("/api/v1/runs", method=method)
        assert refused.status == 405 and refused.json()["error"] == "read-only: GET only"


def test_the_page_its_script_and_style_are_served_with_a_strict_policy(served) -> None:
    page = served.get("/")
    assert page.status == 200 and page.headers["content-type"].startswith("text/html")
    assert b'<script src="/static/app.js"' in page.body
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    script = served.get("/static/app.js")
    assert script.status == 200 and b"new EventSource" in script.body
    # Transcript text goes in as text, never as markup.
    assert b"innerHTML" not in script.body and b"insertAdjacentHTML" not in script.body
    assert served.get("/static/style.css").status == 200


def _everything(served: Served, run_ids: list[str]) -> dict[str, Answer]:
    """Every endpoint, with every choice of its parameters this corpus gives."""
    paths = ["/", "/static/app.js", "/static/style.css", "/api/v1/openapi.json", "/api/v1/server"]
    paths += [
        "/api/v1/runs",
        "/api/v1/runs?all=true",
        "/api/v1/sessions",
        f"/api/v1/search?q={MARK}",
    ]
    for run_id in run_ids:
        paths += [f"/api/v1/runs/{run_id}{route}" for route in ("", "/explain", "/replay")]
    paths += [f"/api/v1/sessions/{MARKED}", f"/api/v1/sessions/{MARKED}?include_inactive=true"]
    paths += [f"/api/v1/usage?by={by}" for by in ("day", "session", "model", "project")]
    return {path: served.get(path) for path in paths}


def _stream_bytes(served: Served, then) -> bytes:
    """The event stream's opening, and the transition ``then`` makes."""
    stream = served.events()
    try:
        messages = stream.until("ready")
        then()
        messages.append(stream.next())
    finally:
        stream.close()
    return b"".join(m.data.encode() for m in messages)


def test_no_conversations_never_sends_message_text(
    world, make_claude_run, silent, tmp_path
) -> None:
    runtime = world["runtime"]
    base = {"session_id": MARKED, "transcript_path": str(world["marked"]), "cwd": "/srv/mark"}
    later = make_claude_run(runtime, "later")
    hooks(later, silent, ("SessionStart", base), ("UserPromptSubmit", {**base, "prompt_id": "p2"}))
    tool = {**base, "prompt_id": "p2", "tool_name": "Bash", "tool_use_id": "toolu_l"}
    tool["tool_input"] = {"command": f"echo {MARK}"}

    def asks() -> None:
        hooks(later, silent, ("PreToolUse", tool), ("PermissionRequest", tool))

    run_ids = ["approves", "asks", "idle", "later"]
    with Served(["--runtime-dir", runtime]) as served:
        told = _everything(served, run_ids)
        streamed = _stream_bytes(served, asks)
    # What the same requests carry when conversations are served: the test can fail.
    leaks = {path for path, answer in told.items() if MARK.encode() in answer.body}
    assert {"/api/v1/runs", "/api/v1/runs/approves", f"/api/v1/sessions/{MARKED}"} <= leaks
    assert f"/api/v1/search?q={MARK}" in leaks and MARK.encode() in streamed
    hooks(later, silent, ("PostToolUse", {**tool, "tool_response": {"stdout": MARK}}))

    with Served(["--runtime-dir", runtime, "--no-conversations"]) as served:
        told = _everything(served, run_ids)
        streamed = _stream_bytes(served, asks)
        assert served.get("/api/v1/server").json()["conversations"] is False
    for path, answer in told.items():
        assert MARK.encode() not in answer.body.lower(), path
        assert answer.status in (200, 403), (path, answer.status)
    assert MARK.encode() not in streamed.lower()
    refused = [path for path, answer in told.items() if answer.status == 403]
    assert sorted(refused) == sorted(
        [f"/api/v1/runs/{r}/{w}" for r in run_ids for w in ("explain", "replay")]
        + ["/api/v1/sessions", f"/api/v1/search?q={MARK}"]
        + [f"/api/v1/sessions/{MARKED}", f"/api/v1/sessions/{MARKED}?include_inactive=true"]
    )
    assert told["/api/v1/sessions"].json()["error"] == (
        "sessions: not served: started with --no-conversations"
    )
    # What stays: the states and what kind of wait each is.
    runs = {r["run_id"]: r for r in told["/api/v1/runs"].json()}
    assert (runs["approves"]["state"], runs["approves"]["pending_approval"]["tool_name"]) == (
        "needs_input",
        "Bash",
    )
    assert (runs["asks"]["state"], runs["asks"]["pending_dialog"]["kind"]) == (
        "question",
        "question",
    )
    assert told["/api/v1/runs/approves"].json()["messages"] == []
    assert told["/api/v1/usage?by=day"].json()["rows"]
