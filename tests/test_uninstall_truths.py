"""Issue 21 item 9, the parts a person at a terminal meets: ``uninstall`` of what was
never installed says so, it never removes a directory it did not make, and Gemini CLI's
``settings.json`` with comments (the CLI accepts them) is installed into and restored
byte for byte. Run as a user runs it: the installed ``agentspool`` in a subprocess."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROVIDERS = {
    "claude-code": ["settings.json"],
    "codex": ["hooks.json", "config.toml"],
    "gemini-cli": ["settings.json"],
    "opencode": ["plugins/agentspool-opencode.js"],
}


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    script = os.path.join(os.path.dirname(sys.executable), "agentspool")
    return subprocess.run(
        [script, *argv], capture_output=True, text=True, cwd="/", check=False, timeout=60
    )


def ok(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert (proc.returncode, proc.stderr) == (0, ""), (proc.returncode, proc.stderr)
    return proc.stdout.splitlines()


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_uninstalling_what_was_never_installed_says_nothing_is_there(
    tmp_path: Path, provider: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    lines = ok(cli("uninstall", provider, "--config-home", str(home)))
    assert lines == [
        f"nothing installed: {home / name} (no such file)" for name in PROVIDERS[provider]
    ]
    assert home.is_dir() and not any(home.iterdir())


def test_uninstall_of_a_file_holding_none_of_ours_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    settings = home / "settings.json"
    settings.write_text('{"model": "opus"}\n')
    lines = ok(cli("uninstall", "claude-code", "--config-home", str(home)))
    assert lines == [f"nothing installed: {settings} (nothing of agentspool's in it)"]
    assert settings.read_text() == '{"model": "opus"}\n'


@pytest.mark.parametrize("provider", ["claude-code", "codex", "gemini-cli"])
def test_the_users_own_empty_directory_outlives_install_and_uninstall(
    tmp_path: Path, provider: str
) -> None:
    home = tmp_path / "mine"
    home.mkdir()
    ok(cli("install", provider, "--config-home", str(home)))
    assert sorted(p.name for p in home.iterdir()) == sorted(PROVIDERS[provider])
    ok(cli("uninstall", provider, "--config-home", str(home)))
    assert home.is_dir() and not any(home.iterdir())
    assert tmp_path.is_dir()


def test_directories_install_made_go_with_uninstall_and_only_while_empty(
    tmp_path: Path,
) -> None:
    made = tmp_path / "a" / "b"
    assert ok(cli("install", "gemini-cli", "--config-home", str(made))) == [
        f"created: {made / 'settings.json'}"
    ]
    ok(cli("uninstall", "gemini-cli", "--config-home", str(made)))
    assert not (tmp_path / "a").exists() and tmp_path.is_dir()

    # one the user put a file of their own into stays, with the file
    ok(cli("install", "claude-code", "--config-home", str(made)))
    (made / "notes.txt").write_text("mine\n")
    ok(cli("uninstall", "claude-code", "--config-home", str(made)))
    assert sorted(p.name for p in made.iterdir()) == ["notes.txt"]


COMMENTED = """\
{
  // my theme, see https://example.com/docs#ui
  "ui": {"theme": "GitHub"}, /* kept: "hooks": {} */
  "mcpServers": {
    "docs": {"httpUrl": "https://mcp.example.com//v1/*"} // a URL is not a comment
  },
  /*
   * hooks of my own
   */
  "hooks": {
    "AfterTool": [
      {"matcher": "*", "hooks": [{"type": "command", "command": "echo after"}]} // mine
    ]
  }
  // the end
}
"""
COMMENTS = [
    "// my theme, see https://example.com/docs#ui",
    '/* kept: "hooks": {} */',
    "// a URL is not a comment",
    "/*\n   * hooks of my own\n   */",
    "// mine",
    "// the end",
]
CASES = [
    (COMMENTED, COMMENTS),
    (COMMENTED.replace("\n", "\r\n"), [c.replace("\n", "\r\n") for c in COMMENTS]),
    ("{ // none yet\n}\n", ["// none yet"]),
]


def _our_commands(text: str) -> list[str]:
    """Our hook commands in a commented settings file, read as Gemini CLI reads it."""
    strict = re.sub(
        r'(?s)("(?:[^"\\\n]|\\.)*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text
    )
    hooks = json.loads(strict)["hooks"]
    return [
        handler["command"]
        for groups in hooks.values()
        for group in groups
        for handler in group["hooks"]
        if "agentspool.hooks.gemini_cli" in handler["command"]
    ]


@pytest.mark.parametrize(("text", "comments"), CASES)
def test_a_commented_gemini_settings_file_keeps_every_comment_through_the_round_trip(
    tmp_path: Path, text: str, comments: list[str]
) -> None:
    gemini = tmp_path / ".gemini"
    gemini.mkdir()
    settings = gemini / "settings.json"
    settings.write_bytes(text.encode())

    assert ok(cli("install", "gemini-cli", "--config-home", str(gemini))) == [
        f"updated: {settings} (the file as it was: {settings}.agentspool-backup)"
    ]
    installed = settings.read_bytes().decode()
    assert len(_our_commands(installed)) >= 5  # every event Gemini CLI fires
    position = 0
    for comment in comments:  # each comment, in order, byte for byte
        assert comment in text
        position = installed.index(comment, position) + len(comment)
    assert ("https://mcp.example.com//v1/*" in installed) == ("mcp.example" in text)
    assert ok(cli("install", "gemini-cli", "--config-home", str(gemini))) == [
        f"unchanged: {settings}"
    ]

    ok(cli("uninstall", "gemini-cli", "--config-home", str(gemini)))
    assert settings.read_bytes() == text.encode()


def test_an_unterminated_comment_is_refused_in_one_line(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{\n  "ui": {} /* theme\n}\n')
    proc = cli("install", "gemini-cli", "--config-home", str(tmp_path))
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"agentspool: {settings}: not valid JSON at line 2, column 12: unterminated /* "
        "comment; left untouched"
    ]
    assert settings.read_text() == '{\n  "ui": {} /* theme\n}\n'
