"""Tier 2: the settings ``agentspool install`` writes are the ones the real CLIs load.

``claude -p`` (private HOME, ``CLAUDE_CONFIG_DIR``) and ``codex exec`` (private
``CODEX_HOME``) run once each with nothing but the installed settings; every installed
hook that fired leaves a record, so the CLI loaded our entries and, for Codex, counted
them as trusted (``codex exec`` skips an untrusted hook silently). The command is the
installed form exactly (same interpreter flags, bootstrap and ``--installed <Event>``
argv); only its package root points at a recorder package, so the test proves what the
CLI ran, whatever the hook does with that argv. Uninstall then gives back the bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import anthropic_server as api
from harness import claude, codex
from harness import responses_server as rs

import agentspool
from agentspool.adapters.codex._lifecycle import events as codex_events
from agentspool.adapters.common import commands

pytestmark = pytest.mark.live

_RECORDER = """\
import json, os, sys


def main(argv):
    payload = json.loads(sys.stdin.read() or "{{}}")
    line = json.dumps({{"argv": argv, "event": payload.get("hook_event_name")}})
    with open({log!r}, "a") as fh:
        fh.write(line + "\\n")
"""


def _recording_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package root whose ``agentspool.hooks.<module>.main`` records its argv."""
    root = tmp_path / "recorder"
    log = tmp_path / "fired.jsonl"
    hooks = root / "agentspool" / "hooks"
    hooks.mkdir(parents=True)
    (root / "agentspool" / "__init__.py").write_text("")
    (hooks / "__init__.py").write_text("")
    for module in commands.HOOK_MODULES:
        (hooks / f"{module}.py").write_text(_RECORDER.format(log=str(log)))
    monkeypatch.setattr(commands, "package_root", lambda: str(root))
    return log


def _fired(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.skipif(not claude.available(), reason="claude not installed (make install)")
def test_claude_loads_the_installed_user_settings(
    tmp_path: Path, runtime_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTSPOOL_RUNTIME_DIR", runtime_dir)
    log = _recording_root(tmp_path, monkeypatch)
    home = claude.make_home(tmp_path / "claude", user_settings={"env": {"IS_DEMO": "1"}})
    config_dir = home.home / ".claude"
    # Claude keeps its state file in $CLAUDE_CONFIG_DIR when that is set.
    (config_dir / ".claude.json").write_bytes((home.home / ".claude.json").read_bytes())
    settings = config_dir / "settings.json"
    original = settings.read_bytes()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_dir))
    report = agentspool.install("claude-code")  # resolved from $CLAUDE_CONFIG_DIR
    assert [f.path for f in report.files] == [str(settings)]

    with api.AnthropicServer(
        [api.tool_use("Bash", {"command": "echo hi"}), api.text("Done.")]
    ) as srv:
        result = claude.run_print(
            "say hi",
            home=home,
            server_url=srv.url,
            extra_args=["--allowedTools", "Bash(echo hi)"],
            extra_env={"CLAUDE_CONFIG_DIR": str(config_dir)},
        )
    assert result.returncode == 0, result.stderr
    assert "Done." in result.stdout
    fired = _fired(log)
    events = [f["event"] for f in fired]
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"):
        assert event in events, events
    assert all(f["argv"] == ["--installed", f["event"]] for f in fired), fired

    # Claude Code 2.1.328 rewrites settings.json itself at startup (it migrated keys
    # into it here), so the bytes are its own now: uninstall must take out our hooks and
    # keep everything else, the user's keys and the CLI's.
    written_by_claude = json.loads(settings.read_text())
    assert "hooks" in written_by_claude
    agentspool.uninstall("claude-code")
    left = json.loads(settings.read_text())
    assert left == {k: v for k, v in written_by_claude.items() if k != "hooks"}
    assert left["env"]["IS_DEMO"] == "1"
    assert set(json.loads(original)) <= set(left)


@pytest.mark.skipif(not codex.CODEX_BIN.exists(), reason="codex not installed (make install)")
def test_codex_exec_runs_the_installed_hooks_as_trusted(
    tmp_path: Path, runtime_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTSPOOL_RUNTIME_DIR", runtime_dir)
    log = _recording_root(tmp_path, monkeypatch)
    with rs.ResponsesServer([rs.exec_command("echo hi"), rs.text("Done.")]) as server:
        home = codex.make_home(server.base_url, root=tmp_path / "codex")
        # a hook of the user's own on one of our events: ours goes after it (group 1)
        user_hooks = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}
        (home.codex_home / "hooks.json").write_text(json.dumps(user_hooks, indent=2) + "\n")
        files = [home.codex_home / "hooks.json", home.config_toml]
        before = [p.read_bytes() for p in files]
        monkeypatch.setenv("CODEX_HOME", str(home.codex_home))
        agentspool.install("codex")  # resolved from $CODEX_HOME

        listed = codex.hooks_list(home)
        ours = [h for h in listed["hooks"] if commands.INSTALLED_FLAG in h["command"]]
        assert len(ours) == len(codex_events())
        assert {h["trustStatus"] for h in ours} == {"trusted"}, ours

        result = codex.run_exec(home, "say hi")
    assert result.returncode == 0, result.stderr
    assert "Done." in result.stdout
    fired = _fired(log)
    events = [f["event"] for f in fired]
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"):
        assert event in events, (events, result.stderr)
    assert all(f["argv"] == ["--installed", f["event"]] for f in fired), fired

    agentspool.uninstall("codex")
    # codex exec leaves hooks.json and config.toml alone (its state goes beside them)
    assert [p.read_bytes() for p in files] == before
