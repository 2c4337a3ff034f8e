"""Notifications: one message when a run starts waiting on you (ADR 0041).

``serve --notify URL`` and ``watch --notify URL`` hand each new wait to apprise, whose
URLs name the service (``ntfy://``, ``slack://``, ``tgram://``, ``mailto://``,
``json://`` a webhook, …). A wait is notified once — the same wait seen by another poll,
or again after a restart of the follower's view, is not a new one — and, with
``remind_after``, once more if it is still open that long after. A wait that does not
yet say what it waits for ("answer a question", "approve a tool call": Claude Code's
status file can say "waiting" before the hook or the transcript naming the call is
read) is held up to ``grace`` seconds for the evidence that does, and sent as it is
then: one message, naming the question, not two.

Sending is off the caller's path: ``observe`` only queues, and each URL has its own
queue (bounded: past it a message is dropped with a log line) and its own sending
thread, which retries a refused message with a growing pause before it gives up on it.
A failure is logged, never raised; a receiver that is down holds back only its own
messages, and each of those no longer than its retries; the other URLs get theirs at
once, and exactly once (a retry goes to the URL that refused, never to all).

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

from agentspool import run_key, state_phrase

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


def _says_what(run: RunSummary) -> bool:
    """Whether the wait names what the person must do: the call to approve, the question
    or plan; a turn's end always does."""
    if run.state == "question":
        dialog = run.pending_dialog
        return dialog is not None and (dialog.kind == "plan_approval" or bool(dialog.prompt))
    return run.pending_approval is not None or run.activity != "needs_input"


def _one_line(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= SHOWN_CHARS else flat[: SHOWN_CHARS - 1] + "…"


def _dialog_detail(run: RunSummary) -> str:
    """What a phone's reader needs beside the phrase (``state_phrase`` names the dialog,
    not its choices or a plan's text): the options offered, or the plan."""
    dialog = run.pending_dialog
    if dialog is None:
        return ""
    if dialog.kind == "plan_approval":
        return f"plan: {_one_line(dialog.prompt)}" if dialog.prompt else ""
    options = ", ".join(o.label for o in dialog.options)
    return f"options: {options}" if options else ""


@dataclass(frozen=True)
class Message:
    title: str
    body: str
    key: str
    reminder: bool = False


def message_for(run: RunSummary, *, reminder: bool = False) -> Message:
    """What to do in the words every view uses (``state_phrase``), where, and which run."""
    project = run.cwd or "?"
    who = run.run_id or run.session_id
    what = _one_line(state_phrase(run))
    title = f"{run.provider} {'still waits' if reminder else 'waits'} on you: {what}"
    body = "\n".join(
        line
        for line in (
            what,
            _dialog_detail(run),
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
    held: bool = False
    """Not sent yet: it does not say what it waits for (``Notifier.grace``)."""


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
    return (kind, call or state_phrase(run))


Send = Callable[[Message], bool]
"""Delivers one message; False (or an exception) when the notifier refused it."""


@dataclass
class _Outlet:
    """One URL's queue and sending thread: a receiver that is down holds back only its
    own messages, never another URL's, and never the caller."""

    url: str
    retries: Sequence[float]
    sent: int = 0
    failed: int = 0
    _queue: queue.Queue[Message | None] = field(
        default_factory=lambda: queue.Queue(maxsize=QUEUE_SIZE)
    )
    _thread: threading.Thread | None = None

    def put(self, message: Message) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="agentspool-notify", daemon=True)
            self._thread.start()
        try:
            self._queue.put_nowait(message)
        except queue.Full:
            log.warning("notifications: %s: queue full, dropped: %s", self.url, message.title)

    def close(self, timeout: float) -> None:
        if self._thread is None:
            return
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            send = _apprise_sender(self.url)
        except Exception as exc:  # noqa: BLE001 - apprise missing or broken: said once
            log.error("notifications: cannot start apprise: %s: %s", type(exc).__name__, exc)
            send = _refuse
        while (message := self._queue.get()) is not None:
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
            log.warning(
                "notifications: %s: %s (attempt %d), retrying in %gs",
                self.url,
                problem,
                attempt,
                pause,
            )
            time.sleep(pause)
        self.failed += 1
        log.error(
            "notifications: %s: gave up on %r after %d attempts", self.url, message.title, attempt
        )


@dataclass
class Notifier:
    """A ``TransitionHub`` subscriber (or ``watch``'s): one message per new wait of the
    chosen kinds to each URL, and at most one reminder."""

    urls: Sequence[str] = ()
    kinds: Iterable[WaitKind] = WAIT_KINDS
    remind_after: float | None = None
    """Seconds after which a still-open wait is notified once more (``None``: never)."""
    clock: Callable[[], float] = time.time
    retries: Sequence[float] = RETRIES
    check_every: float = 5.0
    """Seconds between looks for waits due a reminder."""
    grace: float = 1.5
    """Seconds a wait that does not say what it waits for is held for the evidence that
    does (module docstring)."""
    _open: dict[str, _Open] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _outlets: list[_Outlet] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _reminder: threading.Thread | None = None

    def __post_init__(self) -> None:
        self._wanted: frozenset[WaitKind | None] = frozenset(self.kinds)
        self._started = self.clock()
        self._outlets = [_Outlet(url, self.retries) for url in self.urls]
        if self.remind_after is not None:
            self._reminder = threading.Thread(
                target=self._remind_loop, name="agentspool-remind", daemon=True
            )
            self._reminder.start()

    @property
    def sent(self) -> int:
        return sum(o.sent for o in self._outlets)

    @property
    def failed(self) -> int:
        return sum(o.failed for o in self._outlets)

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
                known.run = event  # a held wait is sent as the latest poll saw it
                return
            opened = self._open[event.key] = _Open(identity, event, self.clock())
            if event.event == "seen" and 0 < event.since < self._started:
                # Already waiting when we started following (a restart, a first poll):
                # not news, and told before if we ran then. Known now: never told twice.
                return
            if kind not in self._wanted:
                return
            opened.held = self.grace > 0 and not _says_what(event)
        if opened.held:
            timer = threading.Timer(self.grace, self._release, (event.key, identity))
            timer.daemon = True
            timer.start()
            return
        self._put(message_for(event))

    def _release(self, key: str, identity: tuple[str, str]) -> None:
        """The grace of a held wait is over: sent as it stands, if it is still open."""
        with self._lock:
            known = self._open.get(key)
            if known is None or known.identity != identity or not known.held:
                return  # gone, answered, or replaced by a wait that says what it is
            known.held, known.notified_at = False, self.clock()
            run = known.run
        self._put(message_for(run))

    def remind(self) -> None:
        """Queue the reminder of every wait open ``remind_after`` seconds (called every
        ``check_every`` seconds by a thread of its own)."""
        if self.remind_after is None:
            return
        now = self.clock()
        due = []
        with self._lock:
            for known in self._open.values():
                if known.reminded or known.held or wait_kind(known.run) not in self._wanted:
                    continue
                if now - known.notified_at >= self.remind_after:
                    known.reminded = True
                    due.append(known.run)
        for run in due:
            self._put(message_for(run, reminder=True))

    def close(self, timeout: float = 5.0) -> None:
        """Send what is held and queued (within ``timeout`` per URL), then stop the
        threads."""
        self._stop.set()
        with self._lock:
            held = [known for known in self._open.values() if known.held]
            for known in held:
                known.held = False
        for known in held:
            self._put(message_for(known.run))
        for outlet in self._outlets:
            outlet.close(timeout)

    def _put(self, message: Message) -> None:
        for outlet in self._outlets:
            outlet.put(message)

    def _remind_loop(self) -> None:
        while not self._stop.wait(self.check_every):
            self.remind()


def _refuse(message: Message) -> bool:
    return False


def _apprise_sender(url: str) -> Send:
    import warnings

    with warnings.catch_warnings():
        # apprise 2.x imports the stdlib's deprecated imghdr (gone in 3.13) as it loads
        # its plugins, which it does on the first Apprise() and add().
        warnings.simplefilter("ignore", DeprecationWarning)
        import apprise

        notifier = apprise.Apprise()
        if not notifier.add(url):
            log.error("notifications: apprise does not take the URL %r", url)

    def send(message: Message) -> bool:
        return bool(notifier.notify(title=message.title, body=message.body))

    return send
