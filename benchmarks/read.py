"""Read-side throughput and memory, measured side by side (ADR 0009).

For each mix (a transcript of real record shapes, ~200 MB): ``claude-code`` as the
captures are (prompt snapshots carry most bytes), ``claude-code-chat`` as a long working
session is (tool results and assistant blocks carry ~75 % of the bytes),
``claude-code-talk`` the same session with its conversation records alone (no request
record, attachment or bookkeeping line: the most records built per byte), ``codex``:

(a) cold ``read_chat`` throughput as a ratio to a bare msgspec typed decode of every
    line of the same file; each run times both back to back and the median of the
    per-run ratios is reported (a neighbour's burst skews one pair, not the result)
                                                        — target >= 0.6
(b) re-read after appending one record, as a ratio to a cold read of a 1 MB file of the
    same shapes (cost follows the append, not the file)  — target <= 1.5
(c) peak RSS (VmHWM) of a cold ``read_chat`` of the big file, in a fresh process
                                                        — target <= 300 MB

(d) with ``$AGENTSPOOL_REALWORLD`` naming the real-world corpus (its ``MANIFEST.tsv``):
    (a) on real transcripts — every Claude Code file of at least 1 MB, every Codex
    rollout — each run the bare decode of all of them, then their cold reads
                                                        — target >= 0.6

Usage: python benchmarks/read.py [--size-mb 200] [--runs 7] [--mix NAME]. Ratios print last.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import msgspec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _claude_chat_gen
import _claude_gen
import _codex_gen

from agentspool.adapters import registry


class _ClaudeTalk:
    """``claude-code-chat`` with conversation records only (``write(talk_only=True)``)."""

    write = staticmethod(functools.partial(_claude_chat_gen.write, talk_only=True))
    extra_turn = staticmethod(_claude_chat_gen.extra_turn)
    conversation_share = staticmethod(_claude_chat_gen.conversation_share)


# mix -> (provider, generator)
MIXES: dict[str, tuple[str, Any]] = {
    "claude-code": ("claude-code", _claude_gen),
    "claude-code-chat": ("claude-code", _claude_chat_gen),
    "claude-code-talk": ("claude-code", _ClaudeTalk),
    "codex": ("codex", _codex_gen),
}


class _TypeOnly(msgspec.Struct):
    type: str = ""


def bare_decode(path: str) -> float:
    decode = msgspec.json.Decoder(_TypeOnly).decode
    start = time.perf_counter()
    with open(path, "rb") as fh:
        for line in fh:
            decode(line)
    return time.perf_counter() - start


def _fresh(provider: str) -> object:
    return type(registry.load(provider))()


def cold_read(provider: str, path: str) -> float:
    adapter = _fresh(provider)
    start = time.perf_counter()
    adapter.read_chat("bench", "", path)  # type: ignore[attr-defined]
    return time.perf_counter() - start


def reread_after_append(provider: str, path: str, extra: bytes) -> float:
    adapter: Any = _fresh(provider)
    adapter.read_chat("bench", "", path)
    with open(path, "ab") as fh:
        fh.write(extra)
    start = time.perf_counter()
    adapter.read_chat("bench", "", path)
    return time.perf_counter() - start


# Peak RSS of the child alone: Linux's ru_maxrss survives fork+exec, so a child forked
# from this (large) process would report at least this process's RSS. VmHWM belongs to
# the child's own address space.
_RSS = """
import sys
from agentspool.adapters import registry
chat = type(registry.load(sys.argv[2]))().read_chat("bench", "", sys.argv[1])
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(int(hwm.split()[1]) // 1024, len(chat.messages))
"""


def bench(mix: str, size_mb: int, runs: int) -> tuple[float, float, int]:
    provider, gen = MIXES[mix]
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "big.jsonl")
        small = os.path.join(tmp, "small.jsonl")
        size = gen.write(big, size_mb << 20)
        gen.write(small, 1 << 20)
        bare, ours = [], []
        for _ in range(runs):
            bare.append(bare_decode(big))
            ours.append(cold_read(provider, big))
        throughput = statistics.median(b / o for b, o in zip(bare, ours, strict=True))
        small_reads, appends = [], []
        for i in range(max(runs, 5)):
            small_reads.append(cold_read(provider, small))
            appends.append(reread_after_append(provider, big, gen.extra_turn(100 + i)))
        share = gen.conversation_share(small) if hasattr(gen, "conversation_share") else None
        rss = subprocess.run(
            [sys.executable, "-c", _RSS, big, provider], capture_output=True, text=True, check=True
        ).stdout.split()
    b, o = statistics.median(bare), statistics.median(ours)
    s, a = statistics.median(small_reads), statistics.median(appends)
    print(
        f"{mix}: {size / 2**20:.0f} MB; bare typed decode {b:.3f}s "
        f"({size / b / 2**20:.0f} MB/s); read_chat {o:.3f}s ({size / o / 2**20:.0f} MB/s); "
        f"re-read after one append {a * 1000:.1f} ms; cold 1 MB read {s * 1000:.1f} ms; "
        f"peak RSS {rss[0]} MB ({rss[1]} messages)"
        + (f"; tool results and assistant blocks {share:.0%} of the bytes" if share else "")
    )
    return throughput, a / s, int(rss[0])


REALWORLD_MIN_BYTES = {"claude-code": 1 << 20, "codex": 0}
"""Files smaller than this are left out of (d): their time is the reader's fixed cost."""


def realworld_files(root: str, provider: str) -> list[tuple[int, str]]:
    """The corpus's files of ``provider`` that (d) reads, smallest first, with their size."""
    import csv

    with open(os.path.join(root, "MANIFEST.tsv"), newline="") as fh:
        entries = list(csv.DictReader(fh, delimiter="\t"))
    return sorted(
        (int(e["bytes"]), os.path.join(root, e["path"]))
        for e in entries
        if e["provider"] == provider
        and e["path"].endswith(".jsonl")
        and int(e["bytes"]) >= REALWORLD_MIN_BYTES[provider]
    )


def realworld(root: str, runs: int) -> dict[str, float]:
    """(d): per provider, the median of the runs' bare-decode / cold-read ratios."""
    ratios: dict[str, float] = {}
    for provider in REALWORLD_MIN_BYTES:
        files = [path for _, path in realworld_files(root, provider)]
        size = sum(os.path.getsize(f) for f in files)
        per_run = []
        for _ in range(runs):
            bare = sum(bare_decode(f) for f in files)
            ours = sum(cold_read(provider, f) for f in files)
            per_run.append(bare / ours)
        ratios[provider] = statistics.median(per_run)
        print(f"real-world {provider}: {len(files)} files, {size / 2**20:.0f} MB")
    return ratios


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--mix", choices=sorted(MIXES), action="append")
    args = parser.parse_args()
    results = {m: bench(m, args.size_mb, args.runs) for m in args.mix or sorted(MIXES)}
    for mix, (throughput, reread, rss) in results.items():
        print(
            f"{mix} ratio (a) read_chat/bare throughput (median): {throughput:.2f}  target >= 0.6"
        )
        print(
            f"{mix} ratio (b) re-read-after-append / 1 MB read (median): {reread:.2f}"
            "  target <= 1.5"
        )
        print(f"{mix} (c) peak RSS MB: {rss}  target <= 300")
    corpus = os.environ.get("AGENTSPOOL_REALWORLD", "")
    if corpus:
        for provider, ratio in realworld(corpus, args.runs).items():
            print(
                f"real-world {provider} ratio (a) read_chat/bare throughput (median): "
                f"{ratio:.2f}  target >= 0.6"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
