"""The write side of the spool: what a hook process does, and nothing more.

This module is on every agent's critical path (the CLI waits for each hook), so it
imports only interpreter built-ins that a bare ``python -I -S`` has already loaded or
that cost well under a millisecond: ``posix`` rather than ``os`` (``os`` alone costs
~1 ms of a ~8 ms budget), ``binascii`` for the CRC, ``time``. No pathlib, re, json or
typing (``tests/hooks/test_import_budget.py``).

Atomicity: a record is built in memory and handed to one ``write(2)`` on an
``O_APPEND`` descriptor. Linux serialises appends to a regular file under the inode
lock, so concurrent hooks never interleave; a write cut short (ENOSPC, RLIMIT_FSIZE, a
kill) leaves a torn record that readers skip by its length and CRC.
"""

import binascii
import posix
import time

# Payloads above this are cut to head + tail: adapters need the identifying fields,
# which agent CLIs put before (session, tool name/input) or after (tool_use_id,
# duration) the one huge value (tool_response, a pasted prompt). See ADR 0001.
MAX_PAYLOAD = 64 * 1024
HEAD_BYTES = 48 * 1024
TAIL_BYTES = MAX_PAYLOAD - HEAD_BYTES
FAULT_LOG_CAP = 64 * 1024
MAGIC = b"\x1eAS1 "
EVENTS_FILE = "events.spool"
LEDGER_FILE = "ledger.spool"
"""The run's ledger (``core/ledger.py``), framed like the spool and appended the same way."""
# The run a hook writes to when its command names none (Codex: the command must be the
# same for every run); ``setup`` puts these in ``Spawn.env``.
RUNTIME_DIR_ENV = "AGENTSPOOL_RUNTIME_DIR"
RUN_ID_ENV = "AGENTSPOOL_RUN_ID"
FAULT_LOG = "hooks.log"
PROVIDER_FILE = "provider"
"""Names the run's provider (written by ``setup``): ``ls`` reads it, and a hook armed by
the environment checks it (``hooks/_entry.py``)."""
RUNTIME_FAULT_LOG = "faults.log"

MAX_RUN_ID = 128
_RUN_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")

_EVENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

# O_NONBLOCK: a FIFO planted where a file should be would otherwise block the open (and
# the agent behind it) until a reader came; with it the open fails (ENXIO) or returns at
# once, and the fstat that follows refuses anything but a regular file (ADR 0037).
_APPEND = (
    posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT | posix.O_CLOEXEC | posix.O_NOFOLLOW
) | posix.O_NONBLOCK
_REGULAR = 0o100000
_READ = posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_CLOEXEC | posix.O_NONBLOCK
_DIR = posix.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC
_CHUNK = 1 << 20

# The mark ``sweep`` puts on a run dir it is taking (ADR 0015): the sticky bit, which
# ``setup`` never gives a run dir. A write that sees it is refused before it happens,
# because the dir (renamed to trash, or about to be) would take the record with it.
SWEEP_MARK = 0o1000


class RunSweptError(FileNotFoundError):
    """The run dir is being (or was) swept: nothing may be appended to it any more."""


class NotRegularError(OSError):
    """Opened something that is not this user's regular file (a FIFO, a device, another
    account's file): nothing is read from or written to it."""


def check_regular(fd: int, name: str) -> int:
    """``fd`` if it is this user's regular file; else close it, ``NotRegularError``."""
    st = posix.fstat(fd)
    if st.st_mode & 0o170000 != _REGULAR or st.st_uid != posix.getuid():
        posix.close(fd)
        raise NotRegularError(
            f"{name}: not a regular file of this user (mode {st.st_mode:o}, uid {st.st_uid})"
        )
    return fd


def open_to_read(name: str, dir_fd: int | None = None) -> int:
    """``name`` opened for reading without blocking (a FIFO would block a plain open) and
    checked: this user's regular file (``check_regular``); never through a symlink."""
    return check_regular(posix.open(name, _READ, dir_fd=dir_fd), name)


def default_runtime_dir(environ: dict[bytes, bytes]) -> str:
    """``$AGENTSPOOL_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/agentspool`` (if that is a
    directory), else ``$TMPDIR/agentspool-<uid>`` (``/tmp`` without ``TMPDIR``).

    One rule for the hooks that create runs (installed hooks, ``posix.environ``) and the
    readers that list them (``os.environb``): they must land on the same directory."""
    explicit = environ.get(RUNTIME_DIR_ENV.encode(), b"").decode()
    if explicit:
        return _absolute(explicit)
    xdg = environ.get(b"XDG_RUNTIME_DIR", b"").decode()
    if xdg.startswith("/"):
        try:
            if posix.stat(xdg).st_mode & 0o170000 == 0o040000:
                return xdg.rstrip("/") + "/agentspool"
        except OSError:
            pass
    tmp = _absolute(environ.get(b"TMPDIR", b"").decode() or "/tmp")  # noqa: S108 - per-user name, checked on use
    return f"{tmp.rstrip('/') or ''}/agentspool-{posix.getuid()}"


def _absolute(path: str) -> str:
    return path if path.startswith("/") else posix.getcwd().rstrip("/") + "/" + path


def run_id_problem(run_id: str) -> str | None:
    """Why ``run_id`` could name something other than one dir below the runtime dir."""
    if not run_id:
        return "empty"
    if len(run_id) > MAX_RUN_ID:
        return f"longer than {MAX_RUN_ID} characters"
    if run_id[0] == ".":
        return "starts with '.'"
    if not _RUN_ID_CHARS.issuperset(run_id):
        return "only letters, digits, '.', '_' and '-' are allowed"
    return None


def read_payload(fd: int = 0) -> tuple[bytes, int, int]:
    """Drain ``fd``; return (stored bytes, original length, head bytes kept or -1).

    Memory stays bounded whatever arrives: only the head and a rolling tail are kept.
    A terminal or a closed descriptor reads as an empty payload.
    """
    try:
        if posix.isatty(fd):
            return b"", 0, -1
    except OSError:
        return b"", 0, -1
    head = bytearray()
    tail = b""
    total = 0
    while True:
        try:
            chunk = posix.read(fd, _CHUNK)
        except InterruptedError:
            continue
        except OSError:
            break
        if not chunk:
            break
        total += len(chunk)
        room = MAX_PAYLOAD - len(head)
        if room > 0:
            head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            tail = (tail + chunk)[-TAIL_BYTES:]
    if total <= MAX_PAYLOAD:
        return bytes(head), total, -1
    # Over the cap: keep HEAD_BYTES of the head and the last TAIL_BYTES of the stream.
    rest = bytes(head[HEAD_BYTES:]) + tail
    return bytes(head[:HEAD_BYTES]) + rest[-TAIL_BYTES:], total, HEAD_BYTES


def frame(  # noqa: PLR0917 - the record header's field order, called once per hook
    event: str, payload: bytes, orig_len: int, cut: int, agent_pid: int, pid: int
) -> bytes:
    """One whole record (header line, payload, newline) as bytes."""
    if not event or not _EVENT_CHARS.issuperset(event):
        raise ValueError(f"event name {event!r} is not [A-Za-z0-9_]+")
    if b"\x1e" in payload:
        payload, cut = _escape_magic(payload, cut)
    header = (
        f"AS1 {event} {time.monotonic_ns()} {time.time_ns()} {pid} {agent_pid} "
        f"{'-' if cut < 0 else cut} {orig_len} {len(payload)}"
    ).encode("ascii")
    crc = binascii.crc32(payload, binascii.crc32(header))
    return b"\x1e" + header + b" %08x\n" % crc + payload + b"\n"


def _escape_magic(payload: bytes, cut: int) -> tuple[bytes, int]:
    """``payload`` with every 0x1e byte (the magic's first) written as JSON's ``\\u001e``.

    A record torn short (ENOSPC, a size limit, a kill) makes the reader resynchronise on
    the next magic; were that inside the torn payload, a record someone wrote into a
    prompt or a file the agent read would be read as evidence. With no 0x1e in any
    payload the next magic is always a record's. JSON, which every CLI sends, never holds
    a raw 0x1e (control characters are escaped in strings and invalid outside them), so
    a CLI's payload is unchanged; only bytes that were not JSON change (ADR 0038)."""
    if cut < 0:
        return payload.replace(b"\x1e", b"\\u001e"), cut
    head = payload[:cut].replace(b"\x1e", b"\\u001e")
    return head + payload[cut:].replace(b"\x1e", b"\\u001e"), len(head)


def open_private_dir(path: str, dir_fd: int | None = None, shut: int = 0o022) -> int:
    """A descriptor on the directory ``path``, never through a symlink; refuses one that
    is another user's or has any of the ``shut`` permission bits (default: group/others
    write); with ``SWEEP_MARK`` in ``shut``, one a sweep is taking (``RunSweptError``)."""
    fd = posix.open(path, _DIR, dir_fd=dir_fd)
    st = posix.fstat(fd)
    if st.st_uid != posix.getuid() or st.st_mode & shut & 0o777:
        posix.close(fd)
        raise PermissionError(
            f"{path}: not a private directory of this user (uid {st.st_uid}, "
            f"mode {st.st_mode & 0o7777:o})"
        )
    if st.st_mode & shut & SWEEP_MARK:
        posix.close(fd)
        raise RunSweptError(f"{path}: being swept")
    return fd


def create_run_dir(runtime_dir: str, run_id: str) -> int:
    """``open_run_dir``, creating what is missing first (0700): the runtime dir (its
    parent must exist) and the run dir. Only an installed hook creates runs: it has no
    ``setup`` before it (ADR 0017). A dir that exists is checked, never repaired."""
    for path in (runtime_dir, runtime_dir + "/" + run_id):
        try:  # noqa: SIM105 - contextlib is an import the hook path does not pay for
            posix.mkdir(path, 0o700)
        except FileExistsError:
            pass
    return open_run_dir(runtime_dir + "/" + run_id)


def open_run_dir(run_dir: str) -> int:
    """A descriptor on ``<runtime>/<run_id>`` for appending evidence, checked the way
    readers check it (ADR 0013): the runtime dir this user's, not a symlink, writable by
    no one else; the run dir opened relative to it, this user's and closed to everyone
    else (0700: payloads carry prompts and file contents)."""
    runtime_dir, sep, run_id = run_dir.rpartition("/")
    # rstrip: a trailing slash would make the kernel follow a symlinked runtime dir.
    root = open_private_dir((runtime_dir.rstrip("/") or "/") if sep else ".")
    try:
        return open_private_dir(run_id, root, 0o077 | SWEEP_MARK)
    finally:
        posix.close(root)


def append(dir_fd: int, name: str, data: bytes) -> None:
    """Append ``data`` to ``name`` in one write; never follows a symlink.

    The write happens under a lock on the file that ``sweep`` also takes, after checking
    the dir carries no sweep mark (ADR 0015): a sweep that took the run first leaves the
    mark, and a write that started first keeps the sweep off the run. Both are a syscall
    each (``lockf`` is in ``posix``; ``flock`` would need ``fcntl``, a ~0.4 ms load).
    Appends of one run queue on the lock for the length of one ``write(2)``.
    """
    fd = check_regular(posix.open(name, _APPEND, 0o600, dir_fd=dir_fd), name)
    try:
        posix.lockf(fd, posix.F_LOCK, 0)
        if posix.fstat(dir_fd).st_mode & SWEEP_MARK:
            raise RunSweptError("the run dir is being swept")
        written = posix.write(fd, data)
    finally:
        posix.close(fd)
    if written != len(data):
        raise OSError(f"short write: {written} of {len(data)} bytes (disk full or size limit)")


def append_capped(dir_fd: int, name: str, text: str, cap: int = FAULT_LOG_CAP) -> None:
    """Append a line to a log unless the log already holds ``cap`` bytes."""
    fd = posix.open(name, _APPEND, 0o600, dir_fd=dir_fd)
    try:
        st = posix.fstat(fd)
        if st.st_mode & 0o170000 != _REGULAR or st.st_uid != posix.getuid():
            return  # a FIFO or another's file where the log should be: nowhere to note it
        if st.st_size < cap:
            posix.write(fd, text.encode("utf-8", "replace"))
    finally:
        posix.close(fd)


def append_record(
    run_dir: str, event: str, payload: bytes, agent_pid: int = 0, name: str = EVENTS_FILE
) -> None:
    """Append one whole record to a run's spool (or another file framed like it, e.g.
    the ledger), as a hook would."""
    fd = open_run_dir(run_dir)
    try:
        append(fd, name, frame(event, payload, len(payload), -1, agent_pid, posix.getpid()))
    finally:
        posix.close(fd)
