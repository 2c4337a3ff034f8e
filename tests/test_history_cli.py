"""``agentspool index`` and ``agentspool search``: the history store where the user's
data lives (or ``--store`` / ``$AGENTSPOOL_DATA_DIR``), a summary or JSON, one-line
errors, and the heavy libraries (rich, platformdirs) paid for by these commands only."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agentspool.cli.main import main

CAPTURES = Path(__file__).resolve().parent / "live" / "captures"


@pytest.fixture
def transcripts() -> list[str]:
    """Two real captures where their CLIs keep them (the test's private homes)."""
    (claude,) = CAPTURES.glob("claude-code/tui-multi-block/transcript/*.jsonl")
    (codex,) = CAPTURES.glob("codex/b_exec_commands/rollout-*.jsonl")
    targets = [
        Path(os.environ["CLAUDE_CONFIG_DIR"], "projects", "-work", claude.name),
        Path(os.environ["CODEX_HOME"], "sessions", "2026", "11", "30", codex.name),
    ]
    for source, target in zip((claude, codex), targets, strict=True):
        target.parent.mkdir(parents=True)
        shutil.copy(source, target)
    return [str(t) for t in targets]


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> object:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_index_json_says_what_each_run_did(transcripts, capsys) -> None:
    first = run_json(["index"], capsys)
    assert isinstance(first, dict)
    assert (first["files"], first["new"], first["failed"], first["busy"]) == (2, 2, 0, False)
    assert first["bytes_read"] == sum(os.path.getsize(p) for p in transcripts)
    assert first["records"] > 0
    again = run_json(["index"], capsys)
    assert isinstance(again, dict)
    assert (again["unchanged"], again["bytes_read"], again["records"]) == (2, 0, 0)
    store = Path(os.environ["AGENTSPOOL_DATA_DIR"], "history.sqlite")
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.parent.stat().st_mode) == 0o700


def test_index_prints_one_summary_line_without_a_terminal(transcripts, capsys) -> None:
    assert main(["index"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("indexed 2 transcript files (2 new, 0 appended") and out.count("\n") == 1
    assert err == ""


def test_search_indexes_first_and_prints_hits_with_provider_session_and_time(
    transcripts, capsys
) -> None:
    assert main(["search", "command*"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert {line.split()[2] for line in lines} == {"claude-code", "codex"}
    assert all("«" in line and "»" in line for line in lines)
    assert all(line[:4].isdigit() for line in lines)  # the record's date and time first
    hits = run_json(
        ["search", "command*", "--no-index", "--provider", "codex", "--limit", "2"], capsys
    )
    assert isinstance(hits, list) and 1 <= len(hits) <= 2
    assert {h["session"]["provider"] for h in hits} == {"codex"}
    assert sorted(hits[0]) == ["kind", "rank", "role", "seq", "session", "snippet", "timestamp"]
    assert hits[0]["session"]["path"] in transcripts


def test_search_without_index_on_an_empty_store_finds_nothing(transcripts, capsys) -> None:
    assert main(["search", "hi", "--no-index"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err == "agentspool: no record holds 'hi'\n"


def test_search_needs_a_word(capsys) -> None:
    assert main(["search", "*"]) == 2
    assert capsys.readouterr().err == "agentspool: search: give at least one word\n"


@pytest.mark.parametrize("problem", ["a directory", "not a database"])
def test_a_store_that_cannot_be_used_is_one_line_and_exit_1(tmp_path, capsys, problem) -> None:
    store = tmp_path / "store"
    if problem == "a directory":
        store.mkdir()
    else:
        store.write_bytes(b"this is not SQLite" * 100)
    for argv in (["index"], ["search", "x", "--no-index"]):
        assert main([*argv, "--store", str(store)]) == 1
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and str(store) in err, err


def _agentspool(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = os.path.join(os.path.dirname(sys.executable), "agentspool")
    return subprocess.run(
        [script, *argv], capture_output=True, text=True, env=env, cwd="/", check=False, timeout=60
    )


def test_the_store_lives_in_the_users_data_dir_by_default(tmp_path, transcripts) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "CLAUDE_CONFIG_DIR": os.environ["CLAUDE_CONFIG_DIR"],
        "CODEX_HOME": os.environ["CODEX_HOME"],
    }
    done = _agentspool("index", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["new"] == 2
    assert (tmp_path / ".local" / "share" / "agentspool" / "history.sqlite").is_file()
    env["AGENTSPOOL_DATA_DIR"] = str(tmp_path / "elsewhere")
    assert json.loads(_agentspool("index", "--json", env=env).stdout)["new"] == 2
    assert (tmp_path / "elsewhere" / "history.sqlite").is_file()


_IMPORTED = """
import sys
import agentspool
from agentspool.cli import main
agentspool.read_chat("claude-code", "r1", sys.argv[1], "", live=False)
with agentspool.open_history(sys.argv[2]) as store:
    store.sessions()
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):  # the commands that serve's payloads share
    for args in (["ls", "--json"], ["watch", "--once"], ["serve", "--help"]):
        try:
            main.main([*args, "--runtime-dir", sys.argv[1]] if args[1] != "--help" else args)
        except SystemExit:
            pass
print(sorted(m for m in ("rich", "platformdirs", "starlette", "uvicorn") if m in sys.modules))
"""


def test_the_library_and_the_other_commands_never_import_rich_platformdirs_or_starlette(
    tmp_path,
) -> None:
    """Nor uvicorn: the HTTP server is ``serve``'s alone (ADR 0035)."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED, str(runtime), str(tmp_path / "h.sqlite")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout == "[]\n"


def _on_a_terminal(code: str) -> str:
    """What ``python -c code`` wrote to its terminal (a pty: stdin, stdout and stderr)."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child
        os.execv(sys.executable, [sys.executable, "-c", code])
    seen = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(fd)
    assert os.waitpid(pid, 0)[1] == 0
    return seen.decode(errors="replace")


def test_on_a_terminal_a_long_index_draws_a_progress_bar_then_the_summary(
    transcripts,
) -> None:
    """ "Long" is after ``BAR_AFTER`` seconds: set to 0 here, any run is long."""
    text = _on_a_terminal(
        "from agentspool.cli import main as m; from agentspool.cli.commands import index;"
        " index.BAR_AFTER = 0.0; m.main(['index'])"
    )
    assert "indexing" in text and "━" in text, text  # rich's bar
    assert "indexed 2 transcript files (2 new" in text


def test_the_bar_draws_on_stderr_when_stdout_is_a_file(transcripts, tmp_path) -> None:
    """``agentspool index --json > file`` on a terminal: the bar on the terminal, the
    file only the report."""
    report = tmp_path / "report.json"
    text = _on_a_terminal(
        "import sys; from agentspool.cli import main as m;"
        " from agentspool.cli.commands import index; index.BAR_AFTER = 0.0;"
        f" sys.stdout = open({str(report)!r}, 'w'); m.main(['index', '--json'])"
    )
    assert "━" in text, text
    assert json.loads(report.read_text())["new"] == 2


def test_on_a_terminal_a_short_index_draws_no_bar_and_never_imports_rich(transcripts) -> None:
    text = _on_a_terminal(
        "import sys; from agentspool.cli import main as m; m.main(['index']);"
        " print('rich imported:', 'rich' in sys.modules)"
    )
    assert "indexed 2 transcript files (2 new" in text
    assert "━" not in text and "rich imported: False" in text, text
