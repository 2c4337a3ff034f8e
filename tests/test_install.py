"""``agentspool install`` / ``uninstall``: our hooks merged into a CLI's own settings.

The corpus (tests/install_corpus/) holds realistic settings files in every layout we
know users keep: existing hooks on our events, env, permissions, MCP servers,
statusLine, tabs, three spaces, one line, CRLF, no final newline, unicode, comments and
odd layouts in config.toml. For each: install keeps every byte of the user's and adds
our hooks, a second install changes nothing, uninstall gives back the original bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest

import agentspool
from agentspool.adapters.claude_code import _install as claude_install
from agentspool.adapters.codex import _install as codex_install
from agentspool.adapters.codex._lifecycle import events as codex_events
from agentspool.adapters.codex._lifecycle import snake, trusted_hash
from agentspool.adapters.common import commands, install
from agentspool.adapters.gemini_cli import _install as gemini_install
from agentspool.adapters.kimi_code import _install as kimi_install
from agentspool.adapters.qwen_code import _install as qwen_install

CORPUS = Path(__file__).parent / "install_corpus"
CLAUDE_CASES = sorted(p.name for p in (CORPUS / "claude-code").iterdir())
CODEX_CASES = sorted(p.name for p in (CORPUS / "codex").iterdir())
# Gemini CLI's settings.json has the same hooks shape: its own cases, and Claude's files.
GEMINI_CASES = [f"gemini-cli/{p.name}" for p in sorted((CORPUS / "gemini-cli").iterdir())] + [
    f"claude-code/{case}" for case in CLAUDE_CASES
]
CLAUDE_EVENTS = list(claude_install.groups())


@pytest.fixture(autouse=True)
def _private_runtime(runtime_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTSPOOL_RUNTIME_DIR", runtime_dir)  # where the edit locks live


def _decode(data: bytes) -> object:
    text = data.decode("utf-8").removeprefix("\ufeff")
    return json.loads(text)


def _assert_merged(original: object, installed: object, wanted: dict[str, dict]) -> None:
    """Every key and hook of the user's is still there, in order; ours follow theirs."""
    assert isinstance(original, dict) and isinstance(installed, dict)
    assert {k: v for k, v in installed.items() if k != "hooks"} == {
        k: v for k, v in original.items() if k != "hooks"
    }
    theirs = original.get("hooks", {})
    for event, groups in installed["hooks"].items():
        before = theirs.get(event, [])
        assert groups[: len(before)] == before
        assert groups[len(before) :] == ([wanted[event]] if event in wanted else [])
    assert set(installed["hooks"]) == set(theirs) | set(wanted)


def test_the_corpus_is_big_enough() -> None:
    assert len(CLAUDE_CASES) + len(CODEX_CASES) >= 20


@pytest.mark.parametrize("case", CLAUDE_CASES)
def test_claude_settings_round_trip_byte_for_byte(case: str, tmp_path: Path) -> None:
    home = tmp_path / "claude"
    home.mkdir()
    settings = home / "settings.json"
    original = (CORPUS / "claude-code" / case).read_bytes()
    settings.write_bytes(original)
    os.chmod(settings, 0o644)

    report = agentspool.install("claude-code", directory=str(home))
    once = settings.read_bytes()
    assert [(f.path, f.action) for f in report.files] == [(str(settings), "updated")]
    assert report.files[0].backup == str(settings) + ".agentspool-backup"
    assert Path(report.files[0].backup).read_bytes() == original
    assert stat.S_IMODE(settings.stat().st_mode) == 0o644
    _assert_merged(_decode(original), _decode(once), claude_install.groups())
    assert once.startswith(b"\xef\xbb\xbf") == original.startswith(b"\xef\xbb\xbf")
    if b"\r\n" in original:
        assert once.count(b"\n") == once.count(b"\r\n")

    again = agentspool.install("claude-code", directory=str(home))
    assert [f.action for f in again.files] == ["unchanged"] and not again.changed
    assert settings.read_bytes() == once

    removed = agentspool.uninstall("claude-code", directory=str(home))
    assert [f.action for f in removed.files] == ["updated"]
    assert settings.read_bytes() == original
    assert sorted(os.listdir(home)) == ["settings.json"]  # the backup went with our hooks
    assert not agentspool.uninstall("claude-code", directory=str(home)).changed


@pytest.mark.parametrize("provider", ["gemini-cli", "qwen-code"])
@pytest.mark.parametrize("case", GEMINI_CASES)
def test_json_settings_round_trip_byte_for_byte(provider: str, case: str, tmp_path: Path) -> None:
    """Gemini CLI's and Qwen Code's ``settings.json`` (one shape, one shared edit)."""
    hooks = gemini_install.HOOKS if provider == "gemini-cli" else qwen_install.HOOKS
    config_dir = tmp_path / ".config-dir"
    config_dir.mkdir()
    settings = config_dir / "settings.json"
    original = (CORPUS / case).read_bytes()
    settings.write_bytes(original)

    report = agentspool.install(provider, directory=str(config_dir))
    once = settings.read_bytes()
    assert [(f.path, f.action) for f in report.files] == [(str(settings), "updated")]
    _assert_merged(_decode(original), _decode(once), hooks.groups())
    assert hooks.missing(str(config_dir)) == []
    assert not agentspool.install(provider, directory=str(config_dir)).changed
    assert settings.read_bytes() == once

    agentspool.uninstall(provider, directory=str(config_dir))
    assert settings.read_bytes() == original
    assert sorted(os.listdir(config_dir)) == ["settings.json"]
    assert hooks.missing(str(config_dir)) == hooks.events()


def test_qwen_setup_writes_a_defaults_layer_that_keeps_the_machines(
    tmp_path: Path, runtime_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ADR 0047: the run's hooks in a settings layer of its own, named in ``Spawn.env``;
    a defaults file the machine has is copied in, its hooks first."""
    machine = tmp_path / "system-defaults.json"
    theirs = {"matcher": "", "hooks": [{"type": "command", "command": "true"}]}
    machine.write_text(json.dumps({"ui": {"theme": "x"}, "hooks": {"Stop": [theirs]}}))
    monkeypatch.setenv("QWEN_CODE_SYSTEM_DEFAULTS_PATH", str(machine))
    spawn = agentspool.setup("qwen-code", "run-q", runtime_dir)
    assert spawn.args == []
    assert spawn.env["QWEN_CODE_SYSTEM_DEFAULTS_PATH"] == spawn.settings_path
    layer = json.loads(Path(spawn.settings_path).read_text())
    assert layer["ui"] == {"theme": "x"}
    assert layer["hooks"]["Stop"][0] == theirs
    ours = layer["hooks"]["Stop"][1]["hooks"][0]["command"]
    assert "agentspool.hooks.qwen_code" in ours and "run-q" in ours
    assert sorted(layer["hooks"]) == sorted(qwen_install.HOOKS.events())
    machine.write_text("{ // a comment\n}")
    with pytest.raises(agentspool.SettingsError, match="not strict JSON"):
        agentspool.setup("qwen-code", "run-r", runtime_dir)


def test_gemini_installs_into_gemini_cli_home_and_setup_needs_it(
    tmp_path: Path, runtime_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini CLI has no per-run settings layer: ``setup`` arms a run only once the hooks
    are installed in the user's settings (docs/adr/0028-gemini-cli-arming.md)."""
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    settings = tmp_path / ".gemini" / "settings.json"
    with pytest.raises(agentspool.UnsupportedError, match="agentspool install gemini-cli"):
        agentspool.setup("gemini-cli", "run-1", runtime_dir)
    assert not os.path.exists(os.path.join(runtime_dir, "run-1"))

    report = agentspool.install("gemini-cli")
    assert [(f.path, f.action, f.backup) for f in report.files] == [(str(settings), "created", "")]
    spawn = agentspool.setup("gemini-cli", "run-1", runtime_dir)
    assert spawn.args == []
    assert spawn.env == {"AGENTSPOOL_RUNTIME_DIR": runtime_dir, "AGENTSPOOL_RUN_ID": "run-1"}
    assert spawn.settings_path == str(settings)
    assert Path(spawn.run_dir, "provider").read_text() == "gemini-cli\n"
    with pytest.raises(agentspool.UnsupportedError, match="no hook trust gate"):
        agentspool.setup("gemini-cli", "run-2", runtime_dir, trust="config")

    # An install by another interpreter no longer arms: setup asks for a new install.
    text = settings.read_text()
    settings.write_text(text.replace(sys.executable, "/old/venv/bin/python"))
    with pytest.raises(agentspool.UnsupportedError, match="BeforeAgent"):
        agentspool.setup("gemini-cli", "run-3", runtime_dir)
    assert agentspool.install("gemini-cli").changed
    agentspool.setup("gemini-cli", "run-3", runtime_dir)

    agentspool.uninstall("gemini-cli")
    assert not settings.exists() and not settings.parent.exists()
    with pytest.raises(agentspool.UnsupportedError):
        agentspool.install("gemini-cli", "project")


def _codex_trust(config: Path, hooks: Path) -> dict[str, str]:
    state = tomllib.loads(config.read_text()).get("hooks", {}).get("state", {})
    prefix = f"{hooks}:"
    return {k: v["trusted_hash"] for k, v in state.items() if k.startswith(prefix)}


@pytest.mark.parametrize("case", CODEX_CASES)
def test_codex_home_round_trips_byte_for_byte_with_trust(case: str, tmp_path: Path) -> None:
    home = tmp_path / "codex"
    shutil.copytree(CORPUS / "codex" / case, home)
    before = {p.name: p.read_bytes() for p in home.iterdir()}
    hooks, config = home / "hooks.json", home / "config.toml"

    report = agentspool.install("codex", directory=str(home))
    assert [f.path for f in report.files] == [str(hooks), str(config)]
    installed = json.loads(hooks.read_text())
    _assert_merged(json.loads(before.get("hooks.json", b"{}")), installed, codex_install.groups())
    # One trust entry per group of ours, keyed by its position in that event's array.
    expected = {}
    for event in codex_events():
        index = len(installed["hooks"][event]) - 1
        command = installed["hooks"][event][index]["hooks"][0]["command"]
        expected[f"{hooks}:{snake(event)}:{index}:0"] = trusted_hash(event, command)
    assert _codex_trust(config, hooks) == expected
    user_data = tomllib.loads(before.get("config.toml", b"").decode())
    after_data = tomllib.loads(config.read_text())
    for key, value in user_data.items():
        if key != "hooks":
            assert after_data[key] == value
    once = {p.name: p.read_bytes() for p in home.iterdir()}

    again = agentspool.install("codex", directory=str(home))
    assert not again.changed
    assert {p.name: p.read_bytes() for p in home.iterdir()} == once

    agentspool.uninstall("codex", directory=str(home))
    assert {p.name: p.read_bytes() for p in home.iterdir()} == before
    assert not agentspool.uninstall("codex", directory=str(home)).changed


def test_codex_trust_that_cannot_be_added_in_the_users_layout_writes_nothing(
    tmp_path: Path,
) -> None:
    """``hooks`` as an inline table cannot take a ``[hooks.state."…"]`` table: refused
    before hooks.json is created."""
    config = tmp_path / "config.toml"
    config.write_text('model = "o3"\nhooks = { state = {} }\n')
    with pytest.raises(agentspool.SettingsError, match="cannot add our trusted hashes"):
        agentspool.install("codex", directory=str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["config.toml", "runtime"]
    assert config.read_text() == 'model = "o3"\nhooks = { state = {} }\n'


def test_a_stale_trust_hash_under_our_key_is_rewritten_in_place(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks.json"
    key = f"{hooks}:stop:0:0"
    config = tmp_path / "config.toml"
    config.write_text(f'[hooks.state."{key}"]\ntrusted_hash = "sha256:00"  # old\n')
    agentspool.install("codex", directory=str(tmp_path))
    trust = _codex_trust(config, hooks)
    command = json.loads(hooks.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert trust[key] == trusted_hash("Stop", command)
    assert config.read_text().startswith(f'[hooks.state."{key}"]\ntrusted_hash = "sha256:')
    assert "# old" in config.read_text()  # the user's comment stays (tomlkit)


def test_codex_project_scope_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with pytest.raises(agentspool.UnsupportedError, match=r"project scope \(only for: user\)"):
        agentspool.install("codex", "project", directory=str(project))
    assert os.listdir(project) == []


def test_claude_project_scope_creates_and_removes_its_file_and_dir(tmp_path: Path) -> None:
    tmp_path = tmp_path / "project"
    tmp_path.mkdir()
    report = agentspool.install("claude-code", "project", directory=str(tmp_path))
    settings = tmp_path / ".claude" / "settings.json"
    assert [(f.path, f.action, f.backup) for f in report.files] == [(str(settings), "created", "")]
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    assert set(json.loads(settings.read_text())["hooks"]) == set(CLAUDE_EVENTS)
    agentspool.uninstall("claude-code", "project", directory=str(tmp_path))
    assert os.listdir(tmp_path) == []


def test_uninstall_keeps_what_the_user_added_after_install(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{\n  "model": "opus"\n}\n')
    agentspool.install("claude-code", directory=str(tmp_path))
    data = json.loads(settings.read_text())
    theirs = {"hooks": [{"type": "command", "command": "say done"}]}
    data["hooks"]["Stop"].append(theirs)  # another tool rewrote the file its own way
    data["hooks"]["Setup"] = [theirs]
    data["env"] = {"A": "1"}
    settings.write_text(json.dumps(data, indent=4))
    agentspool.uninstall("claude-code", directory=str(tmp_path))
    assert json.loads(settings.read_text()) == {
        "model": "opus",
        "hooks": {"Stop": [theirs], "Setup": [theirs]},
        "env": {"A": "1"},
    }
    # the backup is the file before our install; it differs now, so it is kept
    assert (tmp_path / "settings.json.agentspool-backup").read_text() == (
        '{\n  "model": "opus"\n}\n'
    )


def test_our_handler_in_a_group_of_the_users_goes_alone(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    ours = commands.hook_command("claude_code", "Stop", installed=True)
    theirs = {"type": "command", "command": "say done"}
    group = {"hooks": [theirs, {"type": "command", "command": ours}]}
    settings.write_text(json.dumps({"hooks": {"Stop": [group]}}, indent=2))
    agentspool.uninstall("claude-code", directory=str(tmp_path))
    assert json.loads(settings.read_text()) == {"hooks": {"Stop": [{"hooks": [theirs]}]}}


def test_an_older_install_is_updated_in_place_and_still_uninstalled(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    original = (
        '{\n  "hooks": {\n    "Stop": [\n'
        '      {"hooks": [{"type": "command", "command": "x"}]}\n    ]\n  }\n}\n'
    )
    settings.write_text(original)
    agentspool.install("claude-code", directory=str(tmp_path))
    current = commands.hook_command("claude_code", "Stop", installed=True)
    old = current.replace(sys.executable, "/opt/old-venv/bin/python", 1)
    assert old != current and commands.is_installed_hook(old)
    settings.write_text(
        settings.read_text().replace(json.dumps(current)[1:-1], json.dumps(old)[1:-1])
    )
    stale = settings.read_text()
    assert old in json.loads(stale)["hooks"]["Stop"][1]["hooks"][0]["command"]
    agentspool.install("claude-code", directory=str(tmp_path))
    fixed = json.loads(settings.read_text())["hooks"]["Stop"]
    assert len(fixed) == 2 and fixed[1]["hooks"][0]["command"] == current
    settings.write_text(stale)  # uninstall finds ours by the bootstrap, not the exact path
    agentspool.uninstall("claude-code", directory=str(tmp_path))
    assert settings.read_text() == original


def test_a_symlinked_settings_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    """Install writes through no symlink it did not make (issue 22): a dotfile linked in
    is installed into by naming its real directory."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "settings.json").write_text('{"model": "opus"}\n')
    home = tmp_path / "claude"
    home.mkdir()
    (home / "settings.json").symlink_to(dotfiles / "settings.json")
    with pytest.raises(agentspool.SettingsError, match=r"is a symlink .*left untouched"):
        agentspool.install("claude-code", directory=str(home))
    assert (dotfiles / "settings.json").read_text() == '{"model": "opus"}\n'
    assert sorted(os.listdir(dotfiles)) == ["settings.json"]
    agentspool.install("claude-code", directory=str(dotfiles))
    assert "hooks" in json.loads((dotfiles / "settings.json").read_text())
    agentspool.uninstall("claude-code", directory=str(dotfiles))
    assert (dotfiles / "settings.json").read_text() == '{"model": "opus"}\n'


# -- the installed command ------------------------------------------------------------------


@pytest.mark.parametrize("module", commands.HOOK_MODULES)
def test_the_installed_command_carries_no_run(module: str) -> None:
    argv = commands.hook_argv(module, "Stop", installed=True)
    assert argv[argv.index(commands.package_root()) + 1 :] == ["--installed", "Stop"]
    assert commands.is_installed_hook(commands.hook_command(module, "Stop", installed=True))
    assert not commands.is_installed_hook(commands.hook_command(module, "Stop", "/rt", "run-1"))
    assert not commands.is_installed_hook(commands.hook_command(module, "Stop"))
    assert not commands.is_installed_hook("echo --installed Stop from agentspool.hooks.x")
    with pytest.raises(ValueError, match="no run"):
        commands.hook_argv(module, "Stop", "/rt", "run-1", installed=True)


# -- refusals -----------------------------------------------------------------------------


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentspool.cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


@pytest.mark.parametrize(
    ("provider", "name", "text", "where"),
    [
        (
            "claude-code",
            "settings.json",
            '{\n  "model": "opus",\n  "env": {"A": 1,}\n}\n',
            "line 3, column 18",
        ),
        (
            "claude-code",
            "settings.json",
            '{\n  // my settings\n  "model": "opus"\n}\n',
            "line 2, column 3",
        ),
        ("claude-code", "settings.json", '[\n  "not an object"\n]\n', "line 1, column 1"),
        ("claude-code", "settings.json", '{\n  "hooks": []\n}\n', "line 2, column 12"),
        ("codex", "config.toml", 'model = "o3"\n[tui\nx = 1\n', "line 2, column 5"),
        ("codex", "config.toml", 'model = "o3"\nnotify = [\n', "line 3, column 1"),
        ("codex", "hooks.json", '{"hooks": {"Stop": {}}}', "line 1, column 20"),
        # Gemini CLI strips comments from its settings (so do we); an unclosed one is an error.
        ("gemini-cli", "settings.json", '{\n  /* theme\n  "ui": {}\n}\n', "line 2, column 3"),
    ],
)
def test_a_malformed_file_is_refused_in_one_line_and_left_untouched(
    tmp_path: Path, runtime_dir: str, provider: str, name: str, text: str, *, where: str
) -> None:
    tmp_path = tmp_path / "home"
    tmp_path.mkdir()
    target = tmp_path / name
    target.write_text(text)
    result = _cli(
        "install",
        provider,
        "--config-home",
        str(tmp_path),
        env={"AGENTSPOOL_RUNTIME_DIR": runtime_dir},
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and str(target) in result.stderr
    assert where in result.stderr, result.stderr
    assert target.read_text() == text
    assert os.listdir(tmp_path) == [name]  # no backup, no hooks.json, nothing


def test_cli_install_json_names_the_backup_and_uninstall_restores(
    tmp_path: Path, runtime_dir: str
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{"model": "opus"}\n')
    env = {"AGENTSPOOL_RUNTIME_DIR": runtime_dir}
    result = _cli("install", "claude-code", "--config-home", str(tmp_path), "--json", env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["changed"] is True
    assert report["files"] == [
        {"path": str(settings), "action": "updated", "backup": f"{settings}.agentspool-backup"}
    ]
    result = _cli("uninstall", "claude-code", "--config-home", str(tmp_path), env=env)
    assert (result.returncode, result.stdout) == (0, f"updated: {settings}\n")
    assert settings.read_text() == '{"model": "opus"}\n'
    result = _cli("install", "codex", "--scope", "project", env=env)
    assert result.returncode == 1 and "only for: user" in result.stderr


# -- concurrent writers ------------------------------------------------------------------


def test_two_installs_at_once_equal_one(tmp_path: Path, runtime_dir: str) -> None:
    original = (CORPUS / "claude-code" / "existing-hooks-same-events.json").read_bytes()
    one, two = tmp_path / "one", tmp_path / "two"
    for d in (one, two):
        d.mkdir()
        (d / "settings.json").write_bytes(original)
    agentspool.install("claude-code", directory=str(one))
    env = {**os.environ, "AGENTSPOOL_RUNTIME_DIR": runtime_dir}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentspool.cli.main",
                "install",
                "claude-code",
                "--config-home",
                str(two),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
        )
        for _ in range(4)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    assert (two / "settings.json").read_bytes() == (one / "settings.json").read_bytes()
    assert (two / "settings.json.agentspool-backup").read_bytes() == original


def test_a_write_between_our_read_and_our_rename_is_not_lost(tmp_path: Path) -> None:
    """A writer that takes no lock (the CLI itself, an editor) saves the file after we
    read it: the edit is redone on its text, so both its change and ours survive."""
    settings = tmp_path / "settings.json"
    settings.write_text('{\n  "model": "opus"\n}\n')
    wanted = claude_install.groups()
    calls = []

    def edit(text: str | None, backup: str | None) -> str | None:
        calls.append(text)
        new = install.add_groups(text, str(settings), wanted)
        if len(calls) == 1:  # lands after our read, before our rename
            settings.write_text('{\n  "model": "opus",\n  "theme": "dark"\n}\n')
        return new

    done = install.edit_file(str(settings), edit, ours=install.text_holds_ours)
    assert done.action == "updated" and len(calls) == 2
    data = json.loads(settings.read_text())
    assert data["theme"] == "dark" and set(data["hooks"]) == set(CLAUDE_EVENTS)


def test_installs_in_threads_serialize_on_the_lock(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("{}\n")
    errors: list[Exception] = []

    def run() -> None:
        try:
            agentspool.install("claude-code", directory=str(tmp_path))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert set(json.loads(settings.read_text())["hooks"]) == set(CLAUDE_EVENTS)
    agentspool.uninstall("claude-code", directory=str(tmp_path))
    assert settings.read_text() == "{}\n"


def test_trust_codex_re_laid_out_is_still_removed_and_nothing_else(tmp_path: Path) -> None:
    """Codex writes config.toml itself (toml_edit): an entry of ours in another layout
    is found by key and hash through tomlkit, and only it goes."""
    agentspool.install("codex", directory=str(tmp_path))
    hooks, config = tmp_path / "hooks.json", tmp_path / "config.toml"
    trust = _codex_trust(config, hooks)
    lines = ['model = "o3"  # mine', "", "[hooks.state]"]
    lines += [f'"{key}" = {{ trusted_hash = "{digest}" }}' for key, digest in trust.items()]
    lines += ['"/elsewhere/hooks.json:stop:0:0" = { trusted_hash = "sha256:ff" }', ""]
    config.write_text("\n".join(lines))
    agentspool.uninstall("codex", directory=str(tmp_path))
    assert config.read_text() == (
        'model = "o3"  # mine\n\n[hooks.state]\n'
        '"/elsewhere/hooks.json:stop:0:0" = { trusted_hash = "sha256:ff" }\n'
    )
    assert not hooks.exists()


KIMI_CASES = sorted(p.name for p in (CORPUS / "kimi-code").iterdir())


@pytest.mark.parametrize("case", KIMI_CASES)
def test_kimi_config_round_trip_byte_for_byte(case: str, tmp_path: Path) -> None:
    """Kimi Code's ``config.toml``, comments and all: our ``[[hooks]]`` tables in, then
    out, and the user's bytes back."""
    home = tmp_path / "kimi"
    home.mkdir()
    config = home / "config.toml"
    original = (CORPUS / "kimi-code" / case).read_bytes()
    config.write_bytes(original)

    agentspool.install("kimi-code", directory=str(home))
    once = config.read_bytes()
    data = tomllib.loads(once.decode())
    ours = [h for h in data["hooks"] if "agentspool.hooks.kimi_code" in h["command"]]
    assert sorted(h["event"] for h in ours) == sorted(kimi_install.events())
    assert kimi_install.missing(str(home)) == []
    assert not agentspool.install("kimi-code", directory=str(home)).changed
    assert config.read_bytes() == once

    agentspool.uninstall("kimi-code", directory=str(home))
    if original:
        assert config.read_bytes() == original
        assert sorted(os.listdir(home)) == ["config.toml"]
    else:  # an empty file: install's backup is the empty file, given back
        assert config.read_bytes() == original


def test_kimi_uninstall_finds_our_tables_the_cli_re_laid_out(tmp_path: Path) -> None:
    """A file rewritten since install (our tables moved, the user's comment kept): tomlkit
    takes out exactly our tables."""
    config = tmp_path / "config.toml"
    config.write_text('# mine\ndefault_model = "k"\n')
    agentspool.install("kimi-code", directory=str(tmp_path))
    relaid = config.read_text().replace("\n\n[[hooks]]", "\n[[hooks]]")  # blank lines gone
    config.write_text(relaid)
    agentspool.uninstall("kimi-code", directory=str(tmp_path))
    left = config.read_text()
    assert "agentspool" not in left and "# mine" in left
    assert tomllib.loads(left) == {"default_model": "k"}


def test_kimi_setup_needs_the_installed_hooks(tmp_path: Path, runtime_dir: str) -> None:
    with pytest.raises(agentspool.UnsupportedError, match="agentspool install kimi-code"):
        agentspool.setup("kimi-code", "run-k", runtime_dir)
    agentspool.install("kimi-code")
    spawn = agentspool.setup("kimi-code", "run-k", runtime_dir)
    assert spawn.args == [] and spawn.env["AGENTSPOOL_RUN_ID"] == "run-k"
