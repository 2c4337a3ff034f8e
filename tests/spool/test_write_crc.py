"""The record CRC the write side computes without binascii (``write._crc32``) is
binascii's, byte for byte, on either side of ``SHORT_RECORD``; and a hook that wrote a
short record loaded no binascii, while the reader's CRC check accepts what it wrote."""

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


def test_a_short_record_loads_no_binascii_and_reads_back(tmp_path) -> None:
    code = (
        "import sys\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from agentspool.spool import write\n"
        "fd = write.create_run_dir(sys.argv[1], 'r1')\n"
        "record = write.frame('PreToolUse', b'{\"tool_name\": \"Bash\"}', 21, -1, 0, 1)\n"
        "write.append(fd, write.EVENTS_FILE, record)\n"
        "print('binascii' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(tmp_path), PACKAGE_PARENT],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "False"
    [record] = read_all(str(tmp_path / "r1"))
    assert (record.event, record.payload) == ("PreToolUse", b'{"tool_name": "Bash"}')
