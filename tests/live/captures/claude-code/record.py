"""Record real Claude Code 2.1.328 captures against the scripted server.

    .venv/bin/python tests/live/captures/claude-code/record.py [scenario ...]

Each scenario writes ``<this dir>/<scenario>/``:

* ``transcript/…``      every file under ``~/.claude/projects/<slug>/`` (main + subagents)
* ``hooks.jsonl``       one line per hook:
  ``{event, time, CLAUDE_PID, CLAUDE_CODE_SESSION_ID, payload}``
* ``session-<checkpoint>.json``  ``~/.claude/sessions/<pid>.json`` at each checkpoint
  (``null`` when the file did not exist)
* ``session-timeline.jsonl``  every observed change of the session file(s) (polled at 20 Hz)
* ``screen-<checkpoint>.txt``  the TUI screen at each checkpoint
* ``requests.jsonl``    digest of every HTTP request the server saw
* ``notes.md``          the timeline (private HOME prefix replaced by ``$HOME``)

Files are raw evidence; only ``notes.md`` is rewritten. If a transcript exceeds
100 KB its ``api-request-shape`` records are dropped (said in notes.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/live

from harness import anthropic_server as api  # noqa: E402
from harness import claude, recording  # noqa: E402

MAX_TRANSCRIPT = 100_000


class Capture:
    def __init__(
        self,
        name: str,
        scenario: list[api.Reply],
        *,
        permission_mode: str | None = "default",
        extra_args: list[str] | None = None,
        side_reply: api.Reply | None = None,
        routes: dict[str, list[api.Reply]] | None = None,
        router: Callable[[api.RecordedRequest], str | None] | None = None,
        claude_json: dict[str, Any] | None = None,
    ) -> None:
        self.claude_json = claude_json
        self.routes = routes
        self.router = router
        self.name = name
        self.out = HERE / name
        self.scenario = scenario
        self.permission_mode = permission_mode
        self.extra_args = extra_args or []
        self.side_reply = side_reply
        self.events: list[tuple[float, str]] = []
        self.tui: claude.ClaudeTui | None = None
        self.pids: set[int] = set()
        self._stop = threading.Event()
        self.t0 = time.time()

    # -- lifecycle
    def __enter__(self) -> Capture:
        if self.out.is_dir():  # a capture is always one run: drop the previous one
            shutil.rmtree(self.out)
        self.root = Path(tempfile.mkdtemp(prefix=f"cap-{self.name}-"))
        self.h = claude.make_home(self.root, claude_json=self.claude_json)
        self.settings = claude.write_logging_hooks(self.h)
        self.srv = api.AnthropicServer(
            self.scenario,
            side_reply=self.side_reply,
            routes=self.routes,
            router=self.router,
            log_path=str(self.root / "requests.jsonl"),
        ).start()
        self.timeline: list[dict[str, Any]] = []
        self._poller = threading.Thread(target=self._poll, daemon=True)
        self._poller.start()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc is not None:
            self.note("EXCEPTION: " + "".join(traceback.format_exception_only(exc_type, exc)))
            if self.tui is not None:
                with contextlib.suppress(Exception):
                    self.note("screen at exception:\n" + self.tui.screen())
        try:
            if self.tui is not None:
                self.tui.close()
            time.sleep(0.5)
        finally:
            self._stop.set()
            self._poller.join(timeout=2)
            self.srv.stop()
            self._save(failed=exc is not None)
            shutil.rmtree(self.root, ignore_errors=True)

    def _poll(self) -> None:
        last: dict[str, Any] = {}
        while not self._stop.is_set():
            d = self.h.sessions_dir
            cur: dict[str, Any] = {}
            if d.is_dir():
                for p in d.glob("*.json"):
                    try:
                        cur[p.name] = json.loads(p.read_text())
                    except (OSError, ValueError):
                        continue
            for k in set(cur) | set(last):
                a, b = last.get(k), cur.get(k)
                if _state_key(a) != _state_key(b):
                    self.timeline.append(
                        {
                            "time": time.time(),
                            "file": k,
                            "status": None if b is None else b.get("status"),
                            "waitingFor": None if b is None else b.get("waitingFor"),
                            "sessionId": None if b is None else b.get("sessionId"),
                            "deleted": b is None,
                        }
                    )
            last = cur
            time.sleep(0.05)

    # -- actions
    def note(self, text: str) -> None:
        self.events.append((time.time(), text))

    def start_tui(self, **kw: Any) -> claude.ClaudeTui:
        self.tui = claude.start_tui(
            self.h,
            self.srv.url,
            permission_mode=self.permission_mode,
            extra_args=["--settings", self.settings, *self.extra_args],
            **kw,
        )
        self.note(
            "started TUI: claude "
            + (f"--permission-mode {self.permission_mode} " if self.permission_mode else "")
            + "--settings <logging hooks> "
            + " ".join(self.extra_args)
        )
        self.tui.wait_ready()
        self.pids.add(self.tui.pid())
        self.checkpoint("ready")
        return self.tui

    def run_print(self, prompt: str, **kw: Any) -> Any:
        self.note(
            f"run: claude -p {prompt!r} --permission-mode {self.permission_mode} "
            f"--settings <logging hooks> {' '.join(self.extra_args)}"
        )
        r = claude.run_print(
            prompt,
            home=self.h,
            server_url=self.srv.url,
            permission_mode=self.permission_mode,
            extra_args=["--settings", self.settings, *self.extra_args],
            **kw,
        )
        self.note(f"exit code {r.returncode}; stdout={r.stdout!r}; stderr={r.stderr[-500:]!r}")
        for rec in self.h.hooks():
            if rec.get("CLAUDE_PID", "").isdigit():
                self.pids.add(int(rec["CLAUDE_PID"]))
        return r

    def submit(self, text: str) -> None:
        assert self.tui
        self.note(f"typed {text!r} + Enter")
        self.tui.submit(text)

    def press(self, *keys: str, why: str = "") -> None:
        assert self.tui
        self.note(f"pressed {' '.join(keys)}" + (f" ({why})" if why else ""))
        self.tui.press(*keys)

    def confirm(self, dialog_text: str, key: str = "Enter", why: str = "") -> None:
        """Press a confirm key on an open dialog, re-pressing while ``dialog_text`` stays.

        A confirm key (Enter, digit) pressed within ~0.1-0.2 s of the dialog appearing
        is dropped by the TUI; Escape is not.
        """
        assert self.tui
        self.note(f"pressed {key}" + (f" ({why})" if why else ""))
        self.tui.press_until(
            [key],
            lambda s: dialog_text not in s,
            still=lambda s: dialog_text in s,
        )

    def wait_screen(self, needle: str | Callable[[str], bool], timeout: float = 30) -> str:
        assert self.tui
        if callable(needle):
            return self.tui.pane.wait_until(needle, timeout)
        return self.tui.wait_for(needle, timeout)

    def wait_hook(self, event: str, count: int = 1, **kw: Any) -> list[dict[str, Any]]:
        return claude.wait_hook(self.h, event, count=count, **kw)

    def wait_status(
        self, status: str, waiting_for: str | None = None, timeout: float = 30
    ) -> dict[str, Any]:
        assert self.tui
        return self.tui.wait_session(
            lambda d: (
                d.get("status") == status
                and (waiting_for is None or d.get("waitingFor") == waiting_for)
            ),
            timeout,
        )

    def checkpoint(self, name: str, note: str = "") -> None:
        snap: dict[str, Any] = {}
        files = self.h.session_files()
        for pid in files:
            self.pids.add(pid)
        self.out.mkdir(parents=True, exist_ok=True)
        pids = sorted(self.pids) or [None]
        for pid in pids:
            data = self.h.read_session_file(pid) if pid is not None else None
            snap[str(pid)] = data
            suffix = "" if len(pids) == 1 else f".{pid}"
            (self.out / f"session-{name}{suffix}.json").write_text(
                json.dumps(data, indent=2) + "\n"
            )
        screen = ""
        if self.tui is not None:
            try:
                screen = self.tui.screen()
            except Exception:  # noqa: BLE001
                screen = "<no screen>"
            (self.out / f"screen-{name}.txt").write_text(screen)
        status = {k: (v or {}).get("status") for k, v in snap.items()}
        wf = {k: (v or {}).get("waitingFor") for k, v in snap.items()}
        self.events.append(
            (
                time.time(),
                f"CHECKPOINT {name}: session status={status} "
                f"waitingFor={wf}" + (f" — {note}" if note else ""),
            )
        )
        if screen:
            self.events.append((time.time(), "screen:\n" + _trim_screen(screen)))

    # -- output
    def _save(self, failed: bool) -> None:
        out = self.out
        out.mkdir(parents=True, exist_ok=True)
        tdir = out / "transcript"
        if tdir.exists():
            shutil.rmtree(tdir)
        dropped = []
        proj = self.h.claude_dir / "projects"
        if proj.is_dir():
            for src in proj.rglob("*"):
                if not src.is_file() or "memory" in src.relative_to(proj).parts:
                    continue
                dst = tdir / src.relative_to(proj).relative_to(src.relative_to(proj).parts[0])
                dst.parent.mkdir(parents=True, exist_ok=True)
                data = src.read_bytes()
                if src.suffix == ".jsonl" and len(data) > MAX_TRANSCRIPT:
                    lines = data.splitlines(keepends=True)
                    kept = [ln for ln in lines if b'"type":"api-request-shape"' not in ln]
                    dropped.append((dst.name, len(lines) - len(kept), len(data)))
                    data = b"".join(kept)
                dst.write_bytes(data)
        # subagent task outputs (under TMPDIR)
        # (2.1.328 makes <agentId>.output a symlink to the subagent transcript: record
        # where it points instead of copying the same bytes twice)
        for src in self.h.tmpdir.rglob("tasks/*.output") if self.h.tmpdir.is_dir() else []:
            dst = out / "task-output" / src.name
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_symlink():
                (dst.parent / (src.name + ".symlink.txt")).write_text(
                    f"{src.relative_to(self.h.tmpdir)} -> {os.readlink(src)}\n"
                )
            else:
                shutil.copyfile(src, dst)
        plans = self.h.claude_dir / "plans"
        if plans.is_dir():
            for src in plans.glob("*.md"):
                dst = out / "plans" / src.name
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
        if self.h.hook_log.exists():
            shutil.copyfile(self.h.hook_log, out / "hooks.jsonl")
        req_log = self.root / "requests.jsonl"
        if req_log.exists():
            shutil.copyfile(req_log, out / "requests.jsonl")
        with open(out / "session-timeline.jsonl", "w") as f:
            for row in self.timeline:
                f.write(json.dumps(row) + "\n")
        self._write_notes(dropped, failed)

    def _write_notes(self, dropped: list[tuple[str, int, int]], failed: bool) -> None:
        rows: list[tuple[float, str]] = list(self.events)
        for rec in self.h.hooks():
            p = rec.get("payload") or {}
            extra = ""
            if isinstance(p, dict):
                for k in (
                    "source",
                    "reason",
                    "tool_name",
                    "notification_type",
                    "agent_id",
                    "error",
                    "trigger",
                ):
                    if p.get(k):
                        extra += f" {k}={p[k]}"
                if p.get("hook_event_name") == "Stop":
                    extra += f" background_tasks={len(p.get('background_tasks') or [])}"
                if p.get("session_id"):
                    extra += f" sid={p['session_id'][:8]}"
            rows.append((rec["time"], f"hook {rec['event']}{extra} (pid {rec.get('CLAUDE_PID')})"))
        for row in self.timeline:
            rows.append(
                (
                    row["time"],
                    f"sessions/{row['file']}: "
                    + (
                        "deleted"
                        if row["deleted"]
                        else f"status={row['status']} waitingFor={row['waitingFor']} "
                        f"sid={(row['sessionId'] or '')[:8]}"
                    ),
                )
            )
        for r in self.srv.requests:
            rows.append((r.time, f"server {r.method} {r.path} [{r.kind}] -> {r.reply}"))
        rows.sort(key=lambda x: x[0])
        lines = [
            f"# {self.name}",
            "",
            "Claude Code 2.1.328 against harness/anthropic_server.py; recorded by "
            "`record.py`. Times are seconds since the capture started.",
            "",
        ]
        if failed:
            lines += [
                "**The recording raised an exception (see the end of the timeline); "
                "files are what existed at that point.**",
                "",
            ]
        if dropped:
            for name, n, size in dropped:
                lines.append(
                    f"* `{name}` was {size} bytes: {n} `api-request-shape` record(s) dropped."
                )
            lines.append("")
        lines += ["## Timeline", "", "```"]
        for t, text in rows:
            lines.append(f"{t - self.t0:8.3f}  {text}")
        lines += ["```", ""]
        body = "\n".join(lines)
        body = body.replace(str(self.h.home), "$HOME").replace(str(self.root), "<root>")
        (self.out / "notes.md").write_text(body)


def _state_key(d: dict[str, Any] | None) -> tuple[Any, ...] | None:
    if d is None:
        return None
    return (d.get("status"), d.get("waitingFor"), d.get("sessionId"))


def _trim_screen(s: str) -> str:
    lines = [ln.rstrip() for ln in s.splitlines()]
    out: list[str] = []
    for ln in lines:
        if not ln and out and not out[-1]:
            continue
        out.append(ln[:20] + "…" if ln and set(ln) <= {"─", "╌"} else ln)
    return "\n".join(out).strip("\n")


# ------------------------------------------------------------- scenarios ---

BASH_WRITE = {"command": "echo hi > out.txt", "description": "Write hi to out.txt"}


def print_text() -> None:
    with Capture("print-text", [api.text("Hello from the scripted model.")]) as c:
        c.run_print("say hello")
        c.checkpoint("after-exit")


def print_bash_denied() -> None:
    with Capture(
        "print-bash-denied",
        [
            api.tool_use("Bash", BASH_WRITE),
            api.text("Could not write the file."),
        ],
    ) as c:
        c.run_print("write hi to out.txt")
        c.checkpoint("after-exit")


def tui_permission_approve() -> None:
    with Capture(
        "tui-permission-approve",
        [
            api.tool_use("Bash", BASH_WRITE),
            api.text("Done after tool."),
        ],
    ) as c:
        c.start_tui()
        c.submit("write hi to out.txt")
        c.wait_screen("Do you want to proceed?")
        c.wait_hook("PermissionRequest")
        c.wait_status("waiting", "permission prompt")
        c.checkpoint("dialog-open")
        c.wait_hook(
            "Notification",
            where=lambda r: r["payload"].get("notification_type") == "permission_prompt",
            timeout=20,
        )
        c.checkpoint("after-notification")
        c.confirm("Do you want to proceed?", why="option 1. Yes is preselected")
        c.wait_hook("Stop")
        c.wait_screen("Done after tool.")
        c.wait_status("idle")
        c.checkpoint("idle")


def tui_permission_deny() -> None:
    with Capture("tui-permission-deny", [api.tool_use("Bash", BASH_WRITE)]) as c:
        c.start_tui()
        c.submit("write hi to out.txt")
        c.wait_screen("Do you want to proceed?")
        c.wait_status("waiting", "permission prompt")
        c.checkpoint("dialog-open")
        c.press("Escape", why="Esc to cancel")
        c.wait_status("idle")
        c.wait_screen(lambda s: "Do you want to proceed?" not in s)
        time.sleep(1.0)  # let the transcript flush (100 ms batches)
        c.checkpoint("after-esc")


QUESTION = {
    "questions": [
        {
            "question": "Which color do you prefer?",
            "header": "Color",
            "options": [
                {"label": "Red", "description": "A warm color"},
                {"label": "Blue", "description": "A cool color"},
            ],
            "multiSelect": False,
        }
    ]
}


def _answer_question(c: Capture) -> None:
    """Enter on option 1; if a review step ("Submit answers") appears, confirm it."""
    c.confirm("Enter to select", why="option 1 (Red) is preselected")
    deadline = time.time() + 20
    while time.time() < deadline:
        if any(r["event"] == "PostToolUse" for r in c.h.hooks()):
            return
        scr = c.tui.screen() if c.tui else ""
        if "Submit answers" in scr or "Review your answers" in scr:
            c.checkpoint("review-step")
            c.press("Enter", why="Submit answers")
            c.wait_hook("PostToolUse")
            return
        time.sleep(0.1)
    raise TimeoutError("question not answered")


def tui_question_answer() -> None:
    with Capture(
        "tui-question-answer",
        [
            api.tool_use("AskUserQuestion", QUESTION),
            api.text("You picked a color."),
        ],
    ) as c:
        c.start_tui()
        c.submit("ask me a color")
        c.wait_hook("PermissionRequest")
        c.wait_status("waiting")
        c.wait_screen("Which color do you prefer?")
        time.sleep(0.3)
        c.checkpoint("dialog-open")
        _answer_question(c)
        c.wait_hook("Stop")
        c.wait_screen("You picked a color.")
        c.wait_status("idle")
        c.checkpoint("idle")


def tui_question_esc() -> None:
    with Capture("tui-question-esc", [api.tool_use("AskUserQuestion", QUESTION)]) as c:
        c.start_tui()
        c.submit("ask me a color")
        c.wait_hook("PermissionRequest")
        c.wait_status("waiting")
        c.wait_screen("Which color do you prefer?")
        time.sleep(0.3)
        c.checkpoint("dialog-open")
        c.press("Escape", why="dismiss the question")
        c.wait_status("idle")
        c.wait_screen(
            lambda s: "Enter to select" not in s and any(m in s for m in claude.READY_MARKERS)
        )
        time.sleep(1.0)
        c.checkpoint("after-esc")


PLAN = "# Plan\n\n1. Write `hi` to out.txt with echo.\n2. Report back."


def tui_plan_approve() -> None:
    with Capture(
        "tui-plan-approve",
        [
            api.tool_use("ExitPlanMode", {"plan": PLAN}),
            api.text("Plan approved; starting."),
        ],
        permission_mode="plan",
    ) as c:
        c.start_tui()
        c.submit("plan writing hi to out.txt")
        c.wait_hook("PermissionRequest")
        c.wait_status("waiting")
        c.wait_screen("Exit plan mode?")
        time.sleep(0.3)
        c.checkpoint("dialog-open")
        c.confirm("Exit plan mode?", why="option 1 preselected")
        c.wait_hook("Stop")
        c.wait_screen("Plan approved; starting.")
        c.wait_status("idle")
        c.checkpoint("idle")


SLOW_LINES = "".join(f"line {i} of a slowly streamed answer\n" for i in range(40))


def tui_esc_streaming() -> None:
    with Capture("tui-esc-streaming", [api.slow_text(SLOW_LINES, delay=0.15, chunk_chars=6)]) as c:
        c.start_tui()
        c.submit("stream slowly")
        c.srv.wait_main_requests(1)
        c.wait_screen("line 3 of")
        c.checkpoint("streaming")
        c.press("Escape", why="interrupt while streaming")
        c.wait_status("idle")
        c.wait_screen("Interrupted")
        time.sleep(1.0)
        c.checkpoint("after-esc")


def tui_esc_tool_running() -> None:
    with Capture(
        "tui-esc-tool-running",
        [
            api.tool_use(
                "Bash",
                {"command": "echo start && sleep 30 && echo end", "description": "Wait 30 seconds"},
            ),
        ],
        extra_args=["--allowedTools", "Bash"],
    ) as c:
        c.start_tui()
        c.submit("run the slow command")
        c.wait_hook("PreToolUse")
        c.wait_status("busy")
        time.sleep(2.0)
        c.checkpoint("tool-running")
        c.press("Escape", why="interrupt the running tool")
        c.wait_status("idle")
        c.wait_screen("Interrupted")
        time.sleep(1.0)
        c.checkpoint("after-esc")


def tui_queued_prompt() -> None:
    slow = "".join(f"first answer line {i}\n" for i in range(12))
    with Capture(
        "tui-queued-prompt",
        [
            api.slow_text(slow, delay=0.25, chunk_chars=10),
            api.text("Second answer."),
        ],
    ) as c:
        c.start_tui()
        c.submit("first prompt")
        c.srv.wait_main_requests(1)
        c.wait_screen("first answer line 1")
        c.checkpoint("working")
        c.submit("second prompt")
        c.wait_hook("UserPromptSubmit", count=2)
        c.checkpoint("queued")
        c.wait_hook("Stop", count=2, timeout=60)
        c.wait_screen("Second answer.")
        c.wait_status("idle")
        time.sleep(0.5)
        c.checkpoint("idle")


def tui_clear() -> None:
    with Capture("tui-clear", [api.text("First answer."), api.text("Answer in new session.")]) as c:
        c.start_tui()
        c.submit("first prompt")
        c.wait_hook("Stop")
        c.wait_status("idle")
        c.wait_screen("First answer.")
        c.checkpoint("idle-1")
        c.submit("/clear")
        c.wait_hook("SessionStart", where=lambda r: r["payload"].get("source") == "clear")
        c.tui.wait_ready()
        time.sleep(0.5)
        c.checkpoint("after-clear")
        c.submit("prompt in the new session")
        c.wait_hook("Stop", count=2)
        c.wait_screen("Answer in new session.")
        c.wait_status("idle")
        time.sleep(0.5)
        c.checkpoint("idle-2")


SUMMARY = (
    "<analysis>The user asked one question.</analysis>\n"
    "<summary>1. Primary Request: the user said hello.\n2. The assistant answered."
    "</summary>"
)


def tui_compact() -> None:
    with Capture(
        "tui-compact",
        [api.text("First answer."), api.text(SUMMARY, label="summary")],
        side_reply=api.text(SUMMARY, label="side-summary"),
    ) as c:
        c.start_tui()
        c.submit("hello")
        c.wait_hook("Stop")
        c.wait_status("idle")
        c.checkpoint("idle-1")
        c.submit("/compact")
        c.wait_hook("PostCompact", timeout=60)
        c.wait_status("idle")
        c.tui.wait_ready()
        time.sleep(1.0)
        c.checkpoint("after-compact")


SUB_MARK = "SUBAGENT-TASK-7f3a"


def _sub_router(req: api.RecordedRequest) -> str | None:
    return "sub" if SUB_MARK in req.first_user_text() else None


def tui_subagent_permission() -> None:
    agent_input = {
        "description": "Write sub.txt",
        "prompt": f"{SUB_MARK}: run `echo sub > sub.txt` with Bash, then report.",
        "subagent_type": "general-purpose",
        "run_in_background": True,
    }
    with Capture(
        "tui-subagent-permission",
        [
            api.tool_use("Agent", agent_input),
            api.text("Agent launched; waiting for it."),
            api.text("The subagent finished."),
        ],
        routes={
            "sub": [
                api.Reply(
                    content=[
                        {
                            "type": "tool_use",
                            "id": "toolu_sub0000000000000000001",
                            "name": "Bash",
                            "input": {
                                "command": "echo sub > sub.txt",
                                "description": "Write sub.txt",
                            },
                        }
                    ],
                    first_delay=3.0,
                ),
                api.text("Wrote sub.txt."),
            ]
        },
        router=_sub_router,
    ) as c:
        c.start_tui()
        c.submit("start a background agent")
        c.wait_hook("SubagentStart")
        c.wait_hook("Stop")
        c.checkpoint("main-stopped")
        c.wait_hook(
            "PermissionRequest", where=lambda r: bool(r["payload"].get("agent_id")), timeout=30
        )
        c.wait_status("waiting")
        c.wait_screen("Do you want to proceed?")
        time.sleep(0.3)
        c.checkpoint("subagent-dialog-open")
        c.confirm("Do you want to proceed?", why="option 1. Yes")
        c.wait_hook("SubagentStop", timeout=30)
        c.wait_hook("Stop", count=2, timeout=30)
        c.wait_status("idle")
        time.sleep(1.0)
        c.checkpoint("idle")


def print_api_error() -> None:
    with Capture(
        "print-api-error",
        [
            api.error(400, message="scripted: prompt is invalid", times=20),
        ],
    ) as c:
        c.run_print("trigger an error")
        c.checkpoint("after-exit")


def tui_api_error() -> None:
    with Capture(
        "tui-api-error",
        [
            api.error(500, message="scripted: internal failure", should_retry=False, times=20),
        ],
    ) as c:
        c.start_tui()
        c.submit("trigger an error")
        c.wait_hook("StopFailure", timeout=60)
        c.wait_status("idle")
        time.sleep(1.0)
        c.checkpoint("after-error")


def tui_sigkill_idle() -> None:
    with Capture("tui-sigkill-idle", [api.text("First answer.")]) as c:
        c.start_tui()
        c.submit("hello")
        c.wait_hook("Stop")
        c.wait_status("idle")
        c.wait_screen("First answer.")
        time.sleep(0.5)
        c.checkpoint("idle")
        pid = c.tui.pid() if c.tui else 0
        c.note(f"kill -9 {pid}")
        claude.kill_pid(pid)
        deadline = time.time() + 10
        while claude.pid_alive(pid) and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        c.checkpoint("after-sigkill", note=f"pid alive: {claude.pid_alive(pid)}")


def tui_idle_notification() -> None:
    """idle_prompt with ``messageIdleNotifThresholdMs`` lowered to 3 s in ~/.claude.json."""
    with Capture(
        "tui-idle-notification",
        [api.text("First answer.")],
        claude_json={"messageIdleNotifThresholdMs": 3000},
    ) as c:
        c.start_tui()
        c.submit("hello")
        c.wait_hook("Stop")
        c.wait_status("idle")
        c.checkpoint("idle")
        c.wait_hook(
            "Notification",
            where=lambda r: r["payload"].get("notification_type") == "idle_prompt",
            timeout=30,
        )
        c.checkpoint("after-idle-notification")


def tui_permission_no() -> None:
    """Deny by choosing "4. No" (key ``4``) instead of Esc."""
    with Capture("tui-permission-no", [api.tool_use("Bash", BASH_WRITE)]) as c:
        c.start_tui()
        c.submit("write hi to out.txt")
        c.wait_screen("Do you want to proceed?")
        c.wait_status("waiting", "permission prompt")
        c.checkpoint("dialog-open")
        # A digit key is not deterministic (once it only moved the cursor, once it
        # confirmed at once): walk down with arrows, then confirm.
        c.press("Down", "Down", "Down", why="move the cursor to 4. No")
        c.wait_screen(lambda s: re.search(r"\u276f[ \u00a0]4\. No", s) is not None)
        c.checkpoint("no-selected")
        c.note("pressed Enter (confirm 4. No; re-pressed while the dialog stays)")
        assert c.tui
        c.tui.press_until(
            ["Enter"],
            lambda s: "Do you want to proceed?" not in s,
            still=lambda s: "Do you want to proceed?" in s,
        )
        c.wait_status("idle")
        c.wait_screen(lambda s: "Do you want to proceed?" not in s)
        time.sleep(1.0)
        c.checkpoint("after-no")


def tui_multi_block() -> None:
    """One assistant message with text + two Bash tool_use blocks (both allowed)."""
    with Capture(
        "tui-multi-block",
        [
            api.blocks(
                {"type": "text", "text": "I will run two commands."},
                {
                    "type": "tool_use",
                    "name": "Bash",
                    "input": {"command": "echo one", "description": "Print one"},
                },
                {
                    "type": "tool_use",
                    "name": "Bash",
                    "input": {"command": "echo two", "description": "Print two"},
                },
            ),
            api.text("Both commands ran."),
        ],
        extra_args=["--allowedTools", "Bash"],
    ) as c:
        c.start_tui()
        c.submit("run two commands")
        c.wait_hook("Stop")
        c.wait_screen("Both commands ran.")
        c.wait_status("idle")
        time.sleep(0.5)
        c.checkpoint("idle")


def tui_exit_command() -> None:
    """/exit after a turn: SessionEnd reason, session file removal, process exit."""
    with Capture("tui-exit-command", [api.text("First answer.")]) as c:
        tui = c.start_tui()
        pid = tui.pid()
        c.submit("hello")
        c.wait_hook("Stop")
        c.wait_status("idle")
        c.checkpoint("idle")
        c.submit("/exit")
        c.wait_hook("SessionEnd")
        deadline = time.time() + 10
        while claude.pid_alive(pid) and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        c.checkpoint("after-exit", note=f"pid alive: {claude.pid_alive(pid)}")


def tui_subagent_foreground() -> None:
    """Agent tool with run_in_background=false; the subagent asks for Bash permission."""
    agent_input = {
        "description": "Write sub.txt",
        "prompt": f"{SUB_MARK}: run `echo sub > sub.txt` with Bash, then report.",
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
    with Capture(
        "tui-subagent-foreground",
        [api.tool_use("Agent", agent_input), api.text("The subagent finished.")],
        routes={
            "sub": [
                api.tool_use(
                    "Bash", {"command": "echo sub > sub.txt", "description": "Write sub.txt"}
                ),
                api.text("Wrote sub.txt."),
            ]
        },
        router=_sub_router,
    ) as c:
        c.start_tui()
        c.submit("run a subagent in the foreground")
        c.wait_hook("SubagentStart")
        c.wait_hook(
            "PermissionRequest", where=lambda r: bool(r["payload"].get("agent_id")), timeout=30
        )
        c.wait_status("waiting")
        c.wait_screen("Do you want to proceed?")
        time.sleep(0.3)
        c.checkpoint("subagent-dialog-open")
        c.confirm("Do you want to proceed?", why="option 1. Yes")
        c.wait_hook("SubagentStop", timeout=30)
        c.wait_hook("Stop", where=lambda r: not r["payload"].get("background_tasks"), timeout=30)
        c.wait_status("idle")
        time.sleep(1.0)
        c.checkpoint("idle")


SCENARIOS: dict[str, Callable[[], None]] = {
    "print-text": print_text,
    "print-bash-denied": print_bash_denied,
    "tui-permission-approve": tui_permission_approve,
    "tui-permission-deny": tui_permission_deny,
    "tui-question-answer": tui_question_answer,
    "tui-question-esc": tui_question_esc,
    "tui-plan-approve": tui_plan_approve,
    "tui-esc-streaming": tui_esc_streaming,
    "tui-esc-tool-running": tui_esc_tool_running,
    "tui-queued-prompt": tui_queued_prompt,
    "tui-clear": tui_clear,
    "tui-compact": tui_compact,
    "tui-subagent-permission": tui_subagent_permission,
    "print-api-error": print_api_error,
    "tui-api-error": tui_api_error,
    "tui-sigkill-idle": tui_sigkill_idle,
    "tui-idle-notification": tui_idle_notification,
    "tui-permission-no": tui_permission_no,
    "tui-multi-block": tui_multi_block,
    "tui-exit-command": tui_exit_command,
    "tui-subagent-foreground": tui_subagent_foreground,
}

if __name__ == "__main__":
    sys.exit(recording.record_scenarios(SCENARIOS, sys.argv[1:]))
