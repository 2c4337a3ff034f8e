"""The ``agentspool`` command: the entry point. It builds the parser from the rooms
(``cli/commands/<name>.py``, one per command; ``options`` is their convention); for a
command line that names a command, from that command's room alone (ADR 0058). It says
"did you mean" for a word that is no command, and is the one error boundary: every
failure is one line on stderr — an unexpected one also names the file its traceback
was written to — never a traceback on the terminal (docs/adr/0044-cli-rooms.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import agentspool
from agentspool import AgentspoolError
from agentspool.cli import options
from agentspool.cli.output import say, stdout_gone
from agentspool.errors import exit_code

COMMANDS = {
    "setup": "setup",
    "sig": "sig",
    "sweep": "sweep",
    "read": "read",
    "run": "run",
    "ls": "ls",
    "explain": "explain",
    "lifecycle": "lifecycle",
    "install": "install",
    "uninstall": "install",
    "watch": "watch",
    "demo": "demo",
    "tidy": "tidy",
    "show": "show",
    "replay": "replay",
    "usage": "usage",
    "index": "index",
    "search": "search",
    "serve": "serve",
    "doctor": "doctor",
    "untrust": "untrust",
}
"""Every command and its room (``cli/commands/<room>.py``), in the order ``--help`` lists
them. A command line pays for its own room only: the parser imports no other
(docs/adr/0058-a-command-pays-for-its-own-room.md)."""

PASSTHROUGH = {"run": "cli_args", "search": "words"}
"""The commands that take words after ``--``, and the argument that gets them."""


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``command`` alone: its room's arguments and choices, nothing of
    another room (their imports and choices cost a command up to 60 ms, ADR 0058).
    ``None`` or a word that is no command (``--help``, a usage error, "did you mean"):
    every room, in the order ``--help`` lists them."""
    from importlib import import_module

    room = COMMANDS.get(command or "")
    parser = argparse.ArgumentParser(
        prog="agentspool",
        description="Know what each coding-agent CLI run is doing, from evidence.",
        # Shown by ``agentspool --help`` alone, whose parser has every room.
        epilog=None
        if room
        else f"providers: {', '.join(agentspool.providers())}\n\n{options.EXIT_CODES}",
        formatter_class=options.HelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"agentspool {agentspool.__version__}"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in [room] if room else dict.fromkeys(COMMANDS.values()):
        import_module(f"agentspool.cli.commands.{name}").add_parser(sub)
    return parser


def _subparsers(parser: argparse.ArgumentParser) -> options.Subparsers:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _suggest(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """A word that is no command gets a "did you mean" (argparse of Python 3.11 has
    none): a close command name, or for a provider's name the commands that take one."""
    word = next((a for a in argv if not a.startswith("-")), None)
    sub = _subparsers(parser)
    if word is None or word in sub.choices or argv.index(word) != 0:
        return
    import difflib

    providers = agentspool.providers()
    near = difflib.get_close_matches(word, list(sub.choices), n=1, cutoff=0.6)
    provider = [p for p in providers if p == word or p.split("-")[0] == word]
    provider = provider or difflib.get_close_matches(word, providers, n=1, cutoff=0.6)
    if provider:
        name = provider[0]
        parser.error(
            f"no command {word!r}; {name} is a provider: did you mean agentspool install "
            f"{name}, or agentspool run {name} -- ARGS?"
        )
    if near:
        parser.error(f"no command {word!r}; did you mean: agentspool {near[0]}?")


def _parse(argv: list[str]) -> argparse.Namespace:
    # Everything after the first "--" is the agent CLI's (``run``) or search's words:
    # argparse's own "--" handling does not reach into a subcommand's positionals.
    passthrough: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1 :]
    parser = _parser(argv[0] if argv else None)
    _suggest(parser, argv)
    args = parser.parse_args(argv)
    command = _subparsers(parser).choices[args.command]
    options.settle_run_id(args, command.error)
    if passthrough:
        if args.command not in PASSTHROUGH:
            parser.error(f"{args.command} takes no arguments after --")
        dest = PASSTHROUGH[args.command]
        setattr(args, dest, [*getattr(args, dest), *passthrough])
    return args


def _write_traceback(exc: BaseException) -> str:
    """Write the traceback of an unexpected error to a private file; return its path."""
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="agentspool-traceback-", suffix=".txt")
    # backslashreplace: argv may hold bytes that are not UTF-8 (surrogates here)
    with open(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(f"agentspool {agentspool.__version__}: {' '.join(sys.argv)}\n")
        fh.writelines(traceback.format_exception(exc))
    return path


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    args = _parse(words)
    args.argv = words  # what a kept answer is keyed on (``usage_kept``, ADR 0043)
    try:
        code: int = args.func(args)
        sys.stdout.flush()  # here, where the reader leaving is seen, not at the exit
    except BrokenPipeError:
        stdout_gone()  # `agentspool … | head`: the reader left; done, not an error
        return options.EXIT_OK
    except (AgentspoolError, OSError) as exc:
        say(f"agentspool: {exc}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        return options.EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the one boundary: a bug is one line, not a traceback
        try:
            where = f"traceback in {_write_traceback(exc)}"
        except OSError as write_error:
            where = f"(the traceback could not be written: {write_error})"
        say(f"agentspool: internal error {type(exc).__name__}: {exc}; {where}", file=sys.stderr)
        return options.EXIT_INTERNAL
    return code


if __name__ == "__main__":
    raise SystemExit(main())
