"""Arming our hooks in a CLI's own settings file, and taking them out again.

Provider-neutral: Claude Code's ``settings.json`` and Codex's ``hooks.json`` share the
shape ``{"hooks": {"<Event>": [{"matcher"?, "hooks": [{"type": "command", ...}]}]}}``.
The rules every edit keeps (docs/adr/0016-install-into-user-settings.md):

- merge, never overwrite: the text is edited in place (``jsontext``), so every key,
  hook and byte of the user's stays; installing again changes nothing;
- uninstall removes exactly our entries, found by their command
  (``is_installed_hook``), and a container it emptied only if it was not there before
  (the backup says), so install-then-uninstall gives back the original bytes;
- one writer at a time (a lock), and no lost update from a writer that takes no lock:
  the file is re-read just before the rename, and the edit is redone if it moved;
- the replace is atomic and keeps the file's mode; the file as it was before we first
  added to it is kept beside it as ``<name>.agentspool-backup``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from typing import Any, Literal, Protocol

from agentspool.adapters.common import jsontext
from agentspool.adapters.common.commands import is_installed_hook
from agentspool.core.seam import InstalledFile, InstalledHook, InstallReport, InstallScope
from agentspool.spool.errors import SettingsError
from agentspool.spool.files import file_kind, write_private_file
from agentspool.spool.layout import default_runtime_dir, ensure_runtime_dir

BACKUP_SUFFIX = ".agentspool-backup"
NEW_FILE_MODE = 0o600
ATTEMPTS = 5

Edit = Callable[[str | None, str | None], str | None]
"""``(current text or None if missing, backup text or None) -> new text or None``
(None: the file should not exist)."""


def _read(path: str) -> tuple[bytes | None, int]:
    """The file's bytes and mode; ``None`` when there is none. Refuses (``SettingsError``)
    a symlink and anything but a regular file: opened without following a link and
    without blocking (a FIFO would hold install until someone wrote to it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, NEW_FILE_MODE
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _symlink_refused(path) from None
        raise SettingsError(path, f"cannot be read: {exc.strerror}; left untouched") from None
    with open(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = file_kind(st.st_mode)
            raise SettingsError(path, f"is {kind}, not a regular file; left untouched")
        return fh.read(), stat.S_IMODE(st.st_mode)


def _symlink_refused(path: str) -> SettingsError:
    try:
        target = f" (to {os.readlink(path)})"
    except OSError:
        target = ""
    return SettingsError(
        path,
        f"is a symlink{target}; install writes through no symlink it did not make "
        "(name the real file's directory instead); left untouched",
    )


def refuse_symlinks(path: str, root: str) -> None:
    """Refuse ``path`` if a directory between ``root`` and it is a symlink: a project's
    ``.claude`` committed as a link would have install edit whatever it points to."""
    here = os.path.abspath(root)
    for part in os.path.relpath(os.path.dirname(os.path.abspath(path)), here).split(os.sep):
        if part in ("", "."):
            continue
        here = os.path.join(here, part)
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                raise _symlink_refused(here)
        except FileNotFoundError:
            return  # created by install, as a real dir


read_file = _read


def read_text(path: str) -> str | None:
    """The file's text (``_read``, ``decode``); ``None`` when there is none."""
    data, _ = _read(path)
    return None if data is None else decode(data, path)


def decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start
        line = data.count(b"\n", 0, at) + 1
        column = at - (data.rfind(b"\n", 0, at) + 1) + 1
        raise SettingsError(
            path, f"not UTF-8 at line {line}, column {column} (byte {at}); left untouched"
        ) from None


def _lock_path(path: str) -> str:
    # Beside the runtime dir's other locks, not beside the user's file: a lock file in
    # ~/.claude would be one more file the user never asked for.
    import hashlib  # here, not at import: hashlib loads OpenSSL (3 ms of every command)

    digest = hashlib.sha256(path.encode()).hexdigest()[:24]
    return os.path.join(ensure_runtime_dir(default_runtime_dir()), f".install-{digest}.lock")


def edit_file(
    path: str, edit: Edit, *, ours: Callable[[str], bool], root: str | None = None
) -> InstalledFile:
    """Apply ``edit`` to ``path`` under a lock, atomically; report what happened.

    ``root``: the project dir a project-scope file is under; no dir between it and the
    file may be a symlink. ``ours(text)`` tells whether a text already holds our
    entries: the backup is taken only from a file that holds none (the user's own), and
    it is removed once the file is byte-identical to it again.
    """
    from filelock import FileLock

    shown = os.path.abspath(path)
    if root is not None:
        refuse_symlinks(shown, root)
    real = shown  # never through a symlink at the file itself (``_read`` refuses one)
    backup = real + BACKUP_SUFFIX
    with FileLock(_lock_path(real)):
        for _ in range(ATTEMPTS):
            data, mode = _read(real)
            text = None if data is None else decode(data, shown)
            backup_data, _ = _read(backup)
            backup_text = None if backup_data is None else decode(backup_data, backup)
            new = edit(text, backup_text)
            if new == text:
                return InstalledFile(path=shown, action="absent" if data is None else "unchanged")
            if data is not None and not mode & 0o200:
                # Made read-only on purpose (a managed or frozen file): the rename would
                # replace it all the same; say so instead.
                raise SettingsError(
                    shown, f"is read-only (mode {mode:o}); left untouched (chmod u+w to allow)"
                )

            def unchanged_since_read(read: bytes | None = data) -> None:
                if _read(real)[0] != read:
                    raise _MovedError

            try:
                if new is None:
                    unchanged_since_read()
                    os.unlink(real)
                    _remove_dirs_we_made(real)
                    return InstalledFile(path=shown, action="removed")
                kept = ""
                if data is not None and not ours(text or ""):
                    write_private_file(backup, data, mode)
                    kept = backup
                elif backup_data is not None:
                    kept = backup
                if data is None:
                    _make_dirs(real)
                write_private_file(real, new.encode(), mode, before_replace=unchanged_since_read)
            except _MovedError:
                continue
            if backup_data is not None and new.encode() == backup_data:
                _remove_if_equal(backup, backup_data)
                kept = ""
            if data is None:
                return InstalledFile(path=shown, action="created", backup=kept)
            return InstalledFile(path=shown, action="updated", backup=kept)
    raise SettingsError(shown, "kept changing while we edited it; nothing written")


class _MovedError(Exception):
    """The file changed between our read and our rename: redo the edit."""


def _remove_if_equal(path: str, data: bytes) -> None:
    if _read(path)[0] == data:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


# -- the directories install made ------------------------------------------------------
#
# ``--config-home DIR`` may name a directory that does not exist yet (install makes it)
# or one the user made and left empty (uninstall must leave it): an empty directory
# says nothing about who made it. So install notes each directory it makes — path,
# device and inode — in the runtime dir beside its lock, and uninstall removes only
# those, still empty, still the same inode. A note lost with the runtime dir (a reboot
# empties $XDG_RUNTIME_DIR) leaves the directory: never removing one we did not make
# beats always removing one we did.


def _made_dirs_note(path: str) -> str:
    return _lock_path(path).removesuffix(".lock") + ".dirs"


def _make_dirs(path: str) -> None:
    """Make the missing directories above the file ``path``; note the ones made."""
    missing = []
    here = os.path.dirname(path)
    while not os.path.lexists(here):
        missing.append(here)
        here = os.path.dirname(here)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    lines = []
    for made in missing:  # deepest first: the order they can be removed in
        st = os.lstat(made)
        lines.append(f"{st.st_dev} {st.st_ino} {made}\n")
    if lines:
        write_private_file(_made_dirs_note(path), "".join(lines).encode(), NEW_FILE_MODE)


def _remove_dirs_we_made(path: str) -> None:
    """Remove the directories ``_make_dirs`` made for ``path``, deepest first, while each
    is empty and is still the one made (same device and inode); then forget them."""
    note = _made_dirs_note(path)
    data, _ = _read(note)
    if data is None:
        return
    with contextlib.suppress(OSError, ValueError):  # a note we cannot read: remove nothing
        for line in data.decode("utf-8", "replace").splitlines():
            dev, ino, made = line.split(" ", 2)
            st = os.lstat(made)
            if (st.st_dev, st.st_ino) != (int(dev), int(ino)) or not stat.S_ISDIR(st.st_mode):
                break
            os.rmdir(made)  # only succeeds if empty
    with contextlib.suppress(FileNotFoundError):
        os.unlink(note)


# -- the hooks shape both CLIs share -----------------------------------------------------


def handler_is_ours(handler: Any) -> bool:
    return (
        isinstance(handler, dict)
        and isinstance(handler.get("command"), str)
        and is_installed_hook(handler["command"])
    )


def group_is_ours(group: Any) -> bool:
    handlers = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(handlers, list) and bool(handlers) and all(map(handler_is_ours, handlers))


def holds_ours(data: Any) -> bool:
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return False
    return any(
        handler_is_ours(h)
        for groups in hooks.values()
        if isinstance(groups, list)
        for g in groups
        if isinstance(g, dict) and isinstance(g.get("hooks"), list)
        for h in g["hooks"]
    )


def text_holds_ours(text: str, *, comments: bool = False) -> bool:
    try:
        return holds_ours(jsontext.parse(text, "", comments=comments).value)
    except SettingsError:
        return False


def _root(text: str, path: str, comments: bool) -> tuple[jsontext.Node, jsontext.Style]:
    root = jsontext.parse(text, path, comments=comments)
    if not root.is_object():
        raise SettingsError(
            path, f"the top level is not an object ({jsontext.where(text, root.start)})"
        )
    return root, jsontext.Style(text, root)


def _expect(node: jsontext.Node, text: str, path: str, what: str, want: str) -> None:
    ok = node.is_object() if want == "an object" else node.is_array()
    if not ok:
        raise SettingsError(
            path, f"{what} is not {want} ({jsontext.where(text, node.start)}); left untouched"
        )


def add_groups(
    text: str | None, path: str, groups: dict[str, dict[str, Any]], *, comments: bool = False
) -> str:
    """``text`` with one group of ours per event: appended after the user's groups, an
    outdated one of ours (another interpreter, another package root) rewritten in place.
    ``comments``: the file may hold ``//`` and ``/* */`` comments (each stays as it is)."""
    if text is None:
        text = "{}\n"
    for event, group in groups.items():
        root, style = _root(text, path, comments)
        hooks = root.member("hooks")
        if hooks is None:
            text = jsontext.insert(text, root, style, {event: [group]}, key="hooks")
            continue
        _expect(hooks, text, path, '"hooks"', "an object")
        entries = hooks.member(event)
        if entries is None:
            text = jsontext.insert(text, hooks, style, [group], key=event)
            continue
        _expect(entries, text, path, f'"hooks"."{event}"', "an array")
        mine = [node for node in entries.items if group_is_ours(node.value)]
        if not mine:
            text = jsontext.insert(text, entries, style, group)
        elif mine[0].value != group:
            text = jsontext.replace(text, mine[0], style, group)
    return text


def remove_groups(
    text: str | None, path: str, before: str | None, *, comments: bool = False
) -> str | None:
    """``text`` without any hook of ours; a container that holds nothing else any more
    goes too unless ``before`` (the backup: the file before we first added to it) had it.
    None when the file was ours alone (no backup, nothing left): it should not exist."""
    if text is None:
        return None
    had: Any = {}
    if before is not None:
        try:
            had = jsontext.parse(before, path + BACKUP_SUFFIX, comments=comments).value
        except SettingsError:
            had = {}
    had_hooks = had.get("hooks") if isinstance(had, dict) else None
    original = text
    while True:
        root, style = _root(text, path, comments)
        hooks = root.member("hooks")
        if hooks is None or not hooks.is_object():
            break
        found = _first_ours(hooks)
        if found is None:
            break
        key_index, group_index, handler_index = found
        entries = hooks.items[key_index]
        group = entries.items[group_index]
        handlers = group.member("hooks")
        assert handlers is not None
        if group_is_ours(group.value):
            text = jsontext.remove(text, entries, group_index, style)
        else:  # a group the user shares with one of our handlers: only ours goes
            text = jsontext.remove(text, handlers, handler_index, style)
            continue
        event = hooks.keys[key_index]
        if len(entries.items) > 1 or (isinstance(had_hooks, dict) and event in had_hooks):
            continue
        root, style = _root(text, path, comments)
        hooks = _last_member(root, "hooks")
        text = jsontext.remove(text, hooks, key_index, style)  # the edit was inside it
        if len(hooks.items) == 1 and not isinstance(had_hooks, dict):
            root, style = _root(text, path, comments)
            text = jsontext.remove(text, root, _last_index(root, "hooks"), style)
    if text != original and before is None and text_is_empty_object(text, path, comments):
        return None  # we created the file: nothing of anyone else's is in it
    return text


def _last_index(node: jsontext.Node, key: str) -> int:
    return len(node.keys) - 1 - node.keys[::-1].index(key)


def _last_member(node: jsontext.Node, key: str) -> jsontext.Node:
    return node.items[_last_index(node, key)]


def text_is_empty_object(text: str, path: str, comments: bool = False) -> bool:
    """An empty object; with ``comments``, one holding only comments is not empty (they
    are the user's)."""
    root = jsontext.parse(text, path, comments=comments)
    return root.is_object() and not root.items and root.source == text


def _first_ours(hooks: jsontext.Node) -> tuple[int, int, int] | None:
    for key_index, entries in enumerate(hooks.items):
        if not entries.is_array():
            continue
        for group_index, group in enumerate(entries.items):
            handlers = group.member("hooks") if group.is_object() else None
            if handlers is None or not handlers.is_array():
                continue
            for handler_index, handler in enumerate(handlers.items):
                if handler_is_ours(handler.value):
                    return key_index, group_index, handler_index
    return None


def installed_commands(
    path: str, wanted: Callable[[str], str], *, comments: bool = False
) -> list[InstalledHook]:
    """The commands of our hooks in the settings file ``path`` (none when it does not
    exist), each marked current when it is ``wanted(event)``. A file that cannot be read
    or parsed raises ``SettingsError``."""
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise SettingsError(path, f"cannot be read: {exc.strerror}") from None
    out = []
    for event, groups in our_group_positions(text, path, comments=comments).items():
        for _, group in groups:
            for handler in group["hooks"]:
                command = handler["command"]
                out.append(
                    InstalledHook(
                        path=path, event=event, command=command, current=command == wanted(event)
                    )
                )
    return out


def our_group_positions(
    text: str, path: str, *, comments: bool = False
) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """Per event, the index of each group of ours in that event's array, and the group."""
    root, _ = _root(text, path, comments)
    hooks = root.member("hooks")
    out: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    if hooks is None or not hooks.is_object():
        return out
    for event, entries in zip(hooks.keys, hooks.items, strict=True):
        if entries.is_array():
            for index, group in enumerate(entries.items):
                if group_is_ours(group.value):
                    out.setdefault(event, []).append((index, group.value))
    return out


class _HookFunctions(Protocol):
    def install_hooks(self, scope: InstallScope, directory: str | None = None) -> InstallReport: ...
    def uninstall_hooks(
        self, scope: InstallScope, directory: str | None = None
    ) -> InstallReport: ...
    def installed_hooks(self, directory: str | None = None) -> list[InstalledHook]: ...


class HookInstaller:
    """An adapter's ``installer`` part (core/seam.py) from its provider's three functions,
    ``install(scope, directory)``, ``uninstall(scope, directory)`` and
    ``installed_hooks(directory)``; ``of`` takes them from a module (or an object) that
    names them ``install_hooks``, ``uninstall_hooks``, ``installed_hooks``."""

    @classmethod
    def of(cls, functions: _HookFunctions) -> HookInstaller:
        return cls(functions.install_hooks, functions.uninstall_hooks, functions.installed_hooks)

    def __init__(
        self,
        install: Callable[[InstallScope, str | None], InstallReport],
        uninstall: Callable[[InstallScope, str | None], InstallReport],
        installed: Callable[[str | None], list[InstalledHook]],
    ) -> None:
        self._install, self._uninstall, self._installed = install, uninstall, installed

    def install(self, scope: InstallScope, *, directory: str | None = None) -> InstallReport:
        return self._install(scope, directory)

    def uninstall(self, scope: InstallScope, *, directory: str | None = None) -> InstallReport:
        return self._uninstall(scope, directory)

    def installed_hooks(self, directory: str | None = None) -> list[InstalledHook]:
        return self._installed(directory)


# -- a file of our own in the CLI's folder (OpenCode's plugin, Copilot CLI's hooks file) --


def read_own_file(path: str, is_ours: Callable[[str], bool], what: str) -> str | None:
    """The text of our file at ``path``; ``None`` when there is none. A file there that
    is not ours (``is_ours``) is refused in one line, never overwritten or removed."""
    data, _ = read_file(path)  # no symlink, no FIFO: refused in one line
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    if not is_ours(text):
        raise SettingsError(path, f"exists and is not {what}; left as it is")
    return text


def write_own_file(
    provider: str, scope: InstallScope, path: str, wanted: str, current: str | None
) -> InstallReport:
    """Install: ``wanted`` at ``path`` (``current``: what ``read_own_file`` found); the
    folder is made if missing."""
    action: Literal["created", "updated", "unchanged"]
    if current == wanted:
        action = "unchanged"
    else:
        _make_dirs(path)
        write_private_file(path, wanted.encode(), mode=0o644)
        action = "created" if current is None else "updated"
    return InstallReport(
        provider=provider, scope=scope, files=[InstalledFile(path=path, action=action)]
    )


def remove_own_file(
    provider: str, scope: InstallScope, path: str, current: str | None, *, tidy: bool = False
) -> InstallReport:
    """Uninstall: our file gone; with ``tidy``, the folders install made for it too, if
    that left them empty (a folder the CLI does not make itself)."""
    action: Literal["removed", "absent"] = "absent"
    if current is not None:
        os.unlink(path)
        if tidy:
            _remove_dirs_we_made(path)
        action = "removed"
    return InstallReport(
        provider=provider, scope=scope, files=[InstalledFile(path=path, action=action)]
    )


class ScriptInstaller:
    """The ``installer`` part of a CLI that loads every script in a folder of its own
    (OpenCode's plugins, Pi's extensions): installing is adding one file of ours there,
    the script with no run baked in; no file of the user's is edited, so there is
    nothing to merge and nothing to back up. A file of that name that is not ours —
    its first line does not say ``mark`` — is never overwritten or removed."""

    def __init__(
        self,
        provider: str,
        *,
        mark: str,
        what: str,
        file_name: str,
        folder: str,
        user_dir: Callable[[], str],
        project_dir: str,
        source: Callable[[], str],
    ) -> None:
        self.provider, self.mark, self.what, self.file_name = provider, mark, what, file_name
        self._folder, self._user_dir, self._project_dir = folder, user_dir, project_dir
        self._source = source

    def path(self, scope: InstallScope, directory: str | None) -> str:
        """``<root>/<folder>/<file>``: the root ``directory``, else for ``user`` the CLI's
        config dir, for ``project`` the cwd's ``project_dir``."""
        if scope == "user":
            root = os.path.abspath(directory or self._user_dir())
        else:
            root = os.path.join(os.path.abspath(directory or os.getcwd()), self._project_dir)
        return os.path.join(root, self._folder, self.file_name)

    def _current(self, path: str) -> str | None:
        """The file's text; ``None`` when there is none. Refuses one that is not ours."""
        return read_own_file(path, lambda text: self.mark in text.split("\n", 1)[0], self.what)

    def _checked_path(self, scope: InstallScope, directory: str | None) -> str:
        path = self.path(scope, directory)
        if scope == "project":  # a committed symlink must not take the script elsewhere
            refuse_symlinks(path, os.path.abspath(directory or os.getcwd()))
        return path

    def install(self, scope: InstallScope, *, directory: str | None = None) -> InstallReport:
        path = self._checked_path(scope, directory)
        return write_own_file(self.provider, scope, path, self._source(), self._current(path))

    def uninstall(self, scope: InstallScope, *, directory: str | None = None) -> InstallReport:
        path = self._checked_path(scope, directory)
        return remove_own_file(self.provider, scope, path, self._current(path))

    def installed_hooks(self, directory: str | None = None) -> list[InstalledHook]:
        """Our script in the user's folder, if it is there (``agentspool doctor``): the
        CLI loads it itself, so there is no command to run."""
        path = self.path("user", directory)
        current = self._current(path)
        if current is None:
            return []
        return [InstalledHook(path=path, event="plugin", current=current == self._source())]
