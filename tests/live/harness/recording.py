"""What the capture recorders of the CLIs driven against ``chat_server`` share: a scripted
server, a private home, a TUI pane, a logging-hook log, and the capture folder —
``hooks.jsonl``, ``screen-<checkpoint>.txt``, the CLI's files at each checkpoint
(``at-<checkpoint>/``) and at the end (``chats/``), ``requests.jsonl``, ``notes.md`` —
with the private root replaced by ``$ROOT``.

A provider's recorder subclasses ``Recording``: ``start`` (home and pane), ``files``
(what to keep: name in the capture → path) and ``submit``.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from . import chat_server as cs
from . import tmux
from .gemini import read_hook_log


class Recording:
    prefix = "cap"

    def __init__(self, out: Path, replies: list[cs.Reply], **server: Any) -> None:
        self.name = out.name
        self.out = out
        self.replies = replies
        self.server = server
        self.lines: list[str] = []
        self.t0 = time.time()
        self.pane: tmux.Pane

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
        if self.out.is_dir():
            shutil.rmtree(self.out)
        self.out.mkdir(parents=True)
        self.root = Path(tempfile.mkdtemp(prefix=f"{self.prefix}-{self.name}-"))
        self.srv = cs.ChatServer(self.replies, **self.server).start()
        self.start()
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if exc is not None:
            self.note("FAILED: " + "".join(traceback.format_exception(exc)).strip())  # type: ignore[arg-type]
            with contextlib.suppress(Exception):
                self.shot("failure")
        self.keep("", final=True)
        self.home.cleanup()
        self.srv.dump(str(self.out / "requests.jsonl"))
        self.srv.stop()
        log = self.home.hook_log_dir / "hooks.jsonl"
        if log.exists():
            (self.out / "hooks.jsonl").write_text(self._private(log.read_text()))
        events = [r["event"] for r in self.hooks()]
        body = [f"# {self.name}", "", *self.lines, ""]
        body += ["Hooks fired, in order: " + ", ".join(events)]
        body += ["", "Requests: " + "; ".join(self.srv.summary())]
        (self.out / "notes.md").write_text(self._private("\n".join(body)) + "\n")
        shutil.rmtree(self.root, ignore_errors=True)

    def _private(self, text: str) -> str:
        return text.replace(str(self.root), "$ROOT")

    def note(self, text: str) -> None:
        self.lines.append(f"- t+{time.time() - self.t0:6.2f}s {text}")

    def shot(self, checkpoint: str) -> str:
        screen = self.pane.screen()
        (self.out / f"screen-{checkpoint}.txt").write_text(self._private(screen))
        self.note(f"screen `{checkpoint}`")
        return screen

    def keep(self, checkpoint: str, *, final: bool = False) -> None:
        """The CLI's files as they are now (``chats/`` at the end)."""
        target = self.out / ("chats" if final else f"at-{checkpoint}")
        for name, path in self.files(final=final).items():
            with contextlib.suppress(FileNotFoundError):
                text = path.read_text()
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                (target / name).write_text(self._private(text))
        if not final:
            kept = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
            self.note(f"files kept at `{checkpoint}`: {kept}")

    def checkpoint(self, name: str) -> None:
        time.sleep(0.5)  # the CLI's writer flushes
        self.shot(name)
        self.keep(name)

    def press(self, *keys: str) -> None:
        self.pane.send_keys(*keys)
        self.note(f"pressed {' '.join(keys)}")

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
