"""The README's "Try it" and "Set up" blocks, pasted line by line into a fresh login
shell as a new user would (issue 21, item 1): a fresh clone of this repository, a
private HOME whose only tool is pipx (nothing of agentspool on PATH), a real terminal
(tmux). Every line must exit 0; ``watch`` is left with q, as its comment says."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import tmux

ROOT = Path(__file__).resolve().parent.parent
PIPX = Path(sys.executable).parent / "pipx"

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed"),
    pytest.mark.skipif(not PIPX.exists(), reason="pipx not installed (make install)"),
    pytest.mark.timeout(900),
]

MARK = re.compile(r"::rc=(\d+)::")
PASSED = ("PIP_", "SSL_CERT_", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY")
"""The machine's registry settings (a person's pip config), passed into the fresh shell."""
SLOW = {"pipx install": 600.0, "agentspool demo": 180.0}


def readme_block(heading: str) -> list[str]:
    """The command lines of the first ``sh`` block under ``## heading``."""
    text = (ROOT / "README.md").read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_the_blocks_are_what_a_person_can_paste() -> None:
    for heading in ("Try it", "Set up"):
        for line in readme_block(heading):
            assert "<" not in line.split("#")[0], line  # no placeholder to fill in


def _rcs(screen: str) -> list[int]:
    return [int(m) for m in MARK.findall(screen)]


def test_the_readme_pasted_into_a_fresh_shell_works(tmp_path: Path) -> None:
    clone = tmp_path / "agentspool"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    home = tmp_path / "home"
    tools = tmp_path / "tools"
    for path in (home, tools, tmp_path / "tmp"):
        path.mkdir()
    (tools / "pipx").symlink_to(PIPX)
    # the person's own login files: pipx on PATH, and a prompt that says each exit status
    (home / ".profile").write_text(f'PATH="{tools}:$PATH"\n')
    (home / ".bashrc").write_text("")
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmp_path / "tmp"),
        "PIPX_HOME": str(home / ".local" / "pipx"),
        "PIPX_BIN_DIR": str(home / ".local" / "bin"),
        "PIPX_MAN_DIR": str(home / ".local" / "share" / "man"),
        **{k: v for k, v in os.environ.items() if k.startswith(PASSED)},
    }
    pane = tmux.start(["bash", "--login"], cwd=str(clone), env=env, width=80, height=24)
    try:
        pane.wait_until(lambda s: "$" in s or "#" in s, timeout=30)
        pane.send_text("PROMPT_COMMAND='printf \"::rc=%s::\\n\" $?'")
        pane.send_keys("Enter")
        pane.wait_until(lambda _: bool(_rcs(_history(pane))), timeout=30)
        base = len(_rcs(_history(pane)))  # the markers before the first README line
        assert shutil.which("agentspool", path=f"{tools}:/usr/bin:/bin") is None
        lines = [*readme_block("Try it"), *readme_block("Set up")]
        for done, line in enumerate(lines, base):
            pane.send_text(line)
            pane.send_keys("Enter")
            timeout = next((t for cmd, t in SLOW.items() if line.startswith(cmd)), 60.0)
            if line.startswith("agentspool watch"):
                pane.wait_until(lambda s: "PROVIDER" in s or "no live runs" in s, timeout=60)
                pane.send_keys("q")
            pane.wait_until(lambda _, n=done: len(_rcs(_history(pane))) > n, timeout=timeout)
            rcs = _rcs(_history(pane))
            assert rcs[done] == 0, f"{line!r} exited {rcs[done]}:\n{_history(pane)}"
        assert len(_rcs(_history(pane))) == base + len(lines)
    finally:
        pane.kill()
    assert (home / ".local" / "bin" / "agentspool").exists()


def _history(pane: tmux.Pane) -> str:
    """Everything the shell printed so far (the scrollback too)."""
    return pane._tmux("capture-pane", "-p", "-J", "-S", "-5000", "-t", pane.target).stdout
