"""Record real Kimi Code 2.1.0 captures against the scripted chat-completions server.

    .venv/bin/python tests/live/captures/kimi-code/record.py [scenario ...]

Each scenario writes ``<this dir>/<scenario>/`` (``harness/recording.py``): ``hooks.jsonl``
(every event armed as ``[[hooks]]`` in ``config.toml``), and at each checkpoint
(``at-<checkpoint>/``) and at the end (``chats/``) ``session_index.jsonl`` and each
session's ``state.json`` and main ``wire.jsonl`` under ``sessions/<work dir key>/<id>/``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/live

from harness import chat_server as cs  # noqa: E402
from harness import kimi, recording  # noqa: E402
from harness.recording import ServedRecording  # noqa: E402


def shell(command: str) -> cs.Reply:
    return cs.tool_call(kimi.SHELL_TOOL, {"command": command})


class Capture(ServedRecording):
    prefix = "kimicap"

    def __init__(self, name: str, replies: list[cs.Reply]) -> None:
        super().__init__(HERE / name, replies)

    def start(self) -> None:
        self.home = kimi.make_home(self.root, self.srv.base_url)
        self.home.config_path.write_text(kimi.logging_hooks_toml(self.home.hook_log_dir))
        self.pane = kimi.start_tui(self.home)
        self.note("TUI ready (folder trusted): kimi")

    def files(self, *, final: bool) -> dict[str, Path]:
        base = self.home.kimi_dir
        found = {"session_index.jsonl": base / "session_index.jsonl"}
        for path in base.glob("sessions/*/*/state.json"):
            found[str(path.relative_to(base))] = path
        for path in base.glob("sessions/*/*/agents/main/wire.jsonl"):
            found[str(path.relative_to(base))] = path
        return found

    def submit(self, text: str) -> None:
        kimi.submit(self.pane, text)
        self.note(f"typed {text!r} + Enter")

    def wait_ready(self) -> None:
        self.pane.wait_until(kimi.is_ready, timeout=60)


def tui_session() -> None:
    """plain → approve → deny (Esc) → question → Esc mid-stream → /clear → /exit."""
    replies = [
        cs.text("Hello back."),
        shell("echo hi > out.txt"),
        cs.text("The file was written."),
        shell("echo no > denied.txt"),
        cs.text("Not run, then."),
        cs.tool_call(kimi.QUESTION_TOOL, kimi.QUESTION, preface="Let me ask."),
        cs.text("Red it is."),
        cs.slow_text("line one\nline two\nline three\n" * 4, seconds=30, chunks=60),
        cs.text("After the clear."),
    ]
    with Capture("tui-session", replies) as c:
        c.submit("hello there")
        c.wait_hook("Stop")
        c.wait_ready()
        c.checkpoint("plain-idle")

        c.submit("please run echo hi")
        c.pane.wait_for(kimi.APPROVAL_MARKER, 60)
        c.wait_hook("PermissionRequest")
        c.checkpoint("approval-open")
        kimi.answer(c.pane, ["Enter"], kimi.APPROVAL_MARKER)
        c.note("approved (Enter on 1. Approve once)")
        c.wait_hook("Stop", 2)
        c.wait_ready()
        c.checkpoint("approved-idle")

        c.submit("please run echo no")
        c.pane.wait_for(kimi.APPROVAL_MARKER, 60)
        c.wait_hook("PermissionRequest", 2)
        c.checkpoint("deny-open")
        kimi.answer(c.pane, ["Escape"], kimi.APPROVAL_MARKER)
        c.note("denied (Esc)")
        c.wait_hook("Stop", 3)
        c.wait_ready()
        c.checkpoint("denied-idle")

        c.submit("ask me a question")
        c.pane.wait_for(kimi.QUESTION_MARKER, 60)
        c.wait_hook("PreToolUse", 3)
        c.checkpoint("question-open")
        c.press("Enter")
        c.pane.wait_for("Submit", 20)
        c.checkpoint("question-review")
        kimi.answer(c.pane, ["Enter"], "Submit")
        c.note("answered (Enter on Red, Enter on Submit)")
        c.wait_hook("Stop", 4)
        c.wait_ready()
        c.checkpoint("answered-idle")

        c.submit("stream slowly")
        c.pane.wait_for("line two", 60)
        c.checkpoint("streaming")
        c.press("Escape")
        c.wait_hook("Interrupt")
        c.wait_ready()
        c.checkpoint("interrupted-idle")

        c.submit("/clear")
        c.wait_hook("SessionEnd")
        c.wait_ready()
        c.checkpoint("cleared")
        c.submit("after clear")
        c.wait_hook("Stop", 5)
        c.wait_ready()
        c.checkpoint("after-clear-idle")

        c.submit("/exit")
        c.wait_hook("SessionEnd", 2)
        kimi.wait_exited(c.pane)
        time.sleep(1.0)
        c.checkpoint("exit")


SCENARIOS = {"tui-session": tui_session}


if __name__ == "__main__":
    sys.exit(recording.record_scenarios(SCENARIOS, sys.argv[1:]))
