"""The fleet recipe in docs/fleet/ as shipped: Prometheus's and Alertmanager's own
checkers accept it (CI installs them; elsewhere the test says why it cannot run)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

FLEET = Path(__file__).resolve().parents[2] / "docs" / "fleet"


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed: .ci/run installs Debian's prometheus packages")
        pytest.skip(f"{name} is not installed (Debian: prometheus, prometheus-alertmanager)")
    return found


def test_promtool_accepts_the_config_and_the_rules(tmp_path: Path) -> None:
    promtool = _tool("promtool")
    for name in ("prometheus.yml", "agentspool-rules.yml"):
        shutil.copy(FLEET / name, tmp_path / name)
    (tmp_path / "agentspool.token").write_text("a-token\n")
    config = subprocess.run(
        [promtool, "check", "config", "prometheus.yml"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
        text=True,
    )
    assert config.returncode == 0, config.stdout + config.stderr
    rules = subprocess.run(
        [promtool, "check", "rules", "agentspool-rules.yml"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
        text=True,
    )
    assert rules.returncode == 0, rules.stdout + rules.stderr
    assert "SUCCESS: 3 rules found" in rules.stdout


def test_amtool_accepts_the_alertmanager_config() -> None:
    amtool = _tool("amtool")
    done = subprocess.run(
        [amtool, "check-config", str(FLEET / "alertmanager.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
