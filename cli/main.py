"""The ``agentspool`` command. One error boundary: every failure is one line on stderr.

Exit status: 0 ok; 1 an error (the line says what and where); 2 bad usage; 3 the
transcript is gone (``read``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentspool import __version__
from agentspool.errors import AgentspoolError, TranscriptGoneError

if TYPE_CHECKING:
    from agentspool.adapters.seam import Chat

EXIT_ERROR = 1
EXIT_TRANSCRIPT_GONE = 3


def _parser() -> argparse.ArgumentParser:
    from agentspool.adapters import registry

    providers = registry.names()
    parser = argparse.ArgumentParser(
        prog="agentspool",
        description="Know what each coding-agent CLI run is doing, from evidence.",
    )
    parser.add_argument("--version", action="version", version=f"agentspool {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def run_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("provider", choices=providers)
        p.add_argument("--run-id", required=True, help="the run's id (letters, digits, . _ -)")
        p.add_argument(
            "--runtime-dir",
            default="",
            help="default: $AGENTSPOOL_RUNTIME_DIR, "
            "else $XDG_RUNTIME_DIR/agentspool, else $TMPDIR/agentspool-<uid>",
        )

    p = sub.add_parser(
        "setup",
        help="arm hooks for one run; print the args to spawn with",
        description="Render the provider's per-run hook settings into the run "
        "dir and print what a spawn wrapper appends to the agent's command.",
    )
    run_args(p)
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.add_argument(
        "--trust",
        choices=["bypass", "config"],
        default="bypass",
        help="for a CLI whose hooks must be trusted: add its bypass flag, or record the "
        "trust in its config (see README)",
    )
    p.add_argument(
        "--config-home",
        default=None,
        metavar="DIR",
        help="with --trust config: the CLI's config dir (default: where the CLI looks)",
    )
    p.set_defaults(func=_cmd_setup)

    p = sub.add_parser("sig", help="print the run's spool signature (changes with evidence)")
    run_args(p)
    p.set_defaults(func=_cmd_sig)

    p = sub.add_parser("sweep", help="remove spools of runs outside the keep-set")
    p.add_argument("--runtime-dir", default="")
    p.add_argument("--keep", action="append", default=[], metavar="ID", help="repeatable")
    p.add_argument(
        "--min-idle",
        type=float,
        default=None,
        metavar="SECONDS",
        help="never remove a run written this recently (default 600)",
    )
    p.add_argument(
        "--archive",
        default=None,
        metavar="DIR",
        help="move each removed run's events.spool here first",
    )
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser(
        "read",
        help="print the run's composed state (and conversation)",
        description="Compose the run's state from its spool, transcript and "
        "native status. Exit 3 if the transcript is gone.",
    )
    run_args(p)
    p.add_argument(
        "--transcript",
        default=None,
        metavar="PATH",
        help="default: the transcript the run's hooks named (locate_transcript)",
    )
    p.add_argument(
        "--ended",
        action="store_true",
        help="the run has terminated: read transcript-only, state 'ended'",
    )
    p.add_argument("--json", action="store_true", help="print the Chat as JSON")
    p.set_defaults(func=_cmd_read)

    p = sub.add_parser("untrust", help="remove agentspool's trusted-hook block from a CLI's config")
    p.add_argument("provider", choices=providers)
    p.add_argument("--config-home", default=None, metavar="DIR")
    p.set_defaults(func=_cmd_untrust)
    return parser


def _cmd_setup(args: argparse.Namespace) -> int:
    import msgspec

    from agentspool import api

    spawn = api.setup(
        args.provider,
        args.run_id,
        args.runtime_dir,
        trust=args.trust,
        config_home=args.config_home,
    )
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(spawn) + b"\n")
    else:
        import shlex

        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in spawn.env.items())
        print(f"{env} {shlex.join(spawn.args)}".strip())
    return 0


def _cmd_sig(args: argparse.Namespace) -> int:
    from agentspool import api

    print(api.spool_sig(args.provider, args.run_id, args.runtime_dir))
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from agentspool import api
    from agentspool.spool.sweep import DEFAULT_MIN_IDLE

    min_idle = DEFAULT_MIN_IDLE if args.min_idle is None else args.min_idle
    report = api.sweep_spools(
        args.runtime_dir, args.keep, dry_run=args.dry_run, min_idle=min_idle, archive=args.archive
    )
    if args.json:
        import msgspec

        sys.stdout.buffer.write(msgspec.json.encode(asdict(report)) + b"\n")
    else:
        verb = "would remove" if args.dry_run else "removed"
        print(f"{verb} {len(report.removed)}: {' '.join(report.removed)}".rstrip())
        print(f"kept {len(report.kept)}, busy {len(report.busy)}: {' '.join(report.busy)}".rstrip())
    return 0


def _cmd_read(args: argparse.Namespace) -> int:
    from agentspool import api
    from agentspool.spool.layout import default_runtime_dir

    runtime_dir = args.runtime_dir or default_runtime_dir()
    path = args.transcript
    if path is None:
        path = api.locate_transcript(args.provider, args.run_id, runtime_dir)
    chat = api.read_chat(args.provider, args.run_id, runtime_dir, path, ended=args.ended)
    if chat.drift:
        print(drift_warning(args.provider, args.run_id, chat), file=sys.stderr)
    if args.json:
        import msgspec

        sys.stdout.buffer.write(msgspec.json.encode(chat) + b"\n")
        return 0
    print(f"{args.run_id}: {chat.state} (activity {chat.activity}, task {chat.task_state})")
    if chat.pending_approval is not None:
        print(
            f"  waiting for approval of {chat.pending_approval.tool_name}: "
            f"{chat.pending_approval.tool_input}"
        )
    if chat.pending_dialog is not None:
        options = ", ".join(o.label for o in chat.pending_dialog.options)
        print(
            f"  {chat.pending_dialog.kind}: {chat.pending_dialog.prompt}"
            + (f" [{options}]" if options else "")
        )
    for evidence in chat.evidence:
        print(f"  evidence: {evidence.source} {evidence.detail}".rstrip())
    print(f"  {len(chat.messages)} messages; transcript {path or '(not located yet)'}")
    return 0


def drift_warning(provider: str, run_id: str, chat: Chat) -> str:
    """One line: which CLI version wrote what this agentspool does not know (ADR 0014)."""
    version = chat.drift.cli_version or "version not stated"
    return (
        f"agentspool: warning: {run_id}: {provider} {version} wrote records this "
        f"agentspool does not know (state may be incomplete): {chat.drift.describe()}"
    )


def _cmd_untrust(args: argparse.Namespace) -> int:
    from agentspool import api

    removed = api.untrust(args.provider, args.config_home)
    print("removed agentspool's trusted hooks" if removed else "nothing to remove")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except TranscriptGoneError as exc:
        print(f"agentspool: {exc}", file=sys.stderr)
        return EXIT_TRANSCRIPT_GONE
    except (AgentspoolError, OSError) as exc:
        print(f"agentspool: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    raise SystemExit(main())
