"""Real users' transcripts against ccusage's numbers on them (issue 19).

The corpus lives outside the repository (``$AGENTSPOOL_REALWORLD``: a ``home/`` laid out
as the CLIs keep their files, ``expected/`` with ccusage 20.0.24's stdout on exactly that
tree, ``MANIFEST.tsv``). It is test data only: this module reads it from there, on a
private copy, through the ``agentspool`` command a person runs.

Run as a script it prints the comparison (``python tests/support/realworld.py``), so a
mismatch can be studied without pytest.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# ccusage's field -> agentspool's `usage --json` field.
FIELDS = (
    ("inputTokens", "input_tokens"),
    ("outputTokens", "output_tokens"),
    ("cacheReadTokens", "cache_read_tokens"),
    ("cacheCreationTokens", "cache_write_tokens"),
)
PROVIDERS = ("claude-code", "codex", "gemini-cli")


def _tokens(inp: int, out: int, read: int, write: int = 0) -> dict[str, int]:
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "cache_read_tokens": read,
        "cache_write_tokens": write,
    }


_DAAAIN = "rw-daaain-claude-code-log-test-test_data"
_HAPPY = "rw-slopus-happy-packages-happy-cli-src-claude-utils-__fixtures__"

# Where agentspool knowingly counts otherwise than ccusage 20.0.24, each because ccusage
# is wrong there (docs/adr/0025-usage.md, a heading per provider): (provider, ccusage's
# key) -> the figures agentspool shows. The one list of them: the test and the script
# both read it, and an entry the corpus no longer holds is a mismatch too.
DOCUMENTED: dict[tuple[str, str], dict[str, int]] = {
    # Claude Code, all in other tools' test fixtures, none in a real user's session.
    # ccusage counts one response twice: two lines of message msg_01R62…, one without
    # requestId (its key is id+requestId).
    ("claude-code", f"{_HAPPY}/duplicate-assistant-response.jsonl"): _tokens(8, 11, 13594, 18642),
    # The same: two lines of msg_01Knc…, one without requestId.
    (
        "claude-code",
        "rw-slopus-happy-cli-src-claude-sessionWatcherFixtures/resumed-session.jsonl",
    ): _tokens(7, 100, 27166, 5321),
    # Its hand-written ids msg_002…msg_010 repeat representative_messages' (which
    # ccusage never reads, below); agentspool counts an id once, in the session that
    # began first — and keeps msg_004, which edge_cases repeats.
    ("claude-code", f"{_DAAAIN}/todowrite_examples.jsonl"): _tokens(420, 63, 0),
    # ccusage skips its lines written with a space after a colon; its one other response
    # (msg_004) is todowrite_examples' at the same time, which ccusage keeps in the file
    # whose path sorts first: agentspool counts it there (no row here).
    ("claude-code", f"{_DAAAIN}/edge_cases.jsonl"): _tokens(0, 0, 0),
    # Gemini CLI: one session's document copied at several moments (each copy holds the
    # earlier ones' records, same ids and tokens): ccusage adds every copy in full,
    # agentspool counts each answer once — these are the largest copy's figures.
    ("gemini-cli", "f7633853-6663-4dbb-bbf4-6159afa29df8"): _tokens(22064, 2536, 168654),
    ("gemini-cli", "e557a820-4a70-4de2-9d87-7ff517e7b249"): _tokens(47164, 413, 11940),
    ("gemini-cli", "d047d7c7-6513-4afc-824b-0c382e6997bf"): _tokens(26810, 932, 36163),
    # Codex: a resumed thread's new file (0.36) holds 9cd28a74-…'s session_meta and
    # every line of it under the resume's time; ccusage counts its 56 responses again.
    ("codex", "613a9a68-8816-40b2-a2d4-041ade599da6"): _tokens(66855, 16568, 819328),
    # ccusage's own branch fixture: its first line is its parent's, byte for byte
    # (same time, same running total): one response, which ccusage counts in both.
    ("codex", "feb63163-7215-5332-a7da-2197510c0cec"): _tokens(400, 250, 200),
    # Forks (forked_from_id): ccusage counts the copied parent history again from the
    # parent's first context estimate on; agentspool counts a copy once.
    ("codex", "431790b2-d0e2-5617-b628-5dfeb2d61b19"): _tokens(156480, 6959, 1646080),
    ("codex", "5842dc92-3faa-5de9-9266-6377fd2505d5"): _tokens(2727, 63, 303),
    ("codex", "5bf7e4d0-56ff-5e12-94e5-6bb3ecff7985"): _tokens(493008, 17481, 1400576),
    # The same 158 responses at the same times as 5bf7e4d0-…'s: counted there (no row).
    ("codex", "81857dd2-241c-57ab-b0d6-ee456da39fa4"): _tokens(0, 0, 0),
}
ONLY_AGENTSPOOL: dict[tuple[str, str], dict[str, int]] = {
    # Claude Code: written with a space after a colon ("usage": {…}), valid JSON: ccusage
    # reads none of their lines and has no row for the file.
    ("claude-code", f"{_DAAAIN}/representative_messages.jsonl"): _tokens(218, 445, 0),
    ("claude-code", f"{_DAAAIN}/session_b.jsonl"): _tokens(20, 35, 0),
    # Named like daaain's edge_cases.jsonl in another project: one session id, so one
    # session, shown at the path that sorts first; its usage is daaain's, whose lines
    # ccusage skips (above).
    (
        "claude-code",
        "rw-Dicklesworthstone-coding_agent_session_search-tests-fixtures-"
        "message_grouping/edge_cases.jsonl",
    ): _tokens(320, 350, 0),
    # Codex: written with a space after each ':' and ',': ccusage reads none of its lines
    # (the same lines compacted, it counts them).
    ("codex", "00000000-0000-0000-0000-000000000001"): _tokens(1200, 50, 0),
    # Gemini CLI: answers whose records name no model; ccusage leaves their tokens out,
    # agentspool counts them (unpriced).
    ("gemini-cli", "sess-uuid-1"): _tokens(3350, 650, 150),
}


def corpus_root() -> Path | None:
    """The corpus named by ``$AGENTSPOOL_REALWORLD``, or None when it is not there."""
    root = os.environ.get("AGENTSPOOL_REALWORLD", "")
    if not root:
        return None
    path = Path(root)
    return path if (path / "home").is_dir() and (path / "expected").is_dir() else None


def agentspool_command() -> str:
    beside = Path(sys.executable).with_name("agentspool")
    return str(beside) if beside.exists() else "agentspool"


@dataclass
class Workspace:
    """A private copy of the corpus's ``home`` and the environment that points every
    CLI's files (and agentspool's store and runtime dir) inside it."""

    corpus: Path
    root: Path
    env: dict[str, str]

    @property
    def home(self) -> Path:
        return self.root / "home"

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [agentspool_command(), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
            cwd=self.root,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"agentspool {' '.join(args)}: exit {done.returncode}: {done.stderr}"
            )
        return done

    def manifest(self) -> list[dict[str, str]]:
        with (self.corpus / "MANIFEST.tsv").open(newline="") as fh:
            return list(csv.DictReader(fh, delimiter="\t"))

    def expected(self, provider: str) -> list[dict]:
        path = self.corpus / "expected" / f"ccusage-{provider}-session.json"
        return json.loads(path.read_text())["sessions"]


@contextlib.contextmanager
def workspace(corpus: Path) -> Iterator[Workspace]:
    with tempfile.TemporaryDirectory(prefix="agentspool-realworld-") as tmp:
        root = Path(tmp)
        root.chmod(0o700)
        shutil.copytree(corpus / "home", root / "home")
        for name in ("data", "run", "xdg-config", "xdg-data", "xdg-cache"):
            (root / name).mkdir(mode=0o700)
        home = root / "home"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "TZ": "UTC",
            "LANG": "C.UTF-8",
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
            "GEMINI_CLI_HOME": str(home),
            "AGENTSPOOL_DATA_DIR": str(root / "data"),
            "AGENTSPOOL_RUNTIME_DIR": str(root / "run"),
            "XDG_CONFIG_HOME": str(root / "xdg-config"),
            "XDG_DATA_HOME": str(root / "xdg-data"),
            "XDG_CACHE_HOME": str(root / "xdg-cache"),
        }
        yield Workspace(corpus, root, env)


def ccusage_key(provider: str, session: dict) -> str:
    """The key under which agentspool's row of the same session is found (corpus README)."""
    if provider == "claude-code":
        return f"{session['projectPath']}/{session['sessionId']}.jsonl"
    if provider == "codex":
        return session["sessionId"][-36:]
    return session["sessionId"]


def expected_figures(provider: str, session: dict) -> dict[str, int]:
    """What agentspool's row must say for ccusage's ``session``: ccusage's figures, but
    where ADR 0025 names a difference."""
    documented = DOCUMENTED.get((provider, ccusage_key(provider, session)))
    if documented is not None:
        return documented
    want = {ours: session[theirs] for theirs, ours in FIELDS}
    if provider == "gemini-cli":
        # ccusage's outputTokens leaves out the thoughts its own totalTokens holds (and
        # its cost prices as output); agentspool counts them as output.
        want["output_tokens"] += session["totalTokens"] - sum(session[t] for t, _ in FIELDS)
    return want


def our_key(provider: str, row: dict, home: Path) -> str:
    if provider == "claude-code":
        path = Path(row["path"])
        try:
            return str(path.relative_to(home / ".claude" / "projects"))
        except ValueError:
            return row["path"]
    return row["key"]


@dataclass
class Mismatch:
    provider: str
    key: str
    expected: dict[str, int]
    got: dict[str, int] | None

    def __str__(self) -> str:
        got = "missing" if self.got is None else self.got
        return f"{self.provider} {self.key}: ccusage {self.expected} agentspool {got}"


def compare_usage(
    ws: Workspace,
) -> tuple[dict[str, tuple[int, int, int]], list[Mismatch], list[str]]:
    """Per provider (sessions equal ccusage or its documented difference, sessions
    expected, sessions equal ccusage exactly); the mismatches; and the rows agentspool
    has that ccusage does not (sessions with tokens only), but the documented ones."""
    ws.run("index", "--json")
    rows = json.loads(ws.run("usage", "--by", "session", "--json", "--no-index").stdout)["rows"]
    ours: dict[tuple[str, str], dict] = {}
    for row in rows:
        ours[(row["provider"], our_key(row["provider"], row, ws.home))] = row
    counts: dict[str, tuple[int, int, int]] = {}
    mismatches: list[Mismatch] = []
    seen: set[tuple[str, str]] = set()
    for provider in PROVIDERS:
        equal = exactly = 0
        sessions = ws.expected(provider)
        for session in sessions:
            key = ccusage_key(provider, session)
            seen.add((provider, key))
            want = expected_figures(provider, session)
            row = ours.get((provider, key))
            got = None if row is None else {name: row[name] for name in want}
            if row is None and not any(want.values()):
                got = want  # documented: every response counted in another session
            if got == want:
                equal += 1
            else:
                mismatches.append(Mismatch(provider, key, want, got))
            exactly += got == {ours_name: session[theirs] for theirs, ours_name in FIELDS}
        counts[provider] = (equal, len(sessions), exactly)
    extra = []
    for (provider, key), row in sorted(ours.items()):
        if provider not in PROVIDERS or (provider, key) in seen:
            continue
        if not any(row[name] for _, name in FIELDS):
            continue
        documented = ONLY_AGENTSPOOL.get((provider, key))
        if documented is None:
            extra.append(f"{provider} {key}")
        elif {name: row[name] for name in documented} != documented:
            got = {name: row[name] for name in documented}
            mismatches.append(Mismatch(provider, key, documented, got))
    # A documented difference the corpus no longer holds: its entry goes.
    for (provider, key), figures in {**DOCUMENTED, **ONLY_AGENTSPOOL}.items():
        if (provider, key) not in seen and (provider, key) not in ours:
            mismatches.append(Mismatch(provider, key, figures, None))
    return counts, mismatches, extra


def transcript_files(ws: Workspace) -> list[tuple[str, Path]]:
    """(provider, path) of every transcript file in the corpus, from its manifest."""
    return [(entry["provider"], ws.root / entry["path"]) for entry in ws.manifest()]


def main() -> int:
    corpus = corpus_root()
    if corpus is None:
        print("AGENTSPOOL_REALWORLD does not name a corpus (home/ and expected/)")
        return 2
    with workspace(corpus) as ws:
        counts, mismatches, extra = compare_usage(ws)
        for mismatch in mismatches:
            print(mismatch)
        for key in extra:
            print(f"only agentspool: {key}")
        for provider, (equal, total, exactly) in counts.items():
            print(
                f"{provider}: {equal} of {total} sessions equal ccusage "
                f"({exactly} exactly, {equal - exactly} as ADR 0025 documents)"
            )
    return 0 if not mismatches and not extra else 1


if __name__ == "__main__":
    sys.exit(main())
