"""The parser convention every room keeps (docs/adr/0044-cli-rooms.md).

A room (``cli/commands/<name>.py``) exposes ``add_parser(sub)``, which registers its
command(s) on the subparsers through ``command`` and the argument helpers here, and
``run(args) -> int``, its handler (``command`` sets it as ``func``). Help text, the exit
codes in every ``--help``, the run argument and the argument types are written once,
here; so is the one spelling of the run: a positional ``RUN_ID`` (``--run-id`` is a
hidden alias that still works, resolved by ``settle_run_id`` after parsing).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, get_args

import agentspool
from agentspool.errors import (
    EXIT_ERROR,
    EXIT_INTERNAL,
    EXIT_REFUSED,
    EXIT_TRANSCRIPT_GONE,
    EXIT_USAGE,
)

__all__ = [  # the exit codes, for the rooms: agentspool.errors says what each means
    "EXIT_ERROR",
    "EXIT_INTERNAL",
    "EXIT_REFUSED",
    "EXIT_TRANSCRIPT_GONE",
    "EXIT_USAGE",
]

if TYPE_CHECKING:
    from datetime import date

    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

EXIT_OK = 0
EXIT_INTERRUPTED = 130
# The others mean the same in every command and in serve's JSON errors: agentspool.errors.

EXIT_CODES = f"""\
exit status:
  {EXIT_OK}    ok
  {EXIT_ERROR}    an error; one line on stderr says what and where
  {EXIT_USAGE}    bad usage
  {EXIT_TRANSCRIPT_GONE}    the run's transcript is gone (read, show)
  {EXIT_REFUSED}    a declaration refused, nothing recorded (lifecycle: no run, a
       subagent declaring, uncommitted changes without --force)
  {EXIT_INTERNAL}   an internal error; stderr names the file holding the traceback
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)
"""

STORE_HELP = (
    "the history store (default: $AGENTSPOOL_DATA_DIR/history.sqlite, else history.sqlite "
    "in the user's data dir, ~/.local/share/agentspool on Linux)"
)
RUNTIME_DIR_HELP = (
    "the runtime dir holding the runs' spools (default: $AGENTSPOOL_RUNTIME_DIR, "
    "else $XDG_RUNTIME_DIR/agentspool, else $TMPDIR/agentspool-<uid>)"
)
RUN_ID_HELP = "the run's id, as ls prints it (letters, digits, . _ -)"
WAIT_KINDS = ("approval", "question", "turn")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's, given the terminal's width itself. argparse makes a formatter for
    every argument a parser is given (to check its metavar), and one asked no width
    imports ``shutil`` for it, with bz2, lzma and zlib: ~2.5 ms of every command, for a
    width only ``--help`` and a usage error print with."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = _columns() - 2  # argparse's margin
        super().__init__(prog, indent_increment, max_help_position, width)


def _columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else standard output's
    terminal, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = 0 if stdout is None else os.get_terminal_size(stdout.fileno()).columns
        except (ValueError, OSError):
            columns = 0
    return columns or 80


def command(
    sub: Subparsers,
    name: str,
    help: str,
    description: str = "",
    *,
    run: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    """A subcommand with the exit codes in its ``--help``, handled by ``run``."""
    p = sub.add_parser(
        name,
        help=help,
        description=description or help,
        epilog=EXIT_CODES,
        formatter_class=HelpFormatter,
    )
    p.set_defaults(func=run)
    return p


def provider_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("provider", choices=agentspool.providers(), help="the agent CLI")


def run_arg(p: argparse.ArgumentParser, *, required: bool = True, help: str = RUN_ID_HELP) -> None:
    """The run, as users type it: a positional ``RUN_ID``; ``--run-id`` still works."""
    p.add_argument("run_id", nargs="?", metavar="RUN_ID", help=help)
    p.add_argument("--run-id", dest="run_id_alias", default=None, help=argparse.SUPPRESS)
    p.set_defaults(run_id_required=required)


def settle_run_id(args: argparse.Namespace, error: Callable[[str], object]) -> None:
    """``args.run_id`` from either spelling (``run_arg``); ``error`` on bad usage."""
    if not hasattr(args, "run_id_alias"):
        return
    given, alias = args.run_id, args.run_id_alias
    del args.run_id_alias
    if given is not None and alias is not None and given != alias:
        error(f"two run ids: {given!r} and --run-id {alias!r}")
    args.run_id = given if given is not None else alias
    if args.run_id is None and args.run_id_required:
        error("the following arguments are required: RUN_ID")


def runtime_dir_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runtime-dir", default=None, metavar="DIR", help=RUNTIME_DIR_HELP)


def store_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", default=None, metavar="PATH", help=STORE_HELP)


def config_home_arg(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--config-home", default=None, metavar="DIR", help=help)


def transcript_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--transcript",
        default=None,
        metavar="PATH",
        help="default: the transcript the run's own evidence names (locate_transcript)",
    )


def trust_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--trust",
        choices=get_args(agentspool.Trust),
        default=get_args(agentspool.Trust)[0],
        help="for a CLI whose hooks must be trusted: add its bypass flag, or record the "
        "trust in its config (see README) (default: %(default)s)",
    )


def json_arg(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def confirm_args(p: argparse.ArgumentParser, what: str) -> None:
    """A destructive command reports what it would do unless ``--yes`` (ADR 0044);
    ``--dry-run``, once the way to ask for the report, is still accepted."""
    p.add_argument("--yes", action="store_true", help=f"{what} (default: only report)")
    p.add_argument(
        "--dry-run", action="store_true", help="report, remove nothing (the default; kept)"
    )


def archive_arg(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--archive", default=None, metavar="DIR", help=help)


def provider_filter_arg(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument(
        "--provider", action="append", default=[], choices=agentspool.providers(), help=help
    )


def notify_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--notify",
        action="append",
        default=[],
        metavar="URL",
        help="tell URL once when a run starts waiting on you: any apprise URL "
        "(ntfy://, slack://, tgram://, mailto://, json:// a webhook, …; repeatable)",
    )
    p.add_argument(
        "--notify-on",
        type=wait_kinds,
        default=list(WAIT_KINDS),
        metavar="KINDS",
        help="which waits --notify tells: approval,question,turn (default: all three)",
    )
    p.add_argument(
        "--remind-after",
        type=positive,
        default=None,
        metavar="MINUTES",
        help="with --notify: tell once more about a wait still open after MINUTES",
    )


def notifier(args: argparse.Namespace) -> Any:
    """``--notify``'s ``Notifier`` (``None`` without a URL; apprise only then)."""
    if not args.notify:
        return None
    from agentspool.serve.notify import Notifier

    return Notifier(
        args.notify,
        kinds=args.notify_on,
        remind_after=None if args.remind_after is None else args.remind_after * 60,
    )


def wait_kinds(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in WAIT_KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"not a list of approval, question, turn: {text!r}")
    return kinds


N = TypeVar("N", int, float)


def _positive(convert: Callable[[str], N], what: str) -> Callable[[str], N]:
    """An argument type: ``convert``'s number, more than zero, else bad usage."""

    def parse(text: str) -> N:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a {what}: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"not a {what}: {text!r}")
        return value

    return parse


positive = _positive(float, "positive number")
positive_int = _positive(int, "positive whole number")


def port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"not a port (0 to 65535): {text!r}")
    return int(text)


def day(text: str) -> date:
    from datetime import date

    digits = text.replace("-", "") if len(text) == 10 else text
    try:
        if len(digits) != 8 or not digits.isdigit():
            raise ValueError
        return date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD or YYYYMMDD): {text!r}") from None


def zone(text: str) -> str:
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise argparse.ArgumentTypeError(f"not an IANA time zone: {text!r}") from None
    return text


def flag(
    p: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup, name: str, help: str
) -> None:
    """An option that is on or off (``store_true``)."""
    p.add_argument(name, action="store_true", help=help)
