"""A later ``usage --json`` answered with the bytes the one before printed (ADR 0043).

A ``usage`` whose index changed nothing prints what the last one printed. What costs
then is the interpreter's start and the imports (msgspec, the adapters, the CLI's
parser): ~100 ms, against ~10 ms for the check itself. So the answer is kept in the
store with what it was computed from, and the next run with the same arguments checks
that, in the standard library and SQLite alone, before anything else is imported:

- the same command line, working directory and environment (but ``VOLATILE``), and the
  same code (the stat of every file of the package);
- the store at the same generation (no write since: ``SessionStore.remember``);
- every directory the index listed and every file it opened, with the stat each had
  when the index met it (an audit hook sees ``os.scandir``, ``os.listdir`` and
  ``open``: a file added, removed or renamed changes its directory's mtime);
- every file the store holds a cursor or a usage-first stat for, as that stat.

Any difference, or anything it cannot read, and the command runs as it always does. A
table is never kept (its layout follows the terminal), nor an answer with a warning.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["Watch", "answer", "keep"]

VERSION = "usage-kept-1"
VOLATILE = frozenset({"PWD", "OLDPWD", "_", "SHLVL"})
"""Environment variables a shell changes between commands that no answer depends on."""

Stamp = dict[str, list[int]]
_CODE = (".py", ".pyc", ".so")


def _stat(path: str | os.DirEntry[str]) -> list[int]:
    """What a file's stat says of it here; ``[]`` for one that cannot be read."""
    try:
        st = path.stat() if isinstance(path, os.DirEntry) else os.stat(path)
    except OSError:
        return []
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def _code(root: str = "") -> list[object]:
    """The package's files as they stand (an upgrade or an edit changes the answer):
    each file's name and stat, folder by folder in name order, ``__pycache__`` and
    linked folders left out. One ``scandir`` a folder: ``os.walk`` and a ``stat`` by path
    took twice as long, 2 of a kept answer's ~22 ms."""
    found: list[object] = [sys.version, sys.executable]
    folders = [root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    while folders:
        with os.scandir(folders.pop()) as listed:
            entries = sorted(listed, key=lambda entry: entry.name)
        for entry in entries:
            if entry.is_dir():
                if entry.name != "__pycache__" and not entry.is_symlink():
                    folders.append(entry.path)
                continue
            found.append((entry.name, *_stat(entry)))
    return found


def _key(argv: Sequence[str]) -> str:
    env = sorted((k, v) for k, v in os.environ.items() if k not in VOLATILE)
    # repr: the same text for equal values (marshal's bytes depend on how objects are
    # shared). Kept whole, not hashed: hashlib loads OpenSSL, 2-4 ms of a ~25 ms answer,
    # and the key is a few KB of the store (``remember`` drops the stale ones).
    return VERSION + ":" + repr((VERSION, list(argv), os.getcwd(), env, _code()))


def _store_path(argv: Sequence[str]) -> str:
    for n, arg in enumerate(argv):
        if arg == "--store" and n + 1 < len(argv):
            return argv[n + 1]
        if arg.startswith("--store="):
            return arg.partition("=")[2]
    import agentspool  # the facade resolves its names lazily: only agentspool.history here

    return agentspool.default_store_path()


def _files_indexed(db: object) -> list[tuple[str, list[int]]]:
    """Every file the store holds a cursor or a usage-first stat for, with that stat."""
    query = (
        "SELECT sessions.path, device, inode, size, mtime_ns FROM {} "
        "JOIN sessions ON sessions.id = {}.session WHERE sessions.gone = 0"
    )
    rows: list[tuple[str, list[int]]] = []
    for table in ("cursors", "pending"):
        for path, *stat in db.execute(query.format(table, table)):  # type: ignore[attr-defined]
            rows.append((path, stat))
    return rows


def _packed(stamp: Stamp) -> bytes:
    """``path NUL stat NUL …``: no path holds a NUL."""
    return os.fsencode("\0".join(f"{p}\0{' '.join(map(str, st))}" for p, st in stamp.items()))


def _unpacked(data: bytes) -> Stamp:
    fields = os.fsdecode(data).split("\0") if data else []
    return {
        p: [int(n) for n in st.split()] for p, st in zip(fields[::2], fields[1::2], strict=True)
    }


def _holds(stamp: Stamp) -> bool:
    return all(_stat(path) == stat for path, stat in stamp.items())


def answer(argv: Sequence[str]) -> bool:
    """Print the kept answer to ``argv`` if it still stands; whether it did."""
    if "--json" not in argv or any(a.startswith("--prices") for a in argv):
        return False
    try:
        import sqlite3

        path = _store_path(argv)
        if not os.path.isfile(path):
            return False
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.1)
        try:
            row = db.execute(
                "SELECT value FROM remembered WHERE key = ? "
                "AND generation = (SELECT n FROM generation)",
                (_key(argv),),
            ).fetchone()
            if row is None:
                return False
            value = bytes(row[0])
            size = int.from_bytes(value[:4], "big")
            head, output = value[4 : 4 + size], value[4 + size :]
            if not _holds(_unpacked(head)):
                return False
            if not all(_stat(p) == stat for p, stat in _files_indexed(db)):
                return False
        finally:
            db.close()
    except (OSError, ValueError, EOFError, TypeError, sqlite3.Error):
        return False
    sys.stdout.buffer.write(output)
    sys.stdout.flush()
    return True


class Watch:
    """What the index's listing and reading met, with its stat then (an audit hook:
    installed once a process, recording only between ``start`` and ``stop``)."""

    _current: Watch | None = None
    _installed = False

    def __init__(self, ignore: str) -> None:
        self.ignore = ignore
        """The store's own files (its path and those beside it named after it)."""
        self.met: Stamp = {}

    def start(self) -> None:
        if not Watch._installed:
            sys.addaudithook(_audit)
            Watch._installed = True
        Watch._current = self

    def stop(self) -> None:
        Watch._current = None

    def see(self, path: object) -> None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str) or path in self.met:
            return
        path = os.path.abspath(path)
        # The store's own files change with every write; modules are the code's.
        if not path.startswith(self.ignore) and not path.endswith(_CODE):
            self.met[path] = _stat(path)


def _audit(event: str, args: tuple[object, ...]) -> None:
    watch = Watch._current
    if watch is not None and event in ("open", "os.scandir", "os.listdir") and args:
        watch.see(args[0] if args[0] is not None else ".")


def keep(argv: Sequence[str], output: bytes, watch: Watch) -> None:
    """Keep ``output``, the answer to ``argv``, with what ``watch`` met, in the store the
    command read (``watch.ignore``: what argparse made of ``argv``, abbreviations
    included); nothing when the store cannot take it."""
    import agentspool
    from agentspool.errors import StoreError

    head = _packed(watch.met)
    try:
        with agentspool.open_history(watch.ignore) as opened:
            opened.remember(_key(argv), len(head).to_bytes(4, "big") + head + output)
    except (StoreError, OSError):
        return
