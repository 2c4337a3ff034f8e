"""What a command line pays before it works (ADR 0058): its parser is its own room's alone
— the same arguments, choices, help and errors as the parser of every room gives it — and
the first ``usage`` imports nothing it does not use (the other rooms, ``watch``'s loop,
``serve``, the reader behind ``agentspool.api``, ``importlib.resources``)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from agentspool.adapters.registry import BUILTIN
from agentspool.cli.main import COMMANDS, _parser, _subparsers, main

_MODULES_AT_EXIT = """
import atexit, json, os, sys
def report():
    print(json.dumps(sorted(sys.modules)), file=sys.stderr, flush=True)
atexit.register(report)
os._exit = lambda status, _exit=os._exit: (report(), _exit(status))  # usage's way out
sys.argv = ["agentspool", *sys.argv[1:]]
from agentspool.cli.entry import main
raise SystemExit(main())
"""
"""The console script's entry, the names of every module loaded printed on exit (``usage``
ends with ``os._exit``, which skips ``atexit``)."""


def _modules(*argv: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _MODULES_AT_EXIT, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.splitlines()[-1]))


def _rooms(modules: set[str]) -> set[str]:
    prefix = "agentspool.cli.commands."
    return {m.removeprefix(prefix) for m in modules if m.startswith(prefix)}


def _arguments(parser: argparse.ArgumentParser) -> list[tuple[object, ...]]:
    """What parsing a command line depends on, argument by argument."""
    return [
        (
            type(a),
            a.option_strings,
            a.dest,
            a.nargs,
            a.const,
            a.default,
            a.type,
            a.choices,
            a.required,
            a.help,
            a.metavar,
        )
        for a in parser._actions
    ]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_s_parser_is_its_room_alone_and_as_every_room_s_gives_it(name: str) -> None:
    alone, every = _subparsers(_parser(name)).choices, _subparsers(_parser()).choices
    assert set(alone) == {command for command, room in COMMANDS.items() if room == COMMANDS[name]}
    assert alone[name].format_help() == every[name].format_help()
    assert _arguments(alone[name]) == _arguments(every[name])
    assert alone[name]._defaults == every[name]._defaults


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["usage", "--by", "week"], "argument --by: invalid choice: 'week'"),
        (["usage", "--provider", "nope"], "argument --provider: invalid choice: 'nope'"),
        (["ls", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["usage", "--", "x"], "usage takes no arguments after --"),
        (["lss"], "did you mean: agentspool ls?"),
        ([], "the following arguments are required: COMMAND"),
    ],
)
def test_bad_usage_is_told_as_before(argv: list[str], says: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert says in capsys.readouterr().err


def test_help_still_lists_every_command_and_provider(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert f"    {name} " in out or f"    {name}\n" in out, name
    assert "providers: claude-code, codex, copilot, gemini-cli, kimi-code" in out


@pytest.mark.parametrize("name", ["usage", "ls", "lifecycle", "uninstall"])
def test_a_command_line_loads_its_own_room_and_no_other(name: str) -> None:
    """Rooms import each other only for ``index.index_quietly`` (ADR 0044)."""
    rooms = _rooms(_modules(name, "--help"))
    assert rooms == {COMMANDS[name]} | ({"index"} if name == "usage" else set())


@pytest.mark.parametrize("columns", ["50", "120"])
def test_help_is_wrapped_to_the_terminal_s_width(
    columns: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """argparse's width, found without shutil (``options.HelpFormatter``): $COLUMNS."""
    monkeypatch.setenv("COLUMNS", columns)
    with pytest.raises(SystemExit):
        main(["usage", "--help"])
    # The options' help is wrapped (the description is not: RawDescriptionHelpFormatter),
    # to the width less argparse's margin of 2; the list of providers is one word.
    out = capsys.readouterr().out.split("\noptions:\n")[1].split("\n\n")[0]
    lines = [line for line in out.splitlines() if "{claude-code," not in line]
    assert int(columns) - 12 <= max(len(line) for line in lines) <= int(columns) - 2


def test_the_first_usage_on_an_empty_home_loads_nothing_it_does_not_use() -> None:
    assert not os.path.exists(os.environ["AGENTSPOOL_DATA_DIR"])  # the first, on this home
    modules = _modules("usage", "--by", "session", "--json")
    assert _rooms(modules) == {"usage", "index"}
    unused = {
        "agentspool.api",  # the reader: reducer traces, replay, the ledger
        "agentspool.core.replay",
        "agentspool.cli.watch",
        "agentspool.follow",
        "agentspool.serve",
        "difflib",  # "did you mean", for a word that is no command
        "importlib.resources",  # the shipped price table is a file beside its module
        # Only installs, arming and OpenCode's server use them (ADR 0061): 8 ms in all.
        "_hashlib",  # OpenSSL
        "urllib.parse",
        "secrets",
        # msgspec's import would load it, and `inspect` with it: 10 ms (ADR 0062).
        "typing_extensions",
        "inspect",
        # argparse's formatter would import it for the terminal's width (ADR 0063).
        "shutil",
    }
    assert modules & unused == set()
    # No CLI has kept anything on this home: no adapter is loaded (ADR 0062), each
    # provider's home module is asked.
    for row in BUILTIN.values():
        package = f"agentspool.adapters.{row.package}"
        assert f"{package}._home" in modules
        assert f"{package}._adapter" not in modules


def test_the_first_usage_loads_of_an_adapter_what_reads_usage_alone() -> None:
    """A Claude Code transcript on the home: the first ``usage`` reads it through the
    usage view, and imports neither the parser of whole records, nor the hook
    translator, nor the installer and its settings machinery (ADR 0064)."""
    project = os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "projects", "-srv-app")
    os.makedirs(project)
    with open(os.path.join(project, "s1.jsonl"), "w") as fh:
        fh.write(
            '{"type":"assistant","sessionId":"s1","cwd":"/srv/app","uuid":"u1",'
            '"timestamp":"2026-11-29T10:00:00.000Z","message":{"id":"m1",'
            '"model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":2},'
            '"content":[{"type":"text","text":"hi"}]}}\n'
        )
    modules = _modules("usage", "--by", "session", "--json")
    assert {
        "agentspool.adapters.claude_code._adapter",
        "agentspool.adapters.claude_code._usage_view",
    } <= modules
    assert (
        modules
        & {
            "agentspool.adapters.claude_code._transcript",
            "agentspool.adapters.claude_code._conversation",
            "agentspool.adapters.claude_code._signals",
            "agentspool.adapters.claude_code._install",
            "agentspool.adapters.common.install",
        }
        == set()
    )


_DECODE_AFTER_ENTRY = """
import sys
from typing import Annotated, NotRequired, TypedDict
sys.argv = ["agentspool", "--version"]
from agentspool.cli import entry
entry._import_msgspec()
assert "typing_extensions" not in sys.modules
import msgspec
class Limits(TypedDict):
    soft: Annotated[int, msgspec.Meta(ge=0)]
    hard: NotRequired[int]
class Shaped(msgspec.Struct):
    limits: Limits
    name: Annotated[str, msgspec.Meta(max_length=3)]
shaped = msgspec.json.decode(b'{"limits": {"soft": 1}, "name": "ab"}', type=Shaped)
assert shaped.limits == {"soft": 1}
try:
    msgspec.json.decode(b'{"limits": {"soft": -1}, "name": "ab"}', type=Shaped)
except msgspec.ValidationError:
    pass
else:
    raise AssertionError("Annotated constraints were not read")
import typing_extensions  # what textual and starlette import, later in a process
assert typing_extensions.get_type_hints(Shaped, include_extras=True)
print("ok")
"""


def test_msgspec_imported_without_typing_extensions_reads_annotated_and_optional_keys() -> None:
    """The CLI's msgspec import (ADR 0062) keeps what msgspec reads of a type through
    ``get_type_hints``: ``Annotated`` constraints and ``NotRequired`` keys; and
    typing_extensions still imports afterwards."""
    done = subprocess.run(
        [sys.executable, "-c", _DECODE_AFTER_ENTRY],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr
