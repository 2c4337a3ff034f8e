"""Arming Codex per run: ``-c hooks.<Event>=[…]`` arguments, and the hook trust gate.

Codex runs a non-managed hook only once it is trusted (docs/providers/codex.md
§3-§4). Two ways, chosen by the spawn wrapper:

``bypass`` (default)
    ``--dangerously-bypass-hook-trust``. Writes nothing anywhere. Cost: Codex then also
    runs every *untrusted* hook the user has configured, without asking.
``config``
    Write ``trusted_hash`` entries for our hooks into ``$CODEX_HOME/config.toml``, in
    one delimited block that ``untrust`` removes again. Cost: edits the user's config
    (our keys only, atomically), and the hashes are Codex's empirical formula, which a
    Codex upgrade may change (then our hooks silently stop running until re-trusted).

Both need our hook commands to be identical in every run (the hash covers the command
and Codex keys trust by event and position, not by run), so the run travels in the
environment: ``Spawn.env`` carries ``AGENTSPOOL_RUNTIME_DIR``/``AGENTSPOOL_RUN_ID``.
Any ``-c`` forces Codex's embedded mode, where hooks inherit the spawner's environment
(the shared daemon would give them the first TUI's environment instead).
"""

from __future__ import annotations

import json
import os
import re
import tomllib

from agentspool.adapters.codex._home import codex_home
from agentspool.adapters.common.commands import hook_command
from agentspool.adapters.common.templates import template_text, toml_string
from agentspool.core.seam import Spawn, Trust
from agentspool.spool.errors import SettingsError
from agentspool.spool.files import write_private_file
from agentspool.spool.layout import default_runtime_dir, ensure_run_dir
from agentspool.spool.write import RUN_ID_ENV, RUNTIME_DIR_ENV

TEMPLATE = "codex.hooks.toml"
ARGS_FILE = "codex.args.json"
BYPASS_FLAG = "--dangerously-bypass-hook-trust"
SESSION_FLAGS_SOURCE = "/<session-flags>/config.toml"
DEFAULT_TIMEOUT = 600
# Effective timeout Codex hashes when a handler gives none: 600 s, but 1 s for the two
# events it clamps (a given timeout is clamped to 3 s). Observed through app-server
# ``hooks/list`` and confirmed by tests/live (a 3 here leaves SessionEnd untrusted).
CLAMPED_TIMEOUT = {"SessionEnd": 1, "Interrupt": 1}
BLOCK_BEGIN = "# >>> agentspool trusted hooks (remove with: agentspool untrust codex)"
BLOCK_END = "# <<< agentspool trusted hooks"
EOL_ADDED = " [newline added]"


def events() -> list[str]:
    events: list[str] = tomllib.loads(template_text(TEMPLATE))["events"]
    return events


def snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def timeout_for(event: str) -> int:
    """The ``timeout`` our hook for ``event`` is given: the template's (a hook that hung
    would hold Codex for 600 s), 1 s for the events Codex clamps to 3 s anyway."""
    if event in CLAMPED_TIMEOUT:
        return CLAMPED_TIMEOUT[event]
    timeout: int = tomllib.loads(template_text(TEMPLATE))["timeout"]
    return timeout


def hook_args() -> list[str]:
    args: list[str] = []
    for event in events():
        command = toml_string(hook_command("codex", event))
        handler = f'type="command",command={command},timeout={timeout_for(event)}'
        args += ["-c", f"hooks.{event}=[{{hooks=[{{{handler}}}]}}]"]
    return args


def trusted_hash(event: str, command: str | None = None, timeout: int | None = 0) -> str:
    """Codex 0.169.0's hash of a one-handler hook group with no matcher (empirical; see
    module doc): a ``-c`` group, or one of ours in ``hooks.json``. ``timeout``: the one
    the handler gives (``0``: ours, ``timeout_for``; ``None``: none given, Codex's
    effective default)."""
    if timeout is None:
        timeout = CLAMPED_TIMEOUT.get(event, DEFAULT_TIMEOUT)
    elif timeout == 0:
        timeout = timeout_for(event)
    elif event in CLAMPED_TIMEOUT:
        timeout = min(timeout, 3)  # what Codex clamps a given timeout of these to
    group = {
        "event_name": snake(event),
        "hooks": [
            {
                "async": False,
                "command": hook_command("codex", event) if command is None else command,
                "timeout": timeout,
                "type": "command",
            }
        ],
    }
    text = json.dumps(group, sort_keys=True, separators=(",", ":"))
    import hashlib  # here, not at import: hashlib loads OpenSSL (3 ms of every command)

    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def trust_keys() -> dict[str, str]:
    return {f"{SESSION_FLAGS_SOURCE}:{snake(e)}:0:0": trusted_hash(e) for e in events()}


def _without_block(text: str, path: str) -> str:
    """``text`` as it was before ``_with_block`` added our block: byte for byte."""
    begin = text.find(BLOCK_BEGIN)
    if begin < 0:
        return text
    end = text.find(BLOCK_END, begin)
    if end < 0:
        raise SettingsError(path, "agentspool block has no end marker; fix by hand")
    head = text[:begin]
    if text.startswith(EOL_ADDED, begin + len(BLOCK_BEGIN)) and head.endswith("\n"):
        head = head[:-1]  # the newline we added after a last line that had none
    tail = text[end + len(BLOCK_END) :]
    return head + (tail[1:] if tail.startswith("\n") else tail)


def _with_block(base: str, entries: list[str]) -> str:
    """``base`` with our block appended; exactly invertible by ``_without_block``."""
    begin = BLOCK_BEGIN
    if base and not base.endswith("\n"):
        base, begin = base + "\n", BLOCK_BEGIN + EOL_ADDED
    return base + "\n".join([begin, *entries, BLOCK_END]) + "\n"


def _read_config(path: str) -> tuple[str, int]:
    from agentspool.adapters.common import install  # refuses a FIFO, a symlink, non-UTF-8

    data, mode = install.read_file(path)
    if data is None:
        return "", 0o600
    return install.decode(data, path), mode & 0o777  # \r\n kept as it is


def trust(home: str | None = None) -> str:
    """Write our hooks' trusted hashes into ``$CODEX_HOME/config.toml``; return its path.

    Idempotent. Refuses (``SettingsError``, file untouched) if the file is not valid
    TOML or the user already trusts a *different* hook under one of our keys.
    """
    home = codex_home(home)
    path = os.path.join(home, "config.toml")
    text, mode = _read_config(path)
    try:
        base = _without_block(text, path)
        state = tomllib.loads(base).get("hooks", {}).get("state", {})
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(path, f"not valid TOML, left untouched: {exc}") from None
    lines: list[str] = []
    for key, digest in trust_keys().items():
        theirs = state.get(key, {}).get("trusted_hash")
        if theirs == digest:
            continue
        if theirs is not None:
            raise SettingsError(
                path, f"already trusts another hook as {key!r}; remove it or use --trust bypass"
            )
        lines += [f"[hooks.state.{toml_string(key)}]", f"trusted_hash = {toml_string(digest)}"]
    new = _with_block(base, lines)
    tomllib.loads(new)  # never write a file Codex could not load
    os.makedirs(home, mode=0o700, exist_ok=True)
    write_private_file(path, new.encode(), mode)
    return path


def untrust(home: str | None = None) -> bool:
    """Remove our block from ``$CODEX_HOME/config.toml``; True if there was one."""
    path = os.path.join(codex_home(home), "config.toml")
    text, mode = _read_config(path)
    if BLOCK_BEGIN not in text:
        return False
    write_private_file(path, _without_block(text, path).encode(), mode)
    return True


def setup(
    run_id: str, runtime_dir: str, *, trust_mode: Trust = "bypass", home: str | None = None
) -> Spawn:
    runtime_dir = runtime_dir or default_runtime_dir()
    run_dir = ensure_run_dir(runtime_dir, run_id)
    args = hook_args()
    if trust_mode == "bypass":
        args.insert(0, BYPASS_FLAG)
    else:
        trust(home)
    env = {RUNTIME_DIR_ENV: runtime_dir, RUN_ID_ENV: run_id}
    path = os.path.join(run_dir, ARGS_FILE)
    record = {"args": args, "env": env, "trust": trust_mode}
    write_private_file(path, json.dumps(record, indent=2).encode() + b"\n")
    return Spawn(args=args, env=env, settings_path=path, run_dir=run_dir)
