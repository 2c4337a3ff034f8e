"""``agentspool serve --install-unit``: a systemd user unit under a private
``$XDG_CONFIG_HOME`` (never the machine's own), written with the options given, again
unchanged, and removed by ``--uninstall-unit``."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

SERVE = [sys.executable, "-m", "agentspool.cli.main", "serve"]


def _serve(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [*SERVE, *args], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    assert done.stderr == ""
    return done.stdout


def test_install_unit_writes_a_user_unit_that_starts_this_serve(tmp_path) -> None:
    config = tmp_path / "xdg-config"
    env = {**os.environ, "XDG_CONFIG_HOME": str(config), "HOME": str(tmp_path / "home")}
    unit = config / "systemd" / "user" / "agentspool-serve.service"
    said = _serve(
        "--install-unit", "--port", "9100", "--no-conversations", "--runtime-dir", "rt", env=env
    )
    assert said.splitlines()[0] == f"written: {unit}"
    assert "systemctl --user enable --now agentspool-serve" in said
    text = unit.read_text()
    start = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    argv = shlex.split(start.removeprefix("ExecStart="))
    assert argv[:4] == [sys.executable, "-m", "agentspool.cli.main", "serve"]
    assert argv[4:] == [
        "--host",
        "127.0.0.1",
        "--port",
        "9100",
        "--runtime-dir",
        os.path.abspath("rt"),
        "--no-conversations",
    ]
    assert "WantedBy=default.target" in text and "Restart=on-failure" in text
    assert f'Environment="AGENTSPOOL_DATA_DIR={os.environ["AGENTSPOOL_DATA_DIR"]}"' in text
    assert not (tmp_path / "home").exists()  # nothing under HOME

    again = _serve(
        "--install-unit", "--port", "9100", "--no-conversations", "--runtime-dir", "rt", env=env
    )
    assert again.splitlines()[0] == f"unchanged: {unit}"
    assert _serve("--uninstall-unit", env=env) == f"removed: {unit}\n"
    assert not unit.exists()
    assert _serve("--uninstall-unit", env=env) == f"nothing to remove: {unit}\n"


def test_the_unit_keeps_percent_and_dollar_literal(tmp_path) -> None:
    config = tmp_path / "xdg-config"
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    _serve("--install-unit", "--runtime-dir", str(tmp_path / "a%b$c"), env=env)
    text = (config / "systemd" / "user" / "agentspool-serve.service").read_text()
    assert "a%%b$$c" in text and "a%b$c" not in text


def test_token_unit_and_serving_are_one_choice() -> None:
    done = subprocess.run(
        [*SERVE, "--token", "--install-unit"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "not allowed with argument" in done.stderr
    assert Path(os.environ["XDG_CONFIG_HOME"]).joinpath("systemd").exists() is False
