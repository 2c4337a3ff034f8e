"""Tier-2 checkpoints of the newer providers' scenarios: once the CLI's screen shows a
state, ``read_chat`` (or ``list_runs``) must report it within ``WITHIN`` seconds
(``within``), and still 0.5 s later (``expect``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from agentspool import Chat, read_chat

from . import chat_server, tmux

SHOWN = 60.0
"""How long the CLI may take to show a state on a loaded machine."""
WITHIN = 1.0
"""How soon after that the read must compose it."""
T = TypeVar("T")


def within(read: Callable[[], T], predicate: Callable[[T], bool], what: str, pane: tmux.Pane) -> T:
    """``read()`` once it satisfies ``predicate``, within ``WITHIN`` s (the caller saw the
    screen show it); else fail with what it read and the screen."""
    deadline = time.monotonic() + WITHIN
    while True:
        found = read()
        if predicate(found):
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: read {found!r:.3000}\n{pane.screen()}")
        time.sleep(0.05)


def expect(
    pane: tmux.Pane,
    read: Callable[[], Chat],
    what: str,
    check: Callable[[Chat], bool],
    shown: Callable[[str], bool],
) -> Chat:
    pane.wait_until(shown, timeout=SHOWN)
    within(read, check, what, pane)
    time.sleep(0.5)
    chat = read()
    assert check(chat), f"{what}: did not hold ({chat.state!r})"
    return chat


class CheckedRun:
    """One TUI against a scripted server, read as run ``run_id``: what a provider's
    scenario ``Run`` sets up (``srv``, ``home``, ``pane``) and what every one does the
    same way with it."""

    provider: ClassVar[str]
    run_id = "run-1"
    runtime_dir: str
    srv: chat_server.ChatServer
    home: Any
    """The CLI's private home (its harness's ``…Home``, with ``cleanup()``)."""
    pane: tmux.Pane

    def read(self) -> Chat:
        return read_chat(self.provider, self.run_id, runtime_dir=self.runtime_dir)

    def expect(
        self, what: str, check: Callable[[Chat], bool], shown: Callable[[str], bool]
    ) -> Chat:
        return expect(self.pane, self.read, what, check, shown)

    def close(self) -> None:
        self.home.cleanup()
        self.srv.stop()


def after_turn(chat: Chat) -> bool:
    return chat.state == "needs_input" and chat.pending_approval is None
