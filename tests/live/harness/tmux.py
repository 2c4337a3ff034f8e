"""Drive an interactive CLI inside a private tmux server.

Every pane runs under its own tmux socket (``-L``), so tests never touch a tmux
server the developer has open, and killing the server cleans up every process.
``start(..., server=pane)`` opens a window in another pane's server instead, as a person
runs several programs in one terminal; ``screens`` reads several of its panes in one
call, so they are compared at the same instant.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence


class TmuxTimeoutError(AssertionError):
    """The screen never showed what a test waited for."""


class Pane:
    def __init__(self, socket: str, target: str) -> None:
        self.socket = socket
        self.target = target

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args],
            check=check,
            capture_output=True,
            text=True,
        )

    def send_keys(self, *keys: str) -> None:
        """Send tmux key names (``Enter``, ``Escape``, ``Down``, ``C-c``)."""
        self._tmux("send-keys", "-t", self.target, *keys)

    def send_text(self, text: str) -> None:
        """Type ``text`` literally (no key-name interpretation)."""
        self._tmux("send-keys", "-t", self.target, "-l", text)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.target).stdout

    def wait_for(self, needle: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if needle in screen:
                return screen
            time.sleep(0.1)
        raise TmuxTimeoutError(f"{needle!r} not on screen after {timeout}s:\n{screen}")

    def wait_until(self, predicate: object, timeout: float = 30.0) -> str:
        """Wait until ``predicate(screen)`` is true; return that screen."""
        assert callable(predicate)
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if predicate(screen):
                return screen
            time.sleep(0.1)
        raise TmuxTimeoutError(f"condition not met after {timeout}s:\n{screen}")

    def pane_pid(self) -> int:
        return int(self._tmux("display-message", "-p", "-t", self.target, "#{pane_pid}").stdout)

    def kill_tree(self) -> None:
        """Kill every process started in the pane (SIGKILL, children first), then the
        tmux server."""
        try:
            pid = self.pane_pid()
        except (subprocess.CalledProcessError, ValueError):  # the server is gone already
            pid = None
        if pid:
            for p in [*descendants(pid), pid]:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(p, 9)
        self.kill()

    def kill(self) -> None:
        path = self._tmux("display-message", "-p", "#{socket_path}", check=False).stdout.strip()
        self._tmux("kill-server", check=False)
        # kill-server leaves the socket file behind; remove ours once the server is gone
        if path and os.path.basename(path) == self.socket:
            for _ in range(50):
                if self._tmux("list-sessions", check=False).returncode != 0:
                    break
                time.sleep(0.05)
            with contextlib.suppress(OSError):
                os.unlink(path)


def submit(pane: Pane, text: str, timeout: float = 30.0) -> None:
    """Type ``text``, wait until the input shows it, then Enter (two tmux calls: text and
    Enter in one can be taken as a paste)."""
    pane.send_text(text)
    pane.wait_for(text, timeout)
    time.sleep(0.3)
    pane.send_keys("Enter")


def wait_exited(pane: Pane, timeout: float = 30.0) -> None:
    """Until the program the pane runs is gone (or a zombie nobody reaped yet)."""
    process = pane.pane_pid()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(process, 0)
        except ProcessLookupError:
            return
        try:
            with open(f"/proc/{process}/stat", "rb") as fh:
                if fh.read().split(b") ", 1)[1][:1] == b"Z":
                    return
        except OSError:
            return
        time.sleep(0.1)
    raise TmuxTimeoutError(f"pid {process} still running after {timeout}s")


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (one scan of ``/proc``)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                stat = fh.read()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out: list[int] = []
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def start(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    width: int = 200,
    height: int = 50,
    server: Pane | None = None,
) -> Pane:
    """Start ``argv`` in a new detached tmux server; the caller must ``kill()`` it.

    ``server``: in a new window of that pane's server instead (its size; killing any of
    its panes kills them all). The window's program gets exactly ``env`` too."""
    command = " ".join(shlex.quote(a) for a in argv)
    if server is not None:
        # A window inherits the server's environment (the first program's): ``env -i``
        # gives this one exactly its own, and what tmux sets in every pane (TERM, TMUX).
        own = [shlex.quote(f"{k}={v}") for k, v in env.items() if k != "TERM"]
        tmux_set = ['TERM="$TERM"', 'TMUX="$TMUX"', 'TMUX_PANE="$TMUX_PANE"']
        pane_id = server._tmux(
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            server.socket,
            "-c",
            cwd,
            " ".join(["exec", "env", "-i", *tmux_set, *own, command]),
        ).stdout.strip()
        return Pane(server.socket, pane_id)
    socket = f"agentspool-{uuid.uuid4().hex[:12]}"
    # tmux passes the *server's* environment to the pane, so the server is started
    # with exactly the env the test wants (private HOME and all) and nothing else.
    # The config is read before the first pane starts, so a command that exits at
    # once still leaves its pane (and its last screen) behind for the test to read.
    fd, conf = tempfile.mkstemp(prefix="agentspool-tmux-", suffix=".conf")
    with os.fdopen(fd, "w") as f:
        f.write("set -g remain-on-exit on\nset -g history-limit 5000\nset -g focus-events on\n")
    try:
        subprocess.run(
            [
                "tmux",
                "-L",
                socket,
                "-f",
                conf,
                "new-session",
                "-d",
                "-s",
                socket,
                "-x",
                str(width),
                "-y",
                str(height),
                "-c",
                cwd,
                command,
            ],
            check=True,
            env=dict(env),
        )
    finally:
        os.unlink(conf)
    return Pane(socket, f"{socket}:0.0")


_BETWEEN = "~~~agentspool-screen~~~"


def screens(*panes: Pane) -> list[str]:
    """Every pane's screen, captured by one tmux call (the panes share a server)."""
    args: list[str] = []
    for pane in panes:
        assert pane.socket == panes[0].socket, "one server"
        args += [*(("display-message", "-p", _BETWEEN, ";") if args else ()), "capture-pane"]
        args += ["-p", "-t", pane.target, ";"]
    out = panes[0]._tmux(*args[:-1]).stdout
    return [text.removeprefix("\n") for text in out.split(_BETWEEN)]
