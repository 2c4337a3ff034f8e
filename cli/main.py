"""The ``agentspool`` command. It imports only the public API (``agentspool``).

Conventions every command keeps: ``--json`` wherever it prints data; every option has
help text; choices come from the types and defaults from the constants; one error
boundary (``main``) turns every failure into one line on stderr — an unexpected one also
names the file its traceback was written to — never a traceback on the terminal.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import agentspool
from agentspool import AgentspoolError
from agentspool.cli._terminal import one_line
from agentspool.errors import (
    EXIT_ERROR,
    EXIT_INTERNAL,
    EXIT_REFUSED,
    EXIT_TRANSCRIPT_GONE,
    EXIT_USAGE,
    exit_code,
)

if TYPE_CHECKING:
    from datetime import date

    import msgspec

    from agentspool import Chat, UsageReport, UsageRow
    from agentspool.cli import watch

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

SERVE_PORT = 8765
"""``serve --port``'s default."""

SHOW_LINES = 6
"""``show --lines``: lines shown of each tool result, thinking block and summary."""

STORE_HELP = (
    "the history store (default: $AGENTSPOOL_DATA_DIR/history.sqlite, else history.sqlite "
    "in the user's data dir, ~/.local/share/agentspool on Linux)"
)
RUNTIME_DIR_HELP = (
    "the runtime dir holding the runs' spools (default: $AGENTSPOOL_RUNTIME_DIR, "
    "else $XDG_RUNTIME_DIR/agentspool, else $TMPDIR/agentspool-<uid>)"
)


def _parser() -> argparse.ArgumentParser:
    from typing import get_args

    from agentspool.api import DEFAULT_MIN_IDLE
    from agentspool.cli.watch import FULL_EVERY, INTERVAL
    from agentspool.serve.hub import EVENT_WINDOW  # no Starlette: that is imported on serving

    providers = agentspool.providers()
    parser = argparse.ArgumentParser(
        prog="agentspool",
        description="Know what each coding-agent CLI run is doing, from evidence.",
        epilog=f"providers: {', '.join(providers)}\n\n{EXIT_CODES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"agentspool {agentspool.__version__}"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str, description: str = "") -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=help,
            description=description or help,
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        return p

    def provider_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument("provider", choices=providers, help="the agent CLI")

    def run_args(p: argparse.ArgumentParser) -> None:
        provider_arg(p)
        p.add_argument("--run-id", required=True, help="the run's id (letters, digits, . _ -)")
        p.add_argument("--runtime-dir", default=None, metavar="DIR", help=RUNTIME_DIR_HELP)

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
            type=_wait_kinds,
            default=["approval", "question", "turn"],
            metavar="KINDS",
            help="which waits --notify tells: approval,question,turn (default: all three)",
        )
        p.add_argument(
            "--remind-after",
            type=_positive,
            default=None,
            metavar="MINUTES",
            help="with --notify: tell once more about a wait still open after MINUTES",
        )

    p = command(
        "setup",
        "arm hooks for one run; print what to spawn the agent with",
        "Render the provider's per-run hook settings into the run dir and print what a "
        "spawn wrapper adds: a shell line `env K=V … <args>` to paste before the agent's "
        "own arguments, or with --json the Spawn object. A CLI with no per-run settings "
        "(Gemini CLI) is armed by the hooks `agentspool install` put in its own settings: "
        "setup checks they are there and hands the run over in the environment.",
    )
    run_args(p)
    json_arg(p, "the Spawn (args, env, settings_path, run_dir)")
    trust_arg(p)
    p.add_argument(
        "--config-home",
        default=None,
        metavar="DIR",
        help="with --trust config, or for a CLI armed by its installed hooks: the CLI's "
        "config dir (default: where the CLI looks)",
    )
    p.set_defaults(func=_cmd_setup)

    p = command("sig", "print the run's spool signature (changes whenever its evidence does)")
    run_args(p)
    json_arg(p, "{run_id, sig}")
    p.set_defaults(func=_cmd_sig)

    p = command("sweep", "remove the spools of runs outside the keep-set")
    p.add_argument("--runtime-dir", default=None, metavar="DIR", help=RUNTIME_DIR_HELP)
    p.add_argument(
        "--keep", action="append", default=[], metavar="ID", help="a run to keep (repeatable)"
    )
    p.add_argument(
        "--min-idle",
        type=float,
        default=DEFAULT_MIN_IDLE,
        metavar="SECONDS",
        help="never remove a run written this recently (default: %(default)s)",
    )
    p.add_argument(
        "--archive",
        default=None,
        metavar="DIR",
        help="move each removed run's evidence here first",
    )
    p.add_argument("--dry-run", action="store_true", help="report, remove nothing")
    json_arg(p, "the SweepReport")
    p.set_defaults(func=_cmd_sweep)

    p = command(
        "read",
        "print the run's composed state (and conversation)",
        "Compose the run's state from its spool, transcript and native status.",
    )
    run_args(p)
    transcript_arg(p)
    p.add_argument(
        "--transcript-only",
        action="store_true",
        help="read the transcript alone: no hook spool, no status file",
    )
    p.add_argument(
        "--ended",
        action="store_true",
        help="the run has terminated: read transcript-only, state 'ended'",
    )
    json_arg(p, "the Chat")
    p.set_defaults(func=_cmd_read)

    p = command(
        "run",
        "run an agent CLI as an armed run; exit with its status",
        "The spawn wrapper as a command: arm a run, execute the provider's CLI with the "
        "run's arguments and then CLI_ARGS (after --), forward signals, record the run's "
        "end, sweep its spool (its ledger stays, so it reads 'ended'), and exit with the "
        "CLI's status (128+N if signal N killed it).",
    )
    provider_arg(p)
    p.add_argument(
        "--run-id", default=None, help="the run's id (default: <provider>-<time>-<random>)"
    )
    p.add_argument("--runtime-dir", default=None, metavar="DIR", help=RUNTIME_DIR_HELP)
    p.add_argument("--keep", action="store_true", help="keep the run's spool after it ends")
    p.add_argument(
        "--cli",
        default=None,
        metavar="PATH",
        help="the agent CLI to execute (default: the provider's command on PATH)",
    )
    trust_arg(p)
    p.add_argument("cli_args", nargs="*", metavar="CLI_ARGS", help="the agent CLI's own arguments")
    p.set_defaults(func=_cmd_run)

    p = command(
        "ls",
        "list every run: what it does now and what it waits on",
        "One line per run in the runtime dir, most urgent first: runs waiting on the "
        "operator (a question, a permission prompt, the end of a turn), then working, then "
        "idle. --json prints a list of objects with the fields provider, run_id, state, "
        "activity, task_state, task_reason, since, cwd, title, pending_approval, "
        "pending_dialog, session_id, transcript_path, pid.",
    )
    p.add_argument("--runtime-dir", default=None, metavar="DIR", help=RUNTIME_DIR_HELP)
    p.add_argument("--all", action="store_true", help="also list runs that ended")
    json_arg(p, "a list of RunSummary objects")
    p.set_defaults(func=_cmd_ls)

    p = command(
        "explain",
        "show the evidence behind a run's state",
        "Read the run afresh and show every canonical event the read folded — hook records, "
        "transcript records, status-file readings — in fold order, with its time and "
        "source, the state after it, or why it was judged stale; then the decisive "
        "evidence. The run by its id (`explain RUN_ID`, as ls prints it), or as "
        "`explain PROVIDER --run-id RUN_ID`.",
    )
    p.add_argument(
        "ids",
        nargs="*",
        metavar="[PROVIDER] RUN_ID",
        help="the run's id, as ls prints it (a provider before it, or --run-id, also works)",
    )
    p.add_argument("--run-id", default=None, help="the run's id (letters, digits, . _ -)")
    p.add_argument("--runtime-dir", default=None, metavar="DIR", help=RUNTIME_DIR_HELP)
    transcript_arg(p)
    p.add_argument(
        "--last",
        type=int,
        default=40,
        metavar="N",
        help="show the last N steps (default: %(default)s; --json has them all)",
    )
    json_arg(p, "the Explanation (chat without messages, every step)")
    p.set_defaults(func=_cmd_explain)

    p = command(
        "lifecycle",
        "declare the run's task state: active, blocked (with a reason) or done",
        "Declare the task state of a run: the agent itself runs this from inside its "
        "session (the run comes from $AGENTSPOOL_RUN_ID, which setup/run provide, else "
        "from the agent process above this command, whose installed hooks made its run), "
        "or a person names the run. Only the run's main agent declares: a subagent is "
        "refused. An exact repeat records nothing and says so. Process exit never means "
        "done.",
    )
    p.add_argument("task_state", choices=get_args(agentspool.TaskState), help="the task state")
    p.add_argument("--reason", default="", help="why the task is blocked (required for blocked)")
    p.add_argument(
        "--run-id",
        default=None,
        help="the run (default: $AGENTSPOOL_RUN_ID, else the run of the agent process "
        "this command runs under)",
    )
    p.add_argument("--runtime-dir", default=None, metavar="DIR", help=RUNTIME_DIR_HELP)
    p.add_argument(
        "--force",
        action="store_true",
        help="declare done even with uncommitted changes in the git worktree",
    )
    json_arg(p, "the Declaration (run_id, task_state, task_reason, changed)")
    p.set_defaults(func=_cmd_lifecycle)
    for name, verb, action in (
        (
            "install",
            "arm",
            "Merge agentspool's hooks into the CLI's own settings, so every run of "
            "it is observed: your keys, hooks and formatting stay; installing again changes "
            "nothing; the file as it was is kept beside it.",
        ),
        (
            "uninstall",
            "remove",
            "Remove exactly the hooks `agentspool install` added (found by "
            "their command); a file it created and that holds nothing else is removed.",
        ),
    ):
        p = command(name, f"{verb} agentspool's hooks in a CLI's own settings (every run)", action)
        provider_arg(p)
        p.add_argument(
            "--scope",
            choices=get_args(agentspool.InstallScope),
            default=get_args(agentspool.InstallScope)[0],
            help="the user's settings, or a project's (default: %(default)s)",
        )
        p.add_argument(
            "--project",
            default=None,
            metavar="DIR",
            help="with --scope project: the project dir (default: the current dir)",
        )
        p.add_argument(
            "--config-home",
            default=None,
            metavar="DIR",
            help="with --scope user: the CLI's config dir (default: where the CLI looks)",
        )
        json_arg(p, "the InstallReport (each file: path, action, backup)")
        p.set_defaults(func=_cmd_install)

    p = command(
        "watch",
        "follow every run live: a full-screen list, or JSON lines without a terminal",
        "Follow the runs `ls` lists: what a hook records shows within half a second "
        "(--interval), what only a transcript, status file or process shows within a "
        "second; a run is read again only when its evidence changed. On a terminal: a "
        "list, most urgent first, and the selected run's detail (j/k or arrows, enter: "
        "every folded event, / filter by provider or state, q quits). Without one (a "
        "pipe, CI) or with --json: one JSON line per state transition (event "
        "seen/changed/gone, key, previous state, then the RunSummary fields) until "
        "interrupted.",
    )
    p.add_argument("--runtime-dir", default=None, metavar="DIR", help=RUNTIME_DIR_HELP)
    p.add_argument(
        "--provider",
        action="append",
        default=[],
        choices=providers,
        help="only this provider's runs (repeatable)",
    )
    p.add_argument(
        "--state",
        action="append",
        default=[],
        choices=get_args(agentspool.ChatState),
        help="only runs in this state (repeatable)",
    )
    p.add_argument(
        "--bell",
        action="store_true",
        help="ring the terminal and send a desktop notification (where notify-send "
        "exists) when a run starts waiting on you",
    )
    p.add_argument(
        "--on-wait",
        default="",
        metavar="CMD",
        help="when a run starts waiting on you, run the shell command CMD with the run's "
        "JSON (a RunSummary) on its stdin",
    )
    notify_args(p)
    p.add_argument(
        "--json", action="store_true", help="print JSON lines even on a terminal (no drawing)"
    )
    p.add_argument(
        "--interval",
        type=_positive,
        default=INTERVAL,
        metavar="SECONDS",
        help=f"stat the spools hooks append to every SECONDS (default {INTERVAL}); every "
        f"run's whole signature is taken every {FULL_EVERY:g} s, or every SECONDS if longer",
    )
    p.add_argument("--once", action="store_true", help="with JSON lines: poll once, print, exit")
    p.add_argument(
        "--for",
        dest="duration",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with JSON lines: stop after SECONDS (default: until interrupted)",
    )
    p.set_defaults(func=_cmd_watch)

    p = command(
        "demo",
        "replay recorded Claude Code and Codex sessions and watch their states change",
        "No agent CLI and no network needed: three recorded sessions (a Claude Code "
        "permission prompt approved, a Claude Code question answered, a Codex approval) "
        "are replayed in real time into a temporary runtime dir — through the real hooks, "
        "the real transcript writes and Claude Code's status file — while a view shows "
        "each run go idle, working, waiting on a permission prompt or a question, and end. "
        "The view is `agentspool watch` where it exists, else `ls` redrawn once a second. "
        "Everything it made is removed when it ends or on Ctrl-C.",
    )
    p.add_argument(
        "--speed",
        type=_positive,
        default=1.0,
        metavar="X",
        help="play X times as fast (default: %(default)s)",
    )
    p.add_argument(
        "--no-view",
        action="store_true",
        help="no screen: print one line per state change of a run instead",
    )
    json_arg(p, "each state change (no screen): one object per line")
    p.set_defaults(func=_cmd_demo)

    p = command(
        "tidy",
        "remove finished runs: declared done, and ended (dry run unless --yes)",
        "Remove the runs whose latest task declaration is done and that ended: the ledger "
        "records the run's end, or the agent process is gone. Never a run declared active "
        "or blocked after, never one never declared (process exit never means done), never "
        "one whose agent process still runs. Without --yes, prints what it would do.",
    )
    p.add_argument("--yes", action="store_true", help="remove them (default: only report)")
    p.add_argument("--runtime-dir", default=None, metavar="DIR", help=RUNTIME_DIR_HELP)
    p.add_argument(
        "--archive",
        default=None,
        metavar="DIR",
        help="move each removed run's spool, ledger and provider file here first "
        "(agentspool replay --archive reads them)",
    )
    json_arg(p, "the TidyReport (dry_run, removed, archived, runs: run_id, verdict, why)")
    p.set_defaults(func=_cmd_tidy)

    p = command(
        "show",
        "print one session: prompts, answers, tool calls and results, subagents, usage",
        "Print a session as a person reads it: a header (provider, session, transcript, "
        "cwd, models, time, state, totals), then turn by turn the prompt, the answer, "
        "thinking (dimmed, cut), each tool call with its input summarized and its result "
        "(cut to --lines, errors marked), the subagents a call spawned indented under it, "
        "compactions, summaries and interrupts marked, and the usage of each turn. Any "
        "provider's session: by its id, the start of its id, or its transcript file. "
        "Without a terminal the text has no colours and no wrapping; --json prints the "
        "SessionDetail (assemble_session_detail over the session's records and its "
        "subagents').",
    )
    p.add_argument(
        "session",
        metavar="SESSION",
        help="a session id, the start of one, or the path of a transcript file",
    )
    p.add_argument(
        "--include-inactive",
        action="store_true",
        help="also show the records the provider marks superseded (rewind, branch), "
        "marked [superseded]",
    )
    p.add_argument(
        "--lines",
        type=int,
        default=SHOW_LINES,
        metavar="N",
        help="lines shown of each tool result, thinking block and summary; 0 shows "
        "them whole (default: %(default)s)",
    )
    p.add_argument(
        "--pager",
        action="store_true",
        help="on a terminal, page the output through $PAGER (default: less -R)",
    )
    json_arg(p, "the SessionDetail (conversation, tools, orphan_results, subagents, ...)")
    p.set_defaults(func=_cmd_show)

    p = command(
        "replay",
        "show the transitions a run's evidence and ledger made, with time and source",
        "Fold the run's evidence again — its spool, transcript and status file, read "
        "afresh, and its ledger — through the one reducer, and print each transition: a "
        "step after which the chat state, activity or task state changed. Writes nothing.",
    )
    p.add_argument("run_id", metavar="RUN_ID", help="the run's id")
    p.add_argument("--runtime-dir", default=None, metavar="DIR", help=RUNTIME_DIR_HELP)
    p.add_argument(
        "--archive",
        default=None,
        metavar="DIR",
        help="read the run's latest copy in this archive (sweep/tidy --archive) instead",
    )
    json_arg(p, "the Replay (provider, run_id, run_dir, archived, events, transitions)")
    p.set_defaults(func=_cmd_replay)

    p = command(
        "usage",
        "token totals and their cost, per day, session, model or project",
        "Count the tokens every session of the history used — input, "
        "output, cache reads and cache writes kept apart — once per API response (a "
        "response copied into a resumed session counts once), and price them with the "
        "table shipped with agentspool (never fetched). A model without a price shows "
        "'no price', never $0, and a cost says how many tokens it leaves out. Days are "
        "counted in local time unless --timezone says otherwise. Indexes first "
        "(incrementally) unless --no-index; sessions whose file is gone still count.",
    )
    p.add_argument(
        "--since",
        type=_day,
        default=None,
        metavar="DATE",
        help="from this day (YYYY-MM-DD or YYYYMMDD)",
    )
    p.add_argument(
        "--until",
        type=_day,
        default=None,
        metavar="DATE",
        help="up to this day, included (YYYY-MM-DD or YYYYMMDD)",
    )
    p.add_argument(
        "--by",
        choices=get_args(agentspool.UsageGrouping),
        default=get_args(agentspool.UsageGrouping)[0],
        help="one row per what (default: %(default)s)",
    )
    p.add_argument(
        "--provider",
        action="append",
        default=[],
        choices=providers,
        help="only this provider's sessions (repeatable; default: every one)",
    )
    p.add_argument(
        "--timezone",
        type=_zone,
        default=None,
        metavar="ZONE",
        help="count days in this IANA time zone, e.g. Europe/Paris (default: local time)",
    )
    p.add_argument(
        "--prices",
        default=None,
        metavar="FILE",
        help="price with this TOML table instead of the shipped one (same shape)",
    )
    p.add_argument("--no-index", action="store_true", help="count what is indexed already")
    p.add_argument("--store", default=None, metavar="PATH", help=STORE_HELP)
    json_arg(p, "the UsageReport (by, since, until, timezone, prices_taken, rows, total)")
    p.set_defaults(func=_cmd_usage)

    p = command(
        "index",
        "index every transcript on this machine into the history store",
        "Find every transcript each installed adapter knows of (where its CLI keeps "
        "them: subagents' and compressed ones included) and bring the history store up "
        "to date: a file costs what it gained since the last run; a rewritten, truncated "
        "or replaced one is read again; a renamed one keeps its session; the sessions of "
        "deleted files are kept (marked gone). A progress bar on a terminal, one summary "
        "line otherwise.",
    )
    p.add_argument("--store", default=None, metavar="PATH", help=STORE_HELP)
    p.add_argument(
        "--forget-gone",
        action="store_true",
        help="remove the sessions whose transcript file is gone (kept by default)",
    )
    json_arg(
        p,
        "the IndexReport (files, new, appended, rewritten, unchanged, gone, moved, "
        "forgotten, failed, records, bytes_read, seconds, busy, errors)",
    )
    p.set_defaults(func=_cmd_index)

    p = command(
        "search",
        "full-text search over every indexed conversation",
        "Search the history for records holding every word given (word* matches a "
        "prefix): prompts, replies, reasoning, summaries and tool calls (name and input); "
        "not tool results. Best matches first, with provider, session, time and the text "
        "around the match. Indexes first (incrementally) unless --no-index.",
    )
    p.add_argument(
        "words",
        nargs="*",
        metavar="WORD",
        help="what to find (after --, words may start with -)",
    )
    p.add_argument(
        "--limit",
        type=_positive_int,
        default=20,
        metavar="N",
        help="at most N hits (default: %(default)s)",
    )
    p.add_argument("--provider", choices=providers, default=None, help="only this provider's")
    p.add_argument("--no-index", action="store_true", help="search what is indexed already")
    p.add_argument("--store", default=None, metavar="PATH", help=STORE_HELP)
    json_arg(p, "a list of SearchHit objects (session, seq, kind, role, timestamp, snippet, rank)")
    p.set_defaults(func=_cmd_search)

    p = command(
        "serve",
        "one local read-only daemon: a JSON API, live events (SSE) and a web page",
        "Serve what ls, read, explain, replay, show, usage and search print with --json "
        "under /api/v1 (the same structs; OpenAPI at /api/v1/openapi.json), every state "
        "transition watch prints as Server-Sent Events at /api/v1/events (reconnecting "
        "with Last-Event-ID misses nothing within --event-window), and a page at /. "
        "Binds 127.0.0.1; any other --host than 127.0.0.1, ::1 or localhost needs the "
        "token (serve --token makes and prints it) on every request. Every endpoint is "
        "read-only. Runs until interrupted.",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to bind (default: %(default)s; another than 127.0.0.1, ::1 or "
        "localhost needs the token)",
    )
    p.add_argument(
        "--port",
        type=_port,
        default=SERVE_PORT,
        metavar="N",
        help="the port (default: %(default)s; 0: any free one, printed)",
    )
    p.add_argument("--runtime-dir", default=None, metavar="DIR", help=RUNTIME_DIR_HELP)
    p.add_argument(
        "--no-conversations",
        action="store_true",
        help="serve states, usage and waits, never message text (titles, questions, "
        "commands, transcripts): for a shared screen",
    )
    p.add_argument(
        "--require-token",
        action="store_true",
        help="need the token on loopback too (other users of this machine can reach it)",
    )
    p.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let pages of ORIGIN (e.g. http://localhost:3000) read the API (repeatable; "
        "default: no CORS)",
    )
    p.add_argument(
        "--event-window",
        type=_positive_int,
        default=EVENT_WINDOW,
        metavar="N",
        help="transitions kept for clients that reconnect (default: %(default)s)",
    )
    p.add_argument(
        "--interval",
        type=_positive,
        default=INTERVAL,
        metavar="SECONDS",
        help=f"follow the runs as watch does, a tick every SECONDS (default {INTERVAL})",
    )
    notify_args(p)
    p.add_argument(
        "--otlp",
        nargs="?",
        const="",
        default=None,
        metavar="URL",
        help="push each transition (a log record) and the metrics to an OpenTelemetry "
        "Collector over OTLP/HTTP at URL (e.g. http://localhost:4318; without URL: "
        "$OTEL_EXPORTER_OTLP_ENDPOINT); needs pip install 'agentspool[otel]'",
    )
    p.add_argument(
        "--metrics-max-runs",
        type=_positive_int,
        default=100,
        metavar="N",
        help="runs with their own series on /metrics at most, the longest waits first "
        "(default: %(default)s)",
    )
    once = p.add_mutually_exclusive_group()
    once.add_argument(
        "--token",
        action="store_true",
        help="print the token (made on first use, kept 0600 in the data dir) and exit",
    )
    once.add_argument(
        "--install-unit",
        action="store_true",
        help="write a systemd user unit that starts serve at login, with these options, "
        "and exit ($XDG_CONFIG_HOME/systemd/user/agentspool-serve.service)",
    )
    once.add_argument("--uninstall-unit", action="store_true", help="remove that unit and exit")
    p.set_defaults(func=_cmd_serve)

    from agentspool.cli import doctor

    doctor.add_parser(command, json_arg)

    p = command("untrust", "remove agentspool's trusted-hook block from a CLI's config")
    provider_arg(p)
    p.add_argument(
        "--config-home",
        default=None,
        metavar="DIR",
        help="the CLI's config dir (default: where the CLI looks)",
    )
    json_arg(p, "{removed}")
    p.set_defaults(func=_cmd_untrust)
    return parser


def _print_json(value: Any) -> None:
    import msgspec

    sys.stdout.buffer.write(msgspec.json.encode(value) + b"\n")


def _print_json_by_item(value: msgspec.Struct) -> None:
    """``_print_json`` of a Struct, the same bytes, written a list item at a time: a long
    session's detail is tens of MB of JSON, and it is never in memory whole."""
    import msgspec

    encode = msgspec.json.Encoder().encode
    out = sys.stdout.buffer
    out.write(b"{")
    for i, (name, key) in enumerate(
        zip(value.__struct_fields__, value.__struct_encode_fields__, strict=True)
    ):
        out.write(b"," * (i > 0) + encode(key) + b":")
        field = getattr(value, name)
        if isinstance(field, list):
            out.write(b"[")
            for j, item in enumerate(field):
                out.write(b"," * (j > 0) + encode(item))
            out.write(b"]")
        else:
            out.write(encode(field))
    out.write(b"}\n")


def _say(text: str, file: Any = None) -> None:
    """``print`` of one line made of what others wrote (conversation text, tool input,
    file names): control characters shown, never sent to the terminal."""
    print(one_line(text), file=file)


def _cmd_setup(args: argparse.Namespace) -> int:
    spawn = agentspool.setup(
        args.provider,
        args.run_id,
        args.runtime_dir,
        trust=args.trust,
        config_home=args.config_home,
    )
    if args.json:
        _print_json(spawn)
    else:
        import shlex

        env = [f"{k}={v}" for k, v in spawn.env.items()]
        print(shlex.join(["env", *env, *spawn.args]) if env else shlex.join(spawn.args))
    return EXIT_OK


def _cmd_sig(args: argparse.Namespace) -> int:
    sig = agentspool.spool_sig(args.provider, args.run_id, args.runtime_dir)
    if args.json:
        _print_json({"run_id": args.run_id, "sig": sig})
    else:
        print(sig)
    return EXIT_OK


def _cmd_sweep(args: argparse.Namespace) -> int:
    report = agentspool.sweep_spools(
        args.runtime_dir,
        args.keep,
        dry_run=args.dry_run,
        min_idle=args.min_idle,
        archive=args.archive,
    )
    if args.json:
        from dataclasses import asdict

        _print_json(asdict(report))
    else:
        verb = "would remove" if args.dry_run else "removed"
        print(f"{verb} {len(report.removed)}: {' '.join(report.removed)}".rstrip())
        print(f"kept {len(report.kept)}, busy {len(report.busy)}: {' '.join(report.busy)}".rstrip())
    return EXIT_OK


def _cmd_read(args: argparse.Namespace) -> int:
    chat = agentspool.read_chat(
        args.provider,
        args.run_id,
        args.runtime_dir,
        args.transcript,
        live=not args.transcript_only,
        ended=args.ended,
    )
    if chat.drift:
        _say(drift_warning(args.provider, args.run_id, chat), file=sys.stderr)
    if args.json:
        _print_json(chat)
        return EXIT_OK
    task = chat.task_state + (f": {chat.task_reason}" if chat.task_reason else "")
    _say(f"{args.run_id}: {chat.state} (activity {chat.activity}, task {task})")
    if chat.pending_approval is not None:
        _say(
            f"  waiting for approval of {chat.pending_approval.tool_name}: "
            f"{chat.pending_approval.tool_input}"
        )
    if chat.pending_dialog is not None:
        options = ", ".join(o.label for o in chat.pending_dialog.options)
        _say(
            f"  {chat.pending_dialog.kind}: {chat.pending_dialog.prompt}"
            + (f" [{options}]" if options else "")
        )
    for evidence in chat.evidence:
        _say(f"  evidence: {evidence.source} {evidence.detail}".rstrip())
    transcript = chat.transcript_path or "(not located yet)"
    _say(f"  {len(chat.messages)} messages; transcript {transcript}")
    return EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    return agentspool.run(
        args.provider,
        args.cli_args,
        run_id=args.run_id,
        runtime_dir=args.runtime_dir,
        keep=args.keep,
        executable=args.cli,
        trust=args.trust,
    )


def install_warning() -> str:
    """One line when an installed hook cannot record (``agentspool.broken_installs``),
    else ``""``: what ``ls`` and ``watch`` say before anything else."""
    broken = agentspool.broken_installs()
    if not broken:
        return ""
    more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
    return f"agentspool: warning: {broken[0]}{more}; agentspool doctor says how to mend it"


def _cmd_ls(args: argparse.Namespace) -> int:
    warning = install_warning()
    if warning:
        print(warning, file=sys.stderr)
    warnings: list[str] = []
    runs = agentspool.list_runs(args.runtime_dir, include_ended=args.all, warnings=warnings)
    for problem in warnings:  # one bad run is one line, never the whole list
        _say(f"agentspool: warning: {problem}", file=sys.stderr)
    if args.json:
        _print_json(runs)
        return EXIT_OK
    from agentspool.cli.render import print_runs  # rich: only the commands that draw

    terminal = sys.stdout.isatty()
    if runs:
        print_runs(runs, time.time(), terminal=terminal)
    elif terminal:
        print("no live runs" if not args.all else "no runs")
    return EXIT_OK


def _explained_run(args: argparse.Namespace) -> tuple[str | None, str] | None:
    """``(provider or None, run id)`` from ``explain``'s words; ``None``: bad usage."""
    ids: list[str] = args.ids
    providers = agentspool.providers()
    if args.run_id is not None:
        if len(ids) > 1 or (ids and ids[0] not in providers):
            return None
        return (ids[0] if ids else None), args.run_id
    if len(ids) == 1:
        return None, ids[0]
    if len(ids) == 2 and ids[0] in providers:
        return ids[0], ids[1]
    return None


def _cmd_explain(args: argparse.Namespace) -> int:
    named = _explained_run(args)
    if named is None:
        providers = ", ".join(agentspool.providers())
        return _usage(
            f"explain: give a run id (explain RUN_ID), or a provider ({providers}) and its run id"
        )
    provider, run_id = named
    found = agentspool.explain(provider, run_id, args.runtime_dir, args.transcript)
    if args.json:
        _print_json(found)
        return EXIT_OK
    chat = found.chat
    task = agentspool.task_phrase(chat.task_state, chat.task_reason, declared=chat.task_declared)
    _say(
        f"{run_id} ({found.provider}): {agentspool.state_phrase(chat)} "
        f"(state {chat.state}; task {task})"
    )

    steps = found.steps
    ignored = sum(1 for s in steps if s.ignored)
    shown = steps[-args.last :] if args.last > 0 else []
    _say(f"events folded: {len(steps)} ({ignored} changed nothing); the last {len(shown)}:")
    for step in shown:
        event = step.event
        kind = type(event).__struct_config__.tag
        effect = f"ignored: {step.ignored}" if step.ignored else f"-> {_step_phrase(step)}"
        _say(f"  {_when(event.at)}  {event.source or '-':<28} {kind:<28} {effect}")
    _say("decided by:")
    for evidence in chat.evidence:
        _say(f"  {_when(evidence.at)}  {evidence.source:<28} {evidence.detail}".rstrip())
    version = chat.drift.cli_version or "not stated"
    _say(f"parse counters (CLI version {version}): {chat.drift.describe() or 'nothing unknown'}")
    _say(f"transcript: {chat.transcript_path or '(not located yet)'}")
    return EXIT_OK


def _step_phrase(step: Any) -> str:
    """A step's state in words (``state_phrase`` of its state and activity: a step does
    not carry the pending call, so an open prompt reads "approve a tool call")."""
    return agentspool.state_phrase(agentspool.Chat(state=step.state, activity=step.activity))


def _cmd_tidy(args: argparse.Namespace) -> int:
    report = agentspool.tidy(args.runtime_dir, dry_run=not args.yes, archive=args.archive)
    if args.json:
        _print_json(report)
        return EXIT_OK
    verbs = {"remove": "would remove" if report.dry_run else "removed", "keep": "keep"}
    for run in report.runs:
        verb = verbs.get(run.verdict, run.verdict)
        _say(f"{verb:<12} {run.run_id:<28} {run.why}")
    archived = f", archived in {args.archive}" if report.archived else ""
    if report.dry_run:
        more = "; agentspool tidy --yes removes them" if report.removed else ""
        _say(f"would remove {len(report.removed)} of {len(report.runs)} runs{more}")
    else:
        _say(f"removed {len(report.removed)} of {len(report.runs)} runs{archived}")
    return EXIT_OK


def _when(at: float) -> str:
    import time

    if not at:
        return "-" * 12
    return time.strftime("%H:%M:%S", time.localtime(at)) + f".{int(at * 1000) % 1000:03d}"


def _cmd_replay(args: argparse.Namespace) -> int:
    found = agentspool.replay(args.run_id, args.runtime_dir, archive=args.archive)
    if args.json:
        _print_json(found)
        return EXIT_OK
    where = "the archive" if found.archived else "the runtime dir"
    _say(
        f"{found.run_id} ({found.provider}), from {where}: {found.run_dir}; "
        f"{found.events} events folded, {len(found.transitions)} transitions"
    )
    if found.transcript_gone:
        _say(f"  (transcript gone: {found.transcript_gone}; spool and ledger only)")
    declared = False
    for t in found.transitions:
        declared = declared or t.event == "state.task_state"
        task = agentspool.task_phrase(t.task_state, t.task_reason, declared=declared)
        _say(
            f"  {_when(t.at)}  {t.channel:<8} {t.source:<28} {t.event:<28} "
            f"-> {_step_phrase(t)}; task {task}"
        )
    return EXIT_OK


def _cmd_show(args: argparse.Namespace) -> int:
    import os

    if not os.path.exists(args.session):
        # An id is looked up in the history store, which show_session brings up to date
        # first; here that (maybe long) first run gets the progress bar.
        _index_quietly(None)
    view = agentspool.show_session(args.session, include_inactive=args.include_inactive)
    if view.chat.drift:
        print(drift_warning(view.provider, view.session.session_id, view.chat), file=sys.stderr)
    try:
        if args.json:
            _print_json_by_item(view.detail)
        else:
            from agentspool.cli.show import print_view  # rich: only this command pays for it

            print_view(view, lines=args.lines, pager=args.pager)
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_gone()
    return EXIT_OK


def _stdout_gone() -> None:
    """The reader left (``show | head``): done, not an error. Nothing more may reach the
    closed pipe, not even the interpreter's flush at exit."""
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _cmd_lifecycle(args: argparse.Namespace) -> int:
    result = agentspool.declare(
        args.task_state,
        args.reason,
        run_id=args.run_id,
        runtime_dir=args.runtime_dir,
        force=args.force,
    )
    if args.json:
        _print_json(result)
    elif not result.changed:
        print(f"run {result.run_id}: already {result.task_state}; nothing recorded")
    else:
        why = f": {result.task_reason}" if result.task_reason else ""
        print(f"run {result.run_id}: {result.task_state}{why}")
    return EXIT_OK


def _cmd_install(args: argparse.Namespace) -> int:
    if args.scope == "project" and args.config_home is not None:
        return _usage("--config-home goes with --scope user; use --project DIR")
    if args.scope == "user" and args.project is not None:
        return _usage("--project goes with --scope project")
    directory = args.project if args.scope == "project" else args.config_home
    operation = agentspool.install if args.command == "install" else agentspool.uninstall
    report = operation(args.provider, args.scope, directory=directory)
    if args.json:
        _print_json({**_struct(report), "changed": report.changed})
        return EXIT_OK
    for done in report.files:
        kept = f" (the file as it was: {done.backup})" if done.backup else ""
        _say(f"{done.action}: {done.path}{kept}")
    return EXIT_OK


def _struct(value: Any) -> dict[str, Any]:
    import msgspec

    out: dict[str, Any] = msgspec.to_builtins(value)
    return out


def _usage(message: str) -> int:
    print(f"agentspool: {message}", file=sys.stderr)
    return EXIT_USAGE


def drift_warning(provider: str, run_id: str, chat: Chat) -> str:
    """One line: which CLI version wrote what this agentspool does not know (ADR 0014)."""
    version = chat.drift.cli_version or "version not stated"
    return (
        f"agentspool: warning: {run_id}: {provider} {version} wrote records this "
        f"agentspool does not know (state may be incomplete): {chat.drift.describe()}"
    )


def _cmd_watch(args: argparse.Namespace) -> int:
    follower = _watch_follower(args)
    try:
        return _watch(args, follower)
    finally:
        if follower.notifier is not None:
            follower.notifier.close()  # what is queued is sent before watch exits


def _watch_follower(args: argparse.Namespace) -> watch.Follower:
    from agentspool.cli import watch

    follower = watch.Follower(args.runtime_dir, args.provider, args.state, interval=args.interval)
    if args.notify:
        from agentspool.serve.notify import Notifier

        follower.notifier = Notifier(
            args.notify,
            kinds=args.notify_on,
            remind_after=None if args.remind_after is None else args.remind_after * 60,
        )
    return follower


def _watch(args: argparse.Namespace, follower: watch.Follower) -> int:
    from agentspool.cli import watch

    warning = install_warning()
    if args.json or args.once or args.duration is not None or not watch.stdout_is_terminal():
        if warning:
            print(warning, file=sys.stderr, flush=True)

        def write(line: bytes) -> None:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

        try:
            return watch.follow_lines(
                follower,
                once=args.once,
                duration=args.duration,
                bell=args.bell,
                on_wait=args.on_wait,
                write=write,
            )
        except BrokenPipeError:
            _stdout_gone()  # `watch | head -1`
            return EXIT_OK
    from agentspool.cli._watch_app import WatchApp  # Textual: only this command pays for it

    app = WatchApp(follower, bell=args.bell, on_wait=args.on_wait, warning=warning)
    app.run()
    if app.interrupted:
        import os
        import signal

        os.killpg(os.getpgrp(), signal.SIGINT)  # raises KeyboardInterrupt here: exit 130
    return EXIT_OK


def _wait_kinds(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in ("approval", "question", "turn")]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"not a list of approval, question, turn: {text!r}")
    return kinds


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"not a positive number: {text!r}")
    return value


DEMO_END_HOLD = 3.0  # seconds the view stays on the ended runs


def _demo_hold(speed: float) -> float:
    """Seconds the view stays on the ended runs: shorter when played faster, but never
    less than two of watch's full polls (a process's end is seen by those)."""
    return max(2.0, DEMO_END_HOLD / min(speed, 3.0))


def _leave_on(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _cmd_demo(args: argparse.Namespace) -> int:
    import signal

    # A closed terminal (SIGHUP) or a kill (SIGTERM) unwinds like Ctrl-C does, so the
    # replay still stops its agents and removes its temporary dir.
    signal.signal(signal.SIGHUP, _leave_on)
    signal.signal(signal.SIGTERM, _leave_on)
    with agentspool.DemoReplay(speed=args.speed) as demo:
        if args.no_view or args.json:
            _demo_transitions(demo, as_json=args.json)
        elif _has_command("watch"):
            _demo_with_watch(demo, args.speed)
        else:
            _demo_with_ls(demo, args.speed)
    return EXIT_OK


def _demo_transitions(demo: agentspool.DemoReplay, *, as_json: bool) -> None:
    """One line per state change of a run, read after each step the replay performs."""
    last: dict[str, str] = {}

    def on_step(step: agentspool.DemoStep) -> None:
        run = step.run
        chat = agentspool.read_chat(run.provider, run.run_id, demo.runtime_dir)
        waits = ""
        if chat.pending_approval is not None:
            waits = f"approve {chat.pending_approval.tool_name}"
        elif chat.pending_dialog is not None:
            waits = f"{chat.pending_dialog.kind}: {chat.pending_dialog.prompt}"
        shown = agentspool.state_phrase(chat)
        key = f"{chat.state}\0{waits}\0{shown}"
        if last.get(run.run_id) == key:
            return
        last[run.run_id] = key
        if as_json:
            _print_json(
                {
                    "provider": run.provider,
                    "run_id": run.run_id,
                    "state": chat.state,
                    "waits": waits,
                }
            )
        else:
            print(f"{run.provider:<12} {run.run_id:<28} {shown}".rstrip(), flush=True)

    demo.play(None, on_step)


def _has_command(name: str) -> bool:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return name in sub.choices


def _demo_with_watch(demo: agentspool.DemoReplay, speed: float) -> None:
    import os
    import subprocess

    view = subprocess.Popen(
        [sys.executable, "-m", "agentspool.cli.main", "watch", "--runtime-dir", demo.runtime_dir],
        env={**os.environ, **demo.environment},
    )
    try:
        demo.play()
        # The last step is a run's end: the view needs time to show it (play() returns at
        # once when no step is left, so it cannot be the wait).
        time.sleep(_demo_hold(speed))
    finally:
        view.terminate()
        try:
            view.wait(timeout=10)
        except subprocess.TimeoutExpired:
            view.kill()
            view.wait()


def _demo_with_ls(demo: agentspool.DemoReplay, speed: float) -> None:
    import time

    from agentspool.cli.render import print_runs

    def draw() -> None:
        runs = agentspool.list_runs(demo.runtime_dir, include_ended=True, sessions=False)
        sys.stdout.write(
            "\x1b[H\x1b[2Jagentspool demo: recorded sessions replayed through the real "
            "hooks (Ctrl-C stops)\n\n"
        )
        print_runs(runs, time.time(), terminal=sys.stdout.isatty())
        sys.stdout.flush()

    more = True
    while more:
        draw()
        more = demo.play(1.0)
    deadline = time.monotonic() + _demo_hold(speed)
    while time.monotonic() < deadline:
        draw()
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    draw()


_USAGE_KEY = {"day": "Date", "session": "Session", "model": "Model", "project": "Project"}


def _day(text: str) -> date:
    from datetime import date

    digits = text.replace("-", "") if len(text) == 10 else text
    try:
        if len(digits) != 8 or not digits.isdigit():
            raise ValueError
        return date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD or YYYYMMDD): {text!r}") from None


def _zone(text: str) -> str:
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise argparse.ArgumentTypeError(f"not an IANA time zone: {text!r}") from None
    return text


def _cost(row: UsageRow) -> str:
    if row.cost_usd is None:
        return "no price"
    cost = (
        f"${row.cost_usd:,.2f}"
        if row.cost_usd >= 0.01 or not row.cost_usd
        else f"${row.cost_usd:.4f}"
    )
    return cost + ("*" if row.unpriced_tokens else "")


def _cmd_usage(args: argparse.Namespace) -> int:
    if args.since and args.until and args.since > args.until:
        return _usage(f"--since {args.since} is after --until {args.until}: nothing between")
    from agentspool.cli import usage_kept

    watch = usage_kept.Watch(args.store or agentspool.default_store_path())
    kept = args.json and not args.prices
    if not args.no_index:
        watch.start()
        try:
            indexed = _index_quietly(args.store, usage_first=True)
        finally:
            watch.stop()
        kept = kept and not (indexed.busy or indexed.errors or indexed.tightened)
    report = agentspool.usage(
        by=args.by,
        since=args.since,
        until=args.until,
        providers=args.provider or None,
        timezone=args.timezone,
        prices=args.prices,
        store=args.store,
        index=False,
    )
    if args.json:
        import msgspec

        output = msgspec.json.encode(report) + b"\n"
        sys.stdout.buffer.write(output)
        if kept:
            usage_kept.keep(args.argv, output, watch)
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table

    # Not a terminal (a file, a pipe): as wide as the table needs, never wrapped at 80.
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 1000)
    if not report.rows:
        console.print("no usage recorded" + _usage_span(report))
        return EXIT_OK
    total = report.total
    table = _usage_table(report, Table, narrow=sys.stdout.isatty())
    console.print(table)
    notes = [
        f"prices as of {report.prices_taken}; days in {report.timezone} time" + _usage_span(report)
    ]
    if total.unpriced_tokens:
        notes.append(
            f"* leaves out {total.unpriced_tokens:,} tokens of models without a price: "
            + ", ".join(m or "(model not named)" for m in total.unpriced_models)
        )
    for note in notes:
        console.print(note, soft_wrap=True)
    return EXIT_OK


SESSION_MOST = 13
"""…and at most: past that the start is marked cut (…); ``--json`` has every id whole."""
SESSION_SHOWN = 8
"""Characters of a session id ``usage --by session`` shows at least (more while another
row's id starts the same): a start ``show`` takes."""


def _usage_table(report: UsageReport, table_class: Any, *, narrow: bool) -> Any:
    """The report as a rich table that fits 80 columns: every number and cost whole
    (as wide as its widest cell; ``narrow``, on a terminal: the cache headers on two
    lines; a model without its release date), a session by the start of its id (``show``
    takes it),
    the provider whole, the project cut with an ellipsis to what is left."""
    total = report.total
    names = [
        ("Input", "Input", "input_tokens"),
        ("Output", "Output", "output_tokens"),
        ("Cache read", "Cache\nread" if narrow else "Cache read", "cache_read_tokens"),
        ("Cache write", "Cache\nwrite" if narrow else "Cache write", "cache_write_tokens"),
        ("Total", "Total", "total_tokens"),
    ]

    import re

    ids = [row.key for row in report.rows]

    def key(row: UsageRow) -> str:
        shown = row.key or "(not named)"
        if report.by == "model" and narrow:
            return re.sub(r"-\d{8}$", "", shown)  # a release date: --json has it
        if report.by != "session" or not row.key:
            return shown
        size = SESSION_SHOWN  # the shortest start of the id no other row's shares
        while size < SESSION_MOST and any(
            other != shown and other.startswith(shown[:size]) for other in ids
        ):
            size += 1
        cut = size < len(shown) and any(o != shown and o.startswith(shown[:size]) for o in ids)
        return shown[:size] + ("…" if cut else "")

    rows = []
    for row in report.rows:
        cells = [key(row)]
        if report.by == "session":
            cells += [row.provider, row.project or "-"]
        elif report.by == "model":
            cells += [row.provider]
        cells += [f"{getattr(row, field):,}" for _, _, field in names]
        rows.append([*cells, _cost(row)])
    footer = ["Total"] + [""] * (len(rows[0]) - 7)
    footer += [f"{getattr(total, field):,}" for _, _, field in names] + [_cost(total)]
    widest = [max(len(r[i]) for r in [*rows, footer]) for i in range(len(footer))]
    at = len(widest) - len(names) - 1
    for i, (_, header, _) in enumerate(names, at):  # a header is never cut either
        widest[i] = max(widest[i], *map(len, header.split("\n")))
    widest[-1] = max(widest[-1], len("Cost"))
    table = table_class(show_footer=True, box=None, pad_edge=False, padding=(0, 1, 0, 0))
    if report.by == "session":
        table.add_column(_USAGE_KEY[report.by], footer="Total", no_wrap=True, min_width=widest[0])
    else:  # a model's or a project's name: cut with an ellipsis if it must be
        table.add_column(_USAGE_KEY[report.by], footer="Total", overflow="ellipsis", ratio=1)
    extra = {"session": ["Provider", "Project"], "model": ["Provider"]}.get(report.by, [])
    for i, name in enumerate(extra, 1):
        if name == "Project":
            table.add_column(name, overflow="ellipsis", ratio=1)
        else:
            table.add_column(name, no_wrap=True, min_width=widest[i])
    for i, (_, header, _) in enumerate(names, at):
        table.add_column(
            header, footer=footer[i], justify="right", no_wrap=True, min_width=widest[i]
        )
    table.add_column("Cost", footer=footer[-1], justify="right", no_wrap=True, min_width=widest[-1])
    for cells in rows:
        table.add_row(*cells)
    return table


def _usage_span(report: UsageReport) -> str:
    if report.since and report.until:
        return f"; {report.since} to {report.until}"
    if report.since or report.until:
        return f"; since {report.since}" if report.since else f"; until {report.until}"
    return ""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return value


# A run that is over sooner shows no progress bar, and does not import rich for one: its
# import (~130 ms) would be most of an incremental run's cost (ADR 0023).
BAR_AFTER = 0.5


def _index(
    store: str | None, *, forget_gone: bool = False, wait: bool = True, usage_first: bool = False
) -> agentspool.IndexReport:
    """``index_history`` with a progress bar on a terminal once it has run ``BAR_AFTER``
    seconds with bytes left to read (rich: only here, ADR 0023)."""
    if not sys.stderr.isatty():
        return agentspool.index_history(
            store, forget_gone=forget_gone, wait=wait, usage_first=usage_first
        )
    started = time.monotonic()
    bar: Any = None  # the rich Progress, once started
    task: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar, task
        if bar is None:
            if done >= total or time.monotonic() - started < BAR_AFTER:
                return
            bar, task = _progress_bar(total)
        bar.update(task, completed=done, total=total)

    try:
        return agentspool.index_history(
            store, progress=progress, forget_gone=forget_gone, wait=wait, usage_first=usage_first
        )
    finally:
        if bar is not None:
            bar.stop()


def _progress_bar(total: int) -> tuple[Any, Any]:
    """A started rich progress bar for ``total`` bytes, and its task."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    bar = Progress(
        TextColumn("indexing"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        # On stderr, the terminal the decision was made on: stdout may be `--json`'s file.
        console=Console(stderr=True),
        transient=True,
    )
    bar.start()
    return bar, bar.add_task("index", total=total)


def _index_summary(report: agentspool.IndexReport) -> str:
    gone = f", {report.gone} gone" + (
        f" ({report.forgotten} forgotten)" if report.forgotten else ""
    )
    failed = f", {report.failed} failed" if report.failed else ""
    moved = f"; {report.moved} of them moved" if report.moved else ""
    return (
        f"indexed {report.files} transcript files ({report.new} new, {report.appended} "
        f"appended, {report.rewritten} rewritten, {report.unchanged} unchanged{gone}{failed}"
        f"{moved}): "
        f"{report.records} records written, {report.bytes_read / 2**20:.1f} MB read in "
        f"{report.seconds:.1f} s"
    )


def _index_warnings(report: agentspool.IndexReport, store: str | None) -> None:
    if report.tightened:
        where = store or agentspool.default_store_path()
        print(
            f"agentspool: warning: history store {where} could be read by others "
            f"({report.tightened}); made private (0600, dir 0700)",
            file=sys.stderr,
        )
    for error in report.errors:
        print(f"agentspool: {one_line(error)}", file=sys.stderr)


def _cmd_index(args: argparse.Namespace) -> int:
    report = _index(args.store, forget_gone=args.forget_gone)
    _index_warnings(report, args.store)
    if args.json:
        _print_json(report)
    else:
        print(_index_summary(report))
    return EXIT_ERROR if report.failed else EXIT_OK


def _index_quietly(store: str | None, *, usage_first: bool = False) -> agentspool.IndexReport:
    """Bring the store up to date before reading it; another indexer at work: read it
    as it is. A file that could not be read is one line on stderr. ``usage_first``:
    only what ``usage`` reads (ADR 0043)."""
    report = _index(store, wait=False, usage_first=usage_first)
    _index_warnings(report, store)
    return report


_BOLD_ON, _BOLD_OFF = "\ue000", "\ue001"


def _cmd_search(args: argparse.Namespace) -> int:
    text = " ".join(args.words)
    if not text.strip(" *"):
        return _usage("search: give at least one word")
    if not args.no_index:
        _index_quietly(args.store)
    terminal = not args.json and sys.stdout.isatty()
    # Private-use stand-ins, turned into bold only after the snippet is made safe: the
    # snippet's own text can hold any escape sequence.
    marks = (_BOLD_ON, _BOLD_OFF) if terminal else ("«", "»")
    hits = agentspool.search_history(
        text, store=args.store, limit=args.limit, provider=args.provider, marks=marks
    )
    if args.json:
        _print_json(hits)
        return EXIT_OK
    if not hits:
        _say(f"agentspool: no record holds {text!r}", file=sys.stderr)
    for hit in hits:
        line = one_line(_hit_line(hit))
        print(line.replace(_BOLD_ON, "\x1b[1m").replace(_BOLD_OFF, "\x1b[22m"))
    return EXIT_OK


def _hit_line(hit: agentspool.SearchHit) -> str:
    import time
    from datetime import datetime

    try:
        at = datetime.fromisoformat(hit.timestamp).timestamp() if hit.timestamp else 0.0
    except ValueError:
        at = 0.0
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if at else "-" * 16
    session = hit.session
    who = session.session_id[:8] or "-"
    if session.agent_id:
        who += f"/{session.agent_id[:8]}"
    snippet = " ".join(hit.snippet.split())
    return f"{when}  {session.provider:<11} {who:<17} {hit.role:<9} {snippet}"


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"not a port (0 to 65535): {text!r}")
    return int(text)


def _cmd_serve(args: argparse.Namespace) -> int:
    # Starlette and uvicorn: only this command pays for them (ADR 0035).
    from agentspool.serve import security

    path = security.token_path()
    if args.token:
        print(security.make_token(path))
        return EXIT_OK
    if args.install_unit or args.uninstall_unit:
        from agentspool.serve import unit

        if args.uninstall_unit:
            where, removed = unit.uninstall_unit()
            print(f"removed: {where}" if removed else f"nothing to remove: {where}")
            return EXIT_OK
        where, changed = unit.install_unit(_serve_args(args))
        print(f"{'written' if changed else 'unchanged'}: {where}")
        print(
            "start it now and at every login: systemctl --user daemon-reload && "
            "systemctl --user enable --now agentspool-serve"
        )
        return EXIT_OK
    token = ""
    if args.host not in security.DEFAULT_HOSTS or args.require_token:
        token = security.required_token(path)  # refused here, before anything is bound
    from agentspool.serve import serve
    from agentspool.serve.app import ServeConfig

    config = ServeConfig(
        host=args.host,
        port=args.port,
        runtime_dir=args.runtime_dir,
        token=token,
        conversations=not args.no_conversations,
        cors_origins=args.cors_origin,
        event_window=args.event_window,
        interval=args.interval,
        metrics_max_runs=args.metrics_max_runs,
        otlp=args.otlp,
        notify=args.notify,
        notify_on=args.notify_on,
        remind_after=None if args.remind_after is None else args.remind_after * 60,
    )
    return serve(config)


def _serve_args(args: argparse.Namespace) -> list[str]:
    """The options of this ``serve`` command line, for the unit to start it with."""
    from agentspool.cli.watch import INTERVAL
    from agentspool.serve.hub import EVENT_WINDOW

    out = ["--host", args.host, "--port", str(args.port)]
    if args.runtime_dir is not None:
        import os

        out += ["--runtime-dir", os.path.abspath(args.runtime_dir)]
    if args.no_conversations:
        out.append("--no-conversations")
    if args.require_token:
        out.append("--require-token")
    for origin in args.cors_origin:
        out += ["--cors-origin", origin]
    if args.event_window != EVENT_WINDOW:
        out += ["--event-window", str(args.event_window)]
    if args.interval != INTERVAL:
        out += ["--interval", f"{args.interval:g}"]
    for url in args.notify:
        out += ["--notify", url]
    if args.notify and args.notify_on != ["approval", "question", "turn"]:
        out += ["--notify-on", ",".join(args.notify_on)]
    if args.remind_after is not None:
        out += ["--remind-after", f"{args.remind_after:g}"]
    if args.otlp is not None:
        out += ["--otlp", args.otlp] if args.otlp else ["--otlp"]
    if args.metrics_max_runs != 100:
        out += ["--metrics-max-runs", str(args.metrics_max_runs)]
    return out


def _cmd_untrust(args: argparse.Namespace) -> int:
    removed = agentspool.untrust(args.provider, args.config_home)
    if args.json:
        _print_json({"removed": removed})
    else:
        print("removed agentspool's trusted hooks" if removed else "nothing to remove")
    return EXIT_OK


def _suggest(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """A word that is no command gets a "did you mean" (argparse of Python 3.11 has
    none): a close command name, or for a provider's name the commands that take one."""
    import difflib

    word = next((a for a in argv if not a.startswith("-")), None)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if word is None or word in sub.choices or argv.index(word) != 0:
        return
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
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after the first "--" is the agent CLI's (``run``): argparse's own "--"
    # handling does not reach into a subcommand's positionals.
    passthrough: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1 :]
    parser = _parser()
    _suggest(parser, argv)
    args = parser.parse_args(argv)
    args.argv = argv
    if passthrough:
        if args.command == "search":
            args.words = [*args.words, *passthrough]
        elif args.command != "run":
            parser.error(f"{args.command} takes no arguments after --")
        else:
            args.cli_args = [*args.cli_args, *passthrough]
    try:
        code: int = args.func(args)
    except (AgentspoolError, OSError) as exc:
        _say(f"agentspool: {exc}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the one boundary: a bug is one line, not a traceback
        try:
            where = f"traceback in {_write_traceback(exc)}"
        except OSError as write_error:
            where = f"(the traceback could not be written: {write_error})"
        _say(f"agentspool: internal error {type(exc).__name__}: {exc}; {where}", file=sys.stderr)
        return EXIT_INTERNAL
    return code


if __name__ == "__main__":
    raise SystemExit(main())
