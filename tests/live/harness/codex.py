"""Run the real ``codex`` 0.169.0 against the scripted Responses server, hermetically.

Every run gets a private temp root holding ``home/`` (HOME), ``codex/`` (CODEX_HOME),
``work/`` (the session cwd, a fresh git repo) and ``hooks/`` (logging-hook output). The
machine's real home is never read or written: HOME, CODEX_HOME, XDG_* and TMPDIR all
point inside the root, and the only address configured anywhere is 127.0.0.1.

Embedded (non-daemon) mode is always forced: every command line carries at least one
``-c`` override, and the TUI also gets ``--no-daemon``; so no background app-server
daemon can outlive a test.

API (all run/start functions accept ``extra_args`` and ``extra_env``, appended last)::

    home = make_home(server.base_url)                 # -> CodexHome
    env = build_env(home, extra_env)
    proc = run_exec(home, "prompt", extra_args=[...], extra_env={...})   # CompletedProcess
    pane = start_tui(home, extra_args=[...], extra_env={...})           # tmux.Pane, at its prompt
    args = logging_hook_args(home.hook_log)           # -c hooks.<Event>=[...] for all 13 events
    events = read_hook_log(home.hook_log)             # [{"event", "time", "payload"}, ...]
    rollouts(home)                                    # rollout files, oldest first
    trusted_hash("Stop", command) / write_hook_trust(home, events_and_commands)
    home.cleanup()
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import homes, hooklog, tmux
from .hooklog import read_hook_log

LIVE_DIR = Path(__file__).resolve().parent.parent
# `make compat` points these at another release, installed into its own prefix.
CODEX_BIN = Path(
    os.environ.get("AGENTSPOOL_CODEX_BIN") or LIVE_DIR / "node_modules" / ".bin" / "codex"
)
CODEX_VERSION = os.environ.get("AGENTSPOOL_CODEX_VERSION") or "0.169.0"

HOOK_EVENTS: tuple[str, ...] = (
    "PreModelRequest",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SessionStart",
    "SessionEnd",
    "SubagentStart",
    "SubagentStop",
    "Interrupt",
    "UserPromptSubmit",
    "Stop",
)
# Codex clamps these two to 3 s when a timeout is given (startup warning "clamping
# SessionEnd hook timeout to 3s"); when ``timeout`` is omitted their effective timeout
# is 1 s (seen in app-server hooks/list ``timeoutSec`` and in the trusted_hash).
CLAMPED_3S = frozenset({"SessionEnd", "Interrupt"})
CLAMPED_DEFAULT_TIMEOUT = 1
DEFAULT_HOOK_TIMEOUT = 600
SESSION_FLAGS_SOURCE = "/<session-flags>/config.toml"

API_KEY_ENV = "LOCAL_API_KEY"

# The footer first shows "? for shortcuts" alone; "← for agents" (and the "⚠ N warnings"
# badge) appear once the session is configured. Keys like Shift+Tab sent before that
# are silently dropped, so readiness waits for "for agents".
TUI_READY_MARKERS = ("for agents",)


def snake(event: str) -> str:
    out = []
    for i, ch in enumerate(event):
        if ch.isupper() and i:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


@dataclass
class CodexHome:
    root: Path
    home: Path
    codex_home: Path
    cwd: Path
    hook_log: Path
    base_url: str
    panes: list[tmux.Pane] = field(default_factory=list)

    @property
    def config_toml(self) -> Path:
        return self.codex_home / "config.toml"

    def cleanup(self, *, keep: bool = False) -> None:
        """Kill every tmux server started for this home, then delete the root."""
        homes.cleanup(self.panes, self.root, keep=keep, kill=kill_pane)

    def __enter__(self) -> CodexHome:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


def _toml_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid TOML basic string


def provider_config(base_url: str, *, retries: int = 0, idle_timeout_ms: int | None = None) -> str:
    lines = [
        'model = "gpt-5-codex"',
        'model_provider = "local"',
        "",
        "[model_providers.local]",
        'name = "Local"',
        f"base_url = {_toml_str(base_url)}",
        'wire_api = "responses"',
        f'env_key = "{API_KEY_ENV}"',
        f"request_max_retries = {retries}",
        f"stream_max_retries = {retries}",
    ]
    if idle_timeout_ms is not None:
        lines.append(f"stream_idle_timeout_ms = {idle_timeout_ms}")
    return "\n".join(lines) + "\n"


def make_home(
    base_url: str,
    *,
    root: str | Path | None = None,
    retries: int = 0,
    extra_config: str = "",
    git_init: bool = True,
) -> CodexHome:
    """Create a private HOME + CODEX_HOME + cwd whose config points at ``base_url``.

    ``extra_config`` is TOML: its leading top-level keys go to the top of config.toml,
    its tables to the end.
    """
    assert base_url.startswith("http://127.0.0.1:"), base_url
    r = Path(root) if root else Path(tempfile.mkdtemp(prefix="agentspool-codex-"))
    r.mkdir(parents=True, exist_ok=True)
    home = CodexHome(
        root=r,
        home=r / "home",
        codex_home=r / "codex",
        cwd=r / "work",
        hook_log=r / "hooks",
        base_url=base_url,
    )
    for d in (
        home.home,
        home.codex_home,
        home.cwd,
        home.hook_log,
        r / "tmp",
        home.home / ".config",
    ):
        d.mkdir(parents=True, exist_ok=True)
    # top-level keys first: everything after a [table] header belongs to that table
    cfg = "\n".join(
        [
            # first-run screens and background network calls
            "check_for_update_on_startup = false",
            "",
        ]
    )
    cfg += provider_config(base_url, retries=retries)
    cfg += "\n".join(
        [
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[feedback]",
            "enabled = false",
            "",
            # skips the "Do you trust this directory?" screen
            f"[projects.{_toml_str(str(home.cwd))}]",
            'trust_level = "trusted"',
            "",
            # keys the TUI writes itself after its first start; pre-seeded so that every
            # start looks like a later one
            "[tui]",
            "screen_reader_detection_done = true",
            "",
            "[tui.model_availability_nux]",
            '"gpt-6.1-sol" = 1',
            "",
        ]
    )
    if extra_config:
        # lines before the first [table] header are top-level keys: put them first
        lines = extra_config.strip().splitlines()
        cut = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("[")), len(lines))
        cfg = "\n".join(lines[:cut]) + "\n" + cfg + "\n" + "\n".join(lines[cut:]) + "\n"
    home.config_toml.write_text(cfg)
    if git_init:
        subprocess.run(["git", "init", "-q", str(home.cwd)], check=True, env=_git_env(home))
    return home


def _git_env(home: CodexHome) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home.home),
        "GIT_CONFIG_NOSYSTEM": "1",
    }


def build_env(home: CodexHome, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment: nothing from the caller's env except PATH/LANG."""
    env = homes.private_env(home.home, tmp=home.root / "tmp")
    env.update({"CODEX_HOME": str(home.codex_home), API_KEY_ENV: "sk-local-test", "NO_COLOR": "1"})
    if extra_env:
        env.update(extra_env)
    return env


# Any -c forces embedded mode; this one is harmless and always present.
EMBEDDED_ARGS: tuple[str, ...] = ("-c", "check_for_update_on_startup=false")


def exec_argv(
    prompt: str,
    *,
    extra_args: Sequence[str] = (),
    json_events: bool = False,
    cwd: Path | None = None,
) -> list[str]:
    argv = [str(CODEX_BIN), "exec", *EMBEDDED_ARGS, "--skip-git-repo-check"]
    if json_events:
        argv.append("--json")
    if cwd is not None:
        argv += ["-C", str(cwd)]
    argv += list(extra_args)
    argv += ["--", prompt]
    return argv


def run_exec(
    home: CodexHome,
    prompt: str,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
    json_events: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``codex exec`` to completion (stdin closed); kill its process group on timeout."""
    argv = exec_argv(prompt, extra_args=extra_args, json_events=json_events)
    proc = subprocess.Popen(
        argv,
        cwd=home.cwd,
        env=build_env(home, extra_env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        out, err = proc.communicate()
        raise
    finally:
        _kill_group(proc.pid)  # anything left in its session (background terminals)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, 9)


def tui_argv(extra_args: Sequence[str] = (), prompt: str | None = None) -> list[str]:
    argv = [str(CODEX_BIN), "--no-daemon", *EMBEDDED_ARGS, *extra_args]
    if prompt is not None:
        argv += ["--", prompt]
    return argv


def start_tui(
    home: CodexHome,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    prompt: str | None = None,
    wait_ready: bool = True,
    timeout: float = 60.0,
    width: int = 160,
    height: int = 50,
    server: tmux.Pane | None = None,
) -> tmux.Pane:
    """Start the TUI in a private tmux server (``server``: in a new window of that pane's
    server); return once its composer is ready.

    The pane is registered on ``home`` so ``home.cleanup()`` kills it.
    """
    argv = tui_argv(extra_args, prompt)
    pane = tmux.start(
        argv,
        cwd=str(home.cwd),
        env=build_env(home, extra_env),
        width=width,
        height=height,
        server=server,
    )
    home.panes.append(pane)
    if wait_ready:
        wait_tui_ready(pane, timeout=timeout)
    return pane


def wait_tui_ready(pane: tmux.Pane, timeout: float = 60.0, *, probe: bool = True) -> str:
    """Wait until the composer is drawn *and* accepts keys.

    The footer ("? for shortcuts") is drawn before the TUI reads keys: a key sent at
    that moment (e.g. Shift+Tab) can be lost. With ``probe`` a harmless ``x`` is typed
    until it shows up in the composer, then erased.
    """
    screen = pane.wait_until(lambda s: any(m in s for m in TUI_READY_MARKERS), timeout=timeout)
    if not probe:
        return screen
    deadline = time.monotonic() + timeout
    while True:
        pane.send_text("x")
        try:
            pane.wait_until(lambda s: composer_text(s) == "x", timeout=2.0)
            break
        except tmux.TmuxTimeoutError:
            if time.monotonic() > deadline:
                raise
            if (composer_text(pane.screen()) or "").startswith("x"):
                break
    while (composer_text(pane.screen()) or "").startswith("x"):
        pane.send_keys("BSpace")
        try:
            pane.wait_until(lambda s: not (composer_text(s) or "").startswith("x"), timeout=2.0)
        except tmux.TmuxTimeoutError:
            if time.monotonic() > deadline:
                raise
    return pane.wait_until(lambda s: composer_text(s) == COMPOSER_PLACEHOLDER, timeout=10.0)


def kill_pane(pane: tmux.Pane) -> None:
    """Kill the tmux server and every process that was started in the pane."""
    pane.kill_tree()


def codex_pid(pane: tmux.Pane) -> int | None:
    """PID of the native ``codex`` process under the pane (not the node launcher)."""
    for p in tmux.descendants(pane.pane_pid()):
        try:
            exe = os.readlink(f"/proc/{p}/exe")
        except OSError:
            continue
        if os.path.basename(exe) == "codex":  # the node launcher's exe is .../node
            return p
    return None


# --------------------------------------------------------------------------- hooks


def hook_command(event: str, log_dir: Path) -> str:
    """The shell command a logging hook runs for ``event`` (``hooklog``)."""
    return hooklog.command(event, Path(log_dir))


def hook_arg(event: str, command: str, *, timeout: int | None = None) -> str:
    handler = f'type="command",command={_toml_str(command)}'
    if timeout is not None:
        handler += f",timeout={timeout}"
    return f"hooks.{event}=[{{hooks=[{{{handler}}}]}}]"


def logging_hook_args(
    log_dir: Path, events: Iterable[str] = HOOK_EVENTS, *, bypass_trust: bool = True
) -> list[str]:
    """``-c hooks.<Event>=[...]`` for every event; each logs its stdin to log_dir/hooks.jsonl.

    With ``bypass_trust`` the list ends with ``--dangerously-bypass-hook-trust``.
    """
    args: list[str] = []
    for ev in events:
        args += ["-c", hook_arg(ev, hook_command(ev, Path(log_dir)))]
    if bypass_trust:
        args.append("--dangerously-bypass-hook-trust")
    return args


def hook_events(log_dir: Path) -> list[str]:
    return [r["event"] for r in read_hook_log(log_dir)]


def wait_hook(
    log_dir: Path, event: str, *, count: int = 1, timeout: float = 30.0, where: Any = None
) -> list[dict[str, Any]]:
    """Wait until ``event`` was logged ``count`` times (optionally: ``where(payload)``)."""
    deadline = time.monotonic() + timeout
    while True:
        hits = [
            r
            for r in read_hook_log(log_dir)
            if r["event"] == event and (where is None or where(r["payload"]))
        ]
        if len(hits) >= count:
            return hits
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"hook {event} x{count} not logged after {timeout}s; got {hook_events(log_dir)}"
            )
        time.sleep(0.1)


def trusted_hash(
    event: str,
    command: str,
    *,
    timeout: int | None = None,
    matcher: str | None = None,
    status_message: str | None = None,
    is_async: bool = False,
) -> str:
    """Codex's ``trusted_hash`` for one command handler (docs/providers/codex.md §3, empirical)."""
    if event in CLAMPED_3S:
        eff = CLAMPED_DEFAULT_TIMEOUT if timeout is None else min(timeout, 3)
    else:
        eff = DEFAULT_HOOK_TIMEOUT if timeout is None else timeout
    handler: dict[str, Any] = {
        "async": is_async,
        "command": command,
        "timeout": eff,
        "type": "command",
    }
    if status_message is not None:
        handler["statusMessage"] = status_message
    obj: dict[str, Any] = {"event_name": snake(event), "hooks": [handler]}
    if matcher is not None:
        obj["matcher"] = matcher
    data = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(data.encode()).hexdigest()


def trust_entries_toml(commands: Mapping[str, str]) -> str:
    """``[hooks.state."/<session-flags>/config.toml:<event>:0:0"]`` tables for event -> command."""
    out = []
    for ev, cmd in commands.items():
        key = f"{SESSION_FLAGS_SOURCE}:{snake(ev)}:0:0"
        out.append(
            f"[hooks.state.{_toml_str(key)}]\ntrusted_hash = {_toml_str(trusted_hash(ev, cmd))}\n"
        )
    return "\n".join(out)


def write_hook_trust(home: CodexHome, commands: Mapping[str, str]) -> None:
    """Append trust entries for ``-c`` hooks (event -> command) to CODEX_HOME/config.toml."""
    with open(home.config_toml, "a") as f:
        f.write("\n" + trust_entries_toml(commands))


def hooks_list(
    home: CodexHome,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Ask codex itself (``codex app-server`` over stdio, ``hooks/list``) which hooks it sees.

    Returns the entry for ``home.cwd``: ``{"cwd", "hooks": [{key, eventName, command,
    timeoutSec, currentHash, trustStatus, source, ...}], "warnings", "errors"}``.
    ``extra_args`` are passed to ``codex app-server`` (e.g. the ``-c hooks.…`` args).
    ``codex app-server`` has no ``-p``: profile-file trust cannot be checked this way
    (the process exits and this raises TimeoutError).
    """
    proc = subprocess.Popen(
        [str(CODEX_BIN), "app-server", *extra_args],
        cwd=home.cwd,
        env=build_env(home, extra_env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for msg in (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"clientInfo": {"name": "harness", "version": "0"}},
            },
            {"jsonrpc": "2.0", "method": "initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "hooks/list",
                "params": {"cwds": [str(home.cwd)]},
            },
        ):
            proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            obj = json.loads(line)
            if obj.get("id") == 2:
                entry: dict[str, Any] = obj["result"]["data"][0]
                return entry
        raise TimeoutError("codex app-server did not answer hooks/list")
    finally:
        _kill_group(proc.pid)
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()


def write_hook_trust_profile(
    home: CodexHome, profile: str, commands: Mapping[str, str]
) -> list[str]:
    """Write trust entries into ``CODEX_HOME/<profile>.config.toml``; return ``["-p", profile]``.

    Observed: with ``-p <profile>`` the entries in that profile file are honored exactly
    like entries in config.toml (exec and TUI, no modal), and config.toml stays untouched.
    Codex itself may write TUI bookkeeping keys into the active profile file.
    """
    path = home.codex_home / f"{profile}.config.toml"
    with open(path, "a") as f:
        f.write(trust_entries_toml(commands))
    return ["-p", profile]


def logging_hook_commands(log_dir: Path, events: Iterable[str] = HOOK_EVENTS) -> dict[str, str]:
    return {ev: hook_command(ev, Path(log_dir)) for ev in events}


# --------------------------------------------------------------------------- rollouts


def rollouts(home: CodexHome) -> list[Path]:
    """Every rollout file under CODEX_HOME/sessions, oldest first (by name = creation time)."""
    base = home.codex_home / "sessions"
    if not base.exists():
        return []
    return sorted(base.rglob("rollout-*.jsonl"), key=lambda p: p.name)


def read_rollout(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out


def rollout_event_types(path: Path) -> list[str]:
    """``type`` or ``type/payload.type`` of each record."""
    out = []
    for r in read_rollout(path):
        pt = r.get("payload", {}).get("type") if isinstance(r.get("payload"), dict) else None
        out.append(f"{r.get('type')}/{pt}" if pt else str(r.get("type")))
    return out


def wait_rollout_record(
    home: CodexHome, predicate: Any, *, timeout: float = 30.0
) -> dict[str, Any]:
    """Wait until some record in any rollout satisfies ``predicate(record)``."""
    deadline = time.monotonic() + timeout
    while True:
        for p in rollouts(home):
            for r in read_rollout(p):
                if predicate(r):
                    return r
        if time.monotonic() > deadline:
            raise TimeoutError(f"no matching rollout record after {timeout}s")
        time.sleep(0.1)


def is_event(kind: str) -> Any:
    """Predicate for ``event_msg`` records with ``payload.type == kind``."""
    return lambda r: (
        r.get("type") == "event_msg"
        and isinstance(r.get("payload"), dict)
        and r["payload"].get("type") == kind
    )


# --------------------------------------------------------------------------- TUI screen helpers

APPROVAL_MARKER = "Would you like to run the following command?"
HOOKS_REVIEW_MARKER = "Hooks need review"
PROMPT_GLYPH = "\u203a"  # the composer's prompt character (single right angle quote)
COMPOSER_PLACEHOLDER = "Ask Codex to do anything"


def composer_text(screen: str) -> str | None:
    """Text of the composer: the last line starting with PROMPT_GLYPH (None if none)."""
    lines = [
        ln for ln in screen.splitlines() if ln.startswith(PROMPT_GLYPH + " ") or ln == PROMPT_GLYPH
    ]
    return lines[-1][2:].rstrip() if lines else None


def is_idle_screen(screen: str) -> bool:
    """The composer shows its placeholder and no "esc to interrupt" is on screen.

    Necessary, not sufficient: while the model streams *text* the screen shows neither a
    "Working" line nor "esc to interrupt" (observed), so it looks idle. Wait on a hook
    (Stop / Interrupt) or a rollout record first, then on this.
    """
    return composer_text(screen) == COMPOSER_PLACEHOLDER and "esc to interrupt" not in screen


def submit(pane: tmux.Pane, text: str, *, timeout: float = 15.0, settle: float = 0.3) -> str:
    """Type ``text`` into the composer and press Enter; return the screen after submission.

    The TUI treats a fast burst of characters followed at once by Enter as a *paste*
    (Enter then inserts a newline instead of submitting), so: type, wait until the text
    is rendered in the composer, wait ``settle`` seconds, press Enter, and wait until the
    composer no longer holds the text (Enter is re-sent once if it was swallowed).

    A question form or an approval replaces the composer, and ``composer_text`` then
    reads the prompt just submitted from the history above it: a turn running, a
    question or an approval open proves the submission too. (0.169.0, once in four suite
    runs: the form had no line of its own starting with the glyph, and the Enter re-sent
    7.5 s later answered the question.)
    """

    def submitted(screen: str) -> bool:
        shown = ("esc to interrupt", "Question 1/", APPROVAL_MARKER)
        return any(marker in screen for marker in shown) or composer_text(screen) != text

    pane.send_text(text)
    pane.wait_until(lambda s: composer_text(s) == text, timeout=timeout)
    time.sleep(settle)
    pane.send_keys("Enter")
    try:
        return pane.wait_until(submitted, timeout=timeout / 2)
    except tmux.TmuxTimeoutError:
        pane.send_keys("Enter")
        return pane.wait_until(submitted, timeout=timeout / 2)


def plan_mode(pane: tmux.Pane, *, timeout: float = 15.0) -> str:
    """Switch the TUI to Plan mode (Shift+Tab = tmux key ``BTab``), retrying a lost key."""
    deadline = time.monotonic() + timeout
    while True:
        pane.send_keys("BTab")
        try:
            return pane.wait_for("Plan mode (shift+tab", timeout=3.0)
        except tmux.TmuxTimeoutError:
            if time.monotonic() > deadline:
                raise


def wait_idle(pane: tmux.Pane, timeout: float = 60.0) -> str:
    return pane.wait_until(is_idle_screen, timeout=timeout)


def clean_screen(screen: str) -> str:
    """The screen without blank lines and the braille logo (for notes)."""
    return "\n".join(
        ln.rstrip() for ln in screen.splitlines() if ln.strip() and "⣿" not in ln and "⠿" not in ln
    )
