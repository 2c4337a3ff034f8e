"""Replaying the real Kimi Code 2.1.0 capture (tests/live/captures/kimi-code/<scenario>/)
through ``hook_replay``: a wire line's time is its record's ``time`` (ms); the capture's
``chats/`` is the CLI's home (``KIMI_CODE_HOME``) as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hook_replay import HookReplay

from agentspool.adapters.kimi_code import KimiCode, _install

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "kimi-code"


def _stamps(record: dict[str, Any]) -> list[float]:
    stamp = record.get("time") or record.get("created_at")
    return [stamp / 1000] if isinstance(stamp, (int, float)) else []


class Replay(HookReplay):
    def __init__(self, scenario: str, root: Path, runtime_dir: str) -> None:
        armed = frozenset(_install.events())
        super().__init__(
            CAPTURES / scenario,
            root,
            runtime_dir,
            armed=armed,
            stamps=_stamps,
            adapter=KimiCode(),
        )

    def wire(self, index: int) -> str:
        return str(self.chats / sorted(n for n in self.files if n.endswith("wire.jsonl"))[index])

    def wire_time(self, record_type: str, nth: int = 0, **match: Any) -> float:
        return self.record_time(
            lambda r: r.get("type") == record_type and all(r.get(k) == v for k, v in match.items()),
            nth,
        )


@pytest.fixture
def replay(
    tmp_path: Path, runtime_dir: str, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str], Replay]:
    def make(scenario: str) -> Replay:
        made = Replay(scenario, tmp_path / scenario, runtime_dir)
        monkeypatch.setenv("KIMI_CODE_HOME", str(made.chats))
        return made

    return make
