"""``agentspool doctor``: whether what ``agentspool install`` armed still records
anything, and how to mend what does not (docs/adr/0040-doctor.md).

An installed hook is a command line baked at install time: an interpreter, a package
root, a bootstrap. Replace the venv it names (``make install`` after ``pip install .``)
and the agent CLI goes on running the command — which, by design, never fails the
agent, so nothing tells the person that no run is recorded any more. ``doctor`` looks:
for every provider whose hooks are installed, that the interpreter and the package it
names exist, and that the command, fired once against a scratch runtime dir, writes a
spool record; that the runtime dir and the data dir are private; that the failures the
hooks themselves recorded (``HOOK_FAILURES``) are seen; that each CLI found on PATH is a
version the compatibility table lists. ``broken_installs`` is the cheap part (no hook is
fired, no CLI asked its version), what ``ls`` and ``watch`` warn with.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import tempfile
from typing import Literal

import msgspec

from agentspool.adapters import registry
from agentspool.core.seam import InstalledHook
from agentspool.spool.errors import AgentspoolError

Status = Literal["ok", "broken", "warning", "absent"]
"""``absent``: nothing to check (the provider is not installed, its CLI not on PATH)."""

TESTED: dict[str, tuple[str, str]] = {
    "claude-code": ("2.1.328", "2.1.332"),
    "codex": ("0.169.0", "0.171.0"),
    "gemini-cli": ("0.61.0", "0.61.0"),
    "opencode": ("1.18.33", "1.18.33"),
}
"""Per provider, the oldest and the newest CLI version the Tier-2 scenarios passed on
(README.md's compatibility table; a test keeps the two equal)."""
VERSION_TIMEOUT = 20.0
"""Seconds a CLI may take to print its version (a Node CLI's first start is slow)."""
FIRE_TIMEOUT = 20.0


class DoctorCheck(msgspec.Struct, frozen=True, kw_only=True):
    """One thing ``doctor`` looked at."""

    provider: str
    """The provider it concerns; ``""`` for agentspool's own dirs."""
    check: str
    """``hooks``, ``hook failures``, ``runtime dir``, ``data dir``, ``cli version``."""
    status: Status
    detail: str
    mend: str = ""
    """What to do about it (``""`` when nothing needs doing)."""


class DoctorReport(msgspec.Struct, kw_only=True):
    checks: list[DoctorCheck]
    broken: bool
    """Whether any check is ``broken`` (``agentspool doctor`` then exits 1)."""


def _hook_argv(command: str) -> tuple[str, str, str] | None:
    """(interpreter, package root, hook module) of an installed hook command."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if "-c" not in argv:
        return None
    at = argv.index("-c")
    if len(argv) < at + 3:
        return None
    code, root = argv[at + 1], argv[at + 2]
    marker = "from agentspool.hooks."
    if marker not in code:
        return None
    module = code.split(marker, 1)[1].split(" ", 1)[0]
    return argv[0], root, module


def _static_problem(hook: InstalledHook) -> str:
    """Why the hook cannot run, from its command line alone; ``""`` if it may."""
    parsed = _hook_argv(hook.command)
    if parsed is None:
        return f"its command is not one agentspool writes: {hook.command[:80]}"
    interpreter, root, module = parsed
    if not (os.path.isfile(interpreter) and os.access(interpreter, os.X_OK)):
        return f"the interpreter it runs, {interpreter}, is gone"
    if not os.path.isfile(os.path.join(root, "agentspool", "hooks", f"{module}.py")):
        return f"the package it imports, agentspool in {root}, is gone"
    return ""


def _installed(provider: str) -> list[InstalledHook]:
    installer = registry.load(provider).installer
    return list(installer.installed_hooks()) if installer is not None else []


def _mend(provider: str) -> str:
    return f"agentspool install {provider} (from the agentspool you use now)"


def broken_installs() -> list[str]:
    """One line per installed provider whose hook cannot run (its interpreter or package
    gone): what ``ls`` and ``watch`` warn about. Fires nothing; never raises."""
    out = []
    for provider in registry.names():
        try:
            hooks = _installed(provider)
        except AgentspoolError:
            continue  # a settings file doctor names; not this cheap look's business
        problems = [p for p in map(_static_problem, (h for h in hooks if h.command)) if p]
        if problems:
            out.append(f"the installed {provider} hooks record nothing: {problems[0]}")
    return out


def _fire(hook: InstalledHook) -> str:
    """Run the hook once, as its CLI would, against a scratch runtime dir; why nothing
    was recorded, or ``""`` when a spool record was."""
    from agentspool.spool.layout import HOOK_FAILURES
    from agentspool.spool.write import EVENTS_FILE

    with tempfile.TemporaryDirectory(prefix="agentspool-doctor-") as scratch:
        os.chmod(scratch, 0o700)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", scratch),
            "AGENTSPOOL_RUNTIME_DIR": scratch,
            "CLAUDE_PID": str(os.getpid()),  # Claude Code names its process so
        }
        payload = msgspec.json.encode(
            {"session_id": "agentspool-doctor", "hook_event_name": hook.event, "cwd": scratch}
        )
        try:
            done = subprocess.run(
                ["/bin/sh", "-c", hook.command],
                input=payload,
                env=env,
                cwd=scratch,
                capture_output=True,
                timeout=FIRE_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"firing it failed: {exc}"
        recorded = any(
            EVENTS_FILE in files and os.path.getsize(os.path.join(where, EVENTS_FILE)) > 0
            for where, _, files in os.walk(scratch)
        )
        if recorded and done.returncode == 0:
            return ""
        failures = os.path.join(scratch, HOOK_FAILURES)
        said = ""
        if os.path.isfile(failures):
            with open(failures, encoding="utf-8", errors="replace") as fh:
                last = fh.read().strip().splitlines()[-1:]
            said = " ".join(last[0].split()[4:]) if last else ""  # past time, module, paths
        if done.returncode != 0:
            err = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
            return f"it exits {done.returncode}" + (f": {err[0]}" if err else "")
        return "fired once, it recorded nothing" + (f" ({said})" if said else "")


def _hook_checks(provider: str, *, fire: bool) -> list[DoctorCheck]:
    try:
        hooks = _installed(provider)
    except AgentspoolError as exc:
        return [
            DoctorCheck(
                provider=provider,
                check="hooks",
                status="broken",
                detail=str(exc),
                mend="mend the file, then agentspool install " + provider,
            )
        ]
    if not hooks:
        return [
            DoctorCheck(
                provider=provider,
                check="hooks",
                status="absent",
                detail="not installed",
                mend="",
            )
        ]
    where = hooks[0].path
    commands = [h for h in hooks if h.command]
    if not commands:  # a plugin the CLI loads itself (OpenCode)
        stale = not all(h.current for h in hooks)
        return [
            DoctorCheck(
                provider=provider,
                check="hooks",
                status="warning" if stale else "ok",
                detail=f"{where}: " + ("another agentspool's plugin" if stale else "installed"),
                mend=f"agentspool install {provider}" if stale else "",
            )
        ]
    for hook in commands:
        problem = _static_problem(hook)
        if problem:
            return [
                DoctorCheck(
                    provider=provider,
                    check="hooks",
                    status="broken",
                    detail=f"{where}: {problem}",
                    mend=_mend(provider),
                )
            ]
    if fire:
        sample = next((h for h in commands if h.event == "SessionStart"), commands[0])
        problem = _fire(sample)
        if problem:
            return [
                DoctorCheck(
                    provider=provider,
                    check="hooks",
                    status="broken",
                    detail=f"{where}: {sample.event} hook: {problem}",
                    mend=_mend(provider),
                )
            ]
    if not all(h.current for h in commands):
        return [
            DoctorCheck(
                provider=provider,
                check="hooks",
                status="warning",
                detail=f"{where}: installed by another agentspool (it still records)",
                mend=f"agentspool install {provider} makes them this one's",
            )
        ]
    fired = "; fired once, recorded" if fire else ""
    return [
        DoctorCheck(
            provider=provider,
            check="hooks",
            status="ok",
            detail=f"{where}: {len(commands)} hooks{fired}",
        )
    ]


def _dir_check(name: str, path: str) -> DoctorCheck:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return DoctorCheck(provider="", check=name, status="ok", detail=f"{path}: not made yet")
    except OSError as exc:
        return DoctorCheck(
            provider="", check=name, status="broken", detail=f"{path}: {exc.strerror}"
        )
    if stat.S_ISLNK(st.st_mode):
        return DoctorCheck(
            provider="",
            check=name,
            status="broken",
            detail=f"{path} is a symlink (readers refuse it)",
            mend=f"remove the link and let agentspool make {path}",
        )
    if not stat.S_ISDIR(st.st_mode):
        return DoctorCheck(
            provider="",
            check=name,
            status="broken",
            detail=f"{path} is not a dir",
            mend=f"move {path} aside",
        )
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid != os.getuid():
        return DoctorCheck(
            provider="",
            check=name,
            status="broken",
            detail=f"{path} is owned by uid {st.st_uid}, not {os.getuid()}",
            mend=f"remove {path} (another account made it)",
        )
    if mode & 0o022:
        return DoctorCheck(
            provider="",
            check=name,
            status="broken",
            detail=f"{path} is writable by group or others (mode {mode:o}): readers "
            "refuse what it holds",
            mend=f"chmod 700 {path}",
        )
    if mode & 0o077:
        return DoctorCheck(
            provider="",
            check=name,
            status="warning",
            detail=f"{path} is readable by others (mode {mode:o})",
            mend=f"chmod 700 {path}",
        )
    return DoctorCheck(provider="", check=name, status="ok", detail=f"{path}: private")


def _failures_check(runtime: str) -> DoctorCheck | None:
    from agentspool.spool.layout import HOOK_FAILURES

    path = os.path.join(runtime, HOOK_FAILURES)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = [line for line in fh.read().splitlines() if line.strip()]
    except OSError:
        return None
    if not lines:
        return None
    import time

    words = lines[-1].split()
    when = (
        time.strftime("%Y-%m-%d %H:%M", time.localtime(int(words[0])))
        if words and words[0].isdigit()
        else "?"
    )
    what = " ".join(words[4:]) or lines[-1]
    return DoctorCheck(
        provider="",
        check="hook failures",
        status="warning",
        detail=f"{len(lines)} hook runs could not start agentspool; the last at {when}: {what}",
        mend=f"once the hooks check ok: rm {path}",
    )


def _version(text: str) -> str:
    import re

    found = re.search(r"\d+\.\d+\.\d+", text)
    return found.group(0) if found else ""


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _cli_check(provider: str) -> DoctorCheck:
    import shutil

    executable = registry.load(provider).executable
    path = shutil.which(executable) if executable else None
    if path is None:
        return DoctorCheck(
            provider=provider,
            check="cli version",
            status="absent",
            detail=f"{executable or provider}: not on PATH",
        )
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            timeout=VERSION_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        version = _version(done.stdout.decode(errors="replace"))
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    oldest, newest = TESTED.get(provider, ("", ""))
    if not version:
        return DoctorCheck(
            provider=provider,
            check="cli version",
            status="warning",
            detail=f"{path}: no version it printed could be read",
        )
    if not oldest:
        return DoctorCheck(
            provider=provider, check="cli version", status="ok", detail=f"{path} {version}"
        )
    tested = oldest if oldest == newest else f"{oldest} to {newest}"
    if _key(oldest) <= _key(version) <= _key(newest):
        return DoctorCheck(
            provider=provider,
            check="cli version",
            status="ok",
            detail=f"{path} {version} (tested: {tested})",
        )
    return DoctorCheck(
        provider=provider,
        check="cli version",
        status="warning",
        detail=f"{path} {version} is not in the compatibility table (tested: {tested})",
        mend="states may be incomplete; make compat runs the scenarios against it",
    )


def doctor(*, fire: bool = True, versions: bool = True) -> DoctorReport:
    """Every check, in order: per provider its installed hooks (``fire``: each fired
    once against a scratch runtime dir) and its CLI's version (``versions``), then the
    hooks' own failure records, the runtime dir and the data dir."""
    from agentspool.history import default_store_path
    from agentspool.spool.layout import default_runtime_dir

    checks: list[DoctorCheck] = []
    for provider in registry.names():
        checks += _hook_checks(provider, fire=fire)
        if versions:
            checks.append(_cli_check(provider))
    runtime = default_runtime_dir()
    failures = _failures_check(runtime)
    if failures is not None:
        checks.append(failures)
    checks.append(_dir_check("runtime dir", runtime))
    checks.append(_dir_check("data dir", os.path.dirname(default_store_path())))
    return DoctorReport(checks=checks, broken=any(c.status == "broken" for c in checks))
