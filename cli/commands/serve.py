"""``agentspool serve``: one local read-only daemon — a JSON API, live events (SSE), a
page, /metrics (ADR 0035, 0036, 0041). Starlette and uvicorn are imported only when
serving: no other command pays for them."""

from __future__ import annotations

import argparse

from agentspool.cli import options

SERVE_PORT = 8765
"""``serve --port``'s default."""
METRICS_MAX_RUNS = 100
"""``serve --metrics-max-runs``'s default."""


def add_parser(sub: options.Subparsers) -> None:
    from agentspool.cli.watch import INTERVAL
    from agentspool.serve.hub import EVENT_WINDOW  # no Starlette: that is imported on serving

    p = options.command(
        sub,
        "serve",
        "one local read-only daemon: a JSON API, live events (SSE) and a web page",
        "Serve what ls, read, explain, replay, show, usage and search print with --json "
        "under /api/v1 (the same structs; OpenAPI at /api/v1/openapi.json), every state "
        "transition watch prints as Server-Sent Events at /api/v1/events (reconnecting "
        "with Last-Event-ID misses nothing within --event-window), and a page at /. "
        "Binds 127.0.0.1; any other --host than 127.0.0.1, ::1 or localhost needs the "
        "token (serve --token makes and prints it) on every request. Every endpoint is "
        "read-only. Runs until interrupted.",
        run=run,
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to bind (default: %(default)s; another than 127.0.0.1, ::1 or "
        "localhost needs the token)",
    )
    p.add_argument(
        "--port",
        type=options.port,
        default=SERVE_PORT,
        metavar="N",
        help="the port (default: %(default)s; 0: any free one, printed)",
    )
    options.runtime_dir_arg(p)
    options.flag(
        p,
        "--no-conversations",
        "serve states, usage and waits, never message text (titles, questions, "
        "commands, transcripts): for a shared screen",
    )
    options.flag(
        p,
        "--require-token",
        "need the token on loopback too (other users of this machine can reach it)",
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
        type=options.positive_int,
        default=EVENT_WINDOW,
        metavar="N",
        help="transitions kept for clients that reconnect (default: %(default)s)",
    )
    p.add_argument(
        "--interval",
        type=options.positive,
        default=INTERVAL,
        metavar="SECONDS",
        help=f"follow the runs as watch does, a tick every SECONDS (default {INTERVAL})",
    )
    options.notify_args(p)
    _export_args(p)
    _once_args(p)


def _export_args(p: argparse.ArgumentParser) -> None:
    """Where serve's metrics and transitions go besides its own endpoints."""
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
        type=options.positive_int,
        default=METRICS_MAX_RUNS,
        metavar="N",
        help="runs with their own series on /metrics at most, the longest waits first "
        "(default: %(default)s)",
    )


def _once_args(p: argparse.ArgumentParser) -> None:
    """What serve does once, and exits: the token, the systemd unit."""
    once = p.add_mutually_exclusive_group()
    options.flag(
        once, "--token", "print the token (made on first use, kept 0600 in the data dir) and exit"
    )
    options.flag(
        once,
        "--install-unit",
        "write a systemd user unit that starts serve at login, with these options, "
        "and exit ($XDG_CONFIG_HOME/systemd/user/agentspool-serve.service)",
    )
    options.flag(once, "--uninstall-unit", "remove that unit and exit")


def run(args: argparse.Namespace) -> int:
    # Starlette and uvicorn: only this command pays for them (ADR 0035).
    from agentspool.serve import security

    path = security.token_path()
    if args.token:
        print(security.make_token(path))
        return options.EXIT_OK
    if args.install_unit or args.uninstall_unit:
        from agentspool.serve import unit

        if args.uninstall_unit:
            where, removed = unit.uninstall_unit()
            print(f"removed: {where}" if removed else f"nothing to remove: {where}")
            return options.EXIT_OK
        where, changed = unit.install_unit(unit_args(args))
        print(f"{'written' if changed else 'unchanged'}: {where}")
        print(
            "start it now and at every login: systemctl --user daemon-reload && "
            "systemctl --user enable --now agentspool-serve"
        )
        return options.EXIT_OK
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


def unit_args(args: argparse.Namespace) -> list[str]:
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
    if args.notify and args.notify_on != list(options.WAIT_KINDS):
        out += ["--notify-on", ",".join(args.notify_on)]
    if args.remind_after is not None:
        out += ["--remind-after", f"{args.remind_after:g}"]
    if args.otlp is not None:
        out += ["--otlp", args.otlp] if args.otlp else ["--otlp"]
    if args.metrics_max_runs != METRICS_MAX_RUNS:
        out += ["--metrics-max-runs", str(args.metrics_max_runs)]
    return out
