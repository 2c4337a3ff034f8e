"""Issue 22: ``install`` and ``uninstall`` against files someone else shaped — a cloned
repo's symlinks, a FIFO, a read-only file, bytes that are not UTF-8, nesting too deep to
read, files of many megabytes. Each is refused in one line naming the file (and line and
column where there is one), and nothing is written; run as a user runs it, in a
subprocess with a timeout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    script = os.path.join(os.path.dirname(sys.executable), "agentspool")
    return subprocess.run(
        [script, *argv], capture_output=True, text=True, cwd="/", check=False, timeout=60
    )


def refused(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stdout == ""
    return proc.stderr


def test_a_project_whose_settings_file_links_elsewhere_is_refused(tmp_path: Path) -> None:
    """A cloned repo commits ``.claude/settings.json`` as a link to another program's
    JSON file: install must not rewrite that file."""
    victim = tmp_path / "other-program" / "config.json"
    victim.parent.mkdir()
    victim.write_text('{"theme": "dark"}\n')
    project = tmp_path / "clone"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").symlink_to(victim)
    for command in ("install", "uninstall"):
        err = refused(cli(command, "claude-code", "--scope", "project", "--project", str(project)))
        assert "is a symlink" in err and str(project / ".claude" / "settings.json") in err
    assert victim.read_text() == '{"theme": "dark"}\n'
    assert sorted(os.listdir(victim.parent)) == ["config.json"]


@pytest.mark.parametrize(
    ("provider", "folder"), [("claude-code", ".claude"), ("opencode", ".opencode")]
)
def test_a_project_whose_config_dir_links_elsewhere_is_refused(
    tmp_path: Path, provider: str, folder: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "settings.json").write_text("{}\n")
    project = tmp_path / "clone"
    project.mkdir()
    (project / folder).symlink_to(elsewhere)
    err = refused(cli("install", provider, "--scope", "project", "--project", str(project)))
    assert "is a symlink" in err
    assert sorted(os.listdir(elsewhere)) == ["settings.json"]
    assert (elsewhere / "settings.json").read_text() == "{}\n"


@pytest.mark.parametrize(
    ("provider", "name"),
    [("claude-code", "settings.json"), ("codex", "hooks.json"), ("codex", "config.toml")],
)
@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_a_fifo_settings_file_ends_at_once(
    tmp_path: Path, provider: str, name: str, command: str
) -> None:
    os.mkfifo(tmp_path / name, 0o600)
    err = refused(cli(command, provider, "--config-home", str(tmp_path)))  # timeout: a hang
    assert "is a FIFO, not a regular file" in err


def test_a_read_only_settings_file_is_refused_not_replaced(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{"model": "opus"}\n')
    settings.chmod(0o444)
    err = refused(cli("install", "claude-code", "--config-home", str(tmp_path)))
    assert "is read-only (mode 444)" in err
    assert settings.read_text() == '{"model": "opus"}\n'
    assert sorted(os.listdir(tmp_path)) == ["settings.json"]


@pytest.mark.parametrize(
    ("provider", "name"),
    [("claude-code", "settings.json"), ("codex", "config.toml"), ("codex", "hooks.json")],
)
def test_bytes_that_are_not_utf8_are_refused_with_line_and_column(
    tmp_path: Path, provider: str, name: str
) -> None:
    body = b'{\n  "model": "op\xffus"\n}\n' if name.endswith("json") else b'model = "op\xffus"\n'
    (tmp_path / name).write_bytes(body)
    err = refused(cli("install", provider, "--config-home", str(tmp_path)))
    line = 2 if name.endswith("json") else 1
    column = 15 if name.endswith("json") else 12
    assert f"not UTF-8 at line {line}, column {column}" in err
    assert (tmp_path / name).read_bytes() == body


def test_json_nested_too_deep_is_refused_with_line_and_column(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{\n  "a": ' + "[" * 5000 + "]" * 5000 + "\n}\n")
    err = refused(cli("install", "claude-code", "--config-home", str(tmp_path)))
    assert "nested deeper than 256 levels at line 2, column 264" in err


def test_a_settings_file_of_many_megabytes_installs_and_uninstalls_in_seconds(
    tmp_path: Path,
) -> None:
    """27 MB: the adversary's run never finished in 120 s (one Python-level parse per
    event); here the whole install and uninstall must end within the timeout."""
    settings = tmp_path / "settings.json"
    big = {
        "permissions": {"allow": [f"Bash(cmd{i} --flag value)" for i in range(650_000)]},
        "env": {f"K{i}": "v" * 20 for i in range(80_000)},
    }
    original = json.dumps(big, indent=2)
    settings.write_text(original)
    assert settings.stat().st_size > 25_000_000
    for command in ("install", "uninstall"):
        proc = subprocess.run(
            [
                os.path.join(os.path.dirname(sys.executable), "agentspool"),
                command,
                "claude-code",
                "--config-home",
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=40,
        )
        assert proc.returncode == 0, proc.stderr
    assert settings.read_text() == original
