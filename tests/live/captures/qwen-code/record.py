"""Record real Qwen Code 0.24.4 captures against the scripted chat-completions server.

    .venv/bin/python tests/live/captures/qwen-code/record.py [scenario ...]

Each scenario writes ``<this dir>/<scenario>/``:

* ``chats/<session id>.jsonl``   every chat file as it was at the end
* ``at-<checkpoint>/``           the chat files and ``sessions/<pid>.json`` at a checkpoint
* ``hooks.jsonl``                one line per hook run: ``{event, time, ppid, payload}``; the
  hooks are armed the way ``setup`` arms a run — in the file ``QWEN_CODE_SYSTEM_DEFAULTS_PATH``
  names, not the user's settings
* ``screen-<checkpoint>.txt``    the TUI screen at each checkpoint
* ``requests.jsonl``             digest of every request the server saw
* ``notes.md``                   the timeline (the private root replaced by ``$ROOT``)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/live

from harness import chat_server as cs  # noqa: E402
from harness import qwen, recording  # noqa: E402
from harness.recording import ServedRecording  # noqa: E402


def shell(command: str) -> cs.Reply:
    return cs.tool_call(qwen.SHELL_TOOL, {"command": command, "description": "Run a command"})


def question() -> cs.Reply:
    return cs.tool_call(qwen.QUESTION_TOOL, qwen.QUESTION, preface="Let me ask.")


class Capture(ServedRecording):
    prefix = "qwencap"

    def __init__(self, name: str, replies: list[cs.Reply]) -> None:
        super().__init__(HERE / name, replies, side=qwen.is_side_query)

    def start(self) -> None:
        self.home = qwen.make_home(self.root, self.srv.base_url)
        defaults = self.root / "system-defaults.json"
        hooks = qwen.logging_hooks(self.home.hook_log_dir, qwen.HOOK_EVENTS)
        defaults.write_text(json.dumps({"hooks": hooks}, indent=2))
        self.pane = qwen.start_tui(
            self.home, extra_env={"QWEN_CODE_SYSTEM_DEFAULTS_PATH": str(defaults)}
        )
        self.note("TUI ready: qwen --approval-mode default")

    def files(self, *, final: bool) -> dict[str, Path]:
        """The chat files (and, at a checkpoint, the status files)."""
        found = {path.name: path for path in self.home.chat_files()}
        if not final:
            found |= {f"session-{p.name}": p for p in self.home.status_files()}
        return found

    def submit(self, text: str) -> None:
        qwen.submit(self.pane, text)
        self.note(f"typed {text!r} + Enter")

    def idle_count(self) -> int:
        return self.count("Notification", notification_type="idle_prompt")

    def wait_idle(self, before: int) -> None:
        """Until a new ``idle_prompt`` fired (the CLI's own sign its turn is over)."""
        self.wait_hook("Notification", before + 1, notification_type="idle_prompt")
        self.pane.wait_until(lambda s: qwen.composer_text(s) == "", timeout=30)


def tui_session() -> None:
    """plain → approve → deny (Esc) → question → Esc mid-stream → /clear → /quit."""
    replies = [
        cs.text("Hello back."),
        shell("echo hi > out.txt"),
        cs.text("The file was written."),
        shell("echo no > denied.txt"),
        question(),
        cs.text("Red it is."),
        cs.slow_text("line one\nline two\nline three\n" * 4, seconds=30, chunks=60),
        cs.text("After the clear."),
    ]
    with Capture("tui-session", replies) as c:
        c.submit("hello there")
        c.wait_idle(0)
        c.checkpoint("plain-idle")

        idle = c.idle_count()
        c.submit("please run echo hi")
        c.pane.wait_for(qwen.APPROVAL_MARKER, 60)
        c.wait_hook("Notification", notification_type="permission_prompt")
        c.checkpoint("approval-open")
        qwen.answer(c.pane, ["Enter"], qwen.APPROVAL_MARKER)
        c.note("approved (Enter on 1. Yes, allow once)")
        c.wait_idle(idle)
        c.checkpoint("approved-idle")

        idle = c.idle_count()
        c.submit("please run echo no")
        c.pane.wait_for(qwen.APPROVAL_MARKER, 60)
        c.wait_hook("Notification", 2, notification_type="permission_prompt")
        c.checkpoint("deny-open")
        qwen.answer(c.pane, ["Escape"], qwen.APPROVAL_MARKER)
        c.note("denied (Esc)")
        c.wait_idle(idle)
        c.checkpoint("denied-idle")

        idle = c.idle_count()
        c.submit("ask me a question")
        c.pane.wait_for(qwen.QUESTION_MARKER, 60)
        c.wait_hook("Notification", 3, notification_type="permission_prompt")
        c.checkpoint("question-open")
        qwen.answer(c.pane, ["Enter"], "Enter: Select")
        c.note("answered (Enter on 1. Red)")
        c.wait_idle(idle)
        c.checkpoint("answered-idle")

        idle = c.idle_count()
        c.submit("stream slowly")
        c.pane.wait_for("line two", 60)
        c.checkpoint("streaming")
        c.press("Escape")
        c.wait_hook("Notification", idle + 1, notification_type="idle_prompt")
        c.pane.send_keys("C-u")  # the interrupted prompt comes back into the input box
        c.pane.wait_until(lambda s: qwen.composer_text(s) == "", timeout=30)
        c.checkpoint("interrupted-idle")

        c.submit("/clear")
        c.wait_hook("SessionStart", source="clear")
        c.checkpoint("cleared")
        idle = c.idle_count()
        c.submit("after clear")
        c.wait_idle(idle)
        c.checkpoint("after-clear-idle")

        c.submit("/quit")
        c.wait_hook("SessionEnd", reason="prompt_input_exit")
        qwen.wait_exited(c.pane)
        time.sleep(1.0)
        c.checkpoint("quit")


SCENARIOS = {"tui-session": tui_session}


if __name__ == "__main__":
    sys.exit(recording.record_scenarios(SCENARIOS, sys.argv[1:]))
