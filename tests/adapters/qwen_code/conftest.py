"""Replaying the real Qwen Code 0.24.4 capture (tests/live/captures/qwen-code/<scenario>/)
through ``tests/support/replay.py``: a chat line's time is its record's ``timestamp``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from replay import CaptureReplay, iso_seconds, stamped_files

from agentspool.adapters.qwen_code import QwenCode, _install

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "qwen-code"


def _stamps(record: dict[str, Any]) -> list[float]:
    stamp = record.get("timestamp")
    return [iso_seconds(stamp)] if isinstance(stamp, str) else []


class Replay(CaptureReplay):
    paths_in_payload = ("transcript_path",)

    def __init__(self, scenario: str, root: Path, runtime_dir: str) -> None:
        capture = CAPTURES / scenario
        files = stamped_files(capture / "chats", _stamps)
        super().__init__(
            capture, files, root / "chats", runtime_dir, QwenCode(), armed=_install.HOOKS.events()
        )


@pytest.fixture
def replay(tmp_path: Path, runtime_dir: str) -> Callable[[str], Replay]:
    def make(scenario: str) -> Replay:
        return Replay(scenario, tmp_path / scenario, runtime_dir)

    return make
