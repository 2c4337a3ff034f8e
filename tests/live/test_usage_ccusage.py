"""``agentspool usage --by session --json`` against ccusage 20.0.24 (pinned in
package.json), session by session: input, output, cache reads, cache writes.

Both read the same files through private config dirs (``CLAUDE_CONFIG_DIR``,
``CODEX_HOME``, ``HOME``, an empty cwd; ccusage with ``--offline``, so it fetches no
prices): the Tier-2 captures the real CLIs wrote, laid out as the CLIs lay them out, and a
generated corpus with every usage case (tests/support/usage_corpus.py). Where the two
differ, docs/adr/0026-usage-against-ccusage.md names the record that causes it, and the
test asserts exactly that difference: it fails if either side changes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import usage_corpus as corpus

LIVE = Path(__file__).resolve().parent
CCUSAGE = LIVE / "node_modules" / ".bin" / "ccusage"
CAPTURES = LIVE / "captures"

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not CCUSAGE.exists() or shutil.which("node") is None,
        reason="needs tests/live/node_modules (npm ci) and node",
    ),
]

Tokens = tuple[int, int, int, int]
"""Input (neither read from nor written to the cache), output, cache read, cache write."""
TOKEN_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens")
"""The same four in ccusage's rows."""


def _env(root: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(root / "home"),
        "CLAUDE_CONFIG_DIR": str(root / "claude"),
        "CODEX_HOME": str(root / "codex"),
        "XDG_CONFIG_HOME": str(root / "home" / ".config"),
        "TZ": "UTC",
        "NO_COLOR": "1",
    }


def _run(argv: list[str], root: Path) -> dict:
    cwd = root / "cwd"  # ccusage also reads ./.ccusage/: an empty dir has none
    cwd.mkdir(exist_ok=True)
    done = subprocess.run(
        argv, env=_env(root), cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    found: dict = json.loads(done.stdout)
    return found


CLAUDE_AND_CODEX = (("claude", "claude-code"), ("codex", "codex"))


def ccusage(
    root: Path, commands: tuple[tuple[str, str], ...] = CLAUDE_AND_CODEX
) -> dict[tuple[str, str], Tokens]:
    """(provider, session id) → tokens, as ccusage reports its sessions (``commands``:
    ccusage's command for each provider)."""
    found: dict[tuple[str, str], Tokens] = {}
    for command, provider in commands:
        report = _run([str(CCUSAGE), command, "session", "--json", "--offline"], root)
        for row in report["sessions"]:
            # Codex sessions are named by the rollout's path; the thread id ends its name.
            key = row["sessionFile"][-36:] if provider == "codex" else row["sessionId"]
            found[provider, key] = tuple(row[k] for k in TOKEN_KEYS)  # type: ignore[assignment]
    return found


def agentspool_usage(root: Path) -> dict[tuple[str, str], Tokens]:
    argv = [sys.executable, "-m", "agentspool.cli.main", "usage", "--by", "session", "--json"]
    report = _run(argv, root)
    return {
        (row["provider"], row["key"]): (
            row["input_tokens"],
            row["output_tokens"],
            row["cache_read_tokens"],
            row["cache_write_tokens"],
        )
        for row in report["rows"]
    }


def differences(
    ours: dict[tuple[str, str], Tokens], theirs: dict[tuple[str, str], Tokens]
) -> dict[tuple[str, str], tuple[Tokens | None, Tokens | None]]:
    return {
        key: (ours.get(key), theirs.get(key))
        for key in sorted(ours.keys() | theirs.keys())
        if ours.get(key) != theirs.get(key)
    }


def _sum(found: dict[tuple[str, str], Tokens]) -> Tokens:
    return tuple(sum(t[i] for t in found.values()) for i in range(4))  # type: ignore[return-value]


def test_every_session_of_the_real_captures_agrees(tmp_path: Path) -> None:
    projects = tmp_path / "claude" / "projects"
    for transcript in sorted(CAPTURES.glob("claude-code/*/transcript")):
        shutil.copytree(transcript, projects / f"-tmp-{transcript.parent.name}")
    for rollout in sorted(CAPTURES.glob("codex/*/rollout-*.jsonl")):
        day = rollout.name[len("rollout-") :][:10].replace("-", "/")
        (tmp_path / "codex" / "sessions" / day).mkdir(parents=True, exist_ok=True)
        shutil.copy(rollout, tmp_path / "codex" / "sessions" / day)

    ours, theirs = agentspool_usage(tmp_path), ccusage(tmp_path)

    assert differences(ours, theirs) == {}
    providers = {provider for provider, _ in ours}
    assert providers == {"claude-code", "codex"}
    assert len(ours) >= 30  # every capture with usage: nothing was silently skipped
    assert sum(t[0] for t in ours.values()) > 0 and sum(t[2] for t in ours.values()) > 0


def test_every_session_of_the_generated_corpus_agrees_but_a_fork_sorting_first(
    tmp_path: Path,
) -> None:
    corpus.write_claude(tmp_path / "claude")
    corpus.write_codex(tmp_path / "codex")

    ours, theirs = agentspool_usage(tmp_path), ccusage(tmp_path)

    # docs/adr/0026: GAMMA_FORK copies GAMMA's two responses (same message.id,
    # requestId, timestamp). Both tools count them once; ccusage credits them to the
    # file whose path sorts first (the fork, 0d0d… < e7e7…), agentspool to the session
    # that stopped first (GAMMA: the one the fork copied).
    gamma_copied = (9 + 4, 400 + 90, 3000, 3000 + 500)
    gamma_fork_own = (3, 600, 3500, 700)
    plus = tuple(a + b for a, b in zip(gamma_copied, gamma_fork_own, strict=True))
    assert differences(ours, theirs) == {
        ("claude-code", corpus.GAMMA): (gamma_copied, None),
        ("claude-code", corpus.GAMMA_FORK): (gamma_fork_own, plus),
    }
    assert _sum(ours) == _sum(theirs)
    # The cases both count alike, each in its session (hand-counted in test_usage.py).
    assert ours["claude-code", corpus.ALPHA] == (78, 1526, 25700, 9000)
    assert ours["claude-code", corpus.FORK] == (2, 70, 6600, 800)
    assert ours["claude-code", corpus.LEGACY] == (83, 63, 2050, 1350)
    assert ours["codex", corpus.CODEX_MAIN] == (5000, 560, 32500, 0)
    assert ours["codex", corpus.CODEX_CHILD] == (3000, 90, 0, 0)


GEMINI_SUBAGENT = ("436a180d-640b-49bd-aec4-ea4c08c0265d", "91b12aed-2135-48fc-b282-c6728859eed5")
"""tui-subagent's session and the subagent it ran, in a chat file of its own."""


def _lay_out_newer_captures(home: Path) -> None:
    """Gemini CLI's, Qwen Code's, Kimi Code's, Copilot CLI's and Pi's captures where each CLI
    keeps them under ``HOME`` (each tool's default: neither is told another place)."""
    for chats in sorted(CAPTURES.glob("gemini-cli/*/chats")):
        shutil.copytree(chats, home / ".gemini" / "tmp" / chats.parent.name / "chats")
    for chats in sorted(CAPTURES.glob("qwen-code/*/chats")):
        shutil.copytree(chats, home / ".qwen" / "projects" / f"-{chats.parent.name}" / "chats")
    for chats in sorted(CAPTURES.glob("kimi-code/*/chats")):
        shutil.copytree(chats, home / ".kimi-code", dirs_exist_ok=True)
    for session in sorted(CAPTURES.glob("copilot/*/session-state/*")):
        shutil.copytree(session, home / ".copilot" / "session-state" / session.name)
    for sessions in sorted(CAPTURES.glob("pi/*/sessions")):
        shutil.copytree(
            sessions, home / ".pi" / "agent" / "sessions" / f"--{sessions.parent.name}--"
        )


def test_the_newer_providers_captures_agree_but_for_the_documented_rules(
    tmp_path: Path,
) -> None:
    """docs/adr/0026-usage-against-ccusage.md, "The providers after Claude Code and
    Codex": Kimi Code's, Copilot CLI's and Pi's sessions agree; Gemini CLI's output holds the
    thoughts ccusage leaves out, and a subagent's chat file counts in its parent's
    session; Qwen Code's input is what the cache did not hold, where ccusage counts the
    whole prompt."""
    _lay_out_newer_captures(tmp_path / "home")
    commands = (
        ("gemini", "gemini-cli"),
        ("qwen", "qwen-code"),
        ("kimi", "kimi-code"),
        ("copilot", "copilot"),
        ("pi", "pi"),
    )
    theirs = ccusage(tmp_path, commands)
    ours = agentspool_usage(tmp_path)
    # ccusage's Gemini CLI totalTokens holds the thoughts its outputTokens leaves out.
    gemini = _run([str(CCUSAGE), "gemini", "session", "--json", "--offline"], tmp_path)
    thoughts = {
        row["sessionId"]: row["totalTokens"] - sum(row[k] for k in TOKEN_KEYS)
        for row in gemini["sessions"]
    }
    assert all(thoughts.values())  # every scripted answer thinks: the rule is exercised

    def ours_for(provider: str, key: str) -> Tokens:
        inp, out, read, write = theirs[provider, key]
        if provider == "gemini-cli":
            return inp, out + thoughts[key], read, write
        if provider == "qwen-code":
            return inp - read, out, read, write
        return inp, out, read, write

    expected = {key: ours_for(*key) for key in theirs}
    parent, child = (("gemini-cli", key) for key in GEMINI_SUBAGENT)
    folded = zip(expected[parent], expected.pop(child), strict=True)
    expected[parent] = tuple(a + b for a, b in folded)  # type: ignore[assignment]

    assert differences(ours, expected) == {}
    assert {provider for provider, _ in ours} == {
        "gemini-cli",
        "qwen-code",
        "kimi-code",
        "copilot",
        "pi",
    }
    assert len([k for k in theirs if k[0] == "kimi-code"]) == 2  # /clear: two sessions
    assert sum(t[2] for t in ours.values()) > 0  # the cache reads were read
