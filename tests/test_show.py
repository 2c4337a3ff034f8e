"""``agentspool show``: every real capture of both providers, as the command prints it.

The JSON is the detail ``assemble_session_detail`` builds from a fresh parse (a
subagent's records from its own file after the session's, opened by the link to its
spawning call); the text holds every prompt, every tool call's command, the subagents
indented under the call that spawned them, and the markers the records call for. A
session is found by its transcript file, its id or the start of it, laid out where the
CLIs keep them (the private CLI homes ``conftest`` gives each test).
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from rich.console import Console

import agentspool
from agentspool import Message, Session, SessionDetail, assemble_session_detail
from agentspool.adapters import registry
from agentspool.cli.main import main
from agentspool.cli.render.session import Renderer, safe

CAPTURES = Path(__file__).resolve().parent / "live" / "captures"
CLAUDE = CAPTURES / "claude-code"
CODEX = CAPTURES / "codex"


def sessions() -> list[tuple[str, Path]]:
    """(provider, transcript) of every session the CLIs wrote: Claude Code's main files
    (a subagent's file belongs to its session), every Codex rollout."""
    found = [("claude-code", p) for p in sorted(CLAUDE.glob("*/transcript/*.jsonl"))]
    return found + [("codex", p) for p in sorted(CODEX.glob("*/rollout-*.jsonl"))]


def _id(capture: tuple[str, Path]) -> str:
    path = capture[1]
    scenario = path.parent.parent.name if path.parent.name == "transcript" else path.parent.name
    return f"{scenario}/{path.name[:24]}"


def fresh(provider: str) -> agentspool.Adapter:
    return type(registry.load(provider))()


def expected_records(provider: str, path: Path) -> list[Message]:
    """The session's stream, told independently: a fresh parse of its file, then each
    subagent's own file parsed afresh — Claude Code's beside it (opened by a link record
    naming the call in its meta file), Codex's named by the parent's link records —
    ``seq`` renumbered over the whole."""
    own = fresh(provider).read_chat("t", "", str(path)).messages
    parts: list[list[Message]] = []
    if provider == "claude-code":
        for sub in sorted((path.parent / path.stem / "subagents").glob("agent-*.jsonl")):
            records = fresh(provider).read_chat("t", "", str(sub)).messages
            meta = json.loads(sub.with_suffix(".meta.json").read_text())
            link = Message(
                id=f"subagent:{records[0].agent_id}",
                kind="subagent",
                role="system",
                text=meta["description"],
                timestamp=records[0].timestamp,
                tool_use_id=meta["toolUseId"],
                parent_id=meta["toolUseId"],
                agent_id=records[0].agent_id,
                presentation="agent",
            )
            parts.append([link, *records])
    else:
        for child in [m.agent_id for m in own if m.kind == "subagent" and m.agent_id]:
            (sub,) = path.parent.glob(f"rollout-*-{child}.jsonl")
            parts.append(fresh(provider).read_chat("t", "", str(sub)).messages)
    merged = list(own)
    for part in parts:
        merged += [msgspec.structs.replace(m, seq=len(merged) + i) for i, m in enumerate(part, 1)]
    return merged


def show(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["show", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def rendered(capsys: pytest.CaptureFixture[str], path: Path, *more: str) -> list[str]:
    code, out, err = show(capsys, str(path), *more)
    assert (code, err) == (0, "")
    return out.splitlines()


# -- JSON -------------------------------------------------------------------------------


@pytest.mark.parametrize("capture", sessions(), ids=_id)
def test_json_is_the_detail_of_a_fresh_parse(capture, capsys) -> None:
    provider, path = capture
    code, out, err = show(capsys, str(path), "--json")
    assert (code, err) == (0, "")
    expected = assemble_session_detail(expected_records(provider, path))
    assert msgspec.json.decode(out, type=SessionDetail) == expected
    # Written an item at a time, and still the bytes of the one-shot encoding.
    assert out.encode() == msgspec.json.encode(expected) + b"\n"


@pytest.mark.parametrize(
    "capture",
    [c for c in sessions() if c[1].parent.parent.name.startswith("tui-subagent")]
    + [c for c in sessions() if c[1].parent.name == "k_exec_subagent"][:1],
    ids=_id,
)
def test_each_subagent_is_grouped_under_the_call_that_spawned_it(capture, capsys) -> None:
    _, out, _ = show(capsys, str(capture[1]), "--json")
    detail = msgspec.json.decode(out, type=SessionDetail)
    spawners = {t.tool_use_id: t.call for t in detail.tools if t.call.presentation == "agent"}
    assert detail.subagents
    for group in detail.subagents:
        assert spawners[group.spawned_by].agent_id == ""  # the session's own call
        assert [m for m in group.messages if m.kind == "text" and m.role == "assistant"]


def test_include_inactive_reaches_the_detail(capsys) -> None:
    path = (
        CLAUDE
        / "tui-permission-approve"
        / "transcript"
        / "44bada7c-1d71-4dff-9021-8d176603d55a.jsonl"
    )
    _, out, _ = show(capsys, str(path), "--json", "--include-inactive")
    records = fresh("claude-code").read_chat("t", "", str(path)).messages
    expected = assemble_session_detail(records, include_inactive=True)
    assert msgspec.json.decode(out, type=SessionDetail) == expected


# -- the text ---------------------------------------------------------------------------


def _entries(lines: list[str], label: str, depth: int = 0) -> list[str]:
    """The first line of every entry with ``label`` at ``depth``, its content."""
    head = "│ " * depth + f"{label:<11} "
    return [line[len(head) :] for line in lines if line.startswith(head)]


@pytest.mark.parametrize("capture", sessions(), ids=_id)
def test_the_text_holds_every_prompt_answer_and_command(capture, capsys) -> None:
    provider, path = capture
    lines = rendered(capsys, path, "--lines", "0")
    text = "\n".join(lines)
    records = expected_records(provider, path)
    shown = [m for m in records if m.visibility == "visible"]
    for message in shown:
        if message.kind == "text" and message.role in ("user", "assistant"):
            for line in safe(message.text).split("\n"):
                assert line in text, (message.seq, line)
        if message.kind == "tool_call":
            tool_input = message.tool_input or {}
            command = tool_input.get("command", tool_input.get("cmd"))
            if message.presentation == "shell" and isinstance(command, str):
                assert f"{message.tool_name}  $ {safe(command)}" in text
            else:
                assert any(e.startswith(message.tool_name) for e in re.findall(r"tool +(.*)", text))
    own_prompts = [m for m in shown if m.kind == "text" and m.role == "user" and not m.agent_id]
    assert len([line for line in lines if re.match(r"turn \d+ · ", line)]) == len(
        [m for m in own_prompts if not m.is_meta]
    )
    assert "\x1b" not in text  # not a terminal: no colour, nothing a terminal would obey


@pytest.mark.parametrize(
    ("capture", "spawner"),
    [
        ("claude-code/tui-subagent-foreground", "Agent"),
        ("claude-code/tui-subagent-permission", "Agent"),
        ("codex/k_exec_subagent", "spawn_agent"),
    ],
)
def test_a_subagents_records_are_indented_under_its_spawning_call(capture, spawner, capsys) -> None:
    provider, scenario = capture.split("/")
    path = max(
        (p for c, p in sessions() if c == provider and scenario in str(p)),
        key=lambda p: p.stat().st_size,  # Codex: the parent's rollout, not the child's
    )
    lines = rendered(capsys, path)
    records = expected_records(provider, path)
    call = next(i for i, line in enumerate(lines) if line.startswith(f"tool        {spawner}"))
    header = next(i for i, line in enumerate(lines) if line.startswith("│ subagent "))
    end = next(i for i in range(header, len(lines)) if not lines[i].startswith(("│ ", " ")))
    assert call < header < end
    # Between the call and the group: only its input's lines and its result.
    assert all(
        not line.startswith(("user", "assistant", "tool ")) for line in lines[call + 1 : header]
    )
    group = "\n".join(lines[header:end])
    for message in records:
        if message.agent_id and message.kind == "text" and message.visibility == "visible":
            assert f"│ {message.role:<11} {safe(message.text).split(chr(10))[0]}" in group
    assert "│ usage " in group  # the subagent's own usage, closing its group


def test_compaction_summary_interrupt_and_error_are_marked(capsys) -> None:
    compact = rendered(capsys, next(CLAUDE.glob("tui-compact/transcript/*.jsonl")))
    assert _entries(compact, "compacted") == ["Conversation compacted"]
    assert _entries(compact, "summary")[0].startswith("This session is being continued")
    auto = rendered(capsys, next(CODEX.glob("o_exec_auto_compact/rollout-*.jsonl")))
    assert _entries(auto, "summary")[0].startswith("Another language model started")
    esc = rendered(capsys, next(CLAUDE.glob("tui-esc-tool-running/transcript/*.jsonl")))
    assert _entries(esc, "interrupted") == ["[Request interrupted by user for tool use]"]
    assert _entries(esc, "error")[0].startswith("The user doesn't want to proceed")
    aborted = rendered(capsys, next(CODEX.glob("e_tui_approval_esc/rollout-*.jsonl")))
    assert _entries(aborted, "interrupted") == ["<turn_aborted>"]


def test_usage_per_turn_adds_up_to_the_header_total(capsys) -> None:
    path = next(CLAUDE.glob("tui-subagent-foreground/transcript/*.jsonl"))
    lines = rendered(capsys, path)
    totals = [re.findall(r"[\d,]+", e) for e in _entries(lines, "usage")]
    turns = [re.findall(r"[\d,]+", e) for e in _entries(lines, "usage")[1:]]
    subagent = [re.findall(r"[\d,]+", e) for e in _entries(lines, "usage", depth=1)]

    def number(s: str) -> int:
        return int(s.replace(",", ""))

    total = [number(n) for n in totals[0]]
    assert total[0] > 0
    summed = [sum(number(u[k]) for u in turns + subagent) for k in range(len(total))]
    assert summed == total


def test_long_results_are_cut_with_the_count_of_hidden_lines(capsys) -> None:
    path = next(CLAUDE.glob("tui-subagent-foreground/transcript/*.jsonl"))
    result = next(
        m
        for m in fresh("claude-code").read_chat("t", "", str(path)).messages
        if m.kind == "tool_result"
    )
    total = result.text.count("\n") + 1
    assert total > 3
    lines = rendered(capsys, path, "--lines", "2")
    at = lines.index(f"result      {result.text.split(chr(10))[0]}")
    assert lines[at + 1] == " " * 12 + result.text.split("\n")[1]
    assert lines[at + 2] == " " * 12 + f"… {total - 2} more lines"


def test_superseded_records_add_exactly_their_own_entries(capsys) -> None:
    """No capture holds a record its CLI marked superseded (neither adapter attests
    supersession yet), so a real capture's first turn is marked so here: the renderer sits
    on top of the seam, and what it draws is decided by ``visibility`` alone."""
    path = (
        CLAUDE
        / "tui-permission-approve"
        / "transcript"
        / "44bada7c-1d71-4dff-9021-8d176603d55a.jsonl"
    )
    view = agentspool.show_session(str(path))
    first_answer = [m for m in view.chat.messages if m.role in ("assistant", "tool")][:3]
    superseded = {id(m) for m in first_answer}
    messages = [
        msgspec.structs.replace(m, visibility="inactive") if id(m) in superseded else m
        for m in view.chat.messages
    ]
    chat = msgspec.structs.replace(view.chat, messages=messages)

    def text(include_inactive: bool) -> list[str]:
        detail = assemble_session_detail(messages, include_inactive=include_inactive)
        shown = msgspec.structs.replace(view, chat=chat, detail=detail)
        out = io.StringIO()
        Renderer(Console(file=out, width=100), shown, lines=6).render()
        return out.getvalue().splitlines()

    without, with_ = text(False), text(True)
    # The header's counts differ; below it, only the superseded entries are added.
    body_without = without[without.index(next(x for x in without if x.startswith("turn 1"))) :]
    body_with = with_[with_.index(next(x for x in with_ if x.startswith("turn 1"))) :]
    added = list(body_with)
    for line in body_without:
        added.remove(line)
    assert len([line for line in added if line.endswith("[superseded]")]) == len(first_answer)
    assert all(line in body_with for line in body_without)
    assert [x for x in body_with if x not in added] == body_without  # order kept


# -- finding the session ----------------------------------------------------------------


def _claude_home_session(scenario: str) -> tuple[str, Path]:
    """A Claude Code capture laid out as the CLI keeps it (subagents too)."""
    source = next(CLAUDE.glob(f"{scenario}/transcript/*.jsonl"))
    project = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "-srv-project"
    project.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, project)
    if (source.parent / source.stem).is_dir():
        shutil.copytree(source.parent / source.stem, project / source.stem)
    return source.stem, project / source.name


def _codex_home_rollouts(scenario: str) -> list[Path]:
    day = Path(os.environ["CODEX_HOME"]) / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True, exist_ok=True)
    copied = []
    for rollout in sorted(CODEX.glob(f"{scenario}/rollout-*.jsonl")):
        shutil.copy(rollout, day)
        copied.append(day / rollout.name)
    return copied


def test_a_session_is_found_by_its_id_and_by_a_unique_start_of_it(capsys) -> None:
    session_id, transcript = _claude_home_session("tui-subagent-foreground")
    by_path = rendered(capsys, transcript)
    assert by_path[0] == f"claude-code session {session_id}"
    assert rendered(capsys, Path(session_id)) == by_path
    assert rendered(capsys, Path(session_id[:6].upper())) == by_path  # case does not matter
    provider, found = agentspool.find_session(session_id[:6])
    assert (provider, found.session_id, found.transcript_path) == (
        "claude-code",
        session_id,
        str(transcript),
    )


def test_an_ambiguous_start_is_one_line_naming_the_candidates(capsys) -> None:
    rollouts = _codex_home_rollouts("j_tui_clear")  # before and after /clear: two threads
    threads = sorted(re.search(r"-(\w{8}(-\w{4}){3}-\w{12})\.jsonl$", p.name)[1] for p in rollouts)
    assert len(threads) == 2 and all(t.startswith("01a229c1") for t in threads)
    code, out, err = show(capsys, "01a229c1")
    assert (code, out) == (1, "")
    assert err == (
        "agentspool: session '01a229c1' is ambiguous: 2 sessions start with it "
        f"(codex:{threads[0]}, codex:{threads[1]}); give more of the id\n"
    )
    code, out, _ = show(capsys, threads[1][:14], "--json")  # a longer start picks one
    assert code == 0
    assert msgspec.json.decode(out, type=SessionDetail) == assemble_session_detail(
        expected_records("codex", rollouts[1])
    )


def test_an_exact_id_wins_over_the_ids_it_begins(monkeypatch) -> None:
    from agentspool import sessions as module

    longer = Session(session_id="abc-1", transcript_path="/x/b.jsonl")
    exact = Session(session_id="abc", transcript_path="/x/a.jsonl")
    monkeypatch.setattr(
        module, "_sessions_starting_with", lambda prefix: [("p", longer), ("p", exact)]
    )
    assert agentspool.find_session("abc") == ("p", exact)
    with pytest.raises(agentspool.AmbiguousSessionError) as raised:
        agentspool.find_session("ab")
    assert raised.value.candidates == ["p:abc", "p:abc-1"]


@pytest.mark.parametrize(
    ("ref", "problem"),
    [
        ("0123abcd", "no session has this id or an id starting with it"),
        ("/nowhere/session.jsonl", "no such file"),
        (
            str(CODEX / "k_exec_subagent" / "hooks.jsonl"),
            "not a transcript any registered provider reads",
        ),
        (
            str(CLAUDE / "tui-compact" / "notes.md"),
            "not a transcript any registered provider reads",
        ),
    ],
)
def test_not_found_is_one_line_and_exit_1(ref, problem, capsys) -> None:
    _claude_home_session("tui-compact")
    code, out, err = show(capsys, ref)
    assert (code, out) == (1, "")
    assert err == f"agentspool: session {ref!r}: {problem}\n"


def test_a_compressed_rollout_reads_as_the_plain_one(tmp_path, capsys) -> None:
    zstandard = pytest.importorskip("zstandard")
    plain = next(CODEX.glob("d_tui_approve/rollout-*.jsonl"))
    packed = tmp_path / (plain.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    assert show(capsys, str(packed), "--json")[1] == show(capsys, str(plain), "--json")[1]


def test_a_codex_subagent_rollout_is_found_under_codex_home(tmp_path, capsys) -> None:
    """The parent's rollout given by path outside ``$CODEX_HOME``; its sub-agent's only in
    ``$CODEX_HOME/sessions``."""
    parent, child = sorted(
        CODEX.glob("k_exec_subagent/rollout-*.jsonl"), key=lambda p: -p.stat().st_size
    )
    shutil.copy(parent, tmp_path)
    day = Path(os.environ["CODEX_HOME"]) / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    shutil.copy(child, day)
    _, out, _ = show(capsys, str(tmp_path / parent.name), "--json")
    detail = msgspec.json.decode(out, type=SessionDetail)
    assert detail == assemble_session_detail(expected_records("codex", parent))
    assert [len(g.messages) for g in detail.subagents] == [3]  # the link and two records


# -- as a person runs it -------------------------------------------------------------------


def _cli(*argv: str, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "COLUMNS")}
    return subprocess.run(
        [sys.executable, "-m", "agentspool.cli.main", "show", *argv],
        capture_output=True,
        env=env,
        check=False,
        timeout=120,
        **kwargs,  # type: ignore[arg-type]
    )


def test_piped_output_is_plain_whole_lines(capsys) -> None:
    path = next(CLAUDE.glob("tui-subagent-foreground/transcript/*.jsonl"))
    done = _cli(str(path))
    assert (done.returncode, done.stderr) == (0, b"")
    assert b"\x1b" not in done.stdout
    assert done.stdout.decode().splitlines() == rendered(capsys, path)
    assert max(len(line) for line in done.stdout.decode().splitlines()) > 200  # not wrapped


def _on_a_terminal(argv: list[str], env: dict[str, str]) -> str:
    """``agentspool show`` with a pseudo-terminal as its stdout; what the terminal got."""
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentspool.cli.main", "show", *argv],
        stdout=secondary,
        stderr=subprocess.DEVNULL,
        env={**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, **env},
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the last writer closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    assert proc.wait(timeout=120) == 0
    return b"".join(chunks).decode()


def test_on_a_terminal_entries_wrap_under_their_label_in_colour() -> None:
    path = next(CLAUDE.glob("tui-subagent-foreground/transcript/*.jsonl"))
    screen = _on_a_terminal([str(path)], {"COLUMNS": "70", "TERM": "xterm-256color"})
    assert "\x1b[" in screen
    visible = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in screen.splitlines()]
    assert max(len(line) for line in visible) <= 70
    at = next(i for i, line in enumerate(visible) if line.startswith("result      Async agent"))
    assert visible[at + 1].startswith(" " * 12) and visible[at + 1].strip()


def test_the_pager_is_fed_as_the_text_is_drawn(tmp_path) -> None:
    path = next(CLAUDE.glob("tui-subagent-foreground/transcript/*.jsonl"))
    paged = tmp_path / "paged.txt"
    screen = _on_a_terminal(
        [str(path), "--pager"], {"PAGER": f"tee {paged}", "COLUMNS": "90", "TERM": "xterm"}
    )
    fed = paged.read_text()
    assert "\x1b[" in fed  # drawn for the terminal the pager shows it on
    assert fed.replace("\n", "\r\n") == screen  # all of it, through the pager
    assert "claude-code session" in re.sub(r"\x1b\[[0-9;]*m", "", fed)


def test_a_transcript_kept_in_a_shared_database_is_shown_by_the_path_read_takes(
    capsys,
) -> None:
    """``<database>#<session>`` (OpenCode keeps every session in one SQLite file) names no
    file: the history store knows the transcript by it, as ``read --transcript`` takes it."""
    from harness import opencode_captures

    from agentspool.adapters.opencode import _store

    (capture,) = [p for p in opencode_captures.capture_dirs() if p.name == "tui_subagent_task"]
    database = Path(os.environ["XDG_DATA_HOME"], "opencode", "opencode.db")
    opencode_captures.build_store(capture, database)
    (parent,) = [s.session_id for s in fresh("opencode").sessions(0.0)]
    ref = _store.join(str(database), parent)
    code, out, err = show(capsys, ref, "--json")
    assert (code, err) == (0, "")
    detail = msgspec.json.decode(out, type=SessionDetail)
    read = fresh("opencode").read_session_with_subagents(
        Session(session_id=parent, transcript_path=ref)
    )
    assert detail == assemble_session_detail(read.messages)
    assert detail.subagents  # the task subagent, stored with its session


@pytest.mark.parametrize("capture", sessions(), ids=_id)
def test_a_finished_session_says_ended_or_last_turn_ended_never_a_live_word(
    capture, capsys
) -> None:
    """Issue 21: ``show`` of a session whose process is gone said ``state needs_input``."""
    _, path = capture
    (state,) = [line for line in rendered(capsys, path) if line.startswith("state")]
    said = state.split(None, 1)[1]
    assert said in ("ended", "last turn ended", "last turn has no recorded end") or said.startswith(
        "stopped at: "
    ), state
    assert not any(word in said for word in ("needs_input", "your turn", "working", "idle"))


@pytest.mark.parametrize("scenario", ["a_exec_plain", "b_exec_commands", "d_tui_approve"])
def test_show_says_the_input_usage_says(scenario, capsys) -> None:
    """Issue 21: ``show`` said input 360 where ``usage`` said 300 for one session — show
    counted the cache reads (folded into ``Usage.input_tokens``) as input too."""
    rollouts = _codex_home_rollouts(scenario)
    if not rollouts:
        pytest.skip(f"no capture {scenario}")
    (path,) = rollouts[:1]
    lines = rendered(capsys, path)
    shown = next(line for line in lines if line.startswith("usage"))  # the header total
    figure = int(re.search(r"input ([\d,]+)", shown).group(1).replace(",", ""))
    report = agentspool.usage(by="session", providers=["codex"])
    (row,) = [r for r in report.rows if path.stem.endswith(r.key)]
    assert figure == row.input_tokens, (shown, row)
    cached = int(re.search(r"cache read ([\d,]+)", shown).group(1).replace(",", ""))
    assert cached == row.cache_read_tokens


def test_the_subagent_id_search_prints_is_one_show_takes(capsys) -> None:
    """Issue 21: ``search`` names a subagent's hit ``<session>/<agent>``; ``show`` refused it."""
    session_id, _ = _claude_home_session("tui-subagent-foreground")
    agentspool.index_history()
    with agentspool.open_history() as store:
        (child,) = [s for s in store.sessions("claude-code") if s.agent_id]
    ref = f"{session_id[:8]}/{child.agent_id[:8]}"
    lines = rendered(capsys, Path(ref))
    assert lines[0] == f"claude-code session {session_id}"
    assert any(child.path in line for line in lines[:4]), lines[:4]
