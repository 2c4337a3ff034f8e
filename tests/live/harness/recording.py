"""What every capture recorder (``tests/live/captures/<cli>/record.py``) does the same
way: a scenario's folder made anew, its timeline (``note``), screens (``shot``), keys
pressed, the private root written ``$ROOT`` in everything kept, and a failure noted
with its traceback and its last screen.

A CLI's recorder subclasses ``Recording``: it makes ``root`` and its home in
``__enter__`` (after ``super().__enter__()``), and keeps its own evidence in
``__exit__`` before calling ``finish``.
"""

from __future__ import annotations

import contextlib
import shutil
import time
import traceback
from pathlib import Path

from . import tmux


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
