"""The runtime dir is private to the user, and run ids can only name one dir in it."""

from __future__ import annotations

import os
import stat

import pytest

import agentspool
from agentspool.errors import RunIdError, RuntimeDirError
from agentspool.spool import layout


@pytest.mark.parametrize(
    "run_id", ["", ".", "..", ".hidden", "../x", "a/b", "a b", "x" * 129, "é", "a\x00b", "a\nb"]
)
def test_bad_run_ids(run_id):
    with pytest.raises(RunIdError):
        layout.check_run_id(run_id)


@pytest.mark.parametrize("run_id", ["a", "run-1", "A.b_c-9", "x" * 128, "-dash"])
def test_good_run_ids(run_id):
    assert layout.check_run_id(run_id) == run_id


def test_setup_creates_private_dirs_and_files(tmp_path):
    runtime = tmp_path / "fresh"
    spawn = agentspool.setup("claude-code", "r", str(runtime))
    assert stat.S_IMODE(os.stat(runtime).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(spawn.run_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(spawn.settings_path).st_mode) == 0o600


def test_world_writable_runtime_dir_is_refused(tmp_path):
    runtime = tmp_path / "open"
    runtime.mkdir()
    runtime.chmod(0o777)
    with pytest.raises(RuntimeDirError, match="writable by group or others"):
        agentspool.setup("claude-code", "r", str(runtime))
    assert list(runtime.iterdir()) == []


def test_runtime_dir_of_another_user_is_refused(tmp_path):
    if os.getuid() != 0:
        pytest.skip("needs root to chown a dir to another user")
    runtime = tmp_path / "theirs"
    runtime.mkdir(mode=0o700)
    os.chown(runtime, 65534, 65534)
    with pytest.raises(RuntimeDirError, match="owned by uid 65534"):
        agentspool.setup("claude-code", "r", str(runtime))
    assert list(runtime.iterdir()) == []


def test_symlinked_runtime_dir_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(RuntimeDirError, match="symlink"):
        layout.ensure_runtime_dir(str(link))


def test_loose_own_runtime_dir_is_tightened(tmp_path):
    runtime = tmp_path / "loose"
    runtime.mkdir()
    runtime.chmod(0o750)
    layout.ensure_runtime_dir(str(runtime))
    assert stat.S_IMODE(os.stat(runtime).st_mode) == 0o700


def test_run_dir_that_is_a_symlink_is_refused(runtime_dir, tmp_path):
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    os.symlink(target, os.path.join(runtime_dir, "r"))
    with pytest.raises(RuntimeDirError):
        agentspool.setup("claude-code", "r", runtime_dir)
    assert list(target.iterdir()) == []


def test_default_runtime_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTSPOOL_RUNTIME_DIR", str(tmp_path / "x"))
    assert layout.default_runtime_dir() == str(tmp_path / "x")
    monkeypatch.delenv("AGENTSPOOL_RUNTIME_DIR")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert layout.default_runtime_dir() == str(tmp_path / "agentspool")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert layout.default_runtime_dir() == str(tmp_path / f"agentspool-{os.getuid()}")


def test_setup_again_tightens_a_loosened_run_dir(runtime_dir, make_claude_run, silent):
    """Hooks refuse a run dir others can reach, so re-arming a run must re-privatise it."""
    run = make_claude_run(runtime_dir, "r")
    os.chmod(run.run_dir, 0o755)
    run = make_claude_run(runtime_dir, "r")
    assert stat.S_IMODE(os.stat(run.run_dir).st_mode) == 0o700
    silent(run.run(b"{}", "Stop"))
    assert len(run.records()) == 1
