"""The one hook body every provider's entry point runs: stdin → one spool record → exit 0.

A hook never fails the agent. Claude Code treats exit 2 as "block this tool" and any
other non-zero exit as an error shown to the user; Codex reports non-zero exits as
failed hooks. So whatever arrives (empty, huge, binary stdin) and whatever the disk does
(a missing run dir, a runtime or run dir that is not private — ADR 0013 —, ENOSPC,
RLIMIT_FSIZE), this returns 0 and prints nothing. Faults go to the run's ``hooks.log``
(capped), else to the runtime dir's ``faults.log`` if that dir passes the check.
"""

import _signal  # type: ignore[import-not-found]  # signal.py would import enum (~2 ms)
import posix
import time

from agentspool.spool import write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

RUNTIME_DIR_ENV = write.RUNTIME_DIR_ENV.encode()  # posix.environ is bytes
RUN_ID_ENV = write.RUN_ID_ENV.encode()


# A shell that ran the hook command without exec'ing it stands between the agent and
# the hook: skipped when naming the agent process.
_SHELLS = frozenset((b"sh", b"bash", b"dash", b"zsh", b"ksh", b"mksh", b"fish", b"busybox"))


INSTALLED = "--installed"


def _proc_read(pid: int, name: str) -> bytes:
    fd = posix.open(f"/proc/{pid}/{name}", posix.O_RDONLY | posix.O_CLOEXEC)
    try:
        return posix.read(fd, 4096)
    finally:
        posix.close(fd)


def start_ticks(pid: int) -> int:
    """``pid``'s start time (``/proc/<pid>/stat`` field 22, clock ticks since boot): with
    the pid it names one process for good, whatever pid reuse comes later."""
    stat = _proc_read(pid, "stat")
    return int(stat[stat.rfind(b")") + 2 :].split()[19])


def _session_id(payload: bytes) -> str:
    """The payload's ``session_id`` value, found by a byte search (no JSON parse on the
    hook path); ``""`` if there is none or it could not name a directory."""
    at = payload.find(b'"session_id"')
    if at < 0:
        return ""
    start = payload.find(b'"', payload.find(b":", at + 12) + 1) + 1
    end = payload.find(b'"', start)
    value = payload[start:end].decode("ascii", "replace") if 0 < start <= end else ""
    return value if write.run_id_problem(value) is None else ""


def installed_run_id(provider: str, agent_pid: int, payload: bytes, *, daemon: bool) -> str:
    """The run of a session started by hand (hooks installed in the CLI's own settings):
    ``<provider>-<agent pid>-<start ticks>``, so one agent process is one run — it follows
    ``/clear``, ``/compact`` and a ``/resume`` inside it. With ``daemon`` (a CLI that can
    run sessions in a shared server — Codex's ``app-server`` — whose children the hooks
    then are), an agent process that is that server adds the session id: its sessions
    are separate runs."""
    if agent_pid <= 1:
        raise ValueError("installed hook: the agent's pid is unknown")
    run_id = f"{provider}-{agent_pid}-{start_ticks(agent_pid)}"
    if daemon and b"\0app-server\0" in _proc_read(agent_pid, "cmdline"):
        session = _session_id(payload)
        if session:
            run_id += "-" + session
    return run_id


def parent_agent() -> int:
    """The process that ran this hook: the parent, or the parent's parent when the parent
    is a shell. One read of ``/proc/<ppid>/stat``; without ``/proc``, the parent."""
    ppid = posix.getppid()
    try:
        fd = posix.open(f"/proc/{ppid}/stat", posix.O_RDONLY | posix.O_CLOEXEC)
        try:
            stat = posix.read(fd, 1024)
        finally:
            posix.close(fd)
        end = stat.rfind(b")")
        if stat[stat.find(b"(") + 1 : end] in _SHELLS:
            return int(stat[end + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return ppid


def _proc_environ(pid: int) -> dict[bytes, bytes]:
    """``pid``'s environment as it was exec'd (all of it: it can exceed one page)."""
    fd = posix.open(f"/proc/{pid}/environ", posix.O_RDONLY | posix.O_CLOEXEC)
    try:
        chunks = []
        while chunk := posix.read(fd, 65536):
            chunks.append(chunk)
    finally:
        posix.close(fd)
    found = {}
    for entry in b"".join(chunks).split(b"\0"):
        key, sep, value = entry.partition(b"=")
        if sep:
            found[key] = value
    return found


def _wrapped_run(agent_pid: int, provider: str) -> tuple[str, str, int]:
    """The run a wrapper armed for this agent (``setup`` put it in the agent's
    environment): ``(runtime dir, run id, run dir fd)``, or ``("", "", -1)`` when there
    is none, or it is another provider's (an agent started from inside another
    agent's wrapped run inherits that run's variables: it is a run of its own).

    The CLI may withhold our variables from its hooks (Gemini CLI 0.61.0 redacts the
    environment it gives hooks in CI, or when asked to): the agent's own environment,
    which the wrapper set, is read then."""
    environ = posix.environ
    if not environ.get(RUN_ID_ENV) and agent_pid > 1:
        try:
            environ = _proc_environ(agent_pid)
        except OSError:  # not ours to read (hidepid): the session is its own run
            return "", "", -1
    run_id = environ.get(RUN_ID_ENV, b"").decode()
    if not run_id or write.run_id_problem(run_id) is not None:
        return "", "", -1
    runtime_dir = write.default_runtime_dir(environ)
    dir_fd = write.open_run_dir(runtime_dir + "/" + run_id)
    try:
        fd = write.open_to_read(write.PROVIDER_FILE, dir_fd)  # a FIFO there must not block
        try:
            written = posix.read(fd, 256).strip()
        finally:
            posix.close(fd)
    except OSError:
        written = b""
    if written != provider.encode():
        posix.close(dir_fd)
        return "", "", -1
    return runtime_dir, run_id, dir_fd


def run(
    argv: list[str],
    agent_pid_env: str = "",
    *,
    agent_is_parent: bool = False,
    provider: str = "",
    daemon: bool = False,
    armed_by_env: bool = False,
) -> "NoReturn":
    """Append the event to its run's spool, then end the process with status 0 at once.

    ``argv`` is ``[runtime_dir, run_id, event]`` or ``[event]``, baked in by setup, or
    ``["--installed", event]`` from the CLI's own settings (``agentspool install``).

    The agent's pid comes from ``agent_pid_env`` (an environment variable the CLI sets)
    or, with ``agent_is_parent``, from the process that ran the hook.

    With ``[event]`` alone the run comes from ``AGENTSPOOL_RUNTIME_DIR`` and
    ``AGENTSPOOL_RUN_ID``, which the spawn wrapper exports (Codex: the command must be
    the same for every run, or its trusted-hook hash would change per run).

    Installed: a run a wrapper armed (``AGENTSPOOL_RUN_ID`` set) is left to the wrapper's
    own hooks, so it is recorded once; otherwise the run is the agent process itself
    (``installed_run_id``) in the default runtime dir, created on first use. With
    ``armed_by_env`` (a CLI a wrapper cannot arm per run: the installed hooks are the
    wrapper's too) the wrapper's run is recorded here (``_wrapped_run``).
    """
    event = run_id = "?"
    runtime_dir = ""
    dir_fd = -1
    try:
        # Past RLIMIT_FSIZE the kernel sends SIGXFSZ, whose default action kills us
        # with a non-zero status; ignored, the write fails with EFBIG instead.
        _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)
        installed = argv[0] == INSTALLED
        if installed:
            event = argv[1]
            if posix.environ.get(RUN_ID_ENV) and not armed_by_env:
                posix._exit(0)  # a wrapper armed this run: its own hooks record it
            runtime_dir = write.default_runtime_dir(posix.environ)
        elif len(argv) == 1:
            event = argv[0]
            runtime_dir = posix.environ.get(RUNTIME_DIR_ENV, b"").decode()
            run_id = posix.environ.get(RUN_ID_ENV, b"").decode()
        else:
            runtime_dir, run_id, event = argv[0], argv[1], argv[2]
        payload, orig_len, cut = write.read_payload(0)
        agent_pid = 0
        if agent_pid_env:
            value = posix.environ.get(agent_pid_env.encode(), b"")
            agent_pid = int(value) if value.isdigit() else 0
        elif agent_is_parent:
            agent_pid = parent_agent()
        if installed and armed_by_env:
            wrapped_dir, wrapped_id, dir_fd = _wrapped_run(agent_pid, provider)
            if dir_fd >= 0:
                runtime_dir, run_id = wrapped_dir, wrapped_id
        if installed and dir_fd < 0:
            run_id = installed_run_id(provider, agent_pid, payload, daemon=daemon)
        problem = write.run_id_problem(run_id)
        if problem is not None:
            raise ValueError(f"run id {run_id!r}: {problem}")
        if installed and dir_fd < 0:
            dir_fd = write.create_run_dir(runtime_dir, run_id)
        elif dir_fd < 0:
            dir_fd = write.open_run_dir(runtime_dir + "/" + run_id)
        record = write.frame(event, payload, orig_len, cut, agent_pid, posix.getpid())
        write.append(dir_fd, write.EVENTS_FILE, record)
    except BaseException as exc:  # noqa: BLE001 - an observer must never fail the agent
        _log_fault(dir_fd, runtime_dir, run_id, event, exc)
    finally:
        if dir_fd >= 0:
            posix.close(dir_fd)
        # The record went out in one unbuffered write and a hook prints nothing: the
        # interpreter's teardown (freeing every object, ~1.2 ms, 15 % of the bare
        # interpreter in benchmarks/hooks.py) would only keep the agent waiting (ADR 0059).
        posix._exit(0)


def _one_line(text: str) -> str:
    """``text`` with control characters escaped: a run id or event from the environment
    or argv (a newline in ``AGENTSPOOL_RUN_ID``) must not split a log line in two, nor
    forge the next one. Only faults pay for it."""
    return "".join(c if " " <= c != "\x7f" else repr(c)[1:-1] for c in text)


def _log_fault(dir_fd: int, runtime_dir: str, run_id: str, event: str, exc: BaseException) -> None:
    line = _one_line(f"pid={posix.getpid()} event={event} {type(exc).__name__}: {exc}") + "\n"
    stamp = f"{time.time():.3f} "
    # A swept run's own log goes with the run: a refused write is noted where it stays.
    if dir_fd >= 0 and not isinstance(exc, write.RunSweptError):
        try:
            write.append_capped(dir_fd, write.FAULT_LOG, stamp + line)
            return
        except BaseException:  # noqa: BLE001, S110 - the run dir is gone: the runtime log
            pass
    try:
        if runtime_dir:
            root = write.open_private_dir(runtime_dir)
            try:
                write.append_capped(
                    root, write.RUNTIME_FAULT_LOG, f"{stamp}run={_one_line(run_id)} {line}"
                )
            finally:
                posix.close(root)
    except BaseException:  # noqa: BLE001, S110 - nowhere left to report; stay silent
        pass
