"""``make compat``'s table (tests/live/compat.py): a failing version is listed as failing,
with its count, and what a version wrote that agentspool does not know is named."""

from __future__ import annotations

import compat


def test_a_failing_version_is_listed_with_its_count() -> None:
    claude = compat.CLIS["claude"]
    outcomes = [
        compat.Outcome(claude, "2.1.328", passed=16, drift={"transcript": {}}),
        compat.Outcome(claude, "2.1.999", passed=13, failed=3),
        compat.Outcome(claude, "2.2.0", problem="not installed"),
    ]
    text = compat.table(outcomes, "2026-12-01")
    assert "| Claude Code | 2.1.328 | 16 | 0 | 0 | pass | nothing |" in text
    assert "| Claude Code | 2.1.999 | 13 | 3 | 0 | failing (3 of 16) |" in text
    assert "| Claude Code | 2.2.0 | 0 | 0 | 0 | not installed |" in text


def test_what_a_version_wrote_that_is_not_known_is_named() -> None:
    drift = {
        "versions": ["0.171.0"],
        "transcript": {"types": ["event_msg:new"], "fields": [], "corrupt": 0},
        "spool": {"types": [], "fields": ["PreModelRequest.kind"], "corrupt": 0},
    }
    outcome = compat.Outcome(compat.CLIS["codex"], "0.171.0", passed=11, drift=drift)
    assert outcome.result == "pass"
    text = compat.table([outcome], "2026-12-01")
    assert "| pass | transcript: 1 type; spool: 1 field |" in text
    assert text.endswith(
        "- Codex 0.171.0: transcript type `event_msg:new`, spool field `PreModelRequest.kind`"
    )
