"""The spawn wrapper (``agentspool run``): arm a run, run the agent CLI in it with
signals forwarded, record its end in the ledger, sweep its spool.

A module of the public API (``agentspool``); the facade re-exports its names.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentspool.adapters import registry
from agentspool.core.seam import (
    Trust,
)
from agentspool.spool.errors import (
    UnsupportedError,
)
from agentspool.spool.layout import (
    run_dir,
)

if TYPE_CHECKING:
    pass

__all__ = ["run"]


from agentspool.api import _runtime, setup


def run(
    provider: str,
    cli_args: Sequence[str] = (),
    *,
    run_id: str | None = None,
    runtime_dir: str | None = None,
    keep: bool = False,
    executable: str | None = None,
    trust: Trust = "bypass",
) -> int:
    """The spawn wrapper: arm a run, run the agent CLI in it, return the CLI's status.

    Executes ``executable`` (default: the adapter's command on ``PATH``) with the run's
    ``Spawn.args`` and then ``cli_args``, ``Spawn.env`` added to this environment. Signals
    sent to this process (TERM, HUP, USR1, USR2; INT and QUIT too unless a terminal
    already delivers them to the agent, which shares its foreground process group) are
    forwarded. When the CLI exits, the run's ledger records the end (``RunEnded``: the
    status, ``128 + N`` for signal N, and the transcript), so the run reads ``ended``
    from then on; then its spool is swept — only the ledger stays — unless ``keep``.
    """
    import secrets
    import shutil
    import signal
    import subprocess
    import time

    from agentspool.core import ledger
    from agentspool.core.events import RunEnded
    from agentspool.spool.layout import PROVIDER_FILE
    from agentspool.spool.write import LEDGER_FILE

    adapter = registry.load(provider)
    command = executable or adapter.executable
    found = shutil.which(command) if command else None
    if found is None:
        raise UnsupportedError(provider, f"cannot be run: {command or 'no command'!r} not found")
    run_id = run_id or f"{provider}-{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
    runtime = _runtime(runtime_dir)
    spawn = setup(provider, run_id, runtime, trust=trust)
    argv = [found, *spawn.args, *cli_args]
    children: list[subprocess.Popen[bytes]] = []
    terminal = {signal.SIGINT, signal.SIGQUIT}

    def forward(signum: int, _frame: object) -> None:
        if children and (signum not in terminal or not _in_terminal_foreground()):
            children[0].send_signal(signum)

    # Handlers (not SIG_IGN) from before the spawn: a signal in between is not lost, and
    # the agent starts with default dispositions (exec resets handlers, not SIG_IGN).
    previous = {
        s: signal.signal(s, forward)
        for s in [signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, *terminal]
    }
    try:
        children.append(subprocess.Popen(argv, env={**os.environ, **spawn.env}))
        code = children[0].wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    status = 128 - code if code < 0 else code
    directory = run_dir(runtime, run_id)
    transcript = adapter.locate_transcript(run_id, runtime)
    ledger.append(
        directory,
        RunEnded(exit_status=status, transcript_path=transcript, at=time.time(), source="core:run"),
    )
    if not keep:
        _sweep_evidence(directory, keep={LEDGER_FILE, PROVIDER_FILE})
    return status


def _in_terminal_foreground() -> bool:
    """Whether this process group is a terminal's foreground group: then the terminal
    delivers Ctrl-C / Ctrl-\\ to the agent (same group) itself, and forwarding would
    deliver each twice (twice Ctrl-C quits Claude Code)."""
    for fd in (0, 1, 2):
        try:
            return os.tcgetpgrp(fd) == os.getpgrp()
        except OSError:
            continue
    return False


def _sweep_evidence(directory: str, *, keep: set[str]) -> None:
    """Remove a finished run's evidence files (spool, rendered settings, fault log);
    an ended run is read transcript-only, and its ledger says the rest."""
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name not in keep and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
