"""Conformance kit for the OpenCode adapter: a SQLite store shaped as OpenCode 1.18.33
writes it (its tables, WAL mode, the session log beside the rows; compare
tests/live/captures/opencode/), and plugin records as the spool plugin writes them.

A turn is written row by row, as OpenCode writes it: each change is one transaction
holding the log row and the row it describes (``append_turn_in_steps`` pauses after
each), so a reader can meet the store between any two of them.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from typing import Any

from agentspool.adapters.common.kits import spool_hooks
from agentspool.adapters.opencode import _store
from agentspool.core.seam import TranscriptFile

SESSION = "ses_kit0000000000000000000000"
DIRECTORY = "/work"
VERSION = "1.18.33"

# The tables the adapter reads, as 1.18.33 creates them (`sqlite_master` of a real store).
SCHEMA = """
CREATE TABLE `session` (
  `id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text,
  `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text NOT NULL,
  `version` text NOT NULL, `share_url` text, `summary_additions` integer,
  `summary_deletions` integer, `summary_files` integer, `summary_diffs` text, `metadata` text,
  `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL,
  `tokens_output` integer DEFAULT 0 NOT NULL, `tokens_reasoning` integer DEFAULT 0 NOT NULL,
  `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL,
  `revert` text, `permission` text, `agent` text, `model` text,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_compacting` integer,
  `time_archived` integer);
CREATE TABLE `message` (
  `id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE TABLE `part` (
  `id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
CREATE TABLE `event_sequence` (
  `aggregate_id` text PRIMARY KEY, `seq` integer NOT NULL, `owner_id` text);
CREATE TABLE `event` (
  `id` text PRIMARY KEY, `aggregate_id` text NOT NULL, `seq` integer NOT NULL,
  `type` text NOT NULL, `data` text NOT NULL);
CREATE UNIQUE INDEX `event_aggregate_seq_idx` ON `event` (`aggregate_id`,`seq`);
"""

TOKENS = {
    "total": 132,
    "input": 56,
    "output": 12,
    "reasoning": 0,
    "cache": {"write": 0, "read": 64},
}


Change = tuple[str, dict[str, Any]]
"""One change to the store: the session log's event type, its body."""


def _message(info: dict[str, Any]) -> Change:
    return "message.updated.1", {"sessionID": SESSION, "info": info}


class Kit:
    def __init__(self) -> None:
        self._clock = int(time.time() * 1000) - 600_000
        self._ids = itertools.count(1)

    def _now(self) -> int:
        self._clock += 250
        return self._clock

    def _id(self, prefix: str) -> str:
        # Time-sortable like OpenCode's own ids: later ids sort after earlier ones.
        return f"{prefix}_{next(self._ids):012d}kit"

    def _write(self, database: str, kind: str, body: dict[str, Any]) -> None:
        """One change as OpenCode makes it: the log row and the row it describes."""
        with closing(sqlite3.connect(database)) as conn, conn:
            seq = conn.execute(
                "SELECT seq FROM event_sequence WHERE aggregate_id = ?", (SESSION,)
            ).fetchone()
            seq = 0 if seq is None else seq[0] + 1
            conn.execute(
                "INSERT INTO event_sequence (aggregate_id, seq) VALUES (?, ?)"
                " ON CONFLICT(aggregate_id) DO UPDATE SET seq = excluded.seq",
                (SESSION, seq),
            )
            conn.execute(
                "INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, ?, ?)",
                (self._id("evt"), SESSION, seq, kind, json.dumps(body)),
            )
            now = self._clock
            if kind == "message.updated.1":
                info = dict(body["info"])
                mid = info.pop("id")
                info.pop("sessionID")
                conn.execute(
                    "INSERT INTO message (id, session_id, time_created, time_updated, data)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
                    " time_updated = excluded.time_updated, data = excluded.data",
                    (mid, SESSION, now, now, json.dumps(info)),
                )
            elif kind == "message.part.updated.1":
                part = dict(body["part"])
                pid, mid = part.pop("id"), part.pop("messageID")
                part.pop("sessionID")
                conn.execute(
                    "INSERT INTO part (id, message_id, session_id, time_created, time_updated,"
                    " data) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
                    " time_updated = excluded.time_updated, data = excluded.data",
                    (pid, mid, SESSION, now, now, json.dumps(part)),
                )

    def transcript(self, directory: str, turns: int) -> str:
        database = os.path.join(directory, "opencode", "opencode.db")
        os.makedirs(os.path.dirname(database), exist_ok=True)
        with closing(sqlite3.connect(database)) as conn:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(SCHEMA)
            now = self._now()
            conn.execute(
                "INSERT INTO session (id, project_id, slug, directory, title, version, agent,"
                " model, time_created, time_updated) VALUES (?, 'global', 'kit-session', ?,"
                " 'Kit session', ?, 'build', ?, ?, ?)",
                (SESSION, DIRECTORY, VERSION, '{"id":"mock-model","providerID":"mock"}', now, now),
            )
            conn.commit()
        info = {
            "id": SESSION,
            "slug": "kit-session",
            "version": VERSION,
            "projectID": "global",
            "directory": DIRECTORY,
            "path": "",
            "title": "Kit session",
            "agent": "build",
            "model": {"id": "mock-model", "providerID": "mock"},
            "cost": 0,
            "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            "time": {"created": now, "updated": now},
        }
        self._write(database, "session.created.1", {"sessionID": SESSION, "info": info})
        path = _store.join(database, SESSION)
        for _ in range(turns):
            self.append_turn(path)
        return path

    def transcript_file(self, path: str) -> TranscriptFile:
        """How the history index lists a session: kept in the database and its log."""
        database, _ = _store.split(path)
        return TranscriptFile(path=path, within=(database, database + "-wal"))

    def append_turn(self, path: str) -> bytes:
        for _ in self.append_turn_in_steps(path):
            pass
        return b""

    def append_turn_in_steps(self, path: str) -> Iterator[None]:
        """One turn, change by change, as captures/opencode/ show them: the prompt, an
        assistant step running ``bash`` (pending, running, completed) that finishes with
        ``tool-calls``, a second step answering in text that finishes with ``stop``."""
        database, _ = _store.split(path)
        user, first, second = self._id("msg"), self._id("msg"), self._id("msg")
        call = f"call_{next(self._ids)}"
        tool_part = self._id("prt")
        text_part = self._id("prt")
        for kind, body in self._tool_step(user, first, call, tool_part):
            self._write(database, kind, body)
            yield
        for kind, body in self._text_step(user, second, text_part):
            self._write(database, kind, body)
            yield

    def _part(self, body: dict[str, Any]) -> Change:
        body = {**body, "sessionID": SESSION}
        return "message.part.updated.1", {"sessionID": SESSION, "part": body, "time": self._now()}

    def _assistant(self, user: str, mid: str, created: int, **done: Any) -> Change:
        info = {
            "id": mid,
            "sessionID": SESSION,
            "role": "assistant",
            "time": {"created": created, **({"completed": self._now()} if done else {})},
            "parentID": user,
            "modelID": "mock-model",
            "providerID": "mock",
            "mode": "build",
            "agent": "build",
            "path": {"cwd": DIRECTORY, "root": DIRECTORY},
            "cost": 0,
            "tokens": TOKENS if done else {**TOKENS, "total": 0, "input": 0, "output": 0},
            **done,
        }
        return _message(info)

    def _tool_step(self, user: str, first: str, call: str, tool_part: str) -> list[Change]:
        """The prompt, and the step running ``bash``: pending, running, completed."""
        asked = self._now()
        bash = {"command": "echo hi", "description": "Runs echo hi"}
        first_at = self._now()
        tool = {"id": tool_part, "messageID": first, "type": "tool", "tool": "bash", "callID": call}
        return [
            _message(
                {
                    "id": user,
                    "sessionID": SESSION,
                    "role": "user",
                    "time": {"created": asked},
                    "agent": "build",
                    "model": {"providerID": "mock", "modelID": "mock-model"},
                }
            ),
            self._part(
                {"id": self._id("prt"), "messageID": user, "type": "text", "text": "say hi"}
            ),
            self._assistant(user, first, first_at),
            self._part({"id": self._id("prt"), "messageID": first, "type": "step-start"}),
            self._part({**tool, "state": {"status": "pending", "input": {}, "raw": ""}}),
            self._part(
                {
                    **tool,
                    "state": {"status": "running", "input": bash, "time": {"start": self._now()}},
                }
            ),
            self._part(
                {
                    **tool,
                    "state": {
                        "status": "completed",
                        "input": bash,
                        "output": "hi\n",
                        "metadata": {"output": "hi\n", "exit": 0, "truncated": False},
                        "title": "echo hi",
                        "time": {"start": self._clock, "end": self._now()},
                    },
                }
            ),
            self._step_finish(first, "tool-calls"),
            self._assistant(user, first, first_at, finish="tool-calls"),
        ]

    def _text_step(self, user: str, second: str, text_part: str) -> list[Change]:
        """The step answering in text: the text part as it streams, then whole."""
        second_at = self._now()
        text = {"id": text_part, "messageID": second, "type": "text"}
        return [
            self._assistant(user, second, second_at),
            self._part({"id": self._id("prt"), "messageID": second, "type": "step-start"}),
            self._part({**text, "text": "", "time": {"start": self._now()}}),
            self._part({**text, "text": "hi", "time": {"start": self._clock, "end": self._now()}}),
            self._step_finish(second, "stop"),
            self._assistant(user, second, second_at, finish="stop"),
        ]

    def _step_finish(self, mid: str, reason: str) -> Change:
        return self._part(
            {
                "id": self._id("prt"),
                "messageID": mid,
                "type": "step-finish",
                "reason": reason,
                "tokens": TOKENS,
                "cost": 0,
            }
        )

    def open_prompt(self, runtime_dir: str, run_id: str, transcript_path: str) -> None:
        """The plugin's records of a permission prompt opening in the kit's session."""
        database, _ = _store.split(transcript_path)
        records: list[tuple[str, dict[str, Any]]] = [
            (
                "start",
                {
                    "pid": 0,
                    "start": 0,
                    "directory": DIRECTORY,
                    "worktree": DIRECTORY,
                    "serverUrl": "http://localhost:4096/",
                    "database": database,
                },
            ),
            ("session_status", {"sessionID": SESSION, "status": {"type": "busy"}}),
            (
                "permission_asked",
                {
                    "id": "per_kit",
                    "sessionID": SESSION,
                    "permission": "bash",
                    "patterns": ["touch approved.txt"],
                    "metadata": {"command": "touch approved.txt"},
                    "always": ["touch *"],
                    "tool": {"messageID": "msg_kit_open", "callID": "call_kit"},
                },
            ),
        ]
        spool_hooks(runtime_dir, run_id, records)
