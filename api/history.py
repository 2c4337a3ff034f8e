"""The history store: where it lives, opening it privately, indexing and searching.

A module of the public API (``agentspool``); the facade re-exports its names.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

# Neither typing nor the registry at import: ``usage``'s kept answer (cli/usage_kept.py)
# finds the store through this module before anything else is imported (ADR 0043).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentspool.core.history import IndexReport
    from agentspool.core.store import SearchHit, SessionStore
    from agentspool.core.usage import SessionFolder

__all__ = ["DATA_DIR_ENV", "default_store_path", "index_history", "open_history", "search_history"]


DATA_DIR_ENV = "AGENTSPOOL_DATA_DIR"
HISTORY_FILE = "history.sqlite"


def default_store_path() -> str:
    """The history store: ``$AGENTSPOOL_DATA_DIR/history.sqlite``, else in the user's
    data dir (``platformdirs``: ``$XDG_DATA_HOME/agentspool``, else
    ``~/.local/share/agentspool``, on Linux)."""
    base = os.environ.get(DATA_DIR_ENV, "") or _plain_linux_data_dir()
    if not base:
        import platformdirs  # only the history commands pay for it (ADR 0023)

        base = platformdirs.user_data_dir("agentspool", appauthor=False)
    return os.path.join(base, HISTORY_FILE)


def _plain_linux_data_dir() -> str:
    """platformdirs' answer on Linux in the plain cases — an absolute ``$XDG_DATA_HOME``,
    else an absolute ``$HOME`` — without importing it (pathlib and its API cost 11 ms of
    a kept ``usage --json`` answer of ~25 ms); ``""`` for every other case, left to it.
    tests/test_history_paths.py holds this to platformdirs' own answer."""
    if not sys.platform.startswith("linux"):
        return ""
    data, home = os.environ.get("XDG_DATA_HOME", ""), os.environ.get("HOME", "")
    if data.startswith("/"):
        return os.path.join(data, "agentspool")
    if home.startswith("/"):
        return os.path.join(home, ".local", "share", "agentspool")
    return ""


def open_history(store: str | None = None) -> SessionStore:
    """The history store (``None``: ``default_store_path()``), created private (dir 0700,
    file 0600) if it is not there. What ``usage`` and ``show`` read: ``sessions``,
    ``find_sessions``, ``records``, ``usage_records``, ``search`` (``core/store.py``).
    Close it (a context manager) when done."""
    from agentspool.core.store import SessionStore

    path = store or default_store_path()
    loose = ""
    if path != ":memory:":
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if store is None:
            loose = _privatise_data_dir(directory)
    opened = SessionStore(path)
    if loose:
        opened.tightened = ", ".join(filter(None, [opened.tightened, loose]))
    return opened


def _privatise_data_dir(directory: str) -> str:
    """Tighten agentspool's own data dir (``default_store_path``'s) that group or others
    could enter; a dir the user named with ``--store`` is theirs to set. ``""`` when it
    was already private."""
    import stat

    st = os.stat(directory, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or not st.st_mode & 0o077:
        return ""
    os.chmod(directory, 0o700)  # a real dir of ours (lstat above): no symlink to follow
    return f"its dir mode {stat.S_IMODE(st.st_mode):o}"


def index_history(
    store: str | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    forget_gone: bool = False,
    wait: bool = True,
    usage_first: bool = False,
    folder: SessionFolder | None = None,
) -> IndexReport:
    """Index every transcript every registered provider finds on this machine into the
    history store, incrementally (``core/history.py``): a file costs what it gained
    since the last run. ``progress(bytes done, bytes to read)`` after each block.
    ``forget_gone``: remove the sessions whose file is gone (kept by default).
    ``wait=False``: return at once (``busy``) if another indexer holds the store.
    ``usage_first``: store only what ``usage`` reads of files never read before, parsed
    on every core; their records and search rows wait for the next run without it
    (ADR 0043), which ``search`` and ``show`` make before they read. ``folder``: the
    ``usage`` report's, to fold each usage-first file where it is parsed
    (``usage_indexed``, ADR 0061)."""
    from agentspool.adapters import registry
    from agentspool.core import history

    with open_history(store) as opened:
        # A provider with nothing on this machine and nothing in the store has nothing to
        # index: it is not loaded (ADR 0062).
        held = opened.providers()
        adapters = [
            registry.load(name)
            for name in registry.names()
            if name in held or registry.history_here(name)
        ]
        return history.index_history(
            opened,
            adapters,
            progress=progress,
            forget_gone=forget_gone,
            wait=wait,
            usage_first=usage_first,
            folder=folder,
        )


def search_history(
    text: str,
    *,
    store: str | None = None,
    limit: int = 20,
    provider: str | None = None,
    marks: tuple[str, str] = ("«", "»"),
) -> list[SearchHit]:
    """Records of the history whose text holds every word of ``text`` (``word*``: a
    prefix), best first; each with its session, time and a snippet whose matched words
    are between ``marks``. Searches what is indexed (call ``index_history`` first)."""
    with open_history(store) as opened:
        return opened.search(text, limit=limit, provider=provider, marks=marks)
