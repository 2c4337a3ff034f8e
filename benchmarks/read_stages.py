"""Where a cold read of the real-world Codex rollouts spends its time (ADR 0056).

``read.py`` (d) gives one ratio for them; this splits it. Each run times, as ``read.py``
does, the bare decode of every rollout, then each stage below over every rollout; a
stage's ratio is bare ÷ stage (the median of the runs), per size class and overall:

    decode     the follower's blocks through the rollout's views (``decode_lines``):
               what the parse decodes before any Python looks at a record
    parse      + the handlers: records, events, the drift check of each shape's first line
    read_chat  the whole cold read: + the fold, the composed Chat, the read's fixed costs
    floor      decode + each call's arguments decoded + every record and event the read
               makes, copied in C from the parse's own (no Python per field) + their
               fold: what any read that makes these records costs, with no logic at all

The floor bounds what a faster parser could reach: only a read that leaves out records,
events or fields (what is read) could go beyond it.

Usage: AGENTSPOOL_REALWORLD=DIR python benchmarks/read_stages.py [--runs 9].
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from collections.abc import Callable

import msgspec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from read import bare_decode, cold_read

from agentspool.adapters.codex._records import DECODE_ERRORS, ResponseItemLine, decode_lines
from agentspool.adapters.codex._rollout import RolloutParser
from agentspool.adapters.common.jsonl import JsonlFollower
from agentspool.core.merge import EventMerger

SIZE_CLASSES = {
    "< 10 KB": (0, 10_000),
    "10 KB - 1 MB": (10_000, 1 << 20),
    ">= 1 MB": (1 << 20, 1 << 62),
}
_replace = msgspec.structs.replace
_decode_json = msgspec.json.Decoder().decode


def _decode(block: memoryview) -> list[object]:
    try:
        return decode_lines(block)
    except DECODE_ERRORS:
        return []  # a block the parse reads line by line: left out of this stage


def decode(path: str) -> None:
    JsonlFollower(path).read(_decode, lambda: None)


def parse(path: str) -> RolloutParser:
    parser = RolloutParser("bench")
    JsonlFollower(path).read(parser.feed, lambda: None)
    return parser


def floor_of(path: str) -> Callable[[str], None]:
    """The floor stage of one rollout: its parse's records and events, made beforehand,
    copied at each run (``msgspec.structs.replace``: the cheapest way to make an equal
    one), with the decode, the arguments' decode and the fold."""
    made = parse(path)
    records, events = made.messages, made.events

    def floor(path: str) -> None:
        arguments: list[str] = []

        def decoded(block: memoryview) -> None:
            for line in _decode(block):
                if type(line) is ResponseItemLine and isinstance(line.payload.arguments, str):
                    arguments.append(line.payload.arguments)

        JsonlFollower(path).read(decoded, lambda: None)
        for raw in arguments:
            if raw:
                _decode_json(raw)
        [_replace(record) for record in records]
        copies = [_replace(event) for event in events]
        merger = EventMerger()
        merger.add("transcript", copies)
        merger.state()

    return floor


def rollouts(root: str) -> list[tuple[int, str]]:
    with open(os.path.join(root, "MANIFEST.tsv"), newline="") as fh:
        entries = list(csv.DictReader(fh, delimiter="\t"))
    return sorted(
        (int(e["bytes"]), os.path.join(root, e["path"]))
        for e in entries
        if e["provider"] == "codex" and e["path"].endswith(".jsonl")
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    root = os.environ.get("AGENTSPOOL_REALWORLD", "")
    if not root:
        print("AGENTSPOOL_REALWORLD names no corpus")
        return 2
    files = rollouts(root)
    floors = {path: floor_of(path) for _, path in files}
    stages: dict[str, Callable[[str], object]] = {
        "decode": decode,
        "parse": parse,
        "read_chat": lambda path: cold_read("codex", path),
        "floor": lambda path: floors[path](path),
    }
    classes = {**SIZE_CLASSES, "all": (0, 1 << 62)}
    ratios: dict[tuple[str, str], list[float]] = {}
    millis: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.runs):
        timed = {"bare": {path: _timed(bare_decode, path) for _, path in files}}
        for stage, run in stages.items():
            timed[stage] = {path: _timed(run, path) for _, path in files}
        for name, (low, high) in classes.items():
            chosen = [path for size, path in files if low <= size < high]
            bare = sum(timed["bare"][p] for p in chosen)
            millis.setdefault((name, "bare"), []).append(bare * 1e3)
            for stage in stages:
                spent = sum(timed[stage][p] for p in chosen)
                millis.setdefault((name, stage), []).append(spent * 1e3)
                ratios.setdefault((name, stage), []).append(bare / spent)
    print(f"{len(files)} rollouts; ms (median of {args.runs} runs), bare ÷ stage in brackets")
    print(f"{'':14}{'bare':>9}" + "".join(f"{stage:>18}" for stage in stages))
    for name, (low, high) in classes.items():
        count = sum(1 for size, _ in files if low <= size < high)
        row = f"{name:9}({count:2}) {statistics.median(millis[(name, 'bare')]):7.2f}"
        for stage in stages:
            spent = statistics.median(millis[(name, stage)])
            row += f"{spent:11.2f} ({statistics.median(ratios[(name, stage)]):.2f})"
        print(row)
    return 0


def _timed(run: Callable[[str], object], path: str) -> float:
    start = time.perf_counter()
    run(path)
    return time.perf_counter() - start


if __name__ == "__main__":
    raise SystemExit(main())
