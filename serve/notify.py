"""Notifications: one message when a run starts waiting on you (ADR 0041).

``serve --notify URL`` and ``watch --notify URL`` hand each new wait to apprise, whose
URLs name the service (``ntfy://``, ``slack://``, ``tgram://``, ``mailto://``,
``json://`` a webhook, …). A wait is notified once — the same wait seen by another poll,
or again after a restart of the follower's view, is not a new one — and, with
``remind_after``, once more if it is still open that long after.

Sending is off the caller's path: ``observe`` only queues (bounded; the oldest message
is dropped with a log line when a notifier is down for long), and one thread sends,
retrying a failed message with a growing pause before it gives up on it. A failure is
logged, never raised, and never holds the next message back for longer than its retries.

apprise is imported by that thread, on the first message (no serve or watch that never
notifies pays for it).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from agentspool import run_key

if TYPE_CHECKING:
    from agentspool import RunEvent, RunSummary

log = logging.getLogger("agentspool.notify")

WaitKind = Literal["approval", "question", "turn"]
WAIT_KINDS: tuple[WaitKind, ...] = ("approval", "question", "turn")
QUEUE_SIZE = 256
RETRIES = (1.0, 5.0, 30.0)
"""Seconds before each retry of a message a notifier refused."""
SHOWN_CHARS = 300


def wait_kind(run: RunSummary) -> WaitKind | None:
    if run.state == "question":
        return "question"
    if run.state == "needs_input":
        return "approval" if run.pending_approval is not None else "turn"
    return None


def _one_line(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= SHOWN_CHARS else flat[: SHOWN_CHARS - 1] + "…"


def what_to_do(run: RunSummary) -> str:
    """What the person must do, in their words: ``approve Bash: rm -rf build``,
    ``answer: Which database?``, ``your turn``."""
    approval = run.pending_approval
    if approval is not None:
        shown = approval.tool_input.get("command") or approval.tool_input.get("file_path")
        if shown is None and approval.tool_input:
            shown = next(iter(approval.tool_input.values()))
        return f"approve {approval.tool_name}" + (f": {_one_line(shown)}" if shown else "")
    dialog = run.pending_dialog
    if dialog is not None:
        verb = "review the plan" if dialog.kind == "plan_approval" else "answer"
        options = ", ".join(o.label for o in dialog.options)
        text = _one_line(dialog.prompt) + (f" [{options}]" if options else "")
        return f"{verb}: {text}" if text else verb
    return "your turn" if run.state == "needs_input" else run.state


@dataclass(frozen=True)
class Message:
    title: str
    body: str
    key: str
    reminder: bool = False


def message_for(run: RunSummary, *, reminder: bool = False) -> Message:
    project = run.cwd or "?"
    who = run.run_id or run.session_id
    title = f"{run.provider} {'still waits' if reminder else 'waits'} on you: {what_to_do(run)}"
    body = "\n".join(
        line
        for line in (
            what_to_do(run),
            f"project: {project}",
            f"run: {who} ({run.provider})",
            f"prompt: {_one_line(run.title)}" if run.title else "",
        )
        if line
    )
    return Message(title=_one_line(title), body=body, key=run_key(run), reminder=reminder)


@dataclass
class _Open:
    """A wait already notified: the same wait is never sent twice."""

    identity: tuple[str, str]
    run: RunSummary
    notified_at: float
    reminded: bool = False


def _identity(kind: WaitKind, run: RunSummary) -> tuple[str, str]:
    """What makes two polls' waits the same wait. An approval or a question is its tool
    call (its text when the evidence names no call); a turn's end is its evidence time.
    An approval's evidence time is not part of it: a later hook about the same prompt
    (Claude Code's permission Notification) can move it, and must not notify again."""
    if kind == "turn":
        return (kind, repr(run.since))
    approval = run.pending_approval
    dialog = run.pending_dialog
    call = (approval.tool_use_id if approval else "") or (dialog.tool_use_id if dialog else "")
    return (kind, call or what_to_do(run))


Send = Callable[[Message], bool]
"""Delivers one message; False (or an exception) when the notifier refused it."""


@dataclass
class Notifier:
    """A ``TransitionHub`` subscriber (or ``watch``'s): one message per new wait of the
    chosen kinds, and at most one reminder."""

    urls: Sequence[str] = ()
    kinds: Iterable[WaitKind] = WAIT_KINDS
    remind_after: float | None = None
    """Seconds after which a still-open wait is notified once more (``None``: never)."""
    clock: Callable[[], float] = time.time
    send: Send | None = None
    """Instead of apprise (tests of the code on top: the delivery itself is apprise's)."""
    retries: Sequence[float] = RETRIES
    check_every: float = 5.0
    """Seconds between the sending thread's looks for waits due a reminder."""
    sent: int = 0
    failed: int = 0
    _open: dict[str, _Open] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _queue: queue.Queue[Message | None] = field(
        default_factory=lambda: queue.Queue(maxsize=QUEUE_SIZE)
    )
    _thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        self._wanted: frozenset[WaitKind | None] = frozenset(self.kinds)
        self._started = self.clock()

    def observe(self, event: RunEvent) -> None:
        """One transition (called in the hub's thread: it only queues)."""
        if event.event == "gone":
            with self._lock:
                self._open.pop(event.key, None)
            return
        kind = wait_kind(event)
        with self._lock:
            if kind is None:
                self._open.pop(event.key, None)
                return
            identity = _identity(kind, event)
            known = self._open.get(event.key)
            if known is not None and known.identity == identity:
                known.run = event
                return
            self._open[event.key] = _Open(identity, event, self.clock())
        if event.event == "seen" and 0 < event.since < self._started:
            # Already waiting when we started following (a restart, a first poll): not
            # news, and told before if we ran then. Known now, so never told twice.
            return
        if kind in self._wanted:
            self._put(message_for(event))
        elif self.remind_after is not None:
            self._start()

    def remind(self) -> None:
        """Queue the reminder of every wait open ``remind_after`` seconds (the sending
        thread calls it every ``check_every`` seconds)."""
        if self.remind_after is None:
            return
        now = self.clock()
        due = []
        with self._lock:
            for known in self._open.values():
                if known.reminded or wait_kind(known.run) not in self._wanted:
                    continue
                if now - known.notified_at >= self.remind_after:
                    known.reminded = True
                    due.append(known.run)
        for run in due:
            self._put(message_for(run, reminder=True))

    def close(self, timeout: float = 5.0) -> None:
        """Send what is queued (within ``timeout``), then stop the sending thread."""
        if self._thread is None:
            return
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="agentspool-notify", daemon=True)
            self._thread.start()

    def _put(self, message: Message) -> None:
        self._start()
        try:
            self._queue.put_nowait(message)
        except queue.Full:
            log.warning("notifications: queue full, dropped: %s", message.title)

    def _run(self) -> None:
        try:
            send = self.send or _apprise_sender(self.urls)
        except Exception as exc:  # noqa: BLE001 - apprise missing or broken: said once
            log.error("notifications: cannot start apprise: %s: %s", type(exc).__name__, exc)
            send = _refuse
        while True:
            try:
                message = self._queue.get(timeout=self.check_every)
            except queue.Empty:
                self.remind()
                continue
            if message is None:
                return
            self._deliver(send, message)

    def _deliver(self, send: Send, message: Message) -> None:
        attempt = 0
        for attempt, pause in enumerate((*self.retries, None), 1):
            try:
                if send(message):
                    self.sent += 1
                    return
                problem = "refused"
            except Exception as exc:  # noqa: BLE001 - a notifier bug must not end the thread
                problem = f"{type(exc).__name__}: {exc}"
            if pause is None:
                break
            log.warning("notifications: %s (attempt %d), retrying in %gs", problem, attempt, pause)
            time.sleep(pause)
        self.failed += 1
        log.error("notifications: gave up on %r after %d attempts", message.title, attempt)


def _refuse(message: Message) -> bool:
    return False


def _apprise_sender(urls: Sequence[str]) -> Send:
    import warnings

    with warnings.catch_warnings():
        # apprise 2.x imports the stdlib's deprecated imghdr (gone in 3.13) as it loads
        # its plugins, which it does on the first Apprise() and add().
        warnings.simplefilter("ignore", DeprecationWarning)
        import apprise

        notifier = apprise.Apprise()
        for url in urls:
            if not notifier.add(url):
                log.error("notifications: apprise does not take the URL %r", url)

    def send(message: Message) -> bool:
        return bool(notifier.notify(title=message.title, body=message.body))

    return send
