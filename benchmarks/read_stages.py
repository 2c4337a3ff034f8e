"""Where a cold read spends its time, and the floor under it (ADR 0056, ADR 0064).

``read.py`` gives one ratio per mix; this splits it. Each run times, as ``read.py`` does,
the bare decode of every file, then each stage below over every file; a stage's ratio is
bare ÷ stage (the median of the runs), per size class and overall:

    decode     the follower's blocks through the provider's views (``decode_lines``):
               what the parse decodes before any Python looks at a record
    parse      + the handlers: records, events, the drift check of each shape's first line
    read_chat  the whole cold read: + the fold, the composed Chat, the read's fixed costs
    floor      decode + (Codex) each call's arguments decoded + every record and event
               the read makes, copied in C from the parse's own (no Python per field) +
               their fold: what any read that makes these records costs, with no logic
    flat       (Claude Code) decode + one flat loop that builds the records and events
               of the user, assistant and turn-end lines as the parser does, with none
               of its rules (sides, subagents, drift, errors, restated usage, dialogs),
               + their fold: the least Python any read that builds these records runs

The floor bounds what a faster parser could reach: only a read that leaves out records,
events or fields (what is read) could go beyond it. ``flat`` bounds what this parser,
written in Python, could reach; it prints how many records and events it made against
the parse's, so what it leaves out shows.

The files: the real-world corpus's Codex rollouts (all) or Claude Code transcripts (those
of at least 1 MB, as ``read.py`` (d) takes them), or one of ``read.py``'s generated mixes.

Usage: AGENTSPOOL_REALWORLD=DIR python benchmarks/read_stages.py [--runs 9]
           [--provider codex|claude-code]
       python benchmarks/read_stages.py --mix claude-code-talk [--size-mb 60] [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from read import MIXES, bare_decode, cold_read, realworld_files

from agentspool.adapters.claude_code import _records as claude_records
from agentspool.adapters.claude_code._records import presentation, text_of, usage_of
from agentspool.adapters.claude_code._transcript import TranscriptParser
from agentspool.adapters.codex import _records as codex_records
from agentspool.adapters.codex._rollout import RolloutParser
from agentspool.adapters.common.jsonl import DECODE_ERRORS, JsonlFollower
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.core import events as ev
from agentspool.core.merge import EventMerger
from agentspool.core.seam import Message, Usage

SIZE_CLASSES = {
    "< 10 KB": (0, 10_000),
    "10 KB - 1 MB": (10_000, 1 << 20),
    ">= 1 MB": (1 << 20, 1 << 62),
}
_replace = msgspec.structs.replace
_decode_json = msgspec.json.Decoder().decode


class Provider(NamedTuple):
    decode_lines: Callable[[memoryview], list[Any]]
    parser: Callable[[], Any]
    second_decodes: Callable[[list[Any]], list[str]]
    """The strings of a block's lines that a read decodes again (Codex's ``arguments``)."""


def _codex_arguments(lines: list[Any]) -> list[str]:
    return [
        line.payload.arguments
        for line in lines
        if type(line) is codex_records.ResponseItemLine
        and isinstance(line.payload.arguments, str)
        and line.payload.arguments
    ]


PROVIDERS = {
    "codex": Provider(codex_records.decode_lines, lambda: RolloutParser("bench"), _codex_arguments),
    "claude-code": Provider(claude_records.decode_lines, TranscriptParser, lambda lines: []),
}


def stages(provider: str, files: list[str]) -> dict[str, Callable[[str], object]]:
    kind = PROVIDERS[provider]

    def decoded(block: memoryview) -> list[Any]:
        try:
            return kind.decode_lines(block)
        except DECODE_ERRORS:
            return []  # a block the parse reads line by line: left out of this stage

    def decode(path: str) -> None:
        JsonlFollower(path).read(decoded, lambda: None)

    def parse(path: str) -> Any:
        parser = kind.parser()
        JsonlFollower(path).read(parser.feed, lambda: None)
        return parser

    def floor_of(path: str) -> Callable[[str], None]:
        """The floor stage of one file: its parse's records and events, made beforehand,
        copied at each run (``msgspec.structs.replace``: the cheapest way to make an
        equal one), with the decode, the second decodes and the fold."""
        made = parse(path)
        records, events = made.messages, made.events

        def floor(path: str) -> None:
            again: list[str] = []
            JsonlFollower(path).read(
                lambda block: again.extend(kind.second_decodes(decoded(block))), lambda: None
            )
            for raw in again:
                _decode_json(raw)
            [_replace(record) for record in records]
            copies = [_replace(event) for event in events]
            merger = EventMerger()
            merger.add("transcript", copies)
            merger.state()

        return floor

    floors = {path: floor_of(path) for path in files}
    timed: dict[str, Callable[[str], object]] = {
        "decode": decode,
        "parse": parse,
        "read_chat": lambda path: cold_read(provider, path),
        "floor": lambda path: floors[path](path),
    }
    if provider == "claude-code":
        made = [(parse(path), _flat(path)) for path in files]
        records = [sum(len(x.messages) for x in both) for both in zip(*made, strict=True)]
        events = [sum(len(x.events) for x in both) for both in zip(*made, strict=True)]
        print(f"flat made {records[1]} of the parse's {records[0]} records, ", end="")
        print(f"{events[1]} of its {events[0]} events")
        timed["flat"] = _flat
    return timed


_SHOWN: dict[str, Any] = {"text": "text", "thinking": "thinking", "tool_use": "tool_call"}


class _FlatClaude:
    """The records and events of a Claude Code transcript's user and assistant lines and
    its turn ends, built in one loop with none of the parser's rules (``flat``)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.events: list[ev.Event] = []
        self.usage = Usage()
        self.counted: set[str] = set()
        self.open_tools: dict[str, str] = {}
        self.turn = ""

    def feed(self, block: memoryview) -> None:
        messages, events = self.messages, self.events
        for line in claude_records.decode_lines(block):
            kind, stamp = line.type, line.timestamp or ""
            msg = line.message
            if kind == "assistant" and msg is not None and isinstance(msg.content, list):
                usage = None
                if msg.usage is not None and (msg.id or "") not in self.counted:
                    usage = usage_of(msg.usage)
                    self.counted.add(msg.id or "")
                    self.usage.add(usage)
                for block_ in msg.content:
                    shown = _SHOWN.get(block_.type)
                    if shown is None:
                        continue
                    record = Message(
                        seq=len(messages) + 1,
                        id=line.uuid or "",
                        kind=shown,
                        role="assistant",
                        text=(block_.thinking if shown == "thinking" else block_.text) or "",
                        timestamp=stamp,
                        parent_id=line.parent_uuid or "",
                        usage=usage,
                        message_id=msg.id or "",
                        model=msg.model or "",
                    )
                    usage = None
                    if shown == "tool_call":
                        name = block_.name or ""
                        record.tool_name, record.tool_use_id = name, block_.id or ""
                        record.tool_input, record.presentation = block_.input, presentation(name)
                        self.open_tools[block_.id or ""] = name
                        events.append(
                            ev.ToolStarted(
                                turn_id=self.turn,
                                tool_use_id=block_.id or "",
                                tool_name=name,
                                at=epoch_seconds(stamp),
                                source="transcript:tool_use",
                            )
                        )
                    messages.append(record)
                if msg.stop_reason == "end_turn":
                    self._turn_ended(stamp, "transcript:stop_reason=end_turn")
            elif kind == "user" and msg is not None:
                if isinstance(msg.content, str):
                    self.turn = line.prompt_id or line.uuid or ""
                    messages.append(
                        Message(
                            seq=len(messages) + 1,
                            id=line.uuid or "",
                            kind="text",
                            role="user",
                            text=msg.content,
                            timestamp=stamp,
                            parent_id=line.parent_uuid or "",
                        )
                    )
                    events.append(
                        ev.TurnStarted(
                            turn_id=self.turn,
                            at=epoch_seconds(stamp),
                            source="transcript:user-prompt",
                        )
                    )
                    continue
                for i, part in enumerate(msg.content or ()):
                    if part.type != "tool_result":
                        continue
                    result = part.content
                    messages.append(
                        Message(
                            seq=len(messages) + 1,
                            id=f"{line.uuid}:{i}",
                            kind="tool_result",
                            role="tool",
                            text=result if isinstance(result, str) else text_of(result),
                            timestamp=stamp,
                            tool_name=self.open_tools.pop(part.tool_use_id or "", ""),
                            tool_use_id=part.tool_use_id or "",
                            is_error=bool(part.is_error),
                            parent_id=line.parent_uuid or "",
                        )
                    )
                    events.append(
                        ev.ToolFinished(
                            turn_id=line.prompt_id or "",
                            tool_use_id=part.tool_use_id or "",
                            at=epoch_seconds(stamp),
                            source="transcript:tool_result",
                        )
                    )
            elif kind == "system" and line.subtype == "turn_duration":
                self._turn_ended(stamp, "transcript:turn_duration")

    def _turn_ended(self, stamp: str, source: str) -> None:
        self.events.append(
            ev.TurnStopped(
                turn_id=self.turn, outcome="completed", at=epoch_seconds(stamp), source=source
            )
        )


def _flat(path: str) -> _FlatClaude:
    flat = _FlatClaude()
    JsonlFollower(path).read(flat.feed, lambda: None)
    merger = EventMerger()
    merger.add("transcript", flat.events)
    merger.state()
    return flat


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--provider", choices=sorted(PROVIDERS), default="codex")
    parser.add_argument("--mix", choices=sorted(MIXES), help="a generated mix, not the corpus")
    parser.add_argument("--size-mb", type=int, default=60, help="the generated file's size")
    args = parser.parse_args()
    if args.mix:
        provider, generator = MIXES[args.mix]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mix.jsonl")
            size = generator.write(path, args.size_mb << 20)
            report(provider, [(size, path)], args.runs, f"{args.mix}: {size / 2**20:.0f} MB")
        return 0
    root = os.environ.get("AGENTSPOOL_REALWORLD", "")
    if not root:
        print("AGENTSPOOL_REALWORLD names no corpus (or give --mix)")
        return 2
    files = realworld_files(root, args.provider)
    report(args.provider, files, args.runs, f"real-world {args.provider}: {len(files)} files")
    return 0


def report(provider: str, files: list[tuple[int, str]], runs: int, title: str) -> None:
    paths = [path for _, path in files]
    timed_stages = stages(provider, paths)
    classes = {**SIZE_CLASSES, "all": (0, 1 << 62)}
    ratios: dict[tuple[str, str], list[float]] = {}
    millis: dict[tuple[str, str], list[float]] = {}
    for _ in range(runs):
        timed = {"bare": {path: _timed(bare_decode, path) for path in paths}}
        for stage, run in timed_stages.items():
            timed[stage] = {path: _timed(run, path) for path in paths}
        for name, (low, high) in classes.items():
            chosen = [path for size, path in files if low <= size < high]
            if not chosen:
                continue
            bare = sum(timed["bare"][p] for p in chosen)
            millis.setdefault((name, "bare"), []).append(bare * 1e3)
            for stage in timed_stages:
                spent = sum(timed[stage][p] for p in chosen)
                millis.setdefault((name, stage), []).append(spent * 1e3)
                ratios.setdefault((name, stage), []).append(bare / spent)
    print(f"{title}; ms (median of {runs} runs), bare ÷ stage in brackets")
    print(f"{'':14}{'bare':>9}" + "".join(f"{stage:>18}" for stage in timed_stages))
    for name, (low, high) in classes.items():
        count = sum(1 for size, _ in files if low <= size < high)
        if not count:
            continue
        row = f"{name:9}({count:2}) {statistics.median(millis[(name, 'bare')]):7.2f}"
        for stage in timed_stages:
            spent = statistics.median(millis[(name, stage)])
            row += f"{spent:11.2f} ({statistics.median(ratios[(name, stage)]):.2f})"
        print(row)


def _timed(run: Callable[[str], object], path: str) -> float:
    start = time.perf_counter()
    run(path)
    return time.perf_counter() - start


if __name__ == "__main__":
    raise SystemExit(main())
