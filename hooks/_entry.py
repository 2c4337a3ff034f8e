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

RUNTIME_DIR_ENV = write.RUNTIME_DIR_ENV.encode()  # posix.environ is bytes
RUN_ID_ENV = write.RUN_ID_ENV.encode()


def run(argv: list[str], agent_pid_env: str = "") -> int:
    """``argv`` is ``[runtime_dir, run_id, event]`` or ``[event]``, baked in by setup.

    With ``[event]`` alone the run comes from ``AGENTSPOOL_RUNTIME_DIR`` and
    ``AGENTSPOOL_RUN_ID``, which the spawn wrapper exports (Codex: the command must be
    the same for every run, or its trusted-hook hash would change per run).
    """
    event = "?"
    runtime_dir = ""
    dir_fd = -1
    try:
        # Past RLIMIT_FSIZE the kernel sends SIGXFSZ, whose default action kills us
        # with a non-zero status; ignored, the write fails with EFBIG instead.
        _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)
        if len(argv) == 1:
            event = argv[0]
            runtime_dir = posix.environ.get(RUNTIME_DIR_ENV, b"").decode()
            run_id = posix.environ.get(RUN_ID_ENV, b"").decode()
        else:
            runtime_dir, run_id, event = argv[0], argv[1], argv[2]
        payload, orig_len, cut = write.read_payload(0)
        problem = write.run_id_problem(run_id)
        if problem is not None:
            raise ValueError(f"run id {run_id!r}: {problem}")
        agent_pid = 0
        if agent_pid_env:
            value = posix.environ.get(agent_pid_env.encode(), b"")
            agent_pid = int(value) if value.isdigit() else 0
        dir_fd = write.open_run_dir(runtime_dir + "/" + run_id)
        record = write.frame(event, payload, orig_len, cut, agent_pid, posix.getpid())
        write.append(dir_fd, write.EVENTS_FILE, record)
    except BaseException as exc:  # noqa: BLE001 - an observer must never fail the agent
        _log_fault(dir_fd, runtime_dir, event, exc)
    finally:
        if dir_fd >= 0:
            posix.close(dir_fd)
    return 0


def _log_fault(dir_fd: int, runtime_dir: str, event: str, exc: BaseException) -> None:
    line = f"{time.time():.3f} pid={posix.getpid()} event={event} {type(exc).__name__}: {exc}\n"
    try:
        if dir_fd >= 0:
            write.append_capped(dir_fd, write.FAULT_LOG, line)
            return
        if runtime_dir:
            root = write.open_private_dir(runtime_dir)
            try:
                write.append_capped(root, write.RUNTIME_FAULT_LOG, line)
            finally:
                posix.close(root)
    except BaseException:  # noqa: BLE001, S110 - nowhere left to report; stay silent
        pass
