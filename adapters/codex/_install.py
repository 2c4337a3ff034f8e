"""Arming Codex once for every run: our hooks in ``$CODEX_HOME/hooks.json``, trusted.

Codex runs a hook from ``hooks.json`` only once the user's ``config.toml`` records its
hash under ``[hooks.state."<abs path of hooks.json>:<event_snake>:<group>:<handler>"]``
(docs/providers/codex.md): ``group`` is our group's position in that event's array,
``handler`` 0 (our groups hold one handler). Install writes our groups, then one such
entry per group; uninstall removes the entries that trust our groups, then the groups.

Only the user scope: Codex reads a project's ``.codex/hooks.json`` only in a trusted
project and where it keeps that trust is not established on the real CLI, so
``project`` is refused rather than written blind.

``config.toml`` is edited as text: each entry is one table appended at the end
(``[hooks.state."…"]`` + ``trusted_hash``), taken out again by its exact text, so
install-then-uninstall gives back the original bytes. tomlkit parses the file (its
errors name the line and column), reads the existing trust whatever layout the user
chose, and rewrites a value in place when a key exists with a stale hash, or removes an
entry Codex itself re-laid out. Every result is checked to hold exactly the data
expected, or nothing is written.
"""

from __future__ import annotations

import copy
import os
import re
import tomllib
from typing import Any

from agentspool.adapters.codex._home import codex_home
from agentspool.adapters.codex._lifecycle import (
    events,
    snake,
    timeout_for,
    trusted_hash,
)
from agentspool.adapters.common import install
from agentspool.adapters.common.commands import hook_command
from agentspool.adapters.common.templates import toml_string
from agentspool.adapters.common.tomltext import parse_toml
from agentspool.core.seam import InstalledHook, InstallReport, InstallScope
from agentspool.spool.errors import SettingsError, UnsupportedError

PROVIDER = "codex"
HOOKS = "hooks.json"
CONFIG = "config.toml"
NEWLINE_ADDED = "  # agentspool added the line break before this table"


def _home(directory: str | None) -> str:
    return os.path.abspath(directory or codex_home())


def groups() -> dict[str, dict[str, Any]]:
    return {
        event: {
            "hooks": [
                {
                    "type": "command",
                    "command": hook_command("codex", event, installed=True),
                    "timeout": timeout_for(event),
                }
            ]
        }
        for event in events()
    }


def _group_hash(event: str, group: dict[str, Any]) -> str | None:
    """The hash Codex keeps for one of our groups, or None for a shape we never write."""
    handlers = group.get("hooks")
    if set(group) != {"hooks"} or not isinstance(handlers, list) or len(handlers) != 1:
        return None
    handler = handlers[0]
    if set(handler) - {"timeout"} != {"type", "command"} or event not in events():
        return None
    timeout = handler.get("timeout")  # none: a group an older install wrote
    if timeout is not None and (not isinstance(timeout, int) or isinstance(timeout, bool)):
        return None
    return trusted_hash(event, handler["command"], timeout)


def _trust_for(hooks_path: str, text: str) -> dict[str, str]:
    """The ``hooks.state`` entries that trust the groups of ours in ``text``."""
    out = {}
    for event, found in install.our_group_positions(text, hooks_path).items():
        for index, group in found:
            digest = _group_hash(event, group)
            if digest is not None:
                out[f"{hooks_path}:{snake(event)}:{index}:0"] = digest
    return out


# -- config.toml ---------------------------------------------------------------------------


def _state(data: Any) -> dict[str, Any]:
    hooks = data.get("hooks") if isinstance(data, dict) else None
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


def _header(key: str) -> str:
    return f"[hooks.state.{toml_string(key)}]"


def _append(text: str, key: str, digest: str, nl: str) -> str:
    body = f"trusted_hash = {toml_string(digest)}{nl}"
    if not text:
        return _header(key) + nl + body
    if text.endswith("\n"):
        return text + nl + _header(key) + nl + body
    return text + nl + nl + _header(key) + NEWLINE_ADDED + nl + body


def _cut(text: str, key: str, digest: str) -> str | None:
    """``text`` without the table ``_append`` wrote for ``key``; None if it is not there
    as we wrote it (Codex or the user re-laid it out)."""
    pattern = re.compile(
        r"(?m)^"
        + re.escape(_header(key))
        + f"({re.escape(NEWLINE_ADDED)})?\\r?\\n"
        + re.escape(f"trusted_hash = {toml_string(digest)}")
        + r"(\r?\n|\Z)"
    )
    match = pattern.search(text)
    if match is None:
        return None
    nl = "\r\n" if match.group(0).endswith("\r\n") or "\r\n" in text else "\n"
    head, tail = text[: match.start()], text[match.end() :]
    if match.group(1):
        head = head.removesuffix(nl + nl) if head.endswith(nl + nl) else head
    elif head.endswith(nl + nl) or head == nl:
        head = head[: -len(nl)]
    return head + tail


def _checked(path: str, text: str, new: str, expected_state: dict[str, Any]) -> str:
    """``new`` if it holds exactly the data of ``text`` with ``expected_state``."""
    try:
        before = tomllib.loads(text)
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(
            path, f"cannot add our trusted hashes in this layout ({exc}); left untouched"
        ) from None
    want = copy.deepcopy(before)
    hooks = want.setdefault("hooks", {})
    if isinstance(hooks, dict):
        hooks["state"] = expected_state
    if _normal(after) != _normal(want):
        raise SettingsError(path, "editing it would change more than our entries; left untouched")
    return new


def _normal(data: dict[str, Any]) -> dict[str, Any]:
    """Empty ``hooks.state``/``hooks`` tables the edit left or removed compare equal."""
    data = copy.deepcopy(data)
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        if hooks.get("state") == {}:
            del hooks["state"]
        if hooks == {}:
            del data["hooks"]
    return data


def add_trust(text: str | None, path: str, entries: dict[str, str]) -> str:
    text = text or ""
    doc = parse_toml(text, path)
    state = _state(doc.unwrap())
    nl = "\r\n" if "\r\n" in text else "\n"
    new = text
    expected = copy.deepcopy(state)
    for key, digest in entries.items():
        theirs = (
            state.get(key, {}).get("trusted_hash") if isinstance(state.get(key), dict) else None
        )
        expected.setdefault(key, {})["trusted_hash"] = digest
        if theirs == digest:
            continue
        if theirs is not None:  # a stale hash of a group no longer at that position
            doc = parse_toml(new, path)
            doc["hooks"]["state"][key]["trusted_hash"] = digest
            new = doc.as_string()
        else:
            new = _append(new, key, digest, nl)
    return _checked(path, text, new, expected) if new != text else text


def remove_trust(
    text: str | None, path: str, backup: str | None, ours: dict[str, set[str]]
) -> str | None:
    """``text`` without the entries whose key is ours (``ours``: key prefix → the hashes
    of our groups) and whose hash is one of ours; None if nothing else was there."""
    if text is None:
        return None
    state = _state(parse_toml(text, path).unwrap())
    drop = [
        (key, value["trusted_hash"])
        for key, value in state.items()
        if isinstance(value, dict)
        and any(
            key.startswith(prefix) and value.get("trusted_hash") in digests
            for prefix, digests in ours.items()
        )
    ]
    if not drop:
        return text
    new = text
    for key, digest in sorted(drop, key=lambda kd: new.find(_header(kd[0])), reverse=True):
        cut = _cut(new, key, digest)
        if cut is None:
            doc = parse_toml(new, path)
            del doc["hooks"]["state"][key]
            cut = doc.as_string()
        new = cut
    expected = {k: v for k, v in state.items() if k not in dict(drop)}
    new = _checked(path, text, new, expected)
    if backup is None and not new:
        return None
    return new


# -- the two operations ---------------------------------------------------------------------


def _refuse_project(scope: InstallScope) -> None:
    if scope != "user":
        raise UnsupportedError(
            PROVIDER,
            "installs hooks for the user only: where Codex keeps a project's hook trust "
            "is not established, so nothing is written into a project",
        )


def _read_text(path: str) -> str | None:
    # Refuses a symlink, a FIFO, text that is not UTF-8, in one line (``install``).
    return install.read_text(path)


def install_hooks(scope: InstallScope, directory: str | None = None) -> InstallReport:
    _refuse_project(scope)
    home = _home(directory)
    hooks_path = os.path.join(home, HOOKS)
    config_path = os.path.join(home, CONFIG)
    wanted = groups()
    # Plan both edits on the texts as they are, so a file we cannot edit (malformed, or
    # trust we cannot add in its layout) is refused before either file is touched.
    planned = install.add_groups(_read_text(hooks_path), hooks_path, wanted)
    add_trust(_read_text(config_path), config_path, _trust_for(hooks_path, planned))
    hooks_done = install.edit_file(
        hooks_path,
        lambda text, _backup: install.add_groups(text, hooks_path, wanted),
        ours=install.text_holds_ours,
    )
    trust = _trust_for(hooks_path, _read_text(hooks_path) or "{}")
    config_done = install.edit_file(
        config_path,
        lambda text, _backup: add_trust(text, config_path, trust),
        ours=lambda text: any(_header(key) in text for key in trust),
    )
    return InstallReport(provider=PROVIDER, scope=scope, files=[hooks_done, config_done])


def uninstall_hooks(scope: InstallScope, directory: str | None = None) -> InstallReport:
    _refuse_project(scope)
    home = _home(directory)
    hooks_path = os.path.join(home, HOOKS)
    config_path = os.path.join(home, CONFIG)
    hooks_text = _read_text(hooks_path)
    ours: dict[str, set[str]] = {}
    if hooks_text is not None:
        for key, digest in _trust_for(hooks_path, hooks_text).items():
            ours.setdefault(key, set()).add(digest)
    # An entry for a group of ours the user already deleted from hooks.json: ours by hash.
    for event in events():
        command = hook_command("codex", event, installed=True)
        for timeout in (0, None):  # this install's, and an older one's without a timeout
            key = f"{hooks_path}:{snake(event)}:"
            ours.setdefault(key, set()).add(trusted_hash(event, command, timeout))
    config_done = install.edit_file(
        config_path,
        lambda text, backup: remove_trust(text, config_path, backup, ours),
        ours=lambda text: True,
    )
    hooks_done = install.edit_file(
        hooks_path,
        lambda text, backup: install.remove_groups(text, hooks_path, backup),
        ours=install.text_holds_ours,
    )
    return InstallReport(provider=PROVIDER, scope=scope, files=[hooks_done, config_done])


def installed_hooks(directory: str | None = None) -> list[InstalledHook]:
    """Our hooks in the user's ``hooks.json`` (``agentspool doctor``)."""
    return install.installed_commands(
        os.path.join(_home(directory), HOOKS),
        lambda event: hook_command("codex", event, installed=True),
    )
