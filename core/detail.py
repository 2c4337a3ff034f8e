"""``assemble_session_detail``: the one place a session view is built from canonical records.

Its input is one transcript identity's canonical ``Message`` stream, either fresh from an
adapter's full parse (``Chat.messages``) or read back from SQLite (``core/store.py``);
both give the same result, because nothing here checks the provider, parses message
text or consults anything but the records' own fields. Interpreting the provider
(duplicate raw events, ids, tool relationships, visibility) is the adapter's job, done
before a record reaches this module (docs/adr/0008-session-detail-and-store.md).

Input: one complete parse
    ``seq`` is the record's 1-based position in its transcript identity, so a complete
    parse holds exactly ``seq`` 1, 2, …, n in order. A delta (the records an incremental
    read appended) starts after 1, and would assemble a view that silently misses the
    calls its results answer, the usage already spent and the groups already opened:
    it is rejected with ``DeltaParseError``, as is any stream whose ``seq`` has a gap, a
    repeat or a step back. A caller that knows what it holds says so with
    ``Parse(messages, complete=...)``; ``complete=False`` is rejected whatever the seqs
    say. (A "delta" that starts at seq 1 is the full parse of the file so far.)

Visibility is applied first, and everything but ``usage`` is built from what it selects
    ``visible`` records are returned; ``inactive`` ones (the provider attests they were
    superseded) only with ``include_inactive=True``; ``hidden`` ones never. A withheld
    record never reaches the caller through a join, a group or a summary list; ``withheld``
    counts them. Adapters keep a call and its result at the same visibility.

Tool calls and their results (``tools``, ``orphan_results``)
    A ``tool_call`` record and the ``tool_result`` records are joined by ``tool_use_id``,
    whatever their order. Every selected call is one ``ToolInvocation``, in call order:

    - a call with a result: ``result`` is the first result (lowest ``seq``) for its id;
    - a call without a result: ``result is None`` (``is_open``). The records cannot tell
      a tool still running from one abandoned (a killed run, an interrupted turn); the
      composed ``Chat`` state says whether the turn is open, so no guess is made here;
    - a call with an empty ``tool_use_id`` cannot be joined: it stays open;
    - a call whose ``tool_use_id`` repeats an earlier call's is its own invocation, and
      the result joins the first call only.

    A ``tool_result`` that joins no call — no call with its id in the selected records,
    an empty id, or a second result for an id already answered — is an orphan: it stays
    in ``conversation`` (it is a record the provider wrote) and is listed in
    ``orphan_results``, never dropped and never attached to a guessed call.

Subagents (``subagents``)
    Records with a non-empty ``agent_id`` are grouped per agent, groups in order of first
    appearance, records in ``seq`` order. ``spawned_by`` is the ``parent_id`` of the
    group's first ``subagent``-kind record that names one (the link record a parent
    stream writes when it spawns the agent), ``""`` when the stream holds none (e.g. the
    subagent's own transcript read alone). ``conversation`` keeps every selected
    record, subagents' too.

Summaries (``summaries``)
    The selected ``summary`` and ``compaction`` records, in ``seq`` order.

Usage (``usage``)
    Recomputed from the records — every record, whatever its visibility, because a
    superseded or hidden exchange was still paid for (abandoned calls still count). A
    record's ``usage`` counts once per ``message_id``: the first record (lowest ``seq``)
    that carries usage for an id counts, later ones with the same id do not (a provider
    can repeat one API message's usage on each of its content blocks). A record with
    usage and an empty ``message_id`` counts on its own.

Counts (``counts``)
    Selected records per ``kind``; kinds with no record are absent.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from agentspool.core.seam import Message, Usage
from agentspool.spool.errors import DeltaParseError

__all__ = [
    "Parse",
    "SessionDetail",
    "SubagentGroup",
    "ToolInvocation",
    "assemble_session_detail",
]


class Parse(msgspec.Struct, kw_only=True):
    """Records together with what the caller knows of them: ``complete`` is ``True`` for
    an adapter's full read or a store load, ``False`` for what an incremental read
    appended (a delta, which ``assemble_session_detail`` rejects)."""

    messages: list[Message]
    complete: bool


class ToolInvocation(msgspec.Struct, kw_only=True):
    """One tool call and the result that answered it (``None`` while none has)."""

    tool_use_id: str
    call: Message
    result: Message | None = None
    is_error: bool = False
    """The result (or the call itself) says the tool failed or was denied."""
    presentation: str = ""
    """The call's presentation class (``Message.presentation``)."""
    agent_id: str = ""
    """The subagent that made the call; ``""`` for the main agent."""

    @property
    def is_open(self) -> bool:
        """No result in the records: still running, or abandoned (not told apart here)."""
        return self.result is None


class SubagentGroup(msgspec.Struct, kw_only=True):
    agent_id: str
    spawned_by: str = ""
    """The tool call that spawned the agent (its link record's ``parent_id``), or ``""``."""
    messages: list[Message] = []


class SessionDetail(msgspec.Struct, kw_only=True):
    """The assembled view of one transcript identity (module docstring: the rules)."""

    conversation: list[Message] = []
    tools: list[ToolInvocation] = []
    orphan_results: list[Message] = []
    subagents: list[SubagentGroup] = []
    summaries: list[Message] = []
    usage: Usage = msgspec.field(default_factory=Usage)
    counts: dict[str, int] = {}
    withheld: int = 0
    """Records not returned: hidden ones, and inactive ones unless asked for."""


def _complete_stream(records: Iterable[Message] | Parse) -> list[Message]:
    if isinstance(records, Parse):
        if not records.complete:
            raise DeltaParseError("the parse is marked incomplete (a delta)")
        messages = list(records.messages)
    else:
        messages = list(records)
    for position, message in enumerate(messages, 1):
        if message.seq != position:
            if position == 1:
                problem = f"it starts at seq {message.seq}, not 1 (a delta?)"
            else:
                problem = (
                    f"record {position} has seq {message.seq} after seq "
                    f"{messages[position - 2].seq} (a gap, repeat or step back)"
                )
            raise DeltaParseError(problem, seq=message.seq)
    return messages


def _usage(messages: list[Message]) -> Usage:
    total = Usage()
    counted: set[str] = set()
    for message in messages:
        if message.usage is None:
            continue
        if message.message_id:
            if message.message_id in counted:
                continue
            counted.add(message.message_id)
        total.add(message.usage)
    return total


def assemble_session_detail(
    records: Iterable[Message] | Parse, *, include_inactive: bool = False
) -> SessionDetail:
    """Build the session view from one complete parse (module docstring: the rules).

    Raises ``DeltaParseError`` for a delta or any stream that is not ``seq`` 1…n.
    """
    messages = _complete_stream(records)
    shown = ("visible", "inactive") if include_inactive else ("visible",)
    conversation = [m for m in messages if m.visibility in shown]

    results: dict[str, Message] = {}
    for message in conversation:
        if message.kind == "tool_result" and message.tool_use_id:
            results.setdefault(message.tool_use_id, message)
    tools: list[ToolInvocation] = []
    claimed: set[str] = set()
    for message in conversation:
        if message.kind != "tool_call":
            continue
        key = message.tool_use_id
        result = results.get(key) if key and key not in claimed else None
        if result is not None:
            claimed.add(key)
        tools.append(
            ToolInvocation(
                tool_use_id=key,
                call=message,
                result=result,
                is_error=message.is_error or (result is not None and result.is_error),
                presentation=message.presentation,
                agent_id=message.agent_id,
            )
        )
    joined = {id(t.result) for t in tools if t.result is not None}
    orphans = [m for m in conversation if m.kind == "tool_result" and id(m) not in joined]

    groups: dict[str, SubagentGroup] = {}
    for message in conversation:
        if not message.agent_id:
            continue
        group = groups.get(message.agent_id)
        if group is None:
            group = groups[message.agent_id] = SubagentGroup(agent_id=message.agent_id)
        group.messages.append(message)
        if message.kind == "subagent" and not group.spawned_by:
            group.spawned_by = message.parent_id

    counts: dict[str, int] = {}
    for message in conversation:
        counts[message.kind] = counts.get(message.kind, 0) + 1

    return SessionDetail(
        conversation=conversation,
        tools=tools,
        orphan_results=orphans,
        subagents=list(groups.values()),
        summaries=[m for m in conversation if m.kind in ("summary", "compaction")],
        usage=_usage(messages),
        counts=dict(sorted(counts.items())),
        withheld=len(messages) - len(conversation),
    )
