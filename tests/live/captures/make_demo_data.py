"""Turn a few real captures into the replay scripts ``agentspool demo`` ships.

Run from the repository root (``.venv/bin/python tests/live/captures/make_demo_data.py``);
it rewrites ``api/demo/data/*.jsonl``. Each script is the capture's evidence in recorded
order — hook payloads, transcript lines, the native status file's changes — with times in
seconds since the capture's first record, the recording machine's temp dir replaced by
``{root}`` (and Claude Code's project slug of it by ``{slug}``; the recorder's python by
``python3``), and trimmed: transcript
bookkeeping the readers skip (request blobs, large attachments) dropped and every long
string cut, so the package stays small. Nothing else is altered.
"""

from __future__ import annotations

import datetime
import glob
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

CAPTURES = Path(__file__).resolve().parent
OUT = CAPTURES.parents[2] / "api" / "demo" / "data"
LONG = 300  # characters kept of a long string
CLAUDE_DROPPED = {"api-request-blob", "api-request"}
ATTACHMENT_KEPT = 1500  # bytes: larger attachments are context dumps the readers skip

# name → (provider, capture dir, what it shows)
SCRIPTS = {
    "claude-permission": (
        "claude-code",
        "claude-code/tui-permission-approve",
        "Claude Code asks to run a command; the person approves",
    ),
    "claude-question": (
        "claude-code",
        "claude-code/tui-question-answer",
        "Claude Code asks a question; the person answers",
    ),
    "codex-approval": (
        "codex",
        "codex/d_tui_approve",
        "Codex asks to run a command outside its sandbox; the person approves",
    ),
}


def _cut(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= LONG else value[:LONG] + " [...]"
    if isinstance(value, list):
        return [_cut(v) for v in value]
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    return value


def _epoch(stamp: str) -> float:
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _transcript_steps(path: str, relative: str, drop: set[str]) -> list[dict[str, Any]]:
    steps = []
    records = [(line, json.loads(line)) for line in Path(path).read_text().splitlines()]
    stamps = [_epoch(r["timestamp"]) for _, r in records if r.get("timestamp")]
    # Bookkeeping lines carry no time: each takes the one before it (the first, the first).
    at = stamps[0]
    for line, record in records:
        if record.get("timestamp"):
            at = _epoch(record["timestamp"])
        kind = record.get("type")
        if kind in drop or (kind == "attachment" and len(line) > ATTACHMENT_KEPT):
            continue
        text = json.dumps(_cut(record), separators=(",", ":"), ensure_ascii=False)
        steps.append({"at": at, "op": "append", "file": relative, "line": text})
    return steps


def _claude(capture: Path) -> list[dict[str, Any]]:
    hooks = [json.loads(line) for line in (capture / "hooks.jsonl").read_text().splitlines()]
    steps: list[dict[str, Any]] = [
        {"at": h["time"], "op": "hook", "event": h["event"], "payload": _cut(h["payload"])}
        for h in hooks
    ]
    transcript = hooks[0]["payload"]["transcript_path"]
    (main,) = glob.glob(str(capture / "transcript" / "*.jsonl"))
    steps += _transcript_steps(main, transcript, CLAUDE_DROPPED)
    template = json.loads((capture / "session-ready.json").read_text())
    for change in map(json.loads, (capture / "session-timeline.jsonl").read_text().splitlines()):
        if change["deleted"]:
            steps.append({"at": change["time"], "op": "status-delete"})
            continue
        status = {**template, "status": change["status"], "waitingFor": change["waitingFor"]}
        status = {k: v for k, v in status.items() if v is not None or k == "status"}
        steps.append({"at": change["time"], "op": "status", "status": status})
    return steps


def _codex(capture: Path) -> list[dict[str, Any]]:
    hooks = [json.loads(line) for line in (capture / "hooks.jsonl").read_text().splitlines()]
    steps: list[dict[str, Any]] = [
        {"at": h["time"], "op": "hook", "event": h["event"], "payload": _cut(h["payload"])}
        for h in hooks
    ]
    transcript = hooks[0]["payload"]["transcript_path"]
    (rollout,) = glob.glob(str(capture / "rollout-*.jsonl"))
    steps += _transcript_steps(rollout, transcript, set())
    return steps


def _mark_holds(steps: list[dict[str, Any]]) -> None:
    """``hold``: the step ends a wait on a person (or the harness) — recorded after a pause
    of half a second or more, or the first step after a permission request that is not the
    CLI itself reporting the wait, or the start of the session's end (the harness's kill).
    The replay plays every hold as a pause a viewer can see."""
    after_request = False
    ending = False
    for before, step in zip([None, *steps], steps, strict=False):
        gap = step["at"] - before["at"] if before else 0.0
        ends = step["op"] == "status-delete" or step.get("event") == "SessionEnd"
        if (gap >= 0.5 or (after_request and step["op"] != "status")) or (ends and not ending):
            step["hold"] = True
            after_request = False
        ending = ending or ends
        if step.get("event") == "PermissionRequest":
            after_request = True


def _root(steps: list[dict[str, Any]]) -> str:
    """The recording's temp dir: the hook payload's cwd is ``<root>/work``."""
    cwd = next(s["payload"]["cwd"] for s in steps if s["op"] == "hook")
    assert cwd.endswith("/work"), cwd
    return cwd[: -len("/work")]


def script(name: str) -> str:
    provider, relative, title = SCRIPTS[name]
    capture = CAPTURES / relative
    steps = _claude(capture) if provider == "claude-code" else _codex(capture)
    steps.sort(key=lambda s: s["at"])  # stable: a hook before a line of the same instant
    start = steps[0]["at"]
    root = _root(steps)
    slug = re.sub(r"[^A-Za-z0-9]", "-", root + "/work")
    header = {"provider": provider, "title": title, "capture": f"tests/live/captures/{relative}"}
    if provider == "claude-code":
        # What Claude Code puts in every hook's environment (docs/providers/claude-code.md).
        header["hook_env"] = {"CLAUDE_PID": "{pid}", "CLAUDE_CODE_SESSION_ID": "{session_id}"}
    lines = [json.dumps(header)]
    _mark_holds(steps)
    steps.append({"at": steps[-1]["at"], "op": "exit", "hold": True})
    for step in steps:
        step["at"] = round(step["at"] - start, 3)
        text = json.dumps(step, separators=(",", ":"), ensure_ascii=False)
        text = text.replace(slug, "{slug}").replace(root, "{root}")
        # The recorder's own logging hook, named in stop_hook_summary records.
        lines.append(re.sub(r"(?<![}\w])/[^\" ]*/bin/python3?", "python3", text))
    out = "\n".join(lines) + "\n"
    leaked = re.findall(r"(?<![}\w.])/(?:tmp|home|root|work|Users)/[^\"{ ]*", out)
    assert not leaked, leaked[:5]
    return out


def main(names: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names or SCRIPTS:
        text = script(name)
        (OUT / f"{name}.jsonl").write_text(text)
        print(f"{name}: {text.count(chr(10)) - 1} steps, {len(text)} bytes")


if __name__ == "__main__":
    os.chdir(CAPTURES.parents[2])
    main(sys.argv[1:])
