"""What Tier-2 scenario tests share: reading the run's spool, and checkpoints that wait
for ``read_chat`` to compose an expected state and check it against the CLI itself.

A scenario module defines its ``Run`` as a dataclass subclassing ``ScenarioRun`` (fields
``run_id``, ``runtime_dir``, ``last``, ``log`` and a ``run_dir``), and gives it
``screen_oracle()`` — what the CLI shows at one instant, or ``None`` without a screen —
``spool_keys()`` — what of a spool record's payload a failure message shows — and
``dump()`` for failure messages (starting with ``dump_head()``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import msgspec
import pytest

from agentspool import locate_transcript, read_chat
from agentspool.core.seam import Chat
from agentspool.spool.read import SpoolRecord, read_all

WAIT = 15.0  # how long the evidence may take to land in read_chat


class Oracle(Protocol):
    @property
    def dialog_shown(self) -> bool: ...

    @property
    def cli_idle(self) -> bool: ...


def spool_payload(record: SpoolRecord) -> dict[str, Any]:
    try:
        data = json.loads(record.payload)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def is_idle_after_turn(chat: Chat) -> bool:
    """The turn is over and nothing waits on the user: ready for the next prompt."""
    return (
        chat.state == "needs_input"
        and chat.activity == "idle"
        and chat.pending_approval is None
        and chat.pending_dialog is None
    )


def is_ended_after_turn(chat: Chat) -> bool:
    """The agent process exited after its turn (``-p``, ``exec``, ``/exit``): core reads
    the run as ended, with nothing open and nothing working."""
    return (
        chat.state == "ended"
        and chat.process == "gone"
        and chat.activity == "idle"
        and chat.pending_approval is None
        and chat.pending_dialog is None
    )


def event_fields(event: msgspec.Struct) -> dict[str, Any]:
    """A canonical event's fields worth printing in a failure dump: the set ones, less
    the time and source (printed apart) and the bulky dialog and tool input."""
    return {
        k: getattr(event, k)
        for k in event.__struct_fields__
        if k not in ("at", "source", "dialog", "tool_input")
        and getattr(event, k) not in ("", None, ())
    }


def describe_chat(chat: Chat | None, messages: int = 10) -> str:
    if chat is None:
        return "<no chat read>"
    dialog = chat.pending_dialog
    approval = chat.pending_approval
    lines = [
        f"state={chat.state} activity={chat.activity} transcript_id={chat.transcript_id}",
        f"pending_dialog={None if dialog is None else (dialog.kind, dialog.prompt[:80])}",
        "pending_approval="
        + str(
            None
            if approval is None
            else (approval.tool_name, approval.tool_input, approval.tool_use_id, approval.agent_id)
        ),
        "evidence=" + "; ".join(f"{e.source} {e.detail}" for e in chat.evidence),
        "messages="
        + ", ".join(
            f"{m.seq}:{m.kind}/{m.role}:{m.text[:30]!r}" for m in chat.messages[-messages:]
        ),
    ]
    return "\n  ".join(lines)


def is_working(chat: Chat) -> bool:
    """A turn is open and nothing waits on the user."""
    return (
        chat.state == "working"
        and chat.activity == "working"
        and chat.pending_approval is None
        and chat.pending_dialog is None
    )


class ScenarioRun:
    provider: ClassVar[str]
    run_id: str
    runtime_dir: str
    run_dir: str
    last: Chat | None
    log: list[str]

    def screen_oracle(self) -> Oracle | None:
        raise NotImplementedError

    def spool_keys(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        """What ``dump_head`` shows of one spool record's payload."""
        raise NotImplementedError

    def dump(self) -> str:
        raise NotImplementedError

    def dump_head(self) -> list[str]:
        """The start of ``dump``, alike for every CLI: the last chat read, the checkpoints
        passed, and one line per spool record (seconds since the first record)."""
        out = [
            "last chat:\n  " + describe_chat(self.last),
            "checkpoints: " + " | ".join(self.log),
            "spool:",
        ]
        t0 = None
        try:
            records = self.records()
        except OSError as exc:
            records = []
            out.append(f"  <unreadable: {exc}>")
        for r in records:
            t0 = t0 or r.wall_ns
            keys = self.spool_keys(r.event, spool_payload(r))
            out.append(f"  {(r.wall_ns - t0) / 1e9:7.3f} {r.event} {keys}")
        return out

    # -- evidence
    def records(self) -> list[SpoolRecord]:
        return read_all(self.run_dir)

    def hooks(
        self, event: str, where: Callable[[dict[str, Any]], bool] | None = None
    ) -> list[dict[str, Any]]:
        return [
            p
            for r in self.records()
            if r.event == event
            for p in [spool_payload(r)]
            if where is None or where(p)
        ]

    def wait_hook(
        self,
        event: str,
        count: int = 1,
        timeout: float = 30.0,
        where: Callable[[dict[str, Any]], bool] | None = None,
    ) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            hits = self.hooks(event, where)
            if len(hits) >= count:
                return hits
            if time.monotonic() > deadline:
                pytest.fail(f"{count}×{event} never reached the spool\n{self.dump()}")
            time.sleep(0.05)

    # -- the library under test
    def read(self) -> Chat:
        path = locate_transcript(self.provider, self.run_id, self.runtime_dir)
        chat = read_chat(self.provider, self.run_id, self.runtime_dir, path)
        self.last = chat
        return chat

    def watch(
        self, until: Callable[[], bool], *, period: float = 0.25, timeout: float = 60.0
    ) -> list[tuple[float, Chat]]:
        """``read_chat`` every ``period`` seconds, as a watcher would, until ``until()``
        holds (checked before each read); every read with its ``time.monotonic()``."""
        reads: list[tuple[float, Chat]] = []
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                pytest.fail(f"watched {timeout}s and the end never came\n{self.dump()}")
            started = time.monotonic()
            reads.append((started, self.read()))
            time.sleep(max(0.0, period - (time.monotonic() - started)))
        return reads

    def require_working(
        self, reads: list[tuple[float, Chat]], since: float, until: float, least: int
    ) -> None:
        """Every read taken in [``since``, ``until``) composed ``working`` with nothing
        pending, and there were at least ``least`` of them."""
        window = [(t, chat) for t, chat in reads if since <= t < until]
        bad = [(t, chat) for t, chat in window if not is_working(chat)]
        if bad or len(window) < least:
            timeline = "\n  ".join(
                f"{t - since:+6.2f}s {c.state}/{c.activity} "
                f"approval={c.pending_approval is not None} dialog={c.pending_dialog is not None}"
                for t, c in reads
            )
            self.last = bad[0][1] if bad else self.last
            pytest.fail(
                f"{len(bad)} of {len(window)} reads (≥ {least} wanted) in the window were "
                f"not working (seconds from the window's start):\n  {timeline}\n{self.dump()}"
            )
        self.log.append(f"working throughout: {len(window)} reads")

    def checkpoint(
        self,
        name: str,
        predicate: Callable[[Chat], bool],
        *,
        timeout: float = WAIT,
        stable: bool = True,
        dialog_oracle: bool = True,
    ) -> Chat:
        """Wait until ``predicate(read_chat(...))`` holds; then require it to stay so
        and to agree with what the CLI itself shows."""
        deadline = time.monotonic() + timeout
        while True:
            chat = self.read()
            if predicate(chat):
                break
            if time.monotonic() > deadline:
                pytest.fail(f"checkpoint {name!r}: expected state never composed\n{self.dump()}")
            time.sleep(0.1)
        if stable:
            time.sleep(0.5)
            before = self.screen_oracle()
            chat = self.read()
            after = self.screen_oracle()
            if not predicate(chat):
                pytest.fail(f"checkpoint {name!r}: state did not hold 0.5 s later\n{self.dump()}")
            if before is not None and after is not None:
                self._consistent(name, chat, before, after, dialog_oracle=dialog_oracle)
        self.log.append(f"{name}: {chat.state}/{chat.activity}")
        return chat

    def _consistent(
        self, name: str, chat: Chat, before: Oracle, after: Oracle, *, dialog_oracle: bool
    ) -> None:
        """The general check: an open dialog only while the CLI shows one; no ``working``
        while the CLI is idle. Oracles are read before and after the chat; a violation
        needs both to agree, so a transition between the reads is not blamed on the
        adapter."""
        open_dialog = (
            chat.state == "question"
            or chat.pending_dialog is not None
            or chat.pending_approval is not None
        )
        if dialog_oracle and open_dialog and not before.dialog_shown and not after.dialog_shown:
            pytest.fail(f"checkpoint {name!r}: dialog reported, the CLI shows none\n{self.dump()}")
        if chat.state == "working" and before.cli_idle and after.cli_idle:
            pytest.fail(f"checkpoint {name!r}: working while the CLI is idle\n{self.dump()}")
