"""The files that teach an agent to declare (docs/agent/): every ``agentspool`` command in
them is one the real command-line parser accepts and ``declare`` would not refuse for its
form, so the snippet cannot rot when the command changes."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from agentspool.cli.main import _parser

DOCS = Path(__file__).resolve().parent.parent / "docs" / "agent"
TAUGHT = ("snippet.md", "claude-command-declare.md")
_COMMAND = re.compile(r"`(agentspool [^`]+)`")


def _commands(name: str) -> list[str]:
    text = (DOCS / name).read_text()
    # A slash command's placeholders, as Claude Code fills them in.
    text = text.replace("$ARGUMENTS", "blocked needs the API key")
    return _COMMAND.findall(text)


@pytest.mark.parametrize("name", TAUGHT)
def test_every_taught_command_parses_and_declares_validly(name: str, capsys) -> None:
    commands = _commands(name)
    states = set()
    for command in commands:
        argv = shlex.split(command)[1:]
        try:
            args = _parser().parse_args(argv)
        except SystemExit:
            pytest.fail(f"{name}: `{command}` is refused by the parser: {capsys.readouterr().err}")
        assert args.command == "lifecycle", command
        assert args.run_id is None and args.runtime_dir is None, (
            f"{name}: `{command}` names a run; the agent's run is found, never named"
        )
        if args.task_state == "blocked":
            assert args.reason.strip(), f"{name}: `{command}`: blocked needs a reason"
        states.add(args.task_state)
    assert states == {"active", "blocked", "done"}, f"{name} teaches every task state"


def test_the_slash_command_lets_claude_run_exactly_the_declaration() -> None:
    text = (DOCS / "claude-command-declare.md").read_text()
    front, _, body = text.removeprefix("---\n").partition("\n---\n")
    fields = dict(line.split(": ", 1) for line in front.splitlines())
    assert set(fields) == {"description", "argument-hint", "allowed-tools"}
    assert fields["allowed-tools"] == "Bash(agentspool lifecycle:*)"
    assert "$ARGUMENTS" in body
