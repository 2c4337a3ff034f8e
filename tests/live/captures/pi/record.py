"""Record real Pi 0.73.1 captures against the scripted chat server.

    .venv/bin/python tests/live/captures/pi/record.py [scenario ...]

Each scenario runs the real ``pi`` armed the way ``setup`` arms a run (agentspool's
extension, the run's own copy, passed with ``-e``) and writes ``<this dir>/<scenario>/``:

* ``sessions/<file>.jsonl``  every session file as it was at the end
* ``at-<checkpoint>/``      the session files, and ``spool-count`` (records so far), then
* ``spool.jsonl``           every record the extension appended: ``{event, time, pid,
  payload}`` (``time``: the record's wall clock, seconds)
* ``screen-<checkpoint>.txt``  the TUI screen at each checkpoint
* ``requests.jsonl``        digest of every request the server saw
* ``notes.md``              the timeline (the private root written ``$ROOT``)
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/live

from harness import chat_server as cs  # noqa: E402
from harness import pi, recording, tmux  # noqa: E402

from agentspool.adapters.pi import _lifecycle  # noqa: E402
from agentspool.spool.read import read_all  # noqa: E402

BASH = {"command": "echo hi > out.txt"}
RUN_ID = "capture"


class Capture(recording.Recording):
    def __init__(self, name: str, replies: list[cs.Reply]) -> None:
        super().__init__(name, HERE / name)
        self.replies = replies

    def __enter__(self) -> Capture:
        super().__enter__()
        self.root = Path(tempfile.mkdtemp(prefix=f"picap-{self.name}-"))
        self.srv = cs.ChatServer(self.replies).start()
        self.home = pi.make_home(self.srv.base_url, self.root)
        runtime = self.root / "runtime"
        runtime.mkdir(mode=0o700)
        self.spawn = _lifecycle.setup(RUN_ID, str(runtime))
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.failed(exc)
        self.home.cleanup(keep=True)
        self.keep("sessions")
        self.srv.dump(str(self.out / "requests.jsonl"))
        self.srv.stop()
        rows = [
            {
                "event": r.event,
                "time": r.wall_ns / 1e9,
                "pid": r.agent_pid,
                "payload": json.loads(r.payload),
            }
            for r in read_all(self.spawn.run_dir)
        ]
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (self.out / "spool.jsonl").write_text(self.private(text))
        faults = Path(self.spawn.run_dir) / "hooks.log"
        if faults.exists():
            self.note("extension faults: " + faults.read_text())
        requests = [
            f"{r.seq}:{r.kind} -> {r.reply_label}" for r in self.srv.requests if r.kind != "other"
        ]
        self.write_notes(
            [
                f"Spooled, in order: {', '.join(str(r['event']) for r in rows)}",
                "",
                "Requests: " + "; ".join(requests),
                "",
            ]
        )
        shutil.rmtree(self.root, ignore_errors=True)

    def keep(self, folder: str) -> None:
        """The session files as they are now (raw: their paths name the private root)."""
        for path in self.home.session_files():
            target = self.out / folder / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)

    def checkpoint(self, name: str) -> None:
        time.sleep(0.5)  # the session file's last line of the moment
        folder = self.out / f"at-{name}"
        folder.mkdir(exist_ok=True)
        self.keep(folder.name)
        (folder / "spool-count").write_text(f"{self.spooled()}\n")
        if self.pane is not None:
            self.shot(name)

    def spooled(self, event: str = "") -> int:
        return sum(1 for r in read_all(self.spawn.run_dir) if not event or r.event == event)

    def wait_spooled(self, event: str, count: int = 1, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while self.spooled(event) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"no {count}x {event} after {timeout}s")
            time.sleep(0.1)
        self.note(f"spooled {event} x{count}")

    def start(self) -> tmux.Pane:
        self.pane = pi.start_tui(self.home, extra_args=self.spawn.args, extra_env=self.spawn.env)
        self.note("TUI ready")
        return self.pane

    def submit(self, text: str) -> None:
        assert self.pane is not None
        pi.submit(self.pane, text)
        self.note(f"typed {text!r} + Enter")

    def wait_screen(self, predicate: Callable[[str], bool], what: str) -> None:
        assert self.pane is not None
        self.pane.wait_until(predicate, 60)
        self.note(f"screen shows {what}")

    def quit(self) -> None:
        assert self.pane is not None
        pi.quit_tui(self.pane)
        self.note("the CLI exited")


def _approval(name: str, key: str) -> None:
    with Capture(name, [cs.tool_call("bash", BASH), cs.text("Done: wrote out.txt.")]) as cap:
        cap.start()
        cap.submit("please write out.txt")
        cap.wait_spooled("permission_asked")
        cap.wait_screen(lambda s: pi.CONFIRM_MARKER in s, "the confirm dialog")
        cap.checkpoint("dialog")
        time.sleep(0.5)  # a key pressed the moment a dialog draws can be dropped
        cap.press(key)
        cap.wait_spooled("agent_end")
        cap.wait_screen(lambda s: "Done: wrote out.txt." in s, "the answer")
        cap.checkpoint("idle")
        cap.quit()
        cap.checkpoint("exit")


def tui_approve() -> None:
    _approval("tui-approve", "Enter")


def tui_deny() -> None:
    _approval("tui-deny", "Escape")


def tui_interrupt() -> None:
    slow = cs.slow_text("line one\nline two\nline three\n" * 10, seconds=30, chunks=60)
    with Capture("tui-interrupt", [slow, cs.text("Back again.")]) as cap:
        cap.start()
        cap.submit("tell me a long story")
        cap.srv.wait_streaming(1)
        cap.wait_screen(lambda s: "line one" in s, "streamed text")
        cap.checkpoint("streaming")
        cap.press("Escape")
        cap.wait_spooled("agent_end")
        cap.wait_screen(lambda s: pi.ABORTED_MARKER in s, "the turn aborted")
        cap.checkpoint("interrupted")
        cap.submit("are you there")
        cap.wait_spooled("agent_end", 2)
        cap.checkpoint("idle")
        cap.quit()


def tui_new() -> None:
    with Capture("tui-new", [cs.text("First answer."), cs.text("Second answer.")]) as cap:
        cap.start()
        cap.submit("first prompt")
        cap.wait_spooled("agent_end")
        cap.checkpoint("first-idle")
        cap.submit("/new")
        cap.wait_spooled("session_start", 2)
        cap.checkpoint("new")
        cap.submit("second prompt")
        cap.wait_spooled("agent_end", 2)
        cap.checkpoint("second-idle")
        cap.quit()


def print_runs() -> None:
    with Capture("print", [cs.tool_call("bash", BASH), cs.text("Done: wrote out.txt.")]) as cap:
        done = pi.run_print(
            cap.home,
            "please write out.txt",
            extra_args=[*cap.spawn.args, "--mode", "json"],
            extra_env=cap.spawn.env,
        )
        cap.note(f"pi -p exited {done.returncode}")
        (cap.out / "stdout.jsonl").write_text(cap.private(done.stdout))


SCENARIOS = {
    "tui-approve": tui_approve,
    "tui-deny": tui_deny,
    "tui-interrupt": tui_interrupt,
    "tui-new": tui_new,
    "print": print_runs,
}


if __name__ == "__main__":
    sys.exit(recording.record_scenarios(SCENARIOS, sys.argv[1:]))
