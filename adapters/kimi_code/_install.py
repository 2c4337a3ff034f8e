"""Arming Kimi Code: our ``[[hooks]]`` tables in its ``config.toml``, once.

``$KIMI_CODE_HOME/config.toml``, else ``~/.kimi-code/config.toml``. Kimi Code 2.1.0 has
no per-run settings layer (docs/adr/0048-kimi-code.md): these installed hooks also
record a wrapper's run, named in the agent's environment.

The file is the user's, comments and all. Install appends our tables as text at its end
(one block, ``_block``), so uninstall of an untouched block cuts exactly those bytes
and gives the original back. A block the CLI or the user re-laid out is found by
tomlkit instead — every ``[[hooks]]`` table whose command is an installed agentspool
hook — and removed from the document, the rest as it was. Every result is parsed again
and checked to hold exactly the hooks expected, or nothing is written (ADR 0016).
"""

from __future__ import annotations

import os
import tomllib
from typing import Any

from agentspool.adapters.common import install
from agentspool.adapters.common.commands import hook_command, is_installed_hook
from agentspool.adapters.common.templates import template_text, toml_string
from agentspool.adapters.common.tomltext import parse_toml
from agentspool.adapters.kimi_code._home import kimi_dir
from agentspool.core.seam import InstalledHook, InstallReport, InstallScope
from agentspool.spool.errors import SettingsError

PROVIDER = "kimi-code"
TEMPLATE = "kimi-code.hooks.toml"
CONFIG = "config.toml"


def config_path(directory: str | None = None) -> str:
    return os.path.join(os.path.abspath(directory or kimi_dir()), CONFIG)


def events() -> list[str]:
    return [str(t["event"]) for t in tomllib.loads(template_text(TEMPLATE))["hooks"]]


def command(event: str) -> str:
    return hook_command("kimi_code", event, installed=True)


def _block(nl: str) -> str:
    tables = [
        f"[[hooks]]{nl}event = {toml_string(event)}{nl}"
        f"command = {toml_string(command(event))}{nl}timeout = 10{nl}"
        for event in events()
    ]
    return nl.join(tables)


def _hooks(text: str, path: str) -> list[dict[str, Any]]:
    parse_toml(text, path)  # the clearer message for a file that is not TOML
    found = tomllib.loads(text).get("hooks")
    if found is None:
        return []
    if not isinstance(found, list):
        raise SettingsError(path, "`hooks` is not an array of tables; left untouched")
    return [t for t in found if isinstance(t, dict)]


def _ours(table: dict[str, Any]) -> bool:
    return isinstance(table.get("command"), str) and is_installed_hook(table["command"])


def text_holds_ours(text: str) -> bool:
    try:
        return any(_ours(t) for t in tomllib.loads(text).get("hooks") or [] if isinstance(t, dict))
    except (tomllib.TOMLDecodeError, AttributeError):
        return False


def _checked(new: str, path: str, theirs: list[dict[str, Any]], ours: bool) -> str:
    """``new`` if it holds the user's hooks unchanged, and ours exactly when ``ours``."""
    tables = _hooks(new, path)
    kept = [t for t in tables if not _ours(t)]
    mine = sorted(str(t.get("event")) for t in tables if _ours(t))
    if kept != theirs or mine != (sorted(events()) if ours else []):
        raise SettingsError(path, "an edit would change more than our hooks; left untouched")
    return new


def _add(text: str | None, path: str) -> str:
    text = text or ""
    tables = _hooks(text, path)
    theirs = [t for t in tables if not _ours(t)]
    current = {str(t.get("event")): t.get("command") for t in tables if _ours(t)}
    if current == {event: command(event) for event in events()}:
        return text
    if current:  # an older install (another interpreter or package root): replaced
        text = _remove(text, path, None) or ""
    nl = "\r\n" if "\r\n" in text else "\n"
    if not text:
        new = _block(nl)
    elif text.endswith("\n"):
        new = text + nl + _block(nl)
    else:
        new = text + nl + nl + _block(nl)
    return _checked(new, path, theirs, ours=True)


def _remove(text: str | None, path: str, before: str | None) -> str | None:
    if text is None:
        return None
    tables = _hooks(text, path)
    if not any(_ours(t) for t in tables):
        return text
    theirs = [t for t in tables if not _ours(t)]
    if before is None and text in (_block("\n"), _block("\r\n")):
        return None  # the file install created: gone again
    if before is not None and text.startswith(before):
        tail = text[len(before) :]
        for nl in ("\n", "\r\n"):
            for sep in (nl, nl + nl):
                if tail == sep + _block(nl):
                    return before
    doc = parse_toml(text, path)
    array = doc.get("hooks")
    for index in reversed(range(len(array))):
        if _ours(dict(array[index])):
            del array[index]
    if not len(array):
        del doc["hooks"]
    import tomlkit

    return _checked(tomlkit.dumps(doc), path, theirs, ours=False)


def install_hooks(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = config_path(directory)
    done = install.edit_file(path, lambda text, _b: _add(text, path), ours=text_holds_ours)
    return InstallReport(provider=PROVIDER, scope=scope, files=[done])


def uninstall_hooks(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = config_path(directory)
    done = install.edit_file(path, lambda text, b: _remove(text, path, b), ours=text_holds_ours)
    return InstallReport(provider=PROVIDER, scope=scope, files=[done])


def installed_hooks(directory: str | None = None) -> list[InstalledHook]:
    """Our hooks in the user's ``config.toml`` (``agentspool doctor``)."""
    path = config_path(directory)
    text = install.read_text(path)
    if text is None:
        return []
    return [
        InstalledHook(
            path=path,
            event=str(t.get("event")),
            command=str(t["command"]),
            current=t["command"] == command(str(t.get("event"))),
        )
        for t in _hooks(text, path)
        if _ours(t)
    ]


def missing(directory: str | None = None) -> list[str]:
    """The events whose hook of ours is not in ``config.toml`` as ``install`` writes it."""
    try:
        found = {h.event for h in installed_hooks(directory) if h.current}
    except SettingsError:
        found = set()
    return [event for event in events() if event not in found]
