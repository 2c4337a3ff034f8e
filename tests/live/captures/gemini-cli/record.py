"""Record real Gemini CLI 0.61.0 captures against the scripted Gemini server.

    .venv/bin/python tests/live/captures/gemini-cli/record.py [scenario ...]

Each scenario writes ``<this dir>/<scenario>/``:

* ``chats/<file>``          every session file under ``.gemini/tmp/<project>/chats/`` as it
  was at the end (or, for a file the CLI deleted, at the last checkpoint that saw it)
* ``chats-at-<checkpoint>/`` the session files at a checkpoint, where the notes say so
* ``hooks.jsonl``           one line per hook run: ``{event, time, ppid, payload}`` (all 11
  events armed in the user settings; model payloads reduced to their keys)
* ``screen-<checkpoint>.txt`` the TUI screen at each checkpoint
* ``requests.jsonl``        digest of every request the server saw
* ``notes.md``              the timeline (the private root replaced by ``$ROOT``)
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/live

from harness import gemini, hooklog, recording, tmux  # noqa: E402
from harness import gemini_server as gs  # noqa: E402


class Capture(recording.Recording):
    def __init__(
        self, name: str, replies: list[gs.Reply], *, settings: dict[str, Any] | None = None
    ):
        super().__init__(name, HERE / name)
        self.replies = replies
        self.settings = settings or {}
        self.seen: dict[str, bytes] = {}

    def __enter__(self) -> Capture:
        super().__enter__()
        self.root = Path(tempfile.mkdtemp(prefix=f"gemcap-{self.name}-"))
        self.srv = gs.GeminiServer(self.replies).start()
        self.home = gemini.make_home(self.root, self.srv.base_url)
        settings = {**gemini.BASE_SETTINGS, **self.settings}
        settings["hooks"] = gemini.logging_hooks(self.home.hook_log_dir)
        self.home.write_settings(settings)
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.failed(exc)
        self.keep_chats()
        self.home.cleanup(keep=True)
        self.srv.dump(str(self.out / "requests.jsonl"))
        self.srv.stop()
        log = self.home.hook_log_dir / "hooks.jsonl"
        if log.exists():
            (self.out / "hooks.jsonl").write_text(self.private(log.read_text()))
        self.summarize()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- evidence
    def _chat_files(self) -> dict[str, Path]:
        """The session files, and each subagent's under ``<parent session id>/``."""
        found = {path.name: path for path in self.home.chat_files()}
        for path in self.home.subagent_files():
            found[f"{path.parent.name}/{path.name}"] = path
        return found

    def keep_chats(self, checkpoint: str = "") -> None:
        """Remember the session files as they are now; at a named checkpoint also copy them."""
        for name, path in self._chat_files().items():
            with contextlib.suppress(FileNotFoundError):
                self.seen[name] = path.read_bytes()
        if checkpoint:
            target = self.out / f"chats-at-{checkpoint}"
            for name, path in self._chat_files().items():
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                with contextlib.suppress(FileNotFoundError):
                    shutil.copy(path, target / name)
            names = sorted(str(p.relative_to(target)) for p in target.rglob("*.jsonl"))
            self.note(f"session files copied at `{checkpoint}`: {names}")
        chats = self.out / "chats"
        for name, data in self.seen.items():
            (chats / name).parent.mkdir(parents=True, exist_ok=True)
            (chats / name).write_bytes(data)

    def summarize(self) -> None:
        present = sorted(self._chat_files()) if self.home.root.exists() else []
        kept = sorted(self.seen)
        gone = [n for n in kept if n not in present]
        events = [r["event"] for r in hooklog.read_hook_log(self.home.hook_log_dir)]
        self.write_notes(
            [
                "Hooks fired, in order: " + ", ".join(events),
                "",
                "Requests: " + "; ".join(self.srv.summary()),
                "",
                f"Session files kept: {kept}; deleted by the CLI by the end: {gone}",
                "",
            ]
        )

    # -- driving
    def start(self, *args: str) -> None:
        self.pane = gemini.start_tui(self.home, extra_args=args)
        self.note(f"TUI ready: gemini {' '.join(args)}")

    def submit(self, text: str) -> None:
        assert self.pane is not None
        gemini.submit(self.pane, text)
        self.note(f"typed {text!r} + Enter")

    def wait_screen(self, what: str | Callable[[str], bool], timeout: float = 60.0) -> str:
        assert self.pane is not None
        if callable(what):
            return self.pane.wait_until(what, timeout)
        return self.pane.wait_for(what, timeout)

    def wait_hook(self, event: str, count: int = 1, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            n = sum(r["event"] == event for r in hooklog.read_hook_log(self.home.hook_log_dir))
            if n >= count:
                self.note(f"hook {event} x{n}")
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"hook {event} x{count} never fired")
            time.sleep(0.1)

    def wait_idle(self, timeout: float = 60.0) -> None:
        self.wait_screen(gemini.is_idle_screen, timeout)

    def quit(self) -> None:
        self.submit("/quit")
        self.wait_screen(gemini.QUIT_MARKER)
        assert self.pane is not None
        gemini.wait_exited(self.pane)
        time.sleep(1.0)  # hooks that outlive the CLI (SessionEnd) land
        self.note("the CLI exited")


def tui_approve() -> None:
    answer = gs.text("The file was created.")
    answer.parts.insert(0, {"text": "**Checking the result**\nThe touch ran.", "thought": True})
    with Capture("tui-approve", [gs.shell("touch approved.txt"), answer]) as c:
        c.start()
        c.submit("please touch approved.txt")
        c.wait_screen(gemini.APPROVAL_MARKER)
        c.wait_hook("Notification")
        time.sleep(1.0)
        c.shot("dialog")
        c.keep_chats("dialog")
        c.press("Enter")
        c.wait_hook("AfterAgent")
        c.wait_idle()
        c.shot("idle")
        c.quit()
        c.shot("quit")


def tui_subagent() -> None:
    """``invoke_agent`` (the ``generalist`` subagent): its own chat file under
    ``chats/<session id>/``; its reply (``complete_task``) held while the files are kept."""
    finish = gs.function_call(
        "complete_task", {"result": {"response": "SUBDONE from the subagent"}}
    )
    finish.gate = threading.Event()
    replies = [
        gs.function_call("invoke_agent", {"agent_name": "generalist", "prompt": "Say SUBDONE"}),
        finish,
        gs.text("Parent finished after the subagent."),
    ]
    with Capture("tui-subagent", replies) as c:
        c.start()
        c.submit("delegate to a subagent")
        c.srv.wait_for(lambda s: len(s.main_requests()) >= 2 and bool(s.streaming), 60.0)
        time.sleep(1.0)
        c.shot("subagent-running")
        c.keep_chats("subagent-running")
        finish.gate.set()
        c.wait_hook("AfterAgent")
        c.wait_screen("Parent finished after the subagent.")
        c.wait_idle()
        c.shot("idle")
        c.quit()


def tui_deny() -> None:
    with Capture("tui-deny", [gs.shell("touch denied.txt"), gs.text("should not be used")]) as c:
        c.start()
        c.submit("please touch denied.txt")
        c.wait_screen(gemini.APPROVAL_MARKER)
        c.wait_hook("Notification")
        time.sleep(1.0)
        c.shot("dialog")
        c.press("Down", "Down")
        time.sleep(0.5)
        c.shot("no-selected")
        c.press("Enter")
        time.sleep(3.0)
        c.shot("after-deny")
        c.keep_chats("after-deny")
        c.wait_idle()
        c.quit()


def tui_approval_esc() -> None:
    with Capture(
        "tui-approval-esc", [gs.shell("touch never.txt"), gs.text("should not be used")]
    ) as c:
        c.start()
        c.submit("please touch never.txt")
        c.wait_screen(gemini.APPROVAL_MARKER)
        c.wait_hook("Notification")
        time.sleep(1.0)
        c.press("Escape")
        time.sleep(3.0)
        c.shot("after-esc")
        c.keep_chats("after-esc")
        c.wait_idle()
        c.quit()


def tui_esc_streaming() -> None:
    words = " ".join(f"word{i}" for i in range(200))
    with Capture("tui-esc-streaming", [gs.slow_text(words, seconds=40, chunks=200)]) as c:
        c.start()
        c.submit("write a long answer")
        c.wait_screen("word5")
        c.shot("streaming")
        c.keep_chats("streaming")
        c.press("Escape")
        time.sleep(3.0)
        c.shot("after-esc")
        c.wait_idle()
        c.quit()


def tui_clear() -> None:
    with Capture("tui-clear", [gs.text("First answer."), gs.text("Second answer.")]) as c:
        c.start()
        c.submit("first prompt")
        c.wait_hook("AfterAgent")
        c.wait_idle()
        c.keep_chats("first-idle")
        c.submit("/clear")
        c.wait_hook("SessionStart", 2)
        time.sleep(1.0)
        c.shot("after-clear")
        c.keep_chats("after-clear")
        c.submit("second prompt")
        c.wait_hook("AfterAgent", 2)
        c.wait_idle()
        c.keep_chats("second-idle")
        c.submit("/clear")
        c.wait_hook("SessionStart", 3)
        time.sleep(1.0)
        c.keep_chats("cleared-again")
        c.quit()


def print_text() -> None:
    with Capture("print-text", [gs.text("Hello from print mode.")]) as c:
        proc = gemini.run_print(c.home, "say hello")
        c.note(f"gemini -p exited {proc.returncode}; stdout {proc.stdout!r}")


QUESTION = {
    "questions": [
        {
            "question": "Which color do you prefer?",
            "header": "Color",
            "type": "choice",
            "options": [
                {"label": "Red", "description": "warm"},
                {"label": "Blue", "description": "cool"},
            ],
        }
    ]
}


def tui_question() -> None:
    replies = [
        gs.function_call("ask_user", QUESTION),
        gs.text("You chose a color."),
        gs.function_call("ask_user", QUESTION),
        gs.text("should not be used"),
    ]
    with Capture("tui-question", replies) as c:
        c.start()
        c.submit("ask me a color")
        c.wait_screen("Which color do you prefer?")
        c.wait_hook("Notification")
        time.sleep(1.0)
        c.shot("question")
        c.keep_chats("question")
        c.press("Enter")
        time.sleep(1.0)
        c.shot("after-enter")
        c.wait_hook("AfterAgent")
        c.wait_idle()
        c.shot("answered")
        c.submit("ask me again")
        c.wait_hook("Notification", 2)
        time.sleep(1.0)
        c.shot("question-again")
        c.press("Escape")
        time.sleep(3.0)
        c.shot("after-esc")
        c.keep_chats("after-esc")
        c.wait_idle()
        c.quit()


def tui_history_esc() -> None:
    replies = [gs.text("First answer."), gs.text("Second answer."), gs.shell("touch never.txt")]
    with Capture("tui-history-esc", replies) as c:
        c.start()
        c.submit("first prompt")
        c.wait_hook("AfterAgent")
        c.wait_idle()
        c.submit("second prompt")
        c.wait_hook("AfterAgent", 2)
        c.wait_idle()
        c.submit("please touch never.txt")
        c.wait_screen(gemini.APPROVAL_MARKER)
        c.wait_hook("Notification")
        time.sleep(1.0)
        c.keep_chats("dialog")
        c.press("Escape")
        time.sleep(3.0)
        c.shot("after-esc")
        c.keep_chats("after-esc")
        c.wait_idle()
        c.quit()


def tui_rewind() -> None:
    replies = [gs.text("First answer."), gs.text("Second answer."), gs.text("Third answer.")]
    with Capture("tui-rewind", replies) as c:
        c.start()
        c.submit("first prompt")
        c.wait_hook("AfterAgent")
        c.wait_idle()
        c.submit("second prompt")
        c.wait_hook("AfterAgent", 2)
        c.wait_idle()
        c.submit("/rewind")
        c.wait_screen("Stay at current position")
        time.sleep(1.0)
        c.shot("rewind-menu")
        c.press("Up")
        time.sleep(1.0)
        c.shot("rewind-second-selected")
        c.press("Enter")
        time.sleep(2.0)
        c.shot("rewind-picked")
        c.press("Enter")
        time.sleep(2.0)
        c.shot("rewind-confirmed")
        c.note("the rewound prompt is put back in the composer: erased")
        for _ in range(len("second prompt")):
            c.press("BSpace")
        c.keep_chats("rewound")
        c.wait_idle()
        c.submit("third prompt")
        c.wait_hook("AfterAgent", 3)
        c.wait_idle()
        c.shot("third-idle")
        c.quit()


def tui_compress() -> None:
    long = " ".join(f"line{i} of a long answer to be summarised." for i in range(200))
    big = {**gs.USAGE, "promptTokenCount": 200000, "totalTokenCount": 200015}
    replies = [gs.text(long), gs.text(long), gs.text("Third answer.")]
    for reply in replies[:2]:
        reply.usage = big
    with Capture("tui-compress", replies) as c:
        c.start()
        c.submit("first prompt")
        c.wait_hook("AfterAgent")
        c.wait_idle()
        c.submit("second prompt")
        c.wait_hook("AfterAgent", 2)
        c.wait_idle()
        c.submit("/compress")
        time.sleep(4.0)
        c.shot("compressed")
        c.keep_chats("compressed")
        c.wait_idle()
        c.submit("third prompt")
        c.wait_hook("AfterAgent", 3)
        c.wait_idle()
        c.quit()


def tui_api_error() -> None:
    replies = [gs.http_error(400, "scripted bad request"), gs.text("Recovered after the error.")]
    with Capture("tui-api-error", replies) as c:
        c.start()
        c.submit("this turn gets HTTP 400")
        time.sleep(6.0)
        c.shot("after-error")
        c.keep_chats("after-error")
        c.wait_idle()
        c.submit("try again")
        c.wait_hook("AfterAgent", 1)
        c.wait_idle()
        c.shot("recovered")
        c.quit()


def tui_long_command() -> None:
    replies = [gs.shell("sleep 8 && echo done > done.txt"), gs.text("The command finished.")]
    with Capture("tui-long-command", replies) as c:
        c.start()
        c.submit("run the long command")
        c.wait_screen(gemini.APPROVAL_MARKER)
        c.wait_hook("Notification")
        time.sleep(1.0)
        c.press("Enter")
        time.sleep(3.0)
        c.shot("running")
        c.keep_chats("running")
        assert c.pane is not None
        tree = [
            (p, Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ")[:120].decode())
            for p in tmux.descendants(c.pane.pane_pid())
            if Path(f"/proc/{p}/cmdline").exists()
        ]
        c.note(f"processes under the pane while it runs: {tree}")
        c.wait_hook("AfterAgent")
        c.wait_idle()
        c.quit()


SCENARIOS = {
    "tui-approve": tui_approve,
    "tui-deny": tui_deny,
    "tui-approval-esc": tui_approval_esc,
    "tui-esc-streaming": tui_esc_streaming,
    "tui-clear": tui_clear,
    "print-text": print_text,
    "tui-question": tui_question,
    "tui-history-esc": tui_history_esc,
    "tui-rewind": tui_rewind,
    "tui-compress": tui_compress,
    "tui-api-error": tui_api_error,
    "tui-long-command": tui_long_command,
    "tui-subagent": tui_subagent,
}


if __name__ == "__main__":
    sys.exit(recording.record_scenarios(SCENARIOS, sys.argv[1:]))
