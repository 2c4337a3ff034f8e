"""Re-create the real Codex 0.169.0 captures in this directory.

    .venv/bin/python tests/live/captures/codex/make_captures.py [scenario ...]

Each scenario writes ``<scenario>/``: the rollout file(s) codex wrote (raw), ``hooks.jsonl``
(one line per hook run: event, time, pid, payload — raw stdin), ``requests.jsonl`` (a
digest of every request the scripted server got; tool schemas and instructions left out)
and ``notes.md`` (timeline: keys pressed, screens at checkpoints, hook/rollout facts).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/live

from harness import codex  # noqa: E402
from harness import responses_server as rs  # noqa: E402

TUI_ARGS = ["-a", "on-request", "-s", "read-only"]


class Capture:
    def __init__(
        self,
        name: str,
        replies: list[rs.Reply],
        *,
        subagent_replies: list[rs.Reply] = (),
        retries: int = 0,
    ):
        self.name = name
        self.out = HERE / name
        self.server = rs.ResponsesServer(replies, subagent_replies=subagent_replies).start()
        self.home = codex.make_home(self.server.base_url, retries=retries)
        self.hook_args = codex.logging_hook_args(self.home.hook_log)
        self.t0 = time.time()
        self.lines: list[str] = [f"# {name}", ""]
        self.pane = None

    # ---- notes
    def note(self, text: str) -> None:
        self.lines.append(f"- t+{time.time() - self.t0:5.1f}s {text}")

    def shot(self, label: str) -> str:
        s = self.pane.screen()
        self.lines += [
            "",
            f"Screen — {label} (t+{time.time() - self.t0:.1f}s):",
            "",
            "```",
            codex.clean_screen(s),
            "```",
            "",
        ]
        return s

    def hooks_so_far(self) -> list[str]:
        return codex.hook_events(self.home.hook_log)

    # ---- drivers
    def tui(self, extra: list[str] = (), **kw) -> None:
        self.pane = codex.start_tui(
            self.home, extra_args=[*TUI_ARGS, *self.hook_args, *extra], **kw
        )
        trust = (
            "--dangerously-bypass-hook-trust"
            if "--dangerously-bypass-hook-trust" in self.hook_args
            else "no bypass flag"
        )
        self.note(
            f"TUI started: codex --no-daemon -c … {' '.join(TUI_ARGS + list(extra))}"
            f" + 13 logging -c hooks + {trust}"
        )

    def submit(self, text: str) -> None:
        codex.submit(self.pane, text)
        self.note(f"typed {text!r} + Enter")

    def keys(self, *keys: str) -> None:
        self.pane.send_keys(*keys)
        self.note(f"pressed {' '.join(keys)}")

    def exec(self, prompt: str, extra: list[str] = ()) -> None:
        p = codex.run_exec(self.home, prompt, extra_args=[*self.hook_args, *extra])
        self.note(f"`codex exec` {prompt!r} → exit {p.returncode}")
        self.lines += [
            "",
            "exec stdout:",
            "",
            "```",
            p.stdout.strip(),
            "```",
            "",
            "exec stderr (tail):",
            "",
            "```",
            "\n".join(p.stderr.strip().splitlines()[-25:]),
            "```",
            "",
        ]

    # ---- output
    def finish(self) -> None:
        try:
            if self.pane is not None:
                codex.kill_pane(self.pane)
        finally:
            self.server.stop()
        if self.out.exists():
            shutil.rmtree(self.out)
        self.out.mkdir(parents=True)
        rolls = codex.rollouts(self.home)
        for p in rolls:
            shutil.copy(p, self.out / p.name)
        hl = self.home.hook_log / "hooks.jsonl"
        if hl.exists():
            shutil.copy(hl, self.out / "hooks.jsonl")
        with open(self.out / "requests.jsonl", "w") as f:
            for r in self.server.requests:
                meta = r.turn_metadata
                f.write(
                    json.dumps(
                        {
                            "seq": r.seq,
                            "time": r.time,
                            "method": r.method,
                            "path": r.path,
                            "kind": r.kind,
                            "reply": r.reply_label,
                            "completed": r.completed,
                            "session-id": r.headers.get("session-id"),
                            "thread-id": r.headers.get("thread-id"),
                            "originator": r.headers.get("originator"),
                            "turn_metadata": {
                                k: meta.get(k)
                                for k in (
                                    "turn_id",
                                    "request_kind",
                                    "thread_source",
                                    "agent_name",
                                    "turn_trigger",
                                    "sandbox_mode",
                                )
                            }
                            if meta
                            else None,
                            "last_user_text": r.last_user_text()[:300],
                            "function_outputs": {
                                k: v[:300] for k, v in r.function_outputs().items()
                            },
                        }
                    )
                    + "\n"
                )
        self.lines += ["", "## Evidence summary", ""]
        self.lines.append("Hooks fired, in order: " + ", ".join(self.hooks_so_far()))
        self.lines.append("")
        self.lines.append("Requests: " + "; ".join(self.server.summary()))
        for p in rolls:
            self.lines += [
                "",
                f"Rollout `{p.name}` record types:",
                "",
                "```",
                " ".join(codex.rollout_event_types(p)),
                "```",
            ]
        (self.out / "notes.md").write_text("\n".join(self.lines) + "\n")
        self.home.cleanup()


# --------------------------------------------------------------------------- scenarios


def sc_a_exec_plain() -> None:
    c = Capture("a_exec_plain", [rs.text("Hello from the scripted server.")])
    try:
        c.exec("say hello")
    finally:
        c.finish()


def sc_b_exec_commands() -> None:
    c = Capture(
        "b_exec_commands",
        [
            rs.exec_command("touch escalated.txt", escalated=True),
            rs.exec_command("echo normal-command-output"),
            rs.text("Both commands handled."),
        ],
    )
    try:
        c.exec("run the two commands")
    finally:
        c.finish()


def sc_c_tui_plain() -> None:
    c = Capture("c_tui_plain", [rs.text("Hello from the scripted server.")])
    try:
        c.tui()
        c.shot("TUI ready")
        c.submit("say hello")
        codex.wait_hook(c.home.hook_log, "Stop")
        c.pane.wait_for("Hello from the scripted server.")
        codex.wait_idle(c.pane)
        c.shot("idle after the turn")
        c.note("hooks so far: " + ", ".join(c.hooks_so_far()))
    finally:
        c.finish()


def sc_d_tui_approve() -> None:
    c = Capture(
        "d_tui_approve",
        [rs.exec_command("touch approved.txt", escalated=True), rs.text("The file was created.")],
    )
    try:
        c.tui()
        c.submit("create approved.txt")
        c.pane.wait_for(codex.APPROVAL_MARKER)
        codex.wait_hook(c.home.hook_log, "PermissionRequest")
        c.shot("approval prompt open")
        c.note("hooks so far: " + ", ".join(c.hooks_so_far()))
        c.keys("y")
        codex.wait_hook(c.home.hook_log, "Stop")
        codex.wait_idle(c.pane)
        c.shot("idle after approve")
        assert (c.home.cwd / "approved.txt").exists()
        c.note("approved.txt exists in the cwd")
    finally:
        c.finish()


def sc_e_tui_approval_esc() -> None:
    c = Capture(
        "e_tui_approval_esc",
        [rs.exec_command("touch denied.txt", escalated=True), rs.text("should not be used")],
    )
    try:
        c.tui()
        c.submit("create denied.txt")
        c.pane.wait_for(codex.APPROVAL_MARKER)
        codex.wait_hook(c.home.hook_log, "PermissionRequest")
        c.shot("approval prompt open")
        c.keys("Escape")
        codex.wait_hook(c.home.hook_log, "Interrupt")
        codex.wait_rollout_record(c.home, codex.is_event("turn_aborted"))
        codex.wait_idle(c.pane)
        c.shot("after Esc")
        c.note(f"denied.txt exists: {(c.home.cwd / 'denied.txt').exists()}")
    finally:
        c.finish()


def sc_f_tui_plan_question() -> None:
    c = Capture(
        "f_tui_plan_question",
        [
            rs.request_user_input(),
            rs.text("You chose a color."),
            rs.request_user_input(),
            rs.text("should not be used"),
        ],
    )
    try:
        c.tui()
        codex.plan_mode(c.pane)
        c.note("pressed BTab (Shift+Tab) -> Plan mode")
        c.shot("Plan mode on (Shift+Tab = tmux key BTab)")
        c.submit("ask me a color")
        c.pane.wait_for("Which color do you prefer?")
        codex.wait_hook(c.home.hook_log, "PreToolUse")
        c.shot("question open (turn 1)")
        c.note("hooks so far: " + ", ".join(c.hooks_so_far()))
        c.keys("Enter")  # option 1 (Red) is preselected
        codex.wait_hook(c.home.hook_log, "Stop")
        c.pane.wait_for("You chose a color.")
        codex.wait_idle(c.pane)
        c.shot("answered, idle")
        c.submit("ask me again")
        codex.wait_hook(c.home.hook_log, "PreToolUse", count=2)
        c.pane.wait_for("Question 1/1")
        c.shot("question open (turn 2)")
        c.keys("Escape")
        codex.wait_hook(c.home.hook_log, "Interrupt")
        codex.wait_rollout_record(c.home, codex.is_event("turn_aborted"))
        codex.wait_idle(c.pane)
        c.shot("after Esc on the question")
    finally:
        c.finish()


def sc_g_tui_esc_streaming() -> None:
    words = " ".join(f"word{i}" for i in range(200))
    c = Capture("g_tui_esc_streaming", [rs.slow_text(words, seconds=40, chunks=200)])
    try:
        c.tui()
        c.submit("write a long answer")
        c.server.wait_streaming()
        c.pane.wait_for("word5")
        c.shot("model streaming")
        c.note(
            "rollout tail while streaming: "
            + " ".join(codex.rollout_event_types(codex.rollouts(c.home)[-1])[-4:])
        )
        c.keys("Escape")
        codex.wait_hook(c.home.hook_log, "Interrupt")
        codex.wait_rollout_record(c.home, codex.is_event("turn_aborted"))
        codex.wait_idle(c.pane)
        c.shot("after Esc")
        c.server.wait_for(lambda s: not s.streaming, timeout=10)
        c.note(
            "server saw the stream closed by the client: completed=%s"
            % [r.completed for r in c.server.responses_requests("main")]
        )
    finally:
        c.finish()


def sc_h_tui_long_command() -> None:
    c = Capture(
        "h_tui_long_command",
        [rs.exec_command("sleep 25", escalated=True), rs.text("Started the long command.")],
    )
    try:
        c.tui()
        c.submit("run sleep 25")
        c.pane.wait_for(codex.APPROVAL_MARKER)
        codex.wait_hook(c.home.hook_log, "PermissionRequest")
        c.keys("y")
        t_approve = time.time()
        c.pane.wait_for("You approved")
        c.shot("just approved, command running")
        codex.wait_rollout_record(
            c.home,
            lambda r: (
                r.get("type") == "response_item"
                and r["payload"].get("type") == "function_call_output"
            ),
            timeout=30,
        )
        c.note(
            f"function_call_output (yield) appeared {time.time() - t_approve:.1f}s after approval"
        )
        codex.wait_hook(c.home.hook_log, "Stop", timeout=30)
        codex.wait_idle(c.pane)
        c.shot("turn complete while sleep 25 still runs")
        c.note("hooks so far: " + ", ".join(c.hooks_so_far()))
        codex.wait_rollout_record(
            c.home,
            lambda r: (
                r.get("type") == "event_msg"
                and r["payload"].get("type") == "item_completed"
                and r["payload"].get("item", {}).get("type") == "CommandExecution"
            ),
            timeout=40,
        )
        c.note(
            "late item_completed/CommandExecution appeared %.1fs after approval"
            % (time.time() - t_approve)
        )
        c.shot("after the command finished")
    finally:
        c.finish()


def sc_i_exec_api_errors() -> None:
    c = Capture("i_exec_api_errors", [rs.http_error(500), rs.failed("scripted response.failed")])
    try:
        c.note("provider has request_max_retries = 0 and stream_max_retries = 0")
        c.exec("first prompt: HTTP 500")
        c.exec("second prompt: response.failed")
    finally:
        c.finish()


def sc_j_tui_clear() -> None:
    c = Capture("j_tui_clear", [rs.text("First thread answer."), rs.text("Second thread answer.")])
    try:
        c.tui()
        c.submit("first prompt")
        codex.wait_hook(c.home.hook_log, "Stop")
        codex.wait_idle(c.pane)
        c.submit("/clear")
        c.pane.wait_until(lambda s: "First thread answer." not in s, timeout=15)
        codex.wait_idle(c.pane)
        c.shot("after /clear")
        c.note(f"rollout files after /clear, before the next prompt: {len(codex.rollouts(c.home))}")
        c.submit("second prompt")
        codex.wait_hook(c.home.hook_log, "Stop", count=2)
        codex.wait_idle(c.pane)
        c.shot("second thread idle")
        c.note(f"rollout files now: {len(codex.rollouts(c.home))}")
    finally:
        c.finish()


def sc_k_exec_subagent() -> None:
    c = Capture(
        "k_exec_subagent",
        [
            rs.spawn_agent("Say hi from the sub-agent."),
            rs.wait_agent(timeout_ms=30000),
            rs.text("The sub-agent finished."),
        ],
        subagent_replies=[rs.text("Hi from the sub-agent.")],
    )
    try:
        c.exec("delegate to a sub-agent")
    finally:
        c.finish()


def sc_l_tui_quit_and_sigterm() -> None:
    c = Capture(
        "l_tui_quit_and_sigterm", [rs.text("Turn before /quit."), rs.text("Turn before SIGTERM.")]
    )
    try:
        c.tui()
        c.submit("hello")
        codex.wait_hook(c.home.hook_log, "Stop")
        codex.wait_idle(c.pane)
        c.submit("/quit")
        codex.wait_hook(c.home.hook_log, "SessionEnd", timeout=15)
        c.pane.wait_until(lambda s: codex.codex_pid(c.pane) is None, timeout=15)
        c.shot("after /quit (process exited)")
        c.note("hooks after /quit: " + ", ".join(c.hooks_so_far()))
        codex.kill_pane(c.pane)
        # second process: SIGTERM to the native codex
        c.pane = codex.start_tui(c.home, extra_args=[*TUI_ARGS, *c.hook_args])
        c.note("second TUI started")
        c.submit("hello again")
        codex.wait_hook(c.home.hook_log, "Stop", count=2)
        codex.wait_idle(c.pane)
        pid = codex.codex_pid(c.pane)
        os.kill(pid, signal.SIGTERM)
        c.note(f"sent SIGTERM to native codex pid {pid}")
        c.pane.wait_until(lambda s: codex.codex_pid(c.pane) is None, timeout=15)
        time.sleep(3)  # SessionEnd would have a 1 s budget; give it ample time to (not) appear
        c.shot("after SIGTERM")
        c.note(f"SessionEnd count after SIGTERM: {c.hooks_so_far().count('SessionEnd')}")
    finally:
        c.finish()


def sc_m_trust_path() -> None:
    """-c hooks trusted through [hooks.state] entries in CODEX_HOME/config.toml, no bypass flag."""
    c = Capture(
        "m_trust_path",
        [
            rs.text("exec turn without trust."),
            rs.text("exec turn with trusted hooks."),
            rs.exec_command("touch trusted.txt", escalated=True),
            rs.text("TUI turn with trusted hooks."),
        ],
    )
    try:
        c.hook_args = codex.logging_hook_args(c.home.hook_log, bypass_trust=False)
        # 1. no trust entries, no bypass: exec skips hooks silently; TUI shows the review modal
        c.exec("exec without trust (hooks must not run)")
        c.note(f"hooks after untrusted exec: {c.hooks_so_far() or 'none'}")
        c.tui(wait_ready=False)
        c.pane.wait_for(codex.HOOKS_REVIEW_MARKER)
        c.shot("untrusted -c hooks, no bypass: review modal")
        codex.kill_pane(c.pane)
        c.note("killed that TUI (modal left unanswered)")
        # 2. trust entries written into the private config.toml
        codex.write_hook_trust(c.home, codex.logging_hook_commands(c.home.hook_log))
        listed = codex.hooks_list(c.home, extra_args=c.hook_args)
        c.note(
            "app-server hooks/list trustStatus: "
            + ", ".join(f"{h['eventName']}={h['trustStatus']}" for h in listed["hooks"])
        )
        c.exec("exec with trust entries")
        c.note("hooks after trusted exec: " + ", ".join(c.hooks_so_far()))
        n = len(c.hooks_so_far())
        c.tui()
        c.shot("trusted: TUI starts straight to the composer (no modal)")
        c.submit("create trusted.txt")
        c.pane.wait_for(codex.APPROVAL_MARKER)
        codex.wait_hook(c.home.hook_log, "PermissionRequest")
        c.keys("y")
        codex.wait_hook(c.home.hook_log, "Stop", count=2)
        codex.wait_idle(c.pane)
        c.submit("/quit")
        codex.wait_hook(c.home.hook_log, "SessionEnd", count=2, timeout=15)
        c.note("TUI hooks with trust entries, no bypass: " + ", ".join(c.hooks_so_far()[n:]))
        cfg = c.home.config_toml.read_text()
        c.lines += [
            "",
            "config.toml after the runs (codex may add keys):",
            "",
            "```toml",
            cfg.strip(),
            "```",
            "",
        ]
    finally:
        c.finish()


def sc_n_tui_api_error() -> None:
    c = Capture("n_tui_api_error", [rs.http_error(500), rs.text("Recovered after the error.")])
    try:
        c.note("provider has request_max_retries = 0 and stream_max_retries = 0")
        c.tui()
        c.submit("this turn gets HTTP 500")
        codex.wait_rollout_record(c.home, codex.is_event("task_complete"))
        codex.wait_idle(c.pane)
        c.shot("after the HTTP 500")
        c.note("hooks so far: " + ", ".join(c.hooks_so_far()))
        c.submit("try again")
        codex.wait_hook(c.home.hook_log, "Stop")
        codex.wait_idle(c.pane)
        c.shot("next turn works")
    finally:
        c.finish()


def sc_o_exec_auto_compact() -> None:
    c = Capture(
        "o_exec_auto_compact", [rs.exec_command("echo one"), rs.text("done after compaction.")]
    )
    try:
        c.note(
            "-c model_auto_compact_token_limit=100 "
            "(every scripted response reports 150 total tokens)"
        )
        c.exec("run echo one", ["-c", "model_auto_compact_token_limit=100"])
    finally:
        c.finish()


def sc_p_trust_via_profile() -> None:
    """Trust entries in CODEX_HOME/agentspool.config.toml, selected with -p."""
    c = Capture(
        "p_trust_via_profile",
        [rs.text("exec via profile trust."), rs.text("TUI via profile trust.")],
    )
    try:
        c.hook_args = codex.logging_hook_args(c.home.hook_log, bypass_trust=False)
        before = c.home.config_toml.read_text()
        prof = codex.write_hook_trust_profile(
            c.home, "agentspool", codex.logging_hook_commands(c.home.hook_log)
        )
        c.note(
            "wrote 13 [hooks.state] entries to CODEX_HOME/agentspool.config.toml; "
            "args: -p agentspool"
        )
        c.exec("exec with -p agentspool", prof)
        c.note("hooks after exec: " + ", ".join(c.hooks_so_far()))
        n = len(c.hooks_so_far())
        c.tui(prof)
        c.shot("TUI with -p agentspool: no review modal")
        c.submit("hello")
        codex.wait_hook(c.home.hook_log, "Stop", count=2)
        codex.wait_idle(c.pane)
        c.submit("/quit")
        codex.wait_hook(c.home.hook_log, "SessionEnd", count=2, timeout=15)
        c.note("TUI hooks: " + ", ".join(c.hooks_so_far()[n:]))
        c.note(f"config.toml unchanged: {c.home.config_toml.read_text() == before}")
        prof_text = (c.home.codex_home / "agentspool.config.toml").read_text()
        c.lines += [
            "",
            "agentspool.config.toml after the runs (tail; codex added its TUI keys):",
            "",
            "```toml",
            prof_text.strip()[-400:],
            "```",
            "",
        ]
    finally:
        c.finish()


SCENARIOS: dict[str, Callable[[], None]] = {
    "a": sc_a_exec_plain,
    "b": sc_b_exec_commands,
    "c": sc_c_tui_plain,
    "d": sc_d_tui_approve,
    "e": sc_e_tui_approval_esc,
    "f": sc_f_tui_plan_question,
    "g": sc_g_tui_esc_streaming,
    "h": sc_h_tui_long_command,
    "i": sc_i_exec_api_errors,
    "j": sc_j_tui_clear,
    "k": sc_k_exec_subagent,
    "l": sc_l_tui_quit_and_sigterm,
    "m": sc_m_trust_path,
    "n": sc_n_tui_api_error,
    "o": sc_o_exec_auto_compact,
    "p": sc_p_trust_via_profile,
}


def main(argv: list[str]) -> int:
    names = argv or list(SCENARIOS)
    failed = []
    for n in names:
        t = time.time()
        try:
            SCENARIOS[n]()
            print(f"{n}: ok ({time.time() - t:.0f}s)", flush=True)
        except Exception as e:  # noqa: BLE001
            failed.append(n)
            print(f"{n}: FAILED {type(e).__name__}: {e}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
