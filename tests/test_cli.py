"""The ``agentspool`` command, run in process through ``main([...])``."""

from __future__ import annotations

import json
import os
import re

import pytest

from agentspool import __version__
from agentspool.cli.main import main

COMMANDS = ["setup", "sig", "sweep", "untrust"]


def test_setup_json_has_exactly_the_spawn_fields(runtime_dir, capsys):
    assert (
        main(["setup", "claude-code", "--run-id", "r1", "--runtime-dir", runtime_dir, "--json"])
        == 0
    )
    out, err = capsys.readouterr()
    spawn = json.loads(out)
    assert sorted(spawn) == ["args", "env", "run_dir", "settings_path"]
    assert spawn["args"] == ["--settings", spawn["settings_path"]]
    assert spawn["run_dir"] == os.path.join(runtime_dir, "r1")
    assert os.path.isfile(spawn["settings_path"])
    assert err == ""


def test_setup_codex_json_carries_the_env(runtime_dir, capsys):
    assert main(["setup", "codex", "--run-id", "r2", "--runtime-dir", runtime_dir, "--json"]) == 0
    spawn = json.loads(capsys.readouterr().out)
    assert sorted(spawn) == ["args", "env", "run_dir", "settings_path"]
    assert spawn["env"] == {"AGENTSPOOL_RUNTIME_DIR": runtime_dir, "AGENTSPOOL_RUN_ID": "r2"}


def test_setup_plain_prints_one_shell_line(runtime_dir, capsys):
    assert main(["setup", "claude-code", "--run-id", "r1", "--runtime-dir", runtime_dir]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert out.startswith("--settings ")


def test_sig_prints_one_line_that_changes_after_a_hook_appends(claude_run, capsys, silent):
    argv = [
        "sig",
        "claude-code",
        "--run-id",
        claude_run.run_id,
        "--runtime-dir",
        claude_run.runtime_dir,
    ]
    assert main(argv) == 0
    before = capsys.readouterr().out
    assert re.fullmatch(r"[^\n]+\n", before)
    silent(claude_run.run(b"{}", "Stop"))
    assert main(argv) == 0
    after = capsys.readouterr().out
    assert re.fullmatch(r"[^\n]+\n", after)
    assert after != before


@pytest.fixture
def three_runs(runtime_dir, make_claude_run):
    for name in ("a", "b", "c"):
        make_claude_run(runtime_dir, name)
    return runtime_dir


def test_sweep_dry_run_json(three_runs, capsys):
    assert (
        main(
            [
                "sweep",
                "--runtime-dir",
                three_runs,
                "--keep",
                "a",
                "--min-idle",
                "0",
                "--dry-run",
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert (report["removed"], report["kept"], report["dry_run"]) == (["b", "c"], ["a"], True)
    assert sorted(n for n in os.listdir(three_runs) if not n.startswith(".")) == ["a", "b", "c"]


def test_sweep_keeps_and_removes(three_runs, capsys):
    assert (
        main(
            ["sweep", "--runtime-dir", three_runs, "--keep", "a", "--keep", "b", "--min-idle", "0"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "removed 1: c"
    assert sorted(n for n in os.listdir(three_runs) if not n.startswith(".")) == ["a", "b"]


def test_sweep_default_min_idle_spares_fresh_runs(three_runs, capsys):
    assert main(["sweep", "--runtime-dir", three_runs, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["removed"], sorted(report["busy"])) == ([], ["a", "b", "c"])


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"agentspool {__version__}\n"


@pytest.mark.parametrize(
    "argv", [["--help"], *([c, "--help"] for c in COMMANDS)], ids=["top", *COMMANDS]
)
def test_help_on_every_command(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("usage: agentspool")


@pytest.mark.parametrize("command", ["setup", "sig"])
@pytest.mark.parametrize("run_id", ["../etc", ".hidden", "a/b"])
def test_bad_run_id_is_one_line_and_exit_1(runtime_dir, capsys, command, run_id):
    code = main([command, "claude-code", "--run-id", run_id, "--runtime-dir", runtime_dir])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert re.fullmatch(r"agentspool: invalid run id [^\n]+\n", err)
    assert "Traceback" not in err
    assert os.listdir(runtime_dir) == []


def test_unsafe_runtime_dir_is_one_line_and_exit_1(tmp_path, capsys):
    runtime = tmp_path / "open"
    runtime.mkdir()
    runtime.chmod(0o777)
    code = main(["setup", "claude-code", "--run-id", "r", "--runtime-dir", str(runtime)])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert re.fullmatch(r"agentspool: runtime dir [^\n]+writable by others[^\n]+\n", err)


def test_untrust_codex(tmp_path, capsys):
    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text('model = "o3"\n')
    assert (
        main(
            [
                "setup",
                "codex",
                "--run-id",
                "r",
                "--runtime-dir",
                str(tmp_path / "rt"),
                "--trust",
                "config",
                "--config-home",
                str(home),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["untrust", "codex", "--config-home", str(home)]) == 0
    assert capsys.readouterr().out == "removed agentspool's trusted hooks\n"
    assert (home / "config.toml").read_text() == 'model = "o3"\n'


def test_trust_config_is_refused_for_a_cli_without_a_trust_gate(tmp_path, capsys):
    code = main(
        [
            "setup",
            "claude-code",
            "--run-id",
            "r",
            "--runtime-dir",
            str(tmp_path / "rt"),
            "--trust",
            "config",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and "no hook trust gate" in err


def test_no_provider_is_named_outside_its_adapter() -> None:
    """Core, the CLI and the public API branch on capabilities, never on a provider."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[1]
    pattern = re.compile(r"==\s*['\"](claude-code|codex)['\"]|adapters\.(claude_code|codex)")
    hits = [
        f"{p.relative_to(root)}:{n}"
        for folder in ("core", "cli", "api")
        for p in sorted((root / folder).rglob("*.py"))
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert hits == []
