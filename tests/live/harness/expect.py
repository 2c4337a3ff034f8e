"""Tier-2 checkpoints of the newer providers' scenarios: once the CLI's screen shows a
state, ``read_chat`` must report it within ``WITHIN`` seconds, and still 0.5 s later."""

from __future__ import annotations

import time
from collections.abc import Callable

from agentspool import Chat

from . import tmux

WITHIN = 1.0


def expect(
    pane: tmux.Pane,
    read: Callable[[], Chat],
    what: str,
    check: Callable[[Chat], bool],
    shown: Callable[[str], bool],
) -> Chat:
    pane.wait_until(shown, timeout=60)
    deadline = time.monotonic() + WITHIN
    chat = read()
    while not check(chat):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: read_chat still says {chat.state!r} {chat.evidence}")
        time.sleep(0.05)
        chat = read()
    time.sleep(0.5)
    chat = read()
    assert check(chat), f"{what}: did not hold ({chat.state!r})"
    return chat


def after_turn(chat: Chat) -> bool:
    return chat.state == "needs_input" and chat.pending_approval is None
