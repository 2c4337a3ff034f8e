"""What a read handed out never changes, on every real capture of both CLIs.

Each transcript the real binaries wrote is grown again line by line, as they wrote it,
with a read after each line. A long-lived reader keeps the ``Chat`` objects it got; when
the file is complete, every one of them must still encode exactly as when it was handed
out. (Codex's usage record follows its response's items: it used to be attached to a
message some earlier read had already returned.)
"""

from __future__ import annotations

import glob
from pathlib import Path

import msgspec
import pytest

from agentspool.adapters import registry

CAPTURES = Path(__file__).resolve().parents[1] / "live" / "captures"
TRANSCRIPTS = sorted(
    [("claude-code", p) for p in glob.glob(str(CAPTURES / "claude-code/*/transcript/*.jsonl"))]
    + [("codex", p) for p in glob.glob(str(CAPTURES / "codex/*/rollout-*.jsonl"))]
)


@pytest.mark.parametrize(
    ("provider", "capture"),
    TRANSCRIPTS,
    ids=[f"{prov}:{Path(p).parent.name}/{Path(p).name[:20]}" for prov, p in TRANSCRIPTS],
)
def test_chats_already_handed_out_never_change(provider, capture, tmp_path):
    adapter = type(registry.load(provider))()  # its own caches, nothing shared
    lines = Path(capture).read_bytes().splitlines(keepends=True)
    path = tmp_path / Path(capture).name
    path.touch()
    handed = []
    for line in lines:
        with open(path, "ab") as fh:
            fh.write(line)
        chat = adapter.read_chat("run-1", "", str(path))
        handed.append((chat, msgspec.json.encode(chat)))
    assert [msgspec.json.encode(chat) for chat, _ in handed] == [blob for _, blob in handed]
    assert handed[-1][0].messages, "the capture holds a conversation"
    fresh = type(adapter)().read_chat("run-1", "", str(path))
    assert msgspec.json.encode(fresh) == handed[-1][1]  # and line by line reads the same


def test_the_captures_are_there():
    assert {prov for prov, _ in TRANSCRIPTS} == {"claude-code", "codex"}
