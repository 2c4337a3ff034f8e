"""The record CRC the write side computes without binascii (``write._crc32``) is
binascii's, byte for byte, on either side of ``SHORT_RECORD``; a hook that wrote a short
record loaded no binascii (unless the interpreter has it built in), one that wrote a
long record loaded it from ``lib-dynload`` by its path (or fell back to the import), and
the reader's CRC check accepts what either wrote."""

from __future__ import annotations

import binascii
import random
import subprocess
import sys
from pathlib import Path

import pytest

from agentspool.spool import write
from agentspool.spool.read import read_all

PACKAGE_PARENT = str(Path(write.__file__).parents[2])
"""What a hook command puts first on ``sys.path`` (it runs with ``-I -S``)."""


@pytest.mark.parametrize(
    "size",
    [0, 1, 7, 255, 256, 1000, write.SHORT_RECORD - 1, write.SHORT_RECORD, write.SHORT_RECORD + 1],
)
def test_the_crc_is_binasciis(size: int) -> None:
    rng = random.Random(size)
    data = rng.randbytes(size)
    for start in (0, 1, 0xDEADBEEF, 0xFFFFFFFF):
        assert write._crc32(data, start) == binascii.crc32(data, start)


def test_every_byte_value_in_a_short_record() -> None:
    data = bytes(range(256)) * 4
    assert write._crc32(data) == binascii.crc32(data)


_WRITE_ONE = (
    "import sys\n"
    "sys.path.insert(0, sys.argv[3])\n"
    "if sys.argv[4:]:  # lib-dynload replaced: [an empty one, the real one by another name]\n"
    "    sys.path[:] = [p for p in sys.path if not p.endswith('/lib-dynload')] + sys.argv[4:]\n"
    "from agentspool.spool import write\n"
    "fd = write.create_run_dir(sys.argv[1], 'r1')\n"
    "payload = sys.argv[2].encode()\n"
    "record = write.frame('PreToolUse', payload, len(payload), -1, 0, 1)\n"
    "write.append(fd, write.EVENTS_FILE, record)\n"
    "b = sys.modules.get('binascii')\n"
    "searched = any(k.endswith('/lib-dynload') for k in sys.path_importer_cache)\n"
    "print(b is not None, getattr(b, '__file__', ''), searched, sep='|')\n"
)


def _write_one(runtime: Path, payload: str, *dynload: str) -> tuple[str, str, str]:
    """(binascii loaded, its file, whether the import system searched a lib-dynload)"""
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            _WRITE_ONE,
            str(runtime),
            payload,
            PACKAGE_PARENT,
            *dynload,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded, binascii_file, searched = done.stdout.strip().split("|")
    [record] = read_all(str(runtime / "r1"))
    assert (record.event, record.payload) == ("PreToolUse", payload.encode())
    return loaded, binascii_file, searched


def test_a_short_record_loads_no_binascii_and_reads_back(tmp_path) -> None:
    loaded, _, _ = _write_one(tmp_path, '{"tool_name": "Bash"}')
    assert loaded == str(write._BINASCII_BUILT_IN)


def test_a_long_record_loads_binascii_from_lib_dynload_and_reads_back(tmp_path) -> None:
    loaded, binascii_file, searched = _write_one(tmp_path, "x" * (write.SHORT_RECORD + 1))
    assert loaded == "True"
    if not write._BINASCII_BUILT_IN:  # loaded by its path: no finder listed lib-dynload
        dynload = next(p for p in sys.path if p.endswith("/lib-dynload"))
        assert (Path(binascii_file).parent, searched) == (Path(dynload), "False")


def test_without_lib_dynload_binascii_comes_from_the_import(tmp_path) -> None:
    """Where binascii is found some other way, the import system's search finds it."""
    if write._BINASCII_BUILT_IN:
        pytest.skip("binascii is built into this interpreter: no file to look for")
    dynload = next(p for p in sys.path if p.endswith("/lib-dynload"))
    # The only lib-dynload on the path is empty (the direct load finds no file); the
    # interpreter's is there under another name, where the import's search finds it.
    empty = tmp_path / "lib-dynload"
    empty.mkdir()
    (tmp_path / "dyn").symlink_to(dynload)
    (tmp_path / "runtime").mkdir(mode=0o700)
    loaded, binascii_file, _ = _write_one(
        tmp_path / "runtime", "y" * (write.SHORT_RECORD + 1), str(empty), str(tmp_path / "dyn")
    )
    assert (loaded, Path(binascii_file).parent) == ("True", tmp_path / "dyn")
