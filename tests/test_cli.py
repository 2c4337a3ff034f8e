"""The ``agentspool`` command, run in process through ``main([...])``."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

import pytest
from unsafe_dirs import CASES, make_unsafe

from agentspool import __version__
from agentspool.cli.main import main

COMMANDS = [
    "setup",
    "sig",
    "sweep",
    "read",
    "run",
    "ls",
    "explain",
    "lifecycle",
    "tidy",
    "replay",
    "show",
    "untrust",
    "watch",
    "demo",
    "usage",
    "index",
    "search",
]


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
    words = shlex.split(out)
    assert words[0] == "env" and words[-2] == "--settings"
    assert "AGENTSPOOL_RUN_ID=r1" in words


def test_setup_plain_with_env_is_a_pasteable_env_line(tmp_path, capsys):
    runtime = tmp_path / "a dir with spaces"
    assert main(["setup", "codex", "--run-id", "r2", "--runtime-dir", str(runtime)]) == 0
    line = capsys.readouterr().out
    assert main(["setup", "codex", "--run-id", "r2", "--runtime-dir", str(runtime), "--json"]) == 0
    spawn = json.loads(capsys.readouterr().out)
    words = shlex.split(line)
    env = [f"{k}={v}" for k, v in spawn["env"].items()]
    assert words == ["env", *env, *spawn["args"]]
    assert f"AGENTSPOOL_RUNTIME_DIR={runtime}" in words


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


def test_sweep_keeps_and_removes_with_yes(three_runs, capsys):
    argv = ["sweep", "--runtime-dir", three_runs, "--keep", "a", "--keep", "b", "--min-idle", "0"]
    assert main([*argv, "--yes"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "removed 1: c"
    assert sorted(n for n in os.listdir(three_runs) if not n.startswith(".")) == ["a", "b"]


def test_sweep_without_yes_only_reports(three_runs, capsys):
    """Dry by default, as every destructive command; --dry-run is still accepted."""
    argv = ["sweep", "--runtime-dir", three_runs, "--keep", "a", "--min-idle", "0"]
    for extra in ([], ["--dry-run"]):
        assert main([*argv, *extra]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0] == "would remove 2: b c" and out[-1] == "agentspool sweep --yes removes them"
        assert sorted(n for n in os.listdir(three_runs) if not n.startswith(".")) == ["a", "b", "c"]


def test_sweep_of_nothing_names_no_runs(tmp_path, capsys):
    assert main(["sweep", "--runtime-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == ["would remove 0", "kept 0, busy 0"]


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
    assert re.fullmatch(r"agentspool: runtime dir [^\n]+writable by group or others[^\n]+\n", err)


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


def _options(parser):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from ((f"{name} {o}", a) for o, a in _options(sub))
        elif not isinstance(action, argparse._HelpAction | argparse._VersionAction):
            yield (action.option_strings or [action.dest])[0], action


def test_every_option_has_help_text() -> None:
    from agentspool.cli.main import _parser

    missing = [name for name, action in _options(_parser()) if not action.help]
    assert missing == []


@pytest.mark.parametrize("argv", [["--help"], *([c, "--help"] for c in COMMANDS)])
def test_help_lists_the_exit_codes(argv, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    out = capsys.readouterr().out
    assert "exit status:" in out
    for code in ("0", "1", "2", "3", "4", "70", "130"):
        assert re.search(rf"^  {code} +\S", out, re.M), code


def test_sig_and_untrust_print_json(claude_run, tmp_path, capsys):
    argv = ["sig", "claude-code", "--run-id", claude_run.run_id]
    assert main([*argv, "--runtime-dir", claude_run.runtime_dir, "--json"]) == 0
    sig = json.loads(capsys.readouterr().out)
    assert main([*argv, "--runtime-dir", claude_run.runtime_dir]) == 0
    assert sig == {"run_id": claude_run.run_id, "sig": capsys.readouterr().out.strip()}
    assert main(["untrust", "codex", "--config-home", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"removed": False}


def test_read_transcript_only_ignores_the_spool(claude_run, silent, tmp_path, capsys):
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("")
    payload = {"session_id": "s1", "transcript_path": str(transcript), "tool_name": "Bash"}
    silent(claude_run.run(json.dumps(payload).encode(), "PermissionRequest"))
    argv = ["read", "claude-code", "--run-id", claude_run.run_id]
    argv += ["--runtime-dir", claude_run.runtime_dir, "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "needs_input"
    assert main([*argv, "--transcript-only"]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "idle"


def test_an_unexpected_error_is_one_line_naming_its_traceback_file(
    runtime_dir, capsys, monkeypatch
):
    import agentspool

    def broken(*args, **kwargs):
        raise KeyError("a bug of ours")

    monkeypatch.setattr(agentspool, "spool_sig", broken)
    code = main(["sig", "claude-code", "--run-id", "r", "--runtime-dir", runtime_dir])
    out, err = capsys.readouterr()
    assert (code, out) == (70, "")
    match = re.fullmatch(r"agentspool: internal error KeyError: [^\n]+; traceback in (\S+)\n", err)
    assert match, err
    path = match.group(1)
    try:
        with open(path) as fh:
            text = fh.read()
        assert "Traceback (most recent call last)" in text and "a bug of ours" in text
        assert os.stat(path).st_mode & 0o077 == 0
    finally:
        os.unlink(path)


def _agentspool(*argv: str, home: str) -> subprocess.CompletedProcess[bytes]:
    """The installed ``agentspool`` command, run as a user runs it."""
    script = os.path.join(os.path.dirname(sys.executable), "agentspool")
    return subprocess.run(
        [script, *argv],
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "HOME": home},
        cwd="/",
        check=False,
        timeout=60,
    )


@pytest.mark.parametrize("case", CASES)
def test_read_and_sig_refuse_an_unsafe_dir_in_one_line(case, claude_run, tmp_path):
    """ADR 0013: one line naming the dir and the problem, exit 1, nothing on stdout —
    and the forged spool's transcript and prompt are never printed."""
    unsafe = make_unsafe(case, claude_run, tmp_path)
    where = ["--run-id", unsafe.run_id, "--runtime-dir", unsafe.runtime_dir]
    for argv in (
        ["read", "claude-code", *where],
        ["read", "codex", *where, "--json"],
        ["read", "claude-code", *where, "--transcript", unsafe.forged_transcript],
        ["sig", "claude-code", *where],
    ):
        proc = _agentspool(*argv, home=str(tmp_path))
        assert (proc.returncode, proc.stdout) == (1, b""), argv
        err = proc.stderr.decode()
        assert err.count("\n") == 1, err
        assert err.startswith("agentspool: ")
        assert re.fullmatch(unsafe.problem, err[len("agentspool: ") : -1]), err


def test_read_of_a_private_run_still_works(claude_run, tmp_path, silent):
    """The control for the test above: the same command on a sound dir prints the state."""
    silent(claude_run.run(b'{"session_id": "s", "prompt_id": "p1"}', "UserPromptSubmit"))
    proc = _agentspool(
        "read",
        "claude-code",
        "--run-id",
        claude_run.run_id,
        "--runtime-dir",
        claude_run.runtime_dir,
        home=str(tmp_path),
    )
    assert (proc.returncode, proc.stderr) == (0, b"")
    assert proc.stdout.startswith(f"{claude_run.run_id}: working".encode())


def test_the_run_is_a_positional_id_and_run_id_a_hidden_alias(claude_run, capsys):
    """One spelling of the run on every command that reads one (ADR 0044): ``RUN_ID``
    after the command (and its provider); ``--run-id`` still works, unlisted."""
    where = ["--runtime-dir", claude_run.runtime_dir, "--json"]
    run_id = claude_run.run_id
    for command in (["read", "claude-code"], ["sig", "claude-code"], ["replay"], ["explain"]):
        assert main([*command, run_id, *where]) == 0
        positional = capsys.readouterr().out
        assert main([*command, "--run-id", run_id, *where]) == 0
        assert capsys.readouterr().out == positional, command
    for command in ("read", "sig", "setup", "replay", "explain", "lifecycle"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--run-id" not in capsys.readouterr().out, command
    assert main(["lifecycle", "active", run_id, "--runtime-dir", claude_run.runtime_dir]) == 0
    assert capsys.readouterr().out == f"run {run_id}: active\n"


@pytest.mark.parametrize(
    "argv,says",
    [
        (["read", "claude-code"], "the following arguments are required: RUN_ID"),
        (["read", "claude-code", "r1", "--run-id", "r2"], "two run ids: 'r1' and --run-id 'r2'"),
        (["replay"], "the following arguments are required: RUN_ID"),
    ],
)
def test_a_missing_or_doubled_run_id_is_bad_usage(argv, says, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert says in capsys.readouterr().err


def test_every_command_is_handled_by_the_room_the_table_names():
    """The room convention (ADR 0044, 0058): ``main.COMMANDS`` lists every command in the
    order ``--help`` lists them, each handled by the ``run`` of the room it names, and
    names every room there is."""
    import argparse
    import importlib
    from pathlib import Path

    from agentspool.cli.main import COMMANDS as TABLE
    from agentspool.cli.main import _parser

    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == list(TABLE)
    for name, command in sub.choices.items():
        room = importlib.import_module(f"agentspool.cli.commands.{TABLE[name]}")
        assert command.get_default("func") is room.run, name
    folder = Path(__file__).resolve().parent.parent / "cli" / "commands"
    assert set(TABLE.values()) == {p.stem for p in folder.glob("*.py")} - {"__init__"}
    assert sorted(sub.choices) == sorted([*COMMANDS, "install", "uninstall", "serve", "doctor"])


@pytest.mark.parametrize(
    "argv", [["usage", "--json"], ["ls", "--json"], ["sweep", "--json"], ["usage"], ["ls"]]
)
def test_a_reader_that_leaves_before_any_output_ends_every_command_quietly(
    runtime_dir: str, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``agentspool … | head`` whose reader is gone before the command writes: not an
    error, nothing on stderr (``show`` and ``watch`` said so on their own; the one error
    boundary now says it for every command, the interpreter's flush at exit included)."""
    monkeypatch.setenv("AGENTSPOOL_RUNTIME_DIR", runtime_dir)
    read, write = os.pipe()
    os.close(read)  # the reader has left
    try:
        done = subprocess.run(
            [sys.executable, "-m", "agentspool.cli.main", *argv],
            stdout=write,
            stderr=subprocess.PIPE,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, b"")
