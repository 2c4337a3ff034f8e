"""``read_chat("codex", …)`` against real Codex 0.169.0 captures, replayed at checkpoints.

Each checkpoint is a moment of the real run: the rollout lines and hooks that existed
then (``Replay.to(t)``, conftest.py). The expected states are what the TUI showed at
that moment (the capture's notes.md has the screens).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import agentspool
from agentspool.adapters.codex import Codex
from agentspool.adapters.common.commands import hook_command
from agentspool.core.seam import Chat
from agentspool.errors import CompressedRolloutError, TranscriptGoneError

EPS = 0.0005
ReplayFactory = Callable[[str], Any]


def visible(chat: Chat) -> list[tuple[str, str, str]]:
    return [(m.kind, m.role, m.text) for m in chat.messages if m.visibility == "visible"]


def ended_turn(chat: Chat, outcome: str) -> None:
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    assert chat.pending_approval is None and chat.pending_dialog is None
    assert chat.evidence and chat.evidence[0].detail == outcome


# -- the four seam rules -------------------------------------------------------------


def test_nothing_yet_is_an_idle_empty_chat(replay: ReplayFactory) -> None:
    r = replay("c_tui_plain")
    assert r.adapter.locate_transcript("run-1", r.runtime_dir) == ""
    chat = r.chat()
    assert (chat.state, chat.messages, chat.pending_approval) == ("idle", [], None)
    assert r.adapter.read_chat("run-1", "", "").state == "idle"


def test_rollout_not_created_yet_reads_live_signals(replay: ReplayFactory) -> None:
    r = replay("c_tui_plain")
    r.to(r.hook_time("UserPromptSubmit") + EPS)
    os.remove(r.rollout())  # Codex creates the file lazily: hooks can name it first
    assert r.adapter.locate_transcript("run-1", r.runtime_dir) == ""
    chat = r.chat()
    assert (chat.state, chat.activity, chat.messages) == ("working", "working", [])


def test_missing_rollout_raises_transcript_gone(replay: ReplayFactory) -> None:
    r = replay("c_tui_plain").full()
    path = r.rollout()
    os.remove(path)
    with pytest.raises(TranscriptGoneError):
        r.chat(path)
    with pytest.raises(TranscriptGoneError):
        r.chat(path, live=False)


# -- scenarios -------------------------------------------------------------------------


def test_plain_turn_working_then_idle(replay: ReplayFactory) -> None:
    r = replay("c_tui_plain")
    chat = r.to(r.hook_time("PreModelRequest") + EPS).chat()
    assert (chat.state, chat.activity) == ("working", "working")
    assert visible(chat) == [("text", "user", "say hello")]
    chat = r.full().chat()
    ended_turn(chat, "completed")
    assert visible(chat)[-1] == ("text", "assistant", "Hello from the scripted server.")
    assert (
        chat.transcript_id
        == json.loads(Path(r.rollout()).read_text().splitlines()[0])["payload"]["id"]
    )
    assert chat.usage.input_tokens == 120 and chat.usage.cached_input_tokens == 20


def test_approval_open_then_approved_then_idle(replay: ReplayFactory) -> None:
    r = replay("d_tui_approve")
    chat = r.to(r.hook_time("PermissionRequest") + EPS).chat()
    assert (chat.state, chat.activity) == ("needs_input", "needs_input")
    approval = chat.pending_approval
    assert approval is not None
    assert approval.tool_name == "Bash"
    assert approval.tool_input["command"] == "touch approved.txt"
    assert approval.tool_use_id == r.hooks[3]["payload"]["tool_use_id"]  # its PreToolUse
    assert chat.pending_dialog is None
    # Nothing in the rollout marks the wait: transcript-only, it reads as working.
    assert r.chat(r.rollout(), live=False).state == "working"

    chat = r.to(r.hook_time("PostToolUse") + EPS).chat()
    assert (chat.state, chat.activity, chat.pending_approval) == ("working", "working", None)
    ended_turn(r.full().chat(), "completed")


def test_esc_on_approval_ends_the_turn(replay: ReplayFactory) -> None:
    r = replay("e_tui_approval_esc")
    assert r.to(r.hook_time("PermissionRequest") + EPS).chat().pending_approval is not None
    chat = r.full().chat()
    ended_turn(chat, "interrupted")
    assert chat.activity != "needs_input"
    assert visible(chat)[-1][0] == "interrupt"


def test_long_command_after_approval(replay: ReplayFactory) -> None:
    r = replay("h_tui_long_command")
    asked = r.hook_time("PermissionRequest")
    assert r.to(asked + EPS).chat().pending_approval is not None
    # Without the codex process (the capture kept none), the ~10 s between the approval
    # and the yield leave no evidence at all: the approval still reads open. The running
    # command is that evidence: test_process_evidence.py.
    yielded = r.hook_times("PreModelRequest")[-1]
    assert r.to(yielded - 1).chat().pending_approval is not None
    chat = r.to(yielded + EPS).chat()
    assert (chat.state, chat.pending_approval) == ("working", None)
    stop = r.hook_time("Stop")
    ended_turn(r.to(stop + EPS).chat(), "completed")
    # The command's late item_completed comes after task_complete: no reopening.
    chat = r.full().chat()
    assert (chat.state, chat.activity) == ("needs_input", "idle")


def test_question_open_then_answered_then_esc(replay: ReplayFactory) -> None:
    r = replay("f_tui_plan_question")
    first_ask = r.hook_time("PreToolUse", tool_name="request_user_input")
    for live in (True, False):  # the rollout alone shows an open question too
        chat = r.to(first_ask + EPS).chat(r.rollout(), live=live)
        assert (chat.state, chat.activity) == ("question", "needs_input")
        dialog = chat.pending_dialog
        assert dialog is not None and dialog.kind == "question"
        assert dialog.prompt == "Which color do you prefer?"
        assert [o.label for o in dialog.options] == ["Red", "Blue"]
        assert chat.pending_approval is None
    chat = r.to(r.hook_time("Stop") + EPS).chat()
    ended_turn(chat, "completed")
    assert ("text", "user", "Which color do you prefer?: Red") in visible(chat)

    second_ask = r.hook_time("PreToolUse", 1, tool_name="request_user_input")
    assert r.to(second_ask + EPS).chat().state == "question"
    ended_turn(r.full().chat(), "interrupted")


def test_question_before_the_rollout_is_located(replay: ReplayFactory) -> None:
    r = replay("f_tui_plan_question")
    r.to(r.hook_time("PreToolUse", tool_name="request_user_input") + EPS)
    chat = r.adapter.read_chat("run-1", r.runtime_dir, "")
    assert chat.state == "question" and chat.pending_dialog is not None
    assert chat.messages == []


def test_esc_while_streaming_ends_the_turn(replay: ReplayFactory) -> None:
    r = replay("g_tui_esc_streaming")
    assert r.to(r.hook_time("PreModelRequest") + EPS).chat().state == "working"
    ended_turn(r.full().chat(), "interrupted")


@pytest.mark.parametrize("scenario", ["i_exec_api_errors", "n_tui_api_error"])
def test_api_error_ends_the_turn_failed_without_stop(replay: ReplayFactory, scenario: str) -> None:
    r = replay(scenario)
    first_error = r.record_time(lambda rec: rec["payload"].get("type") == "task_complete")
    assert not [t for t in r.hook_times("Stop") if t < first_error]
    chat = r.to(first_error + EPS).chat()
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    assert chat.evidence[0].source == "transcript:task_complete(error)"
    assert chat.evidence[0].detail == "failed"
    assert any(m.kind == "error" and m.is_error for m in chat.messages)


def test_clear_follows_to_the_fresh_thread(replay: ReplayFactory) -> None:
    r = replay("j_tui_clear")
    chat = r.to(r.hook_time("Stop") + EPS).chat()
    assert chat.transcript_path == r.rollout(0)
    first_id = chat.transcript_id
    assert ("text", "user", "first prompt") in visible(chat)
    chat = r.full().chat()
    assert chat.transcript_path == r.rollout(1)
    assert chat.transcript_id != first_id
    assert ("text", "user", "first prompt") not in visible(chat)
    assert ("text", "user", "second prompt") in visible(chat)
    assert chat.messages[0].seq == 1
    ended_turn(chat, "completed")


def test_subagent_stays_out_of_the_parents_turn(replay: ReplayFactory) -> None:
    r = replay("k_exec_subagent")
    child_stop = r.hook_time("SubagentStop")
    chat = r.to(child_stop + EPS).chat()
    assert chat.transcript_path == r.rollout(0)  # SubagentStart named the child's file
    assert (chat.state, chat.activity) == ("working", "working")  # parent turn still open
    child_prompt = r.hook_time("UserPromptSubmit", 1)
    assert r.to(child_prompt + EPS).chat().state == "working"
    chat = r.full().chat()
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    child_id = r.hooks[[h["event"] for h in r.hooks].index("SubagentStart")]["payload"]["agent_id"]
    link = [m for m in chat.messages if m.kind == "subagent" and m.agent_id == child_id]
    assert len(link) == 1
    # the child's own file, read on its own: its messages carry its agent id
    child = r.chat(r.rollout(1))
    assert child.transcript_id == child_id
    assert {m.agent_id for m in child.messages} == {child_id}
    assert (child.state, child.activity) == ("needs_input", "idle")


@pytest.mark.parametrize("scenario", ["a_exec_plain", "b_exec_commands", "o_exec_auto_compact"])
def test_exec_mode_runs_to_idle(replay: ReplayFactory, scenario: str) -> None:
    r = replay(scenario)
    chat = r.to(r.hook_time("UserPromptSubmit") + EPS).chat()
    assert chat.state == "working"
    chat = r.full().chat()
    assert (chat.state, chat.activity, chat.pending_approval) == ("needs_input", "idle", None)
    transcript_only = r.chat(r.rollout(), live=False)
    assert (transcript_only.state, transcript_only.activity) == ("needs_input", "idle")
    assert transcript_only.evidence[0].source == "transcript:task_complete"


def test_auto_compaction_mid_turn_keeps_working(replay: ReplayFactory) -> None:
    r = replay("o_exec_auto_compact")
    chat = r.to(r.hook_time("SessionStart", 1) + EPS).chat()  # source "compact"
    assert (chat.state, chat.activity) == ("working", "working")


# -- incremental reads and damage --------------------------------------------------------


def test_growing_rollout_keeps_earlier_seq(replay: ReplayFactory) -> None:
    r = replay("d_tui_approve")
    early = r.to(r.hook_time("PermissionRequest") + EPS).chat()
    before = [(m.seq, m.id) for m in early.messages]
    late = r.full().chat()
    assert [(m.seq, m.id) for m in late.messages][: len(before)] == before
    assert len(late.messages) > len(before)
    fresh = Codex().read_chat("run-1", r.runtime_dir, r.rollout())
    assert [(m.seq, m.id, m.kind) for m in fresh.messages] == [
        (m.seq, m.id, m.kind) for m in late.messages
    ]
    assert fresh.usage == late.usage


def test_late_records_after_turn_aborted_do_not_reopen_it(replay: ReplayFactory) -> None:
    r = replay("e_tui_approval_esc").full()
    path = r.rollout()
    aborted = json.loads(Path(path).read_text().splitlines()[-1])
    turn = aborted["payload"]["turn_id"]
    # A background command ends after the abort (docs/providers/codex.md §5.5): Codex appends its
    # item_completed, bound to the aborted turn. Taken from a real capture's record.
    late = next(
        json.loads(line)
        for line in next((r.dir.parent / "h_tui_long_command").glob("rollout-*"))
        .read_text()
        .splitlines()[::-1]
        if '"CommandExecution"' in line
    )
    late["payload"]["turn_id"] = turn
    call = json.loads(
        next(line for line in Path(path).read_text().splitlines() if '"function_call"' in line)
    )
    with open(path, "a") as fh:
        fh.write(json.dumps(late) + "\n")
        fh.write(json.dumps(call) + "\n")  # even a (replayed) call of that turn
    ended_turn(r.chat(), "interrupted")
    ended_turn(r.chat(path, live=False), "interrupted")


def test_torn_last_line_and_invalid_utf8(replay: ReplayFactory) -> None:
    r = replay("c_tui_plain")
    r.to(r.hook_time("PreModelRequest") + EPS)
    path = r.rollout()
    rest = [
        raw for _, raw in r.rollouts[os.path.basename(path)][r._written[os.path.basename(path)] :]
    ]
    before = r.chat()
    with open(path, "ab") as fh:
        fh.write(b"\xff\xfe not json \xc3\x28\n")
        fh.write(rest[0][: len(rest[0]) // 2])  # a line still being written
    chat = r.chat()
    assert chat.state == "working"
    assert [m.id for m in chat.messages] == [m.id for m in before.messages]
    with open(path, "ab") as fh:
        fh.write(rest[0][len(rest[0]) // 2 :])
        fh.writelines(rest[1:])
    chat = r.full().chat()
    ended_turn(chat, "completed")
    assert [m.seq for m in chat.messages] == list(range(1, len(chat.messages) + 1))


def test_rollout_replaced_or_removed_between_reads(replay: ReplayFactory, tmp_path: Path) -> None:
    r = replay("c_tui_plain").full()
    path = r.rollout()
    assert r.chat(path).messages
    other = next((r.dir.parent / "g_tui_esc_streaming").glob("rollout-*"))
    tmp = tmp_path / "replacement"
    shutil.copy(other, tmp)
    os.replace(tmp, path)  # a new inode at the same path
    chat = r.chat(path, live=False)
    assert chat.transcript_id in other.name
    assert chat.messages[0].seq == 1
    ended_turn(chat, "interrupted")
    os.remove(path)
    with pytest.raises(TranscriptGoneError):
        r.chat(path)


def test_compressed_rollout(replay: ReplayFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    zstandard = pytest.importorskip("zstandard")
    r = replay("d_tui_approve").full()
    plain = r.chat(r.rollout(), live=False)
    packed = r.rollout() + ".zst"
    Path(packed).write_bytes(zstandard.ZstdCompressor().compress(Path(r.rollout()).read_bytes()))
    chat = r.chat(packed, live=False)
    assert [(m.seq, m.id, m.text) for m in chat.messages] == [
        (m.seq, m.id, m.text) for m in plain.messages
    ]
    assert (chat.state, chat.activity, chat.usage) == (plain.state, plain.activity, plain.usage)
    assert chat.transcript_id == plain.transcript_id
    assert r.chat(packed, live=False).messages == chat.messages  # unchanged: no re-parse
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(CompressedRolloutError, match="zstandard"):
        Codex().read_chat("run-1", "", packed)


# -- the real hook entry point --------------------------------------------------------


def test_spool_written_by_the_real_hook_commands(replay: ReplayFactory) -> None:
    r = replay("d_tui_approve")
    spawn = agentspool.setup("codex", "run-real", r.runtime_dir)
    env = {"PATH": "/usr/bin:/bin", **spawn.env}

    def fire(upto: float) -> None:
        for hook in r.hooks:
            if fired.get(id(hook)) or hook["time"] > upto:
                continue
            fired[id(hook)] = True
            proc = subprocess.run(
                hook_command("codex", hook["event"]),
                shell=True,
                input=r._payload(hook),
                env=env,
                capture_output=True,
                check=False,
                timeout=60,
            )
            assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")

    fired: dict[int, bool] = {}
    asked = r.hook_time("PermissionRequest") + EPS
    r.to(asked)
    fire(asked)
    adapter = Codex()
    path = adapter.locate_transcript("run-real", r.runtime_dir)
    assert path == r.rollout()
    chat = adapter.read_chat("run-real", r.runtime_dir, path)
    assert chat.state == "needs_input" and chat.pending_approval is not None
    assert chat.pending_approval.tool_input["command"] == "touch approved.txt"
    r.full()
    fire(r.end())
    chat = adapter.read_chat("run-real", r.runtime_dir, path)
    assert (chat.state, chat.activity, chat.pending_approval) == ("needs_input", "idle", None)
