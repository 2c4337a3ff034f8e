"""A session read whole: its own records, then its subagents' from their own files
(``read_session_with_subagents``, core/seam.py; ADR 0027), and reading a file's head.

The CLIs keep a subagent's conversation in a file of its own (Claude Code under
``<session>/subagents/``, Codex as another rollout). Each file is parsed as its own
transcript identity (``seq`` 1…n, every record carrying the subagent's ``agent_id``);
``with_subagents`` appends them after the session's own records as one stream, ``seq``
renumbered over the whole. The records keep their fields otherwise, and the adapter's
cached parses are not touched: a record that moves gets a copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from agentspool.core.seam import Chat, Message
from agentspool.spool.files import open_regular

HEAD_BYTES = 4 << 20
"""How far into a file ``head_lines`` looks: past the bookkeeping records a transcript
can open with (prompt snapshots of a few hundred KB), never through a long session."""


def with_subagents(chat: Chat, subagents: Iterable[tuple[Message | None, Chat]]) -> Chat:
    """``chat`` whose messages are its own, then each subagent's in the order given,
    each subagent's preceded by its ``link`` record when the adapter made one (``None``:
    the session's own stream holds it). ``usage`` is the sum of every read's."""
    merged = list(chat.messages)
    usage = msgspec.structs.replace(chat.usage)
    for link, child in subagents:
        for record in (*([link] if link is not None else []), *child.messages):
            merged.append(msgspec.structs.replace(record, seq=len(merged) + 1))
        usage.add(child.usage)
    return msgspec.structs.replace(chat, messages=merged, usage=usage)


def link_record(agent_id: str, tool_use_id: str, *, text: str = "", timestamp: str = "") -> Message:
    """The record that says which tool call spawned ``agent_id`` (its ``parent_id``), as
    a parent stream writes it when the CLI records the spawn there (Codex does)."""
    return Message(
        id=f"subagent:{agent_id}",
        kind="subagent",
        role="system",
        text=text,
        timestamp=timestamp,
        tool_use_id=tool_use_id,
        parent_id=tool_use_id,
        agent_id=agent_id,
        presentation="agent",
    )


def head_lines(path: str) -> Iterator[bytes]:
    """The file's first lines, while they fit in ``HEAD_BYTES``; nothing when the file
    cannot be read. A generator: a caller that found what it looked for reads no more."""
    budget = HEAD_BYTES
    try:
        with open_regular(path) as fh:
            for line in fh:
                budget -= len(line)
                if budget < 0:
                    return
                yield line
    except OSError:
        return
