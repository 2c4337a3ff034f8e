"""``agentspool usage`` against ccusage, side by side, whole processes (issue 26, ADR 0043).

A corpus of ~500 MB of conversation-heavy Claude Code transcripts (``_claude_chat_gen``:
tool results and assistant blocks carry ~75 % of the bytes), 120 files of log-normal sizes,
laid out as ccusage finds them (``$CLAUDE_CONFIG_DIR/projects/<project>/<session>.jsonl``)
and cached under $TMPDIR. Every file's response ids are its own, so neither tool's
cross-file dedupe decides anything. Then, per round, each command in a fresh process with a
private HOME, ``TZ=UTC`` and an empty cwd, the two tools back to back (which goes first
alternates):

(1) the first ``agentspool usage --by session --json`` (into a store that does not exist:
    the index from nothing)  /  ``ccusage session --json --offline``    — target <= 1.0
(2) a later ``agentspool usage --by session --json`` (nothing changed)
    /  ``ccusage session --json --offline``                             — target <= 0.1
(3) peak RSS of each (GNU time's maximum resident set: the largest single process of the
    command's tree)                                                     — target <= 300 MB
(4) the totals of both tools (input, output, cache read, cache write)   — equal

ccusage is the one ``make install`` puts under tests/live (npm, pinned ``20.0.24`` in
tests/live/package.json). Each ratio is the median of the rounds' paired ratios; the load
average is printed beside it.

Usage: python benchmarks/usage_vs_ccusage.py [--mb 500] [--files 120] [--rounds 9] [--fresh].
Ratios print last.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _claude_chat_gen
import _claude_gen

CORPUS_VERSION = 1
TEMPLATE_MB = 64
TEMPLATES = 3
HERE = os.path.dirname(os.path.abspath(__file__))
CCUSAGE = os.path.join(HERE, "..", "tests", "live", "node_modules", ".bin", "ccusage")
CCUSAGE_VERSION = "20.0.24"
TIME = "/usr/bin/time"


def _template(root: str, n: int) -> bytes:
    path = os.path.join(root, f"template-{n}.jsonl")
    if not os.path.exists(path):
        _claude_chat_gen.write(path + ".part", TEMPLATE_MB << 20, seed=100 + n)
        os.replace(path + ".part", path)
    with open(path, "rb") as fh:
        return fh.read()


def build_corpus(root: str, files: int, total_mb: int) -> int:
    """The corpus under ``root``/claude (made once, then reused); its bytes."""
    manifest = os.path.join(root, "manifest.json")
    if os.path.exists(manifest):
        with open(manifest) as fh:
            return int(json.load(fh)["bytes"])
    shutil.rmtree(os.path.join(root, "claude"), ignore_errors=True)
    rng = random.Random(26)
    templates = [_template(root, n) for n in range(TEMPLATES)]
    raw = [rng.lognormvariate(math.log(2 << 20), 1.1) for _ in range(files)]
    scale = (total_mb << 20) / sum(raw)
    sizes = [min(int(r * scale), (TEMPLATE_MB - 1) << 20) for r in raw]
    written = 0
    for i, size in enumerate(sizes):
        template = templates[i % TEMPLATES]
        end = template.rfind(b"\n", 0, size) + 1 or template.find(b"\n") + 1
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        # The response ids (and their request ids) made this file's own.
        data = (
            template[:end]
            .replace(_claude_gen.SESSION.encode(), session.encode())
            .replace(b'"msg_', b'"msg_%03x' % i)
            .replace(b'"req_', b'"req_%03x' % i)
        )
        project = os.path.join(root, "claude", "projects", f"-srv-project-{i % 12}")
        os.makedirs(project, exist_ok=True)
        with open(os.path.join(project, f"{session}.jsonl"), "wb") as fh:
            fh.write(data)
        written += len(data)
    with open(manifest, "w") as fh:
        json.dump({"files": files, "bytes": written}, fh)
    return written


def _env(home: str, claude: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": home,
        "CLAUDE_CONFIG_DIR": claude,
        "CODEX_HOME": os.path.join(home, ".codex"),
        "GEMINI_CLI_HOME": home,
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
        # No AGENTSPOOL_DATA_DIR: the store where a user's is (in XDG_DATA_HOME, above),
        # found as the command finds it for them.
        "AGENTSPOOL_RUNTIME_DIR": os.path.join(home, "run"),
        "TZ": "UTC",
        "NO_COLOR": "1",
    }


def run(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, int, dict[str, object]]:
    """One command in a fresh process: wall seconds, peak RSS MB, its JSON stdout."""
    peak = os.path.join(cwd, "..", "peak-kb")
    start = time.perf_counter()
    done = subprocess.run(
        [TIME, "-f", "%M", "-o", peak, *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {done.stderr[-2000:]!r}")
    with open(peak) as fh:
        rss = int(fh.read().split()[-1]) // 1024
    return seconds, rss, json.loads(done.stdout)


def _totals_ours(report: dict[str, object]) -> tuple[int, int, int, int]:
    rows = report["rows"]
    assert isinstance(rows, list)
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    return tuple(sum(int(r[k]) for r in rows) for k in keys)  # type: ignore[return-value]


def _totals_theirs(report: dict[str, object]) -> tuple[int, int, int, int]:
    rows = report["session"]  # the top-level command: every agent's sessions
    assert isinstance(rows, list)
    keys = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens")
    return tuple(sum(int(r[k]) for r in rows) for k in keys)  # type: ignore[return-value]


def _load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=500, help="corpus size (default 500)")
    parser.add_argument("--files", type=int, default=120)
    # ccusage's own first run varies by half (0.26-0.42 s on one quiet host): three
    # pairs left the median to one neighbour's burst (ADR 0063).
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--later", type=int, default=3, help="later runs per round")
    parser.add_argument("--fresh", action="store_true", help="generate the corpus again")
    return parser.parse_args()


def _pinned_ccusage() -> str:
    """The pinned ccusage's version line (it must be the pinned one)."""
    if not os.access(CCUSAGE, os.X_OK):
        raise SystemExit(f"no ccusage at {CCUSAGE}: run `make install`")
    version = subprocess.run(
        [CCUSAGE, "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if CCUSAGE_VERSION not in version:
        raise SystemExit(f"ccusage {version!r}, not the pinned {CCUSAGE_VERSION}")
    return version


def main() -> int:
    args = _arguments()
    version = _pinned_ccusage()
    root = os.path.join(
        tempfile.gettempdir(),
        f"agentspool-usage-corpus-v{CORPUS_VERSION}-{args.files}-{args.mb}",
    )
    if args.fresh:
        shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root, exist_ok=True)
    start = time.perf_counter()
    size = build_corpus(root, args.files, args.mb)
    claude = os.path.join(root, "claude")
    print(
        f"corpus: {args.files} files, {size / 2**20:.0f} MB in {claude} "
        f"({time.perf_counter() - start:.1f} s to make or find); ccusage {version}",
        flush=True,
    )
    # The command a user runs: the console script (``cli/entry.py``).
    command = os.path.join(os.path.dirname(sys.executable), "agentspool")
    ours_argv = [command, "usage", "--by", "session", "--json"]
    theirs_argv = [CCUSAGE, "session", "--json", "--offline"]
    firsts: list[float] = []
    laters: list[float] = []
    rss_ours: list[int] = []
    rss_theirs: list[int] = []
    totals: set[tuple[str, tuple[int, int, int, int]]] = set()
    for n in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            home = os.path.join(tmp, "home")
            cwd = os.path.join(tmp, "cwd")
            for d in (home, cwd, os.path.join(home, "data"), os.path.join(home, "run")):
                os.makedirs(d, mode=0o700, exist_ok=True)
            env = _env(home, claude)

            def pair(label: str, n: int = n, env: dict[str, str] = env, cwd: str = cwd) -> float:
                order = ["ours", "theirs"] if n % 2 == 0 else ["theirs", "ours"]
                got: dict[str, tuple[float, int, dict[str, object]]] = {}
                for who in order:
                    got[who] = run(ours_argv if who == "ours" else theirs_argv, env, cwd)
                (a, ra, ja), (b, rb, jb) = got["ours"], got["theirs"]
                rss_ours.append(ra)
                rss_theirs.append(rb)
                totals.add(("agentspool", _totals_ours(ja)))
                totals.add(("ccusage", _totals_theirs(jb)))
                print(
                    f"round {n + 1} {label}: agentspool {a:.2f} s ({ra} MB), ccusage "
                    f"{b:.2f} s ({rb} MB): {a / b:.3f} ({_load()})",
                    flush=True,
                )
                return a / b

            firsts.append(pair("first"))
            for _ in range(args.later):
                laters.append(pair("later"))
    by_tool = {tool: t for tool, t in totals}
    equal = len(totals) == 2 and by_tool.get("agentspool") == by_tool.get("ccusage")
    print(f"totals (input, output, cache read, cache write): {sorted(totals)}")
    print(f"(4) totals equal: {equal}  target: True")
    print(f"(3) peak RSS MB: agentspool {max(rss_ours)}, ccusage {max(rss_theirs)}  target <= 300")
    print(
        f"(1) first usage / ccusage (median of {len(firsts)}): {statistics.median(firsts):.3f}"
        f"  target <= 1.0 ({_load()})"
    )
    print(
        f"(2) later usage / ccusage (median of {len(laters)}): {statistics.median(laters):.3f}"
        f"  target <= 0.1 ({_load()})"
    )
    return 0 if equal else 1


if __name__ == "__main__":
    raise SystemExit(main())
