"""Replaying the real Kimi Code 2.1.0 capture (tests/live/captures/kimi-code/<scenario>/)
through ``tests/support/replay.py``: a wire line's time is its record's ``time`` (ms); the capture's
``chats/`` is the CLI's home (``KIMI_CODE_HOME``) as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from replay import CaptureReplay, stamped_files

from agentspool.adapters.kimi_code import KimiCode, _install

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "kimi-code"


def _stamps(record: dict[str, Any]) -> list[float]:
    stamp = record.get("time") or record.get("created_at")
    return [stamp / 1000] if isinstance(stamp, (int, float)) else []


class Replay(CaptureReplay):
    def __init__(self, scenario: str, root: Path, runtime_dir: str) -> None:
        capture = CAPTURES / scenario
        files = stamped_files(capture / "chats", _stamps)
        super().__init__(
            capture, files, root / "chats", runtime_dir, KimiCode(), armed=_install.events()
        )

    def wire(self, index: int) -> str:
        return self.path(sorted(n for n in self.files if n.endswith("wire.jsonl"))[index])

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
        monkeypatch.setenv("KIMI_CODE_HOME", str(made.folder))
        return made

    return make
