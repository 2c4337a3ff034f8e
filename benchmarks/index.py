"""The history index over a machine's worth of transcripts, measured side by side (ADR 0022).

A corpus of 2,000 transcripts (>= 1 GB; Claude Code as the captures are, Claude Code as a
long working session is, Codex; subagent files and compressed rollouts among them; sizes
log-normal, a few files of tens of MB) laid out as the CLIs keep them, cached under
$TMPDIR so that a re-run does not generate it again. Then, each in a fresh process
(``agentspool index``, the progress bar on a terminal), into a new store:

(1) the first index                                  — the reference
(2) a second run, nothing changed    / (1)           — target <= 0.02
(3) after appending to 10 files: against (2) plus the appended bytes at the first
    run's rate (the start, the stat pass, the new bytes)  — target ~1; and the files it
    opened (an audit hook in the child): the 10 appended, no unchanged one, and
    bytes read equal to the bytes appended
(4) peak RSS (VmHWM) of each run                      — target <= 300 MB

Usage: python benchmarks/index.py [--files 2000] [--mb 1100] [--fresh]. Ratios print last.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from typing import NamedTuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _claude_chat_gen
import _claude_gen
import _codex_gen

CORPUS_VERSION = 1
# kind -> (generator, share of the files)
KINDS = {
    "claude-code-chat": (_claude_chat_gen, 0.45),
    "claude-code": (_claude_gen, 0.15),
    "codex": (_codex_gen, 0.40),
}
TEMPLATE_MB = 64
LARGEST_MB = 48


def _template(directory: str, kind: str) -> bytes:
    path = os.path.join(directory, f"template-{kind}.jsonl")
    if not os.path.exists(path):
        KINDS[kind][0].write(path + ".part", TEMPLATE_MB << 20)
        os.replace(path + ".part", path)
    with open(path, "rb") as fh:
        return fh.read()


def _sizes(files: int, total: int, rng: random.Random) -> list[int]:
    """Log-normal sizes (many small sessions, a few long ones) scaled to ``total``."""
    raw = [rng.lognormvariate(math.log(150 << 10), 1.3) for _ in range(files)]
    scale = total / sum(raw)
    sizes = [min(int(r * scale), LARGEST_MB << 20) for r in raw]
    short = total - sum(sizes)
    for i in sorted(range(files), key=lambda i: sizes[i])[: files // 2]:  # the rest to small ones
        sizes[i] += short // (files // 2)
    return sizes


def _cut(template: bytes, size: int) -> bytes:
    end = template.rfind(b"\n", 0, min(size, len(template))) + 1
    return template[: end or template.find(b"\n") + 1]


def build_corpus(root: str, files: int, total_mb: int) -> tuple[list[tuple[str, str]], int]:
    """The corpus under ``root`` (made once, then reused): [(kind, path)], its bytes."""
    manifest = os.path.join(root, "manifest.json")
    if os.path.exists(manifest):
        with open(manifest) as fh:
            saved = json.load(fh)
        return [tuple(x) for x in saved["files"]], saved["bytes"]  # type: ignore[misc]
    shutil.rmtree(os.path.join(root, "homes"), ignore_errors=True)
    rng = random.Random(14)
    templates = {kind: _template(root, kind) for kind in KINDS}
    kinds = rng.choices(list(KINDS), weights=[share for _, share in KINDS.values()], k=files)
    laid: list[tuple[str, str]] = []
    written = 0
    for i, (kind, size) in enumerate(zip(kinds, _sizes(files, total_mb << 20, rng), strict=True)):
        data = _cut(templates[kind], size)
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if kind == "codex":
            data = data.replace(_codex_gen.THREAD.encode(), session.encode())
            day = f"2026/{1 + i % 12:02d}/{1 + i % 28:02d}"
            path = os.path.join(root, "homes", "codex", "sessions", day)
            path = os.path.join(path, f"rollout-2026-01-01T00-00-{i % 60:02d}-{session}.jsonl")
        else:
            data = data.replace(_claude_gen.SESSION.encode(), session.encode())
            project = os.path.join(root, "homes", "claude", "projects", f"-srv-project-{i % 40}")
            path = os.path.join(project, f"{session}.jsonl")
            if i % 33 == 0:  # a subagent's own file: its records are a sidechain
                agent = uuid.UUID(int=rng.getrandbits(128)).hex[:17]
                data = data.replace(
                    b'"isSidechain":false', b'"isSidechain":true,"agentId":"%s"' % agent.encode()
                )
                path = os.path.join(project, session, "subagents", f"agent-{agent}.jsonl")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if kind == "codex" and i % 200 == 0:  # an archived, compressed rollout
            import zstandard

            path += ".zst"
            data = zstandard.ZstdCompressor().compress(data)
        with open(path, "wb") as fh:
            fh.write(data)
        written += len(data)
        laid.append((kind, path))
    with open(manifest, "w") as fh:
        json.dump({"files": laid, "bytes": written}, fh)
    return laid, written


# The command in a fresh process; its own peak RSS (VmHWM, MB) written to the file its
# first argument names (stderr may be the terminal, where the progress bar draws), and
# every transcript it opened (an audit hook sees each open, os.open's too) beside it.
_CHILD = """
import os, sys
corpus = os.environ["BENCH_CORPUS"]
opened = set()
def audit(event, args):
    if event == "open" and isinstance(args[0], str) and args[0].startswith(corpus):
        opened.add(args[0])
sys.addaudithook(audit)
from agentspool.cli.main import main
code = main(sys.argv[2:])
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
with open(sys.argv[1], "w") as fh:
    fh.write(str(int(hwm.split()[1]) // 1024))
with open(sys.argv[1] + ".opened", "w") as fh:
    fh.write("\\n".join(sorted(opened)))
raise SystemExit(code)
"""


class Run(NamedTuple):
    """One ``agentspool index`` run: wall and CPU seconds, peak RSS, its JSON report and
    the transcripts it opened."""

    seconds: float
    cpu: float
    rss: int
    report: dict[str, object]
    opened: set[str]

    def __str__(self) -> str:
        return (
            f"{self.seconds:.3f} s ({self.cpu:.3f} s CPU), {self.rss} MB, "
            f"{len(self.opened)} transcripts opened: {self.report}"
        )


def run_index(root: str, store: str) -> Run:
    """One ``agentspool index`` in a fresh process (CPU: user + system, what a loaded
    shared host disturbs least)."""
    homes = os.path.join(root, "homes")
    env = {
        **os.environ,
        "CLAUDE_CONFIG_DIR": os.path.join(homes, "claude"),
        "CODEX_HOME": os.path.join(homes, "codex"),
        "BENCH_CORPUS": homes,
    }
    report = os.path.join(os.path.dirname(store), "report.json")
    peak = os.path.join(os.path.dirname(store), "peak-rss-mb")
    cpu = _children_cpu()
    start = time.perf_counter()
    # stderr stays the terminal's: the progress bar shows there when it is one.
    with open(report, "wb") as out:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, peak, "index", "--json", "--store", store],
            stdout=out,
            stderr=subprocess.PIPE if not sys.stderr.isatty() else None,
            env=env,
            check=False,
        )
    seconds = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"index failed ({done.returncode}): {done.stderr!r}")
    with open(report, "rb") as fh:
        result = json.loads(fh.read())
    with open(peak) as fh:
        rss = int(fh.read())
    with open(peak + ".opened") as fh:
        opened = set(fh.read().split("\n")) - {""}
    return Run(seconds, cpu, rss, result, opened)


def _children_cpu() -> float:
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def whole_turn(kind: str, seed: int) -> bytes:
    """One more turn as the generator writes them (prompt, tool calls, results, reply)."""
    rng = random.Random(seed)
    if kind == "codex":
        writer = _codex_gen._Writer()
        writer.ordinal = 10**7 + seed
        return _codex_gen.turn_lines(writer, 10**6 + seed, rng).encode()
    lines = KINDS[kind][0].turn_lines(10**6 + seed, rng)
    return "".join(
        json.dumps(_claude_gen._real_order(line), separators=(",", ":"), ensure_ascii=False) + "\n"
        for line in lines
    ).encode()


def append_to(laid: list[tuple[str, str]], count: int) -> dict[str, int]:
    """Append one whole turn to ``count`` files (every provider's); their sizes before."""
    plain = [(k, p) for k, p in laid if not p.endswith(".zst") and "/subagents/" not in p]
    chosen = plain[:: max(1, len(plain) // count)][:count]
    before = {}
    for n, (kind, path) in enumerate(chosen):
        extra = whole_turn(kind, 1000 + n)
        if kind == "codex":
            thread = os.path.basename(path)[-len(".jsonl") - 36 : -len(".jsonl")]
            extra = extra.replace(_codex_gen.THREAD.encode(), thread.encode())
        else:
            session = os.path.basename(path)[: -len(".jsonl")]
            extra = extra.replace(_claude_gen.SESSION.encode(), session.encode())
        before[path] = os.path.getsize(path)
        with open(path, "ab") as fh:
            fh.write(extra)
    return before


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--mb", type=int, default=1100, help="corpus size (default 1100)")
    parser.add_argument("--fresh", action="store_true", help="generate the corpus again")
    args = parser.parse_args()
    root = os.path.join(
        tempfile.gettempdir(), f"agentspool-index-corpus-v{CORPUS_VERSION}-{args.files}-{args.mb}"
    )
    if args.fresh:
        shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root, exist_ok=True)
    start = time.perf_counter()
    laid, size = build_corpus(root, args.files, args.mb)
    print(
        f"corpus: {len(laid)} files, {size / 2**20:.0f} MB in {root} "
        f"({time.perf_counter() - start:.1f} s to make or find)",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "history.sqlite")
        first = run_index(root, store)
        print(f"(1) first index: {first}")
        second = run_index(root, store)
        print(f"(2) nothing changed: {second}")
        # The appends are cut off again afterwards: the cached corpus stays as it was.
        before = append_to(laid, 10)
        try:
            appended = sum(os.path.getsize(p) - n for p, n in before.items())
            third = run_index(root, store)
        finally:
            for path, length in before.items():
                os.truncate(path, length)
        print(f"(3) 10 files appended ({appended} bytes): {third}")
        database = os.path.getsize(store)
    # What (3) should cost: the start and stat pass of a run with nothing to do (2), and
    # the appended bytes at the first run's rate.
    expected = second.seconds + appended / size * first.seconds
    expected_cpu = second.cpu + appended / size * first.cpu
    print(f"store: {database / 2**20:.0f} MB for {size / 2**20:.0f} MB of transcripts")
    print(
        f"ratio (2) unchanged / first: {second.seconds / first.seconds:.4f} wall, "
        f"{second.cpu / first.cpu:.4f} CPU  target <= 0.02"
    )
    print(
        f"(3) 10 appended: {third.seconds:.3f} s against {expected:.3f} s expected (the "
        f"start and stat pass, {second.seconds:.3f} s, and {appended} bytes at the first "
        f"run's rate): {third.seconds / expected:.2f} wall, "
        f"{third.cpu / expected_cpu:.2f} CPU  target ~1"
    )
    reread = sorted(third.opened - set(before))
    read = third.report["bytes_read"]
    print(
        f"(3) transcripts opened: {len(third.opened)} (the 10 appended: "
        f"{set(before) <= third.opened}), unchanged ones opened: {len(reread)}, "
        f"bytes read {read} of {appended} appended  target: 0 unchanged opened, equal bytes"
    )
    own = [float(r.report["seconds"]) for r in (first, second, third)]  # type: ignore[arg-type]
    print(
        f"the indexer's own time, without the interpreter's start (IndexReport.seconds): "
        f"(2)/(1) {own[1] / own[0]:.4f}, (3)/(1) {own[2] / own[0]:.4f}"
    )
    print(f"(4) peak RSS MB: {max(r.rss for r in (first, second, third))}  target <= 300")
    return 0 if not reread and read == appended and not second.opened else 1


if __name__ == "__main__":
    raise SystemExit(main())
