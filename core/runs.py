"""The runs a runtime dir holds, and one summary line per run (``agentspool ls``).

A run dir names its provider in a ``provider`` file (written by ``setup``); a run dir a
hook created for a session started by hand (installed hooks) is named
``<provider>-<agent pid>-<start time>``, so its name says it. Core summarises what the
adapter composed — it interprets no provider signal.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping

import msgspec

from agentspool.core.proc import ancestors as proc_ancestors
from agentspool.core.seam import (
    Chat,
    ChatState,
    Message,
    PendingApproval,
    PendingDialog,
    TaskState,
)
from agentspool.spool.errors import RuntimeDirError
from agentspool.spool.files import regular_fd
from agentspool.spool.layout import PROVIDER_FILE, private_dir_problem
from agentspool.spool.write import run_id_problem

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

# Most urgent first: waiting on the operator, then working, then idle, then ended.
URGENCY: dict[ChatState, int] = {
    "question": 0,
    "needs_input": 1,
    "working": 2,
    "idle": 3,
    "ended": 4,
}


class RunDir(msgspec.Struct, frozen=True, kw_only=True):
    run_id: str
    provider: str
    """``""`` when neither a ``provider`` file nor the name says it."""


def write_provider(run_dir: str, provider: str) -> None:
    from agentspool.spool.files import write_private_file

    write_private_file(os.path.join(run_dir, PROVIDER_FILE), provider.encode() + b"\n")


def provider_of(runtime_dir: str, run_id: str, providers: Iterable[str]) -> str:
    """The provider of one run (its ``provider`` file, else its name); ``""`` if neither
    says it or the run is not there."""
    try:
        root = os.open(runtime_dir.rstrip("/") or "/", _DIR)
    except OSError:
        return ""
    try:
        return _provider_of(root, run_id, list(providers))
    finally:
        os.close(root)


def _provider_of(dir_fd: int, name: str, providers: list[str]) -> str:
    try:
        fd = regular_fd(f"{name}/{PROVIDER_FILE}", dir_fd=dir_fd, nofollow=True)
    except OSError:  # missing, or not a file (a FIFO there must not block the listing)
        fd = -1
    if fd >= 0:
        with os.fdopen(fd, "rb") as fh:
            written = fh.read(256).decode("utf-8", "replace").strip()
        if written in providers:
            return written
    return provider_named(name, providers)


def provider_named(run_id: str, providers: Iterable[str]) -> str:
    """The provider a run id names (``<provider>-…``, as installed hooks name runs), or
    ``""``."""
    # Longest first: a provider name may be a prefix of another's.
    for provider in sorted(providers, key=len, reverse=True):
        if run_id.startswith(provider + "-"):
            return provider
    return ""


def run_dirs(
    runtime_dir: str, providers: Iterable[str], known: Mapping[str, str] | None = None
) -> list[RunDir]:
    """Every run dir in ``runtime_dir`` (none if it does not exist). Refuses a runtime dir
    that is not private to this user (``RuntimeDirError``), like every reader.

    ``known``: run id → provider, for runs already identified (a watcher's previous
    poll): their ``provider`` file is not read again."""
    names = list(providers)
    known = known or {}
    try:
        root = os.open(runtime_dir.rstrip("/") or "/", _DIR)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise RuntimeDirError(runtime_dir, f"cannot open: {exc.strerror}; refused") from None
    try:
        problem = private_dir_problem(os.fstat(root))
        if problem is not None:
            raise RuntimeDirError(runtime_dir, f"{problem}; refused")
        found = []
        for entry in os.scandir(root):
            if run_id_problem(entry.name) is not None:
                continue  # dot-names (trash, locks), logs: not runs
            if not stat.S_ISDIR(entry.stat(follow_symlinks=False).st_mode):
                continue
            provider = known.get(entry.name) or _provider_of(root, entry.name, names)
            found.append(RunDir(run_id=entry.name, provider=provider))
        return sorted(found, key=lambda r: r.run_id)
    finally:
        os.close(root)


def agent_runs(runtime_dir: str, providers: Iterable[str], pid: int) -> list[str]:
    """The runs installed hooks created for the nearest ancestor of ``pid`` that has any:
    ``<provider>-<pid>-<start ticks>`` (or, for a CLI's shared daemon, that name plus
    ``-<session id>``). ``agentspool lifecycle`` run by an agent started by hand finds its
    run this way: the agent process is an ancestor of every command it runs. ``[]`` when
    no ancestor has a run."""
    names = list(providers)
    present = {entry.run_id for entry in run_dirs(runtime_dir, names)}
    if not present:
        return []
    for proc in proc_ancestors(pid):
        found = []
        for provider in names:
            exact = f"{provider}-{proc.pid}-{proc.started}"
            if exact in present:
                found.append(exact)
            else:
                found += sorted(n for n in present if n.startswith(exact + "-"))
        if found:
            return found
    return []


class RunSummary(msgspec.Struct, kw_only=True):
    """One run as ``agentspool ls`` shows it."""

    provider: str
    run_id: str
    state: ChatState
    activity: str
    task_state: TaskState
    task_reason: str = ""
    since: float = 0.0
    """Evidence time of what put the run in its state (0: no evidence carries one)."""
    cwd: str = ""
    title: str = ""
    """The run's first prompt."""
    pending_approval: PendingApproval | None = None
    pending_dialog: PendingDialog | None = None
    session_id: str = ""
    transcript_path: str = ""
    pid: int = 0
    task_declared: bool = False
    """Whether a declaration set ``task_state`` (else it is the default nobody said)."""


TITLE_CHARS = 120


def prompt_title(message: Message) -> str:
    """A prompt the user wrote, as a title: on one line, cut to ``TITLE_CHARS``; ``""``
    for any other record (the history store titles its sessions the same way)."""
    if message.role != "user" or message.kind != "text" or message.is_meta:
        return ""
    if message.visibility == "hidden":
        return ""
    first = " ".join(message.text.split())
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1] + "…"


def title_of(chat: Chat) -> str:
    return next((t for t in map(prompt_title, chat.messages) if t), "")


def summarize(provider: str, run_id: str, chat: Chat) -> RunSummary:
    since = max((e.at for e in chat.evidence[:1]), default=0.0)
    return RunSummary(
        provider=provider,
        run_id=run_id,
        state=chat.state,
        activity=chat.activity,
        task_state=chat.task_state,
        task_reason=chat.task_reason,
        since=since,
        cwd=chat.cwd,
        title=title_of(chat),
        pending_approval=chat.pending_approval,
        pending_dialog=chat.pending_dialog,
        session_id=chat.transcript_id,
        transcript_path=chat.transcript_path,
        pid=chat.pid,
        task_declared=chat.task_declared,
    )


def by_urgency(runs: Iterable[RunSummary]) -> list[RunSummary]:
    """Waiting on the operator first (longest waiting first), then working, idle, ended."""
    return sorted(runs, key=lambda r: (URGENCY[r.state], r.since or float("inf"), r.run_id))
