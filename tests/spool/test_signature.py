"""``spool_sig``: changes whenever evidence changes, from stat alone."""

from __future__ import annotations

import os

import pytest

from agentspool import spool_sig
from agentspool.errors import RunIdError
from agentspool.spool.signature import ABSENT, paths_sig


def sig(run):
    """``spool_sig`` of the test's Claude Code run, as the public API computes it."""
    return spool_sig("claude-code", run.run_id, run.runtime_dir)


def test_changes_when_a_hook_appends(claude_run, silent):
    before = sig(claude_run)
    assert before == sig(claude_run)
    silent(claude_run.run(b"{}", "Stop"))
    after = sig(claude_run)
    assert after != before
    silent(claude_run.run(b"{}", "Stop"))
    assert sig(claude_run) != after


def test_changes_when_a_file_is_replaced_with_same_size_and_mtime(claude_run):
    """A replaced file (new inode) of the same size within the same second still counts."""
    path = os.path.join(claude_run.run_dir, "marker.json")
    with open(path, "wb") as fh:
        fh.write(b'{"state":"a"}')
    st = os.stat(path)
    before = sig(claude_run)
    tmp = path + ".new"
    with open(tmp, "wb") as fh:  # created while the old file still exists: a new inode
        fh.write(b'{"state":"b"}')
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, path)
    assert (os.stat(path).st_size, os.stat(path).st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert os.stat(path).st_ino != st.st_ino
    assert sig(claude_run) != before


def test_same_size_append_within_the_same_tick_still_changes(claude_run):
    spool = os.path.join(claude_run.run_dir, "events.spool")
    with open(spool, "wb") as fh:
        fh.write(b"x")
    st = os.stat(spool)
    before = sig(claude_run)
    with open(spool, "ab") as fh:
        fh.write(b"y")
    os.utime(spool, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert sig(claude_run) != before


def test_absent_run(runtime_dir):
    assert spool_sig("claude-code", "never-set-up", runtime_dir) == ABSENT


def test_bad_run_id_is_refused(runtime_dir):
    with pytest.raises(RunIdError):
        spool_sig("claude-code", "../etc", runtime_dir)


def test_opens_no_file(claude_run, silent):
    """Stat only: an unreadable spool does not stop the digest from changing."""
    silent(claude_run.run(b"{}", "Stop"))
    spool = os.path.join(claude_run.run_dir, "events.spool")
    os.chmod(spool, 0)
    before = sig(claude_run)
    os.truncate(spool, 0)
    assert sig(claude_run) != before


def test_paths_sig_follows_growth_replacement_and_removal(tmp_path):
    """What adapters fold in for evidence outside the run dir: stat of each path, no read."""
    path = tmp_path / "status.json"
    missing = str(tmp_path / "none")
    assert paths_sig((str(path),)) == paths_sig((str(path),))
    absent = paths_sig((str(path), missing))
    path.write_bytes(b'{"status":"busy"}')
    path.chmod(0)
    created = paths_sig((str(path), missing))
    with open(path, "ab") as fh:
        fh.write(b" ")
    grown = paths_sig((str(path), missing))
    replacement = tmp_path / "status.new"
    replacement.write_bytes(path.read_bytes())
    st = path.stat()
    os.utime(replacement, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(replacement, path)
    replaced = paths_sig((str(path), missing))
    path.unlink()
    assert len({absent, created, grown, replaced}) == 4
    assert paths_sig((str(path), missing)) == absent
