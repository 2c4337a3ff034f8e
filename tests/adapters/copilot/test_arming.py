"""Arming Copilot CLI: ``setup``'s plugin dir (the hook run as Copilot runs it) and
``install``'s hooks file, taken out again byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import agentspool
from agentspool.adapters.copilot import _install
from agentspool.errors import SettingsError
from agentspool.spool.read import SpoolReader


def test_setup_passes_a_plugin_dir_whose_hooks_record_into_the_run(tmp_path: Path) -> None:
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    spawn = agentspool.setup("copilot", "run-1", str(runtime))
    assert spawn.args[0] == "--plugin-dir"
    plugin = Path(spawn.args[1])
    manifest = json.loads((plugin / "plugin.json").read_text())
    hooks = json.loads((plugin / manifest["hooks"]).read_text())
    assert hooks["version"] == 1
    entry = hooks["hooks"]["permissionRequest"][0]
    payload = b'{"sessionId":"s-1","toolName":"bash","toolInput":{"command":"ls"}}'
    # Copilot CLI 1.0.102 runs the `bash` field through bash -c, payload on stdin.
    done = subprocess.run(
        ["bash", "-c", entry["bash"]], input=payload, capture_output=True, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    records = list(SpoolReader(spawn.run_dir).read())
    assert [(r.event, r.payload) for r in records] == [("permissionRequest", payload)]
    assert records[0].agent_pid == os.getpid()  # the hook's parent past the shell


@pytest.mark.parametrize("existing", [False, True])
def test_install_then_uninstall_gives_back_the_folder_as_it_was(
    tmp_path: Path, existing: bool
) -> None:
    home = tmp_path / ".copilot"
    home.mkdir()
    users = home / "hooks" / "mine.json"
    if existing:
        users.parent.mkdir()
        users.write_bytes(b'{"version":1,"hooks":{}}\n')
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    report = _install.install_hooks("user", str(home))
    assert report.files[0].action == "created"
    assert _install.install_hooks("user", str(home)).files[0].action == "unchanged"
    installed = _install.installed_hooks(str(home))
    assert {h.event for h in installed} >= {"permissionRequest", "agentStop", "sessionEnd"}
    assert all(h.current and "--installed" in h.command for h in installed)
    assert _install.uninstall_hooks("user", str(home)).files[0].action == "removed"
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before
    if existing:
        assert users.read_bytes() == b'{"version":1,"hooks":{}}\n'


def test_a_hooks_file_of_that_name_not_ours_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "hooks" / _install.HOOKS_FILE
    path.parent.mkdir()
    path.write_text('{"version":1,"hooks":{"agentStop":[{"type":"command","bash":"echo"}]}}')
    for change in (_install.install_hooks, _install.uninstall_hooks):
        with pytest.raises(SettingsError, match="not agentspool's hooks file"):
            change("user", str(tmp_path))
    assert "echo" in path.read_text()
