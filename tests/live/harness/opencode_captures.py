"""Saving a Tier-2 OpenCode run as a capture (``tests/live/captures/opencode/<scenario>/``),
and reading one back into a store and a spool for the hermetic tests.

A capture holds what the real CLI and the plugin wrote, decoded into reviewable JSON
lines: ``spool.jsonl`` (the plugin's records: event, wall time, pid, payload),
``log.jsonl`` (every row of OpenCode's ``event`` log: session, seq, type, data),
``rows.jsonl`` (the ``session``/``message``/``part`` rows at the end), ``server.jsonl``
(``GET /permission``, ``/question``, ``/session/status`` at each checkpoint, for a run
started with ``--port``), ``requests.jsonl`` (what the scripted server was asked) and
``notes.md`` (the checkpoints, with the state read and the screen).

``build_store``/``build_spool`` turn a capture back into a SQLite store shaped like
OpenCode's (``agentspool.adapters.opencode._kit.SCHEMA``) and a spool framed like the
plugin's, with the captured times.
"""

from __future__ import annotations

import binascii
import contextlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from agentspool.spool.layout import ensure_run_dir
from agentspool.spool.read import read_all


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=False) + "\n")


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _query(database: Path, sql: str) -> list[dict[str, Any]]:
    uri = f"file:{database}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=5)) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute(sql).fetchall()]


def _decoded(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        with contextlib.suppress(ValueError):
            return json.loads(value)
    return value


def save(run: Any, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    _jsonl(
        directory / "spool.jsonl",
        [
            {
                "event": r.event,
                "time": r.wall_ns / 1e9,
                "pid": r.agent_pid,
                "payload": json.loads(r.payload),
            }
            for r in read_all(run.run_dir)
        ],
    )
    database = run.home.database
    _jsonl(
        directory / "log.jsonl",
        [
            {
                "session": row["aggregate_id"],
                "seq": row["seq"],
                "type": row["type"],
                "data": json.loads(row["data"]),
            }
            for row in _query(database, "SELECT * FROM event ORDER BY aggregate_id, seq")
        ],
    )
    rows: list[dict[str, Any]] = []
    for table, order in (
        ("session", "time_created"),
        ("message", "time_created, id"),
        ("part", "message_id, id"),
    ):
        for row in _query(database, f"SELECT * FROM {table} ORDER BY {order}"):
            rows.append({"table": table, **{k: _decoded(v) for k, v in row.items()}})
    _jsonl(directory / "rows.jsonl", rows)
    if run.server_log:
        _jsonl(directory / "server.jsonl", run.server_log)
    _jsonl(
        directory / "requests.jsonl",
        [
            {
                "seq": r.seq,
                "kind": r.kind,
                "reply": r.reply_label,
                "completed": r.completed,
                "last_user_text": r.last_user_text()[:200],
                "tools": [t.get("function", {}).get("name") for t in r.body.get("tools", [])]
                if isinstance(r.body, dict)
                else [],
            }
            for r in run.srv.requests
        ],
    )
    start = run.screens[0][0] if run.screens else 0.0
    notes = [
        f"# {directory.name}",
        "",
        f"OpenCode {run.version} under tmux against harness/chat_server.py, armed by "
        '`agentspool.setup("opencode", …)`; recorded by tests/live/test_opencode_scenarios.py '
        "(README). Times are seconds since the first checkpoint.",
        "",
    ]
    for at, name, state, screen in run.screens:
        lines = [ln.rstrip() for ln in screen.splitlines() if ln.strip()]
        notes += [f"## +{at - start:.1f}s {name}: `{state}`", "", "```", *lines, "```", ""]
    (directory / "notes.md").write_text("\n".join(notes))


def build_store(capture: Path, database: Path, *, log: bool = True, until: float = 0.0) -> None:
    """OpenCode's store as the capture left it: its rows, and its log (``log=False``: a
    store without one, as a migrated store could be). ``until``: the log as it stood at
    that time (rows whose data carries a later time are left out, and so is everything
    after the first of them)."""
    from agentspool.adapters.opencode._kit import SCHEMA

    database.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(database)) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(SCHEMA)
        for row in _read_jsonl(capture / "rows.jsonl"):
            table = row.pop("table")
            values = {k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in row.items()}
            columns = ", ".join(f"`{k}`" for k in values)
            marks = ", ".join("?" for _ in values)
            conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(values.values()))
        rows = _read_jsonl(capture / "log.jsonl") if log else []
        # A row that names no time (a removal) was written with the next one that does.
        stamps = [_stamp(row["data"]) for row in rows]
        for i in range(len(stamps) - 2, -1, -1):
            stamps[i] = stamps[i] or stamps[i + 1]
        stopped: set[str] = set()
        for i, row in enumerate(rows):
            if until and (row["session"] in stopped or stamps[i] > until * 1000):
                stopped.add(row["session"])
                continue
            conn.execute(
                "INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, ?, ?)",
                (f"evt_{i:06d}", row["session"], row["seq"], row["type"], json.dumps(row["data"])),
            )
        # Each session's last `seq`, as OpenCode keeps it beside its log.
        conn.execute(
            "INSERT INTO event_sequence (aggregate_id, seq)"
            " SELECT aggregate_id, max(seq) FROM event GROUP BY aggregate_id"
        )
        conn.commit()


def _stamp(data: dict[str, Any]) -> int:
    """The newest time a log row's data names (ms); 0 when it names none."""
    found = [data.get("time")] if isinstance(data.get("time"), int) else []
    for inner in (data.get("info"), data.get("part")):
        if isinstance(inner, dict):
            times = inner.get("time")
            if isinstance(times, dict):
                found += [v for v in times.values() if isinstance(v, int)]
            state = inner.get("state")
            if isinstance(state, dict) and isinstance(state.get("time"), dict):
                found += [v for v in state["time"].values() if isinstance(v, int)]
    return max(found, default=0)


def capture_dirs() -> list[Path]:
    root = Path(__file__).resolve().parent.parent / "captures" / "opencode"
    return sorted(p for p in root.iterdir() if (p / "log.jsonl").exists())


def spool_times(capture: Path, event: str) -> list[float]:
    """When the plugin wrote each ``event`` record of the capture."""
    return [e["time"] for e in _read_jsonl(capture / "spool.jsonl") if e["event"] == event]


def frame(event: str, payload: bytes, wall: float, pid: int) -> bytes:
    """A spool record as the plugin frames it (docs/adr/0001), stamped ``wall``."""
    ns = int(wall * 1e9)
    header = f"AS1 {event} {ns} {ns} {pid} {pid} - {len(payload)} {len(payload)}".encode()
    crc = binascii.crc32(payload, binascii.crc32(header))
    return b"\x1e" + header + b" %08x\n" % crc + payload + b"\n"


def build_spool(
    capture: Path, runtime_dir: str, run_id: str, *, database: str = "", until: float = 0.0
) -> str:
    """The run's spool as the plugin wrote it (records up to ``until``, if given), with
    the ``start`` record naming ``database`` (the rebuilt store) and no process (pid 0:
    the captured process is long gone; liveness is not what a replay tests)."""
    run_dir = ensure_run_dir(runtime_dir, run_id)
    with open(os.path.join(run_dir, "events.spool"), "ab") as fh:
        for entry in _read_jsonl(capture / "spool.jsonl"):
            if until and entry["time"] > until:
                break
            payload = entry["payload"]
            if entry["event"] == "start":
                payload = {**payload, "pid": 0, "start": 0, "database": database}
            fh.write(frame(entry["event"], json.dumps(payload).encode(), entry["time"], 0))
    return run_dir
