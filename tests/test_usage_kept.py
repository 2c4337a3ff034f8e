"""A later ``usage --json`` with nothing changed prints the kept answer (ADR 0043,
``cli/usage_kept.py``): the same bytes, before the CLI is imported — and the answer is
computed again when anything it came from changed: a transcript appended, a file added,
the environment, the arguments."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CAPTURES = Path(__file__).resolve().parent / "live" / "captures" / "claude-code"
_ENTRY = (sys.executable, "-X", "importtime", "-m", "agentspool.cli.entry")
"""The console script's entry, every import it makes listed on stderr."""


@pytest.fixture
def transcript() -> Path:
    """One real capture, where Claude Code keeps it."""
    source = next(iter(sorted(CAPTURES.glob("print-text/transcript/*.jsonl"))))
    project = Path(os.environ["CLAUDE_CONFIG_DIR"], "projects", "-work-print-text")
    project.mkdir(parents=True)
    return Path(shutil.copy(source, project))


def _usage(*extra: str, env: dict[str, str] | None = None) -> tuple[bytes, bool]:
    """``agentspool usage --by session --json`` as the console script runs it: its
    output, and whether it was the kept answer (nothing but the check imported)."""
    done = subprocess.run(
        [*_ENTRY, "usage", "--by", "session", "--json", *extra],
        capture_output=True,
        check=True,
        env=env or dict(os.environ),
    )
    imported = done.stderr.decode()
    return done.stdout, "agentspool.cli.main" not in imported and "msgspec" not in imported


def _another_response(path: Path, message_id: str) -> bytes:
    """The file's first line with usage, as a response of its own (``message_id``)."""
    for raw in path.read_bytes().splitlines():
        record = json.loads(raw)
        message = record.get("message")
        if record.get("type") == "assistant" and isinstance(message, dict) and "usage" in message:
            record["message"] = {**message, "id": message_id}
            return json.dumps(record).encode() + b"\n"
    raise AssertionError("no response with usage in the capture")


def test_nothing_changed_is_the_kept_answer_and_any_change_computes_it(
    transcript: Path,
) -> None:
    first, kept = _usage()
    assert not kept
    again, kept = _usage()
    assert (again, kept) == (first, True)

    with transcript.open("ab") as fh:  # appended: counted
        fh.write(_another_response(transcript, "msg_appended"))
    appended, kept = _usage()
    assert not kept and appended != first
    assert _usage() == (appended, True)

    # A new session in a new project: a directory the index listed changed.
    other = transcript.parent.parent / "-work-other" / "0e9c1f0a-1111-4222-8333-444455556666.jsonl"
    other.parent.mkdir()
    other.write_bytes(_another_response(transcript, "msg_other"))
    added, kept = _usage()
    assert not kept and added != appended
    assert other.stem in {row["key"] for row in json.loads(added)["rows"]}

    other.unlink()  # gone: its usage stays counted, but the answer is computed again
    assert _usage()[1] is False

    zone = {**os.environ, "TZ": "Asia/Kolkata"}
    assert _usage(env=zone)[1] is False
    assert _usage(env=zone)[1] is True
    assert _usage("--provider", "claude-code")[1] is False  # other arguments


def test_a_table_is_never_the_kept_answer(transcript: Path) -> None:
    _usage()
    _usage()
    for _ in range(2):
        table = subprocess.run(
            [*_ENTRY, "usage"],
            capture_output=True,
            check=True,
        )
        assert b"agentspool.cli.main" in table.stderr


def test_an_abbreviated_store_option_never_touches_the_default_store(
    transcript: Path, tmp_path: Path
) -> None:
    """``--sto PATH`` is argparse's ``--store PATH``: the answer is kept in that store, and
    the default one (``$AGENTSPOOL_DATA_DIR``) is never made."""
    other = tmp_path / "other.sqlite"
    first, _ = _usage("--sto", str(other))
    assert _usage("--sto", str(other))[0] == first
    assert other.exists()
    assert not any(Path(os.environ["AGENTSPOOL_DATA_DIR"]).glob("*.sqlite*"))


def test_the_code_stamp_sees_every_file_but_compiled_and_linked_ones(tmp_path: Path) -> None:
    """``_code``: a file edited in a nested folder, added or removed changes the stamp;
    a compiled module in ``__pycache__`` or a file behind a linked folder does not."""
    from agentspool.cli.usage_kept import _code

    nested = tmp_path / "adapters" / "claude_code"
    (nested / "__pycache__").mkdir(parents=True)
    (nested / "_records.py").write_text("A = 1\n")
    (tmp_path / "entry.py").write_text("")
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.py").write_text("")
    (tmp_path / "linked").symlink_to(elsewhere)
    stamp = _code(str(tmp_path))
    assert [entry[0] for entry in stamp[2:]] == ["entry.py", "_records.py"]

    (nested / "__pycache__" / "_records.cpython-311.pyc").write_bytes(b"compiled")
    (elsewhere / "x.py").write_text("changed")
    assert _code(str(tmp_path)) == stamp

    (nested / "_records.py").write_text("A = 22\n")  # an edit in place: its size, mtime
    edited = _code(str(tmp_path))
    assert edited != stamp
    (nested / "_new.py").write_text("")
    assert _code(str(tmp_path)) not in (stamp, edited)
