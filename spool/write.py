"""The write side of the spool: what a hook process does, and nothing more.

This module is on every agent's critical path (the CLI waits for each hook), so it
imports only interpreter built-ins that a bare ``python -I -S`` has already loaded or
that cost well under a millisecond: ``posix`` rather than ``os`` (``os`` alone costs
~1 ms of a ~8 ms budget), ``time``, and ``binascii`` for the CRC of a long record only
(of every record where it is built into the interpreter).
No pathlib, re, json or typing (``tests/hooks/test_import_budget.py``).

Atomicity: a record is built in memory and handed to one ``write(2)`` on an
``O_APPEND`` descriptor. Linux serialises appends to a regular file under the inode
lock, so concurrent hooks never interleave; a write cut short (ENOSPC, RLIMIT_FSIZE, a
kill) leaves a torn record that readers skip by its length and CRC.
"""

import posix
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

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

SHORT_RECORD = 1536
"""A header or payload up to this many bytes is checksummed by ``_crc32``'s loop, unless
binascii is built into the interpreter (Debian's Python: then it costs nothing). Where
binascii is a shared library (pyenv and python.org builds) loading it costs ~0.18 ms
(``_binascii``), where the loop costs ~0.1 ms per KB (CPython 3.11, this machine). Most
hook payloads are a few hundred bytes; a longer one (a tool's output) is worth the load."""
_BINASCII_BUILT_IN = "binascii" in sys.builtin_module_names
# fmt: off
_CRC_TABLE = (
    0x00000000, 0x77073096, 0xEE0E612C, 0x990951BA, 0x076DC419, 0x706AF48F,
    0xE963A535, 0x9E6495A3, 0x0EDB8832, 0x79DCB8A4, 0xE0D5E91E, 0x97D2D988,
    0x09B64C2B, 0x7EB17CBD, 0xE7B82D07, 0x90BF1D91, 0x1DB71064, 0x6AB020F2,
    0xF3B97148, 0x84BE41DE, 0x1ADAD47D, 0x6DDDE4EB, 0xF4D4B551, 0x83D385C7,
    0x136C9856, 0x646BA8C0, 0xFD62F97A, 0x8A65C9EC, 0x14015C4F, 0x63066CD9,
    0xFA0F3D63, 0x8D080DF5, 0x3B6E20C8, 0x4C69105E, 0xD56041E4, 0xA2677172,
    0x3C03E4D1, 0x4B04D447, 0xD20D85FD, 0xA50AB56B, 0x35B5A8FA, 0x42B2986C,
    0xDBBBC9D6, 0xACBCF940, 0x32D86CE3, 0x45DF5C75, 0xDCD60DCF, 0xABD13D59,
    0x26D930AC, 0x51DE003A, 0xC8D75180, 0xBFD06116, 0x21B4F4B5, 0x56B3C423,
    0xCFBA9599, 0xB8BDA50F, 0x2802B89E, 0x5F058808, 0xC60CD9B2, 0xB10BE924,
    0x2F6F7C87, 0x58684C11, 0xC1611DAB, 0xB6662D3D, 0x76DC4190, 0x01DB7106,
    0x98D220BC, 0xEFD5102A, 0x71B18589, 0x06B6B51F, 0x9FBFE4A5, 0xE8B8D433,
    0x7807C9A2, 0x0F00F934, 0x9609A88E, 0xE10E9818, 0x7F6A0DBB, 0x086D3D2D,
    0x91646C97, 0xE6635C01, 0x6B6B51F4, 0x1C6C6162, 0x856530D8, 0xF262004E,
    0x6C0695ED, 0x1B01A57B, 0x8208F4C1, 0xF50FC457, 0x65B0D9C6, 0x12B7E950,
    0x8BBEB8EA, 0xFCB9887C, 0x62DD1DDF, 0x15DA2D49, 0x8CD37CF3, 0xFBD44C65,
    0x4DB26158, 0x3AB551CE, 0xA3BC0074, 0xD4BB30E2, 0x4ADFA541, 0x3DD895D7,
    0xA4D1C46D, 0xD3D6F4FB, 0x4369E96A, 0x346ED9FC, 0xAD678846, 0xDA60B8D0,
    0x44042D73, 0x33031DE5, 0xAA0A4C5F, 0xDD0D7CC9, 0x5005713C, 0x270241AA,
    0xBE0B1010, 0xC90C2086, 0x5768B525, 0x206F85B3, 0xB966D409, 0xCE61E49F,
    0x5EDEF90E, 0x29D9C998, 0xB0D09822, 0xC7D7A8B4, 0x59B33D17, 0x2EB40D81,
    0xB7BD5C3B, 0xC0BA6CAD, 0xEDB88320, 0x9ABFB3B6, 0x03B6E20C, 0x74B1D29A,
    0xEAD54739, 0x9DD277AF, 0x04DB2615, 0x73DC1683, 0xE3630B12, 0x94643B84,
    0x0D6D6A3E, 0x7A6A5AA8, 0xE40ECF0B, 0x9309FF9D, 0x0A00AE27, 0x7D079EB1,
    0xF00F9344, 0x8708A3D2, 0x1E01F268, 0x6906C2FE, 0xF762575D, 0x806567CB,
    0x196C3671, 0x6E6B06E7, 0xFED41B76, 0x89D32BE0, 0x10DA7A5A, 0x67DD4ACC,
    0xF9B9DF6F, 0x8EBEEFF9, 0x17B7BE43, 0x60B08ED5, 0xD6D6A3E8, 0xA1D1937E,
    0x38D8C2C4, 0x4FDFF252, 0xD1BB67F1, 0xA6BC5767, 0x3FB506DD, 0x48B2364B,
    0xD80D2BDA, 0xAF0A1B4C, 0x36034AF6, 0x41047A60, 0xDF60EFC3, 0xA867DF55,
    0x316E8EEF, 0x4669BE79, 0xCB61B38C, 0xBC66831A, 0x256FD2A0, 0x5268E236,
    0xCC0C7795, 0xBB0B4703, 0x220216B9, 0x5505262F, 0xC5BA3BBE, 0xB2BD0B28,
    0x2BB45A92, 0x5CB36A04, 0xC2D7FFA7, 0xB5D0CF31, 0x2CD99E8B, 0x5BDEAE1D,
    0x9B64C2B0, 0xEC63F226, 0x756AA39C, 0x026D930A, 0x9C0906A9, 0xEB0E363F,
    0x72076785, 0x05005713, 0x95BF4A82, 0xE2B87A14, 0x7BB12BAE, 0x0CB61B38,
    0x92D28E9B, 0xE5D5BE0D, 0x7CDCEFB7, 0x0BDBDF21, 0x86D3D2D4, 0xF1D4E242,
    0x68DDB3F8, 0x1FDA836E, 0x81BE16CD, 0xF6B9265B, 0x6FB077E1, 0x18B74777,
    0x88085AE6, 0xFF0F6A70, 0x66063BCA, 0x11010B5C, 0x8F659EFF, 0xF862AE69,
    0x616BFFD3, 0x166CCF45, 0xA00AE278, 0xD70DD2EE, 0x4E048354, 0x3903B3C2,
    0xA7672661, 0xD06016F7, 0x4969474D, 0x3E6E77DB, 0xAED16A4A, 0xD9D65ADC,
    0x40DF0B66, 0x37D83BF0, 0xA9BCAE53, 0xDEBB9EC5, 0x47B2CF7F, 0x30B5FFE9,
    0xBDBDF21C, 0xCABAC28A, 0x53B39330, 0x24B4A3A6, 0xBAD03605, 0xCDD70693,
    0x54DE5729, 0x23D967BF, 0xB3667A2E, 0xC4614AB8, 0x5D681B02, 0x2A6F2B94,
    0xB40BBE37, 0xC30C8EA1, 0x5A05DF1B, 0x2D02EF8D,
)
# fmt: on


def _crc32(data: bytes, crc: int = 0) -> int:
    """``binascii.crc32(data, crc)``, without loading binascii for a short ``data``."""
    if _BINASCII_BUILT_IN or len(data) > SHORT_RECORD:
        checksum: int = _binascii().crc32(data, crc)
        return checksum
    crc ^= 0xFFFFFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _binascii() -> "ModuleType":
    """binascii. A shared library is loaded from the interpreter's ``lib-dynload`` by its
    path: ``import binascii`` first listed every ``sys.path`` directory before that one,
    ~0.15 ms of the ~0.33 ms the import cost a hook (pyenv's CPython 3.11). Anything
    unexpected (no ``lib-dynload`` entry, another file name) falls back to the import."""
    if _BINASCII_BUILT_IN or "binascii" in sys.modules:
        import binascii  # built in, or loaded: a dict lookup

        return binascii
    try:
        import _imp  # built in and already loaded by the interpreter

        [directory] = [entry for entry in sys.path if entry.endswith("/lib-dynload")]
        path = f"{directory}/binascii{_imp.extension_suffixes()[0]}"
        # importlib.util's spec_from_file_location and module_from_spec, where they live
        # before importlib (~0.1 ms more) is imported.
        spec = sys.modules["_frozen_importlib_external"].spec_from_file_location("binascii", path)
        module: ModuleType = sys.modules["_frozen_importlib"].module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["binascii"] = module
        return module
    except Exception:  # noqa: BLE001 - any surprise: the import system's own search
        import binascii

        return binascii


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
    crc = _crc32(payload, _crc32(header))
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
