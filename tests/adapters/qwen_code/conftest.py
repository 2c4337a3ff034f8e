"""Replaying the real Qwen Code 0.24.4 capture (tests/live/captures/qwen-code/<scenario>/)
through ``hook_replay``: a chat line's time is its record's ``timestamp``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hook_replay import HookReplay, epoch

from agentspool.adapters.qwen_code import QwenCode, _install

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "qwen-code"


def _stamps(record: dict[str, Any]) -> list[float]:
    stamp = record.get("timestamp")
    return [epoch(stamp)] if isinstance(stamp, str) else []


class Replay(HookReplay):
    def __init__(self, scenario: str, root: Path, runtime_dir: str) -> None:
        armed = frozenset(_install.HOOKS.events())
        super().__init__(
            CAPTURES / scenario,
            root,
            runtime_dir,
            armed=armed,
            stamps=_stamps,
            adapter=QwenCode(),
        )


@pytest.fixture
def replay(tmp_path: Path, runtime_dir: str) -> Callable[[str], Replay]:
    def make(scenario: str) -> Replay:
        return Replay(scenario, tmp_path / scenario, runtime_dir)

    return make
