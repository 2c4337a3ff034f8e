"""The settings ``setup`` renders: parseable, complete, and safe to hand to an agent CLI."""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
import tomllib
from pathlib import Path

import pytest

import agentspool
from agentspool.adapters.codex import _lifecycle as codex
from agentspool.errors import RuntimeDirError, SettingsError

CLAUDE_EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
]
TOOL_EVENTS = {
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
}


def _check_command(command: str, event: str, module: str) -> list[str]:
    argv = shlex.split(command)
    assert os.path.isabs(argv[0])
    assert argv[0] == sys.executable
    assert argv[1:4] == ["-I", "-S", "-c"]
    assert "-m" not in argv
    assert f"from agentspool.hooks.{module} import main" in argv[4]
    assert os.path.isabs(argv[5])
    assert os.path.isdir(os.path.join(argv[5], "agentspool", "hooks"))
    assert argv[-1] == event
    return argv


def test_claude_code_settings(runtime_dir):
    spawn = agentspool.setup("claude-code", "run-42", runtime_dir)
    text = Path(spawn.settings_path).read_text()
    assert "{{hook:" not in text
    settings = json.loads(text)
    hooks = settings["hooks"]
    assert set(CLAUDE_EVENTS) <= set(hooks)
    for event, groups in hooks.items():
        assert len(groups) == 1
        [group] = groups
        if event in TOOL_EVENTS:
            assert group["matcher"] == "*"
        [handler] = group["hooks"]
        assert handler["type"] == "command"
        argv = _check_command(handler["command"], event, "claude_code")
        assert argv[6:] == [runtime_dir, "run-42", event]  # the run id is baked in
    assert spawn.args == ["--settings", spawn.settings_path]
    assert spawn.env == {"AGENTSPOOL_RUNTIME_DIR": runtime_dir, "AGENTSPOOL_RUN_ID": "run-42"}
    assert stat.S_IMODE(os.stat(spawn.settings_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(spawn.run_dir).st_mode) == 0o700


def test_codex_args(runtime_dir):
    spawn = agentspool.setup("codex", "run-7", runtime_dir)
    assert spawn.args[0] == codex.BYPASS_FLAG
    assert spawn.env == {"AGENTSPOOL_RUNTIME_DIR": runtime_dir, "AGENTSPOOL_RUN_ID": "run-7"}
    pairs = spawn.args[1:]
    assert pairs[0::2] == ["-c"] * (len(pairs) // 2)
    events = []
    for override in pairs[1::2]:
        key, _, value = override.partition("=")
        assert key.startswith("hooks.")
        parsed = tomllib.loads(f"v = {value}")["v"]
        [group] = parsed
        [handler] = group["hooks"]
        event = key.removeprefix("hooks.")
        events.append(event)
        assert handler["type"] == "command"
        assert "{{hook:" not in handler["command"]
        argv = _check_command(handler["command"], event, "codex")
        assert argv[6:] == [event]  # the run travels in the env: one command for all runs
        assert "run-7" not in handler["command"]
    assert events == codex.events()
    assert {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "Stop",
    } <= set(events)
    recorded = json.loads(Path(spawn.settings_path).read_text())
    assert recorded["args"] == spawn.args
    assert stat.S_IMODE(os.stat(spawn.settings_path).st_mode) == 0o600


def test_codex_commands_identical_across_runs(tmp_path):
    first = agentspool.setup("codex", "one", str(tmp_path / "rt1"))
    second = agentspool.setup("codex", "two", str(tmp_path / "rt2"))
    assert first.args == second.args


TMUX_COMMAND_ROOM = 15_000
"""What Codex's arguments may take of a shell command line: tmux refuses a `new-session`
command over ~16.3 KB ("command too long"), and orchestrators start agents in tmux with
the whole command, the binary and its environment around these arguments. A longer hook
bootstrap (~110 characters more, times 14 events) once took them to 15.9 KB (ADR 0059)."""


def test_codex_args_fit_a_tmux_command(tmp_path):
    spawn = agentspool.setup("codex", "a-run-id-of-some-length", str(tmp_path / "rt"))
    assert len(shlex.join(spawn.args)) <= TMUX_COMMAND_ROOM


@pytest.mark.parametrize("provider", ["claude-code", "codex"])
def test_world_writable_runtime_dir_refused(tmp_path, provider):
    runtime = tmp_path / "rt"
    runtime.mkdir()
    runtime.chmod(0o777)
    with pytest.raises(RuntimeDirError):
        agentspool.setup(provider, "r", str(runtime))
    assert list(runtime.iterdir()) == []


@pytest.mark.parametrize("provider", ["claude-code", "codex"])
def test_runtime_dir_owned_by_another_user_refused(tmp_path, provider):
    if os.getuid() != 0:
        pytest.skip("needs root to chown")
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    os.chown(runtime, 65534, 65534)
    with pytest.raises(RuntimeDirError):
        agentspool.setup(provider, "r", str(runtime))
    assert list(runtime.iterdir()) == []


# ---------------------------------------------------------------- codex trust ---


@pytest.fixture
def codex_home(tmp_path) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir(mode=0o700)
    return home


USER_CONFIG = '# my config\nmodel = "o3"\n\n[projects."/src"]\ntrust_level = "trusted"\n'


def test_trust_writes_our_block_idempotently(codex_home):
    config = codex_home / "config.toml"
    config.write_text(USER_CONFIG)
    codex.trust(str(codex_home))
    once = config.read_text()
    codex.trust(str(codex_home))
    assert config.read_text() == once
    assert once.startswith(USER_CONFIG.rstrip("\n"))
    assert once.count(codex.BLOCK_BEGIN) == 1
    state = tomllib.loads(once)["hooks"]["state"]
    assert state == {k: {"trusted_hash": v} for k, v in codex.trust_keys().items()}
    assert tomllib.loads(once)["model"] == "o3"


def test_trust_creates_a_missing_config(codex_home):
    path = codex.trust(str(codex_home))
    assert codex.BLOCK_BEGIN in Path(path).read_text()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


@pytest.mark.parametrize(
    "original",
    [
        USER_CONFIG.encode(),
        b'model = "o3"',  # no newline at the end
        b'model = "o3"\n\n\n',  # trailing blank lines
        b'model = "o3"\r\n[tui]\r\nnotifications = true\r\n',  # CRLF
        b"",
    ],
    ids=["typical", "no-eol", "blank-lines", "crlf", "empty"],
)
def test_untrust_restores_the_file_byte_for_byte(codex_home, original):
    config = codex_home / "config.toml"
    config.write_bytes(original)
    os.chmod(config, 0o640)
    codex.trust(str(codex_home))
    assert tomllib.loads(config.read_text())["hooks"]["state"]
    assert codex.untrust(str(codex_home)) is True
    assert config.read_bytes() == original
    assert stat.S_IMODE(os.stat(config).st_mode) == 0o640
    assert codex.untrust(str(codex_home)) is False
    assert config.read_bytes() == original


def test_untrust_keeps_what_the_user_added_after_our_block(codex_home):
    config = codex_home / "config.toml"
    config.write_text(USER_CONFIG)
    codex.trust(str(codex_home))
    config.write_text(config.read_text() + "\n[tui]\nnotifications = true\n")
    codex.untrust(str(codex_home))
    assert config.read_text() == USER_CONFIG + "\n[tui]\nnotifications = true\n"


def test_conflicting_user_key_is_refused_untouched(codex_home):
    key = next(iter(codex.trust_keys()))
    text = USER_CONFIG + f'\n[hooks.state."{key}"]\ntrusted_hash = "sha256:theirs"\n'
    config = codex_home / "config.toml"
    config.write_text(text)
    with pytest.raises(SettingsError, match="already trusts another hook"):
        codex.trust(str(codex_home))
    assert config.read_text() == text


def test_invalid_toml_is_refused_untouched(codex_home):
    config = codex_home / "config.toml"
    text = "model = \n[broken\n"
    config.write_text(text)
    with pytest.raises(SettingsError, match="not valid TOML"):
        codex.trust(str(codex_home))
    assert config.read_text() == text


def test_setup_with_config_trust_has_no_bypass_flag(runtime_dir, codex_home):
    spawn = codex.setup("r", runtime_dir, trust_mode="config", home=str(codex_home))
    assert codex.BYPASS_FLAG not in spawn.args
    assert codex.BLOCK_BEGIN in (codex_home / "config.toml").read_text()


def test_gemini_cli_groups_arm_every_event_the_adapter_reads() -> None:
    """Gemini CLI's groups (installed once, ADR 0028): the events the hook translator
    reads, each with the installed hook command; tool events match every tool."""
    from agentspool.adapters.gemini_cli import _install as gemini
    from agentspool.adapters.gemini_cli._schema import HOOK_FIELDS

    groups = gemini.groups()
    assert set(groups) == set(HOOK_FIELDS)
    for event, group in groups.items():
        [handler] = group["hooks"]
        assert (handler["type"], handler["timeout"]) == ("command", 10000)
        argv = _check_command(handler["command"], event, "gemini_cli")
        assert argv[-2] == "--installed"
        assert group.get("matcher") == ("*" if event in ("BeforeTool", "AfterTool") else None)
