"""What every capture recorder (``tests/live/captures/<cli>/record.py``) does the same
way: a scenario's folder made anew, its timeline (``note``), screens (``shot``), keys
pressed, the private root written ``$ROOT`` in everything kept, and a failure noted
with its traceback and its last screen.

A CLI's recorder subclasses ``Recording``: it makes ``root`` and its home in
``__enter__`` (after ``super().__enter__()``), and keeps its own evidence in
``__exit__`` before calling ``finish``.

``ServedRecording`` is that for the CLIs driven against ``chat_server`` (Qwen Code, Kimi
Code): the scripted server, a private home, a TUI pane and a logging-hook log, and the
capture folder — ``hooks.jsonl``, ``screen-<checkpoint>.txt``, the CLI's files at each
checkpoint (``at-<checkpoint>/``) and at the end (``chats/``), ``requests.jsonl``,
``notes.md``. Its subclass says ``start`` (home and pane), ``files`` (what to keep: name
in the capture → path) and ``submit``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import chat_server as cs
from . import tmux
from .hooklog import read_hook_log


class Recording:
    def __init__(self, name: str, out: Path) -> None:
        self.name = name
        self.out = out
        self.lines: list[str] = []
        self.pane: tmux.Pane | None = None
        self.t0 = time.time()
        self.root = Path()

    def __enter__(self) -> Recording:
        if self.out.is_dir():
            shutil.rmtree(self.out)
        self.out.mkdir(parents=True)
        return self

    def failed(self, exc: object) -> None:
        """Note what went wrong, and the screen it went wrong on."""
        if exc is None:
            return
        self.note("FAILED: " + "".join(traceback.format_exception(exc)).strip())  # type: ignore[arg-type]
        if self.pane is not None:
            with contextlib.suppress(Exception):
                self.shot("failure")

    def private(self, text: str) -> str:
        return text.replace(str(self.root), "$ROOT")

    def note(self, text: str) -> None:
        self.lines.append(f"- t+{time.time() - self.t0:6.2f}s {text}")

    def shot(self, checkpoint: str) -> str:
        assert self.pane is not None
        screen = self.pane.screen()
        (self.out / f"screen-{checkpoint}.txt").write_text(self.private(screen))
        self.note(f"screen `{checkpoint}`")
        return screen

    def press(self, *keys: str) -> None:
        assert self.pane is not None
        self.pane.send_keys(*keys)
        self.note(f"pressed {' '.join(keys)}")

    def write_notes(self, summary: list[str]) -> None:
        """``notes.md``: the timeline, then the evidence ``summary`` lines."""
        body = [f"# {self.name}", "", *self.lines, "", "## Evidence summary", "", *summary]
        (self.out / "notes.md").write_text(self.private("\n".join(body)))


class ServedRecording(Recording):
    prefix = "cap"

    def __init__(self, out: Path, replies: list[cs.Reply], **server: Any) -> None:
        super().__init__(out.name, out)
        self.replies = replies
        self.server = server

    # -- what a provider says ------------------------------------------------------------
    def start(self) -> None:
        """Make ``self.home`` (with ``hook_log_dir`` and ``cleanup()``) and ``self.pane``."""
        raise NotImplementedError

    def files(self, *, final: bool) -> dict[str, Path]:
        raise NotImplementedError

    def submit(self, text: str) -> None:
        raise NotImplementedError

    # -- the capture ---------------------------------------------------------------------
    def __enter__(self) -> Any:
        super().__enter__()
        self.root = Path(tempfile.mkdtemp(prefix=f"{self.prefix}-{self.name}-"))
        self.srv = cs.ChatServer(self.replies, **self.server).start()
        self.start()
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.failed(exc)
        self.keep("", final=True)
        self.home.cleanup()
        self.srv.dump(str(self.out / "requests.jsonl"))
        self.srv.stop()
        log = self.home.hook_log_dir / "hooks.jsonl"
        if log.exists():
            (self.out / "hooks.jsonl").write_text(self.private(log.read_text()))
        events = [r["event"] for r in self.hooks()]
        self.write_notes(
            [
                "Hooks fired, in order: " + ", ".join(events),
                "",
                "Requests: " + "; ".join(self.srv.summary()),
            ]
        )
        shutil.rmtree(self.root, ignore_errors=True)

    def keep(self, checkpoint: str, *, final: bool = False) -> None:
        """The CLI's files as they are now (``chats/`` at the end)."""
        target = self.out / ("chats" if final else f"at-{checkpoint}")
        for name, path in self.files(final=final).items():
            with contextlib.suppress(FileNotFoundError):
                text = path.read_text()
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                (target / name).write_text(self.private(text))
        if not final:
            kept = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
            self.note(f"files kept at `{checkpoint}`: {kept}")

    def checkpoint(self, name: str) -> None:
        time.sleep(0.5)  # the CLI's writer flushes
        self.shot(name)
        self.keep(name)

    def hooks(self) -> list[dict[str, Any]]:
        return read_hook_log(self.home.hook_log_dir)

    def count(self, event: str, **match: Any) -> int:
        return sum(
            r["event"] == event and all(r["payload"].get(k) == v for k, v in match.items())
            for r in self.hooks()
        )

    def wait_hook(self, event: str, count: int = 1, timeout: float = 60.0, **match: Any) -> None:
        deadline = time.monotonic() + timeout
        while (n := self.count(event, **match)) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"hook {event} {match} x{count} never fired")
            time.sleep(0.1)
        self.note(f"hook {event} {match or ''} x{n}")


def record_scenarios(scenarios: Mapping[str, Callable[[], None]], names: Sequence[str]) -> int:
    """A recorder's command line: each scenario named (default: all) recorded in turn,
    private files only; one that fails is reported with its traceback (its notes say
    more) and the others still recorded. Exit status 1 if any failed."""
    os.umask(0o077)
    failed = []
    for name in names or list(scenarios):
        print(f"== {name}", flush=True)
        started = time.time()
        try:
            scenarios[name]()
        except Exception:  # noqa: BLE001 - record the others; the notes say what failed
            traceback.print_exc()
            failed.append(name)
        print(
            f"   {'FAILED' if name in failed else 'ok'} ({time.time() - started:.1f} s)", flush=True
        )
    print("failed:", ", ".join(failed) or "none")
    return 1 if failed else 0
