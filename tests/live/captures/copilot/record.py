"""Record real GitHub Copilot CLI 1.0.102 captures against the scripted chat server.

    .venv/bin/python tests/live/captures/copilot/record.py [scenario ...]

Each scenario writes ``<this dir>/<scenario>/``:

* ``session-state/<id>/events.jsonl``  every session's transcript as it was at the end
* ``at-<checkpoint>/``  the transcripts and ``open-sessions-state.json`` at a checkpoint
* ``hooks.jsonl``       one line per hook run (``harness/hooklog.py``: ``{event, time,
  pid, ppid, payload}``; all 13 camelCase events, armed through ``--plugin-dir``)
* ``screen-<checkpoint>.txt``  the TUI screen at each checkpoint
* ``requests.jsonl``    digest of every request the server saw
* ``notes.md``          the timeline (the private root replaced by ``$ROOT``)
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/live

from harness import chat_server as cs  # noqa: E402
from harness import copilot, hooklog, recording, tmux  # noqa: E402

BASH = {"command": "echo hi > out.txt", "description": "Run a mock command"}
ASK = {
    "message": "Which color do you prefer?",
    "requestedSchema": {
        "properties": {"color": {"type": "string", "enum": ["Red", "Blue"]}},
        "required": ["color"],
    },
}


class Capture(recording.Recording):
    def __init__(self, name: str, replies: list[cs.Reply]) -> None:
        super().__init__(name, HERE / name)
        self.replies = replies

    def __enter__(self) -> Capture:
        super().__enter__()
        self.root = Path(tempfile.mkdtemp(prefix=f"copcap-{self.name}-"))
        self.srv = cs.ChatServer(self.replies).start()
        self.home = copilot.make_home(self.srv.base_url, self.root)
        self.log = self.root / "hooks.jsonl"
        self.plugin = copilot.write_logging_plugin(self.home, self.log)
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.failed(exc)
        self.home.cleanup(keep=True)
        self.keep("session-state")
        self.srv.dump(str(self.out / "requests.jsonl"))
        self.srv.stop()
        hooks = self.log.read_text() if self.log.exists() else ""  # none: nothing armed
        (self.out / "hooks.jsonl").write_text(self.private(hooks))
        events = [h["event"] for h in hooklog.read_hook_log(self.log)]
        requests = [
            f"{r.seq}:{r.kind} -> {r.reply_label}" for r in self.srv.requests if r.kind != "other"
        ]
        self.write_notes(
            [
                f"Hooks fired, in order: {', '.join(events)}",
                "",
                f"Requests: {'; '.join(requests)}",
                "",
            ]
        )
        shutil.rmtree(self.root, ignore_errors=True)

    def keep(self, folder: str) -> None:
        """The transcripts (and, at a checkpoint, the open-sessions file) as they are now."""
        for path in self.home.transcripts():
            target = self.out / folder / path.parent.name / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        state = self.home.copilot_dir / "open-sessions-state.json"
        if folder != "session-state" and state.exists():
            shutil.copyfile(state, self.out / folder / state.name)

    def checkpoint(self, name: str) -> None:
        time.sleep(0.5)  # the transcript writer's last line of the moment
        self.keep(f"at-{name}")
        self.shot(name)

    def hooks(self, event: str) -> int:
        return sum(1 for h in hooklog.read_hook_log(self.log) if h["event"] == event)

    def wait_hook(self, event: str, count: int = 1, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while self.hooks(event) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"no {count}x {event} after {timeout}s")
            time.sleep(0.1)
        self.note(f"hook {event} x{count}")

    def start(self, *, armed: bool = True) -> tmux.Pane:
        """The TUI; ``armed=False``: as a person starts it, no plugin, no hook at all."""
        args = ["--plugin-dir", str(self.plugin)] if armed else []
        self.pane = copilot.start_tui(self.home, extra_args=args)
        self.note("TUI ready" + ("" if armed else " (no hooks)"))
        return self.pane

    def files(self, checkpoint: str) -> None:
        """``files-<checkpoint>.txt``: every session dir's entries (pids written ``<pid>``),
        and which process the pid of an ``inuse.<pid>.lock`` is."""
        assert self.pane is not None
        loader = copilot.pid(self.pane)
        lines = []
        for folder in self.home.session_dirs():
            for entry in sorted(folder.iterdir()):
                name = entry.name
                if name.startswith("inuse."):
                    pid = int(name.split(".")[1])
                    name = name.replace(str(pid), "<pid>")
                    parent = _parent(pid)
                    what = "child of the loader tmux runs" if parent == loader else f"ppid {parent}"
                    content = entry.read_text().replace(str(pid), "<pid>")
                    lines.append(f"{folder.name}/{name}  content={content!r}  ({what})")
                else:
                    lines.append(f"{folder.name}/{name}")
        text = "\n".join(lines) + "\n"
        (self.out / f"files-{checkpoint}.txt").write_text(text.replace(str(loader), "<loader>"))

    def submit(self, text: str) -> None:
        assert self.pane is not None
        copilot.submit(self.pane, text)
        self.note(f"typed {text!r} + Enter")

    def wait_screen(self, predicate: Callable[[str], bool], what: str) -> None:
        assert self.pane is not None
        self.pane.wait_until(predicate, 60)
        self.note(f"screen shows {what}")

    def exit(self) -> None:
        assert self.pane is not None
        self.submit("/exit")
        self.wait_hook("sessionEnd", self.hooks("sessionEnd") + 1)
        copilot.wait_exited(self.pane)
        self.note("the CLI exited")


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _approval(name: str, key: str, after: Callable[[Capture], None]) -> None:
    with Capture(name, [cs.tool_call("bash", BASH), cs.text("Done: wrote out.txt.")]) as cap:
        cap.start()
        cap.submit("please write out.txt")
        cap.wait_hook("notification")
        cap.wait_screen(lambda s: copilot.PERMISSION_MARKER in s, "the permission dialog")
        cap.checkpoint("dialog")
        time.sleep(0.5)  # a confirm key pressed the moment a dialog draws can be dropped
        cap.press(key)
        after(cap)
        cap.checkpoint("idle")
        cap.exit()
        cap.checkpoint("exit")


def tui_approve() -> None:
    def after(cap: Capture) -> None:
        cap.wait_hook("agentStop")

    _approval("tui-approve", "Enter", after)


def tui_deny_esc() -> None:
    def after(cap: Capture) -> None:
        cap.wait_screen(lambda s: copilot.PERMISSION_MARKER not in s, "the dialog gone")
        cap.wait_screen(lambda s: copilot.BUSY_MARKER not in s, "the turn over")

    _approval("tui-deny-esc", "Escape", after)


def tui_question() -> None:
    with Capture("tui-question", [cs.tool_call("ask_user", ASK), cs.text("Red it is.")]) as cap:
        cap.start()
        cap.submit("ask me a color")
        cap.wait_hook("notification")
        cap.wait_screen(lambda s: "Which color do you prefer?" in s, "the question form")
        cap.checkpoint("dialog")
        time.sleep(0.5)
        cap.press("Enter")
        cap.wait_hook("agentStop")
        cap.checkpoint("idle")
        cap.exit()


def tui_interrupt() -> None:
    slow = cs.slow_text("line one\nline two\nline three\n" * 10, seconds=30, chunks=60)
    with Capture("tui-interrupt", [slow, cs.text("Back again.")]) as cap:
        cap.start()
        cap.submit("tell me a long story")
        cap.srv.wait_streaming(1)
        cap.wait_screen(lambda s: "line one" in s, "streamed text")
        cap.checkpoint("streaming")
        cap.press("Escape")
        time.sleep(0.3)
        cap.press("Escape")
        cap.wait_screen(lambda s: copilot.BUSY_MARKER not in s, "the turn over")
        cap.checkpoint("interrupted")
        cap.submit("are you there")
        cap.wait_hook("agentStop")
        cap.checkpoint("idle")
        cap.exit()


def tui_clear() -> None:
    with Capture("tui-clear", [cs.text("First answer."), cs.text("Second answer.")]) as cap:
        cap.start()
        cap.submit("first prompt")
        cap.wait_hook("agentStop")
        cap.checkpoint("first-idle")
        cap.submit("/clear")
        cap.wait_hook("sessionEnd")
        cap.checkpoint("cleared")
        cap.submit("second prompt")
        cap.wait_hook("agentStop", 2)
        cap.checkpoint("second-idle")
        cap.exit()


def tui_unarmed() -> None:
    """Started by hand with no hook armed: what Copilot keeps on its own (session dirs,
    their ``inuse.<pid>.lock``) through a prompt, an approval, ``/clear`` and ``/exit``."""
    replies = [cs.tool_call("bash", BASH), cs.text("Done: wrote out.txt."), cs.text("Fresh.")]
    with Capture("tui-unarmed", replies) as cap:
        cap.start(armed=False)
        time.sleep(1.0)
        cap.files("started")
        cap.submit("please write out.txt")
        cap.wait_screen(lambda s: copilot.PERMISSION_MARKER in s, "the permission dialog")
        cap.checkpoint("dialog")
        cap.files("dialog")
        time.sleep(0.5)
        cap.press("Enter")
        cap.wait_screen(lambda s: "Done: wrote out.txt." in s, "the answer")
        cap.wait_screen(lambda s: copilot.BUSY_MARKER not in s, "the turn over")
        cap.checkpoint("idle")
        cap.submit("/clear")
        cap.wait_screen(lambda s: "Started a fresh session" in s, "the fresh session")
        time.sleep(1.0)
        cap.files("cleared")
        cap.submit("second prompt")
        cap.wait_screen(lambda s: "Fresh." in s, "the second answer")
        cap.checkpoint("second-idle")
        cap.files("second-idle")
        cap.submit("/exit")
        copilot.wait_exited(cap.pane)
        cap.note("the CLI exited")
        time.sleep(0.5)
        lines = [str(p.relative_to(cap.home.copilot_dir)) for p in cap.home.session_dirs()]
        for folder in cap.home.session_dirs():
            lines += [f"{folder.name}/{e.name}" for e in sorted(folder.iterdir())]
        (cap.out / "files-exit.txt").write_text("\n".join(lines) + "\n")


def print_denied() -> None:
    with Capture("print-denied", [cs.tool_call("bash", BASH), cs.text("Could not run it.")]) as cap:
        done = copilot.run_print(
            cap.home,
            "please write out.txt",
            extra_args=["--plugin-dir", str(cap.plugin), "--output-format", "json"],
        )
        cap.note(f"copilot -p exited {done.returncode}")
        (cap.out / "stdout.jsonl").write_text(cap.private(done.stdout))


SCENARIOS = {
    "tui-approve": tui_approve,
    "tui-deny-esc": tui_deny_esc,
    "tui-question": tui_question,
    "tui-interrupt": tui_interrupt,
    "tui-clear": tui_clear,
    "print-denied": print_denied,
    "tui-unarmed": tui_unarmed,
}


if __name__ == "__main__":
    sys.exit(recording.record_scenarios(SCENARIOS, sys.argv[1:]))
