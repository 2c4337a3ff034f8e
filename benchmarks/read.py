"""Read-side throughput and memory, measured side by side (DESIGN.md "Measuring").

For each provider with a generator (a transcript of real record shapes, ~200 MB):

(a) cold ``read_chat`` throughput as a ratio to a bare msgspec typed decode of every
    line of the same file, interleaved runs, medians   — target >= 0.6
(b) re-read after appending one record, as a ratio to a cold read of a 1 MB file of the
    same shapes (cost follows the append, not the file)  — target <= 1.5
(c) peak RSS of a cold ``read_chat`` of the big file, in a fresh process — target <= 300 MB

Usage: python benchmarks/read.py [--size-mb 200] [--runs 3]. Ratios print last.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import msgspec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _claude_gen

from agentspool.adapters.claude_code import ClaudeCode


class _TypeOnly(msgspec.Struct):
    type: str = ""


def bare_decode(path: str) -> float:
    decode = msgspec.json.Decoder(_TypeOnly).decode
    start = time.perf_counter()
    with open(path, "rb") as fh:
        for line in fh:
            decode(line)
    return time.perf_counter() - start


def cold_read(path: str) -> float:
    start = time.perf_counter()
    ClaudeCode().read_chat("bench", "", path)
    return time.perf_counter() - start


def reread_after_append(path: str, extra: bytes) -> float:
    adapter = ClaudeCode()
    adapter.read_chat("bench", "", path)
    with open(path, "ab") as fh:
        fh.write(extra)
    start = time.perf_counter()
    adapter.read_chat("bench", "", path)
    return time.perf_counter() - start


_RSS = """
import resource, sys
from agentspool.adapters.claude_code import ClaudeCode
chat = ClaudeCode().read_chat("bench", "", sys.argv[1])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, len(chat.messages))
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "big.jsonl")
        small = os.path.join(tmp, "small.jsonl")
        size = _claude_gen.write(big, args.size_mb << 20)
        _claude_gen.write(small, 1 << 20)
        print(f"claude-code: generated {size / 2**20:.0f} MB transcript")
        bare, ours = [], []
        for _ in range(args.runs):
            bare.append(bare_decode(big))
            ours.append(cold_read(big))
        small_reads, appends = [], []
        for i in range(max(args.runs, 5)):
            small_reads.append(cold_read(small))
            appends.append(reread_after_append(big, _claude_gen.extra_turn(100 + i)))
        rss = subprocess.run(
            [sys.executable, "-c", _RSS, big], capture_output=True, text=True, check=True
        ).stdout.split()
        b, o = statistics.median(bare), statistics.median(ours)
        s, a = statistics.median(small_reads), statistics.median(appends)
        print(
            f"bare typed decode {b:.3f}s ({size / b / 2**20:.0f} MB/s); "
            f"read_chat {o:.3f}s ({size / o / 2**20:.0f} MB/s)"
        )
        print(
            f"re-read after one appended record {a * 1000:.1f} ms; cold 1 MB read {s * 1000:.1f} ms"
        )
        print(f"peak RSS of a cold read: {rss[0]} MB ({rss[1]} messages)")
        print(f"ratio (a) read_chat/bare throughput (median): {b / o:.2f}  target >= 0.6")
        print(f"ratio (b) re-read-after-append / 1 MB read (median): {a / s:.2f}  target <= 1.5")
        print(f"(c) peak RSS MB: {rss[0]}  target <= 300")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
