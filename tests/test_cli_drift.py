"""``agentspool read`` names schema drift in one warning line on stderr (ADR 0014): the
CLI version the transcript names and the counts per source; nothing when the real CLI's
own output is read unmodified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from replay import CAPTURES, claude_transcripts

from agentspool.cli.main import main

CODEX_ROLLOUT = next((CAPTURES / "codex" / "b_exec_commands").glob("rollout-*.jsonl"))


def _claude(tmp_path: Path, *, drift: bool) -> Path:
    lines = Path(claude_transcripts("tui-permission-approve")[0]).read_bytes().splitlines()
    if drift:
        records = [json.loads(line) for line in lines]
        first = next(i for i, r in enumerate(records) if r.get("type") == "assistant")
        records[first]["futureField"] = 1
        future = {**records[first], "type": "future-record"}
        lines[first + 1 : first + 1] = [json.dumps(future).encode()] * 2
        lines[first] = json.dumps(records[first]).encode()
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _codex(tmp_path: Path, *, drift: bool) -> Path:
    lines = CODEX_ROLLOUT.read_bytes().splitlines()
    if drift:
        lines.insert(
            2, b'{"timestamp":"2026-11-30T00:00:00.000Z","ordinal":2,"type":"future_line"}'
        )
    path = tmp_path / CODEX_ROLLOUT.name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _read(provider: str, path: Path, runtime_dir: str, *extra: str) -> int:
    argv = ["read", provider, "--run-id", "r1", "--runtime-dir", runtime_dir]
    return main([*argv, "--transcript", str(path), *extra])


@pytest.mark.parametrize("extra", [(), ("--json",)])
def test_claude_drift_is_one_warning_line_on_stderr(
    tmp_path: Path, runtime_dir: str, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...]
) -> None:
    assert _read("claude-code", _claude(tmp_path, drift=True), runtime_dir, *extra) == 0
    out, err = capsys.readouterr()
    assert err == (
        "agentspool: warning: r1: claude-code 2.1.328 wrote records this agentspool does "
        "not know (state may be incomplete): transcript: 2 records of unknown type "
        "(future-record x2), 1 unknown field (assistant.futureField)\n"
    )
    assert out.startswith("{" if extra else "r1: needs_input")
    if extra:
        drift = json.loads(out)["drift"]
        assert drift["transcript"]["unknown_types"] == {"future-record": 2}


def test_codex_drift_is_one_warning_line_on_stderr(
    tmp_path: Path, runtime_dir: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _read("codex", _codex(tmp_path, drift=True), runtime_dir) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("agentspool: warning: r1: codex 0.169.0 wrote records")
    assert err.endswith("transcript: 1 record of unknown type (future_line x1)\n")


@pytest.mark.parametrize("provider, make", [("claude-code", _claude), ("codex", _codex)])
def test_no_warning_on_what_the_real_cli_wrote(
    tmp_path: Path, runtime_dir: str, capsys: pytest.CaptureFixture[str], provider, make
) -> None:
    assert _read(provider, make(tmp_path, drift=False), runtime_dir) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("r1: needs_input")


def test_names_from_the_evidence_cannot_break_the_line(
    tmp_path: Path, runtime_dir: str, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = CODEX_ROLLOUT.read_bytes().splitlines()
    lines.insert(2, b'{"type":"evil\\nline\\u001b[2J"}')
    path = tmp_path / CODEX_ROLLOUT.name
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert _read("codex", path, runtime_dir) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err
    assert "(evil?line?[2J x1)" in err
