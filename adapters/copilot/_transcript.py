"""GitHub Copilot CLI's ``events.jsonl`` → canonical records and events.

Facts: docs/providers/copilot.md §3. One JSON record a line, ``{type, data, id,
timestamp, parentId}``, each ``parentId`` the line before: a strict chain, nothing
superseded. The file is complete evidence of the turn on its own, so it owns the turn
whether or not hooks ran:

* ``user.message`` opens turn ``prompt-<n>`` (the n-th prompt of the file; the hooks
  name no turn, ``_signals``);
* a model call is ``assistant.turn_start`` … ``assistant.turn_end``; one whose
  ``assistant.message`` asked for no tool was the last of the turn: its ``turn_end``
  completes the turn. ``abort`` (Esc, at a prompt or mid-stream) interrupts it — and
  closes the calls it left open: an aborted call gets no ``tool.execution_complete``;
* ``permission.requested`` without its ``permission.completed`` is an open approval
  (written with or without hooks, and also in ``-p``, where it is completed,
  ``unattended_fallback``, a few ms later); ``tool.execution_start`` of ``ask_user``
  without its ``tool.execution_complete`` is an open question form;
* ``session.shutdown`` (``/exit``, and the old session at ``/clear``) ends the session.

Usage: one ``session.usage_record`` per model call, before that call's
``assistant.message``. ``inputTokens`` already holds the cached tokens (120 prompt
tokens, 64 of them cached, read ``inputTokens: 120, cacheReadTokens: 64``), so it is
the folded input as it stands; the session's own sums (``session.shutdown``'s
``modelMetrics``) equal the records' (tests/adapters/copilot/).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from agentspool.adapters.common.calls import call_input, tool_call, tool_wait
from agentspool.adapters.common.lines import LineParser
from agentspool.adapters.common.resume import RecordLog, SavedParse, load_state
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.adapters.common.tokens import count_at
from agentspool.adapters.copilot._schema import EVENT_FIELDS
from agentspool.core import events as ev
from agentspool.core.seam import DialogOption, Message, PendingDialog, TranscriptFacts, Usage

QUESTION_TOOL = "ask_user"
SHELL_TOOL = "bash"
_PRESENTATION = {
    "bash": "shell",
    "read_bash": "shell",
    "stop_bash": "shell",
    "create": "edit",
    "edit": "edit",
    "view": "read",
    "grep": "search",
    "glob": "search",
    "task": "agent",
    "ask_user": "question",
}
_IGNORED = frozenset(
    {
        "session.model_change",
        "system.message",
        "hook.start",
        "hook.end",
        "human_response.recorded",
    }
)


class Record(msgspec.Struct, gc=False):
    type: str = ""
    data: dict[str, Any] = {}
    id: str = ""
    timestamp: str = ""


_decode = msgspec.json.Decoder(Record).decode


def presentation(name: str) -> str:
    return _PRESENTATION.get(name, "mcp" if "-" in name else "other")


def dialog_for(tool_use_id: str, arguments: dict[str, Any]) -> PendingDialog:
    """``ask_user``'s form: a message and a JSON schema whose enums are the choices."""
    schema = arguments.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    options = []
    for prop in properties.values() if isinstance(properties, dict) else ():
        choices = prop.get("enum") if isinstance(prop, dict) else None
        options += [DialogOption(label=str(c)) for c in choices or () if isinstance(c, str)]
    return PendingDialog(
        kind="question",
        tool_use_id=tool_use_id,
        prompt=str(arguments.get("message", "")),
        options=options,
    )


def usage_of(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=count_at(raw, "inputTokens"),
        output_tokens=count_at(raw, "outputTokens"),
        cached_input_tokens=count_at(raw, "cacheReadTokens"),
        cache_write_tokens=count_at(raw, "cacheWriteTokens"),
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class EventsParser(LineParser, RecordLog):
    """Parse state for one ``events.jsonl``: ``feed`` blocks of complete lines in order."""

    def __init__(self) -> None:
        LineParser.__init__(self, EVENT_FIELDS)
        RecordLog.__init__(self)  # the records a history parse takes out as it goes
        self.title = ""
        self._prompts = 0
        self._turn = ""
        self._final = False
        """The current model call's ``assistant.message`` asked for no tool."""
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}
        """Open call id → its tool and arguments."""
        self._usage: tuple[Usage, str] | None = None
        """The latest model call's usage and model, until its message carries it."""

    def feed_line(self, raw: bytes) -> None:
        record = self._decoded(_decode, raw)
        if record is not None:
            self._check(record, raw)
            self._record(record)

    def _check(self, record: Record, raw: bytes) -> None:
        if "record" not in self.drift.checked:
            self.drift.see("record", raw)
        shape = record.type
        if self.drift.reads(shape, EVENT_FIELDS) and shape not in self.drift.checked:
            self.drift.check(shape, record.data)

    def _event(self, event: Callable[..., ev.Event], at: float, source: str, **fields: Any) -> None:
        """One event of the record read at ``at`` (``source`` names it), of the session:
        ``event`` is its class, or a builder of it (``tool_wait``)."""
        self.events.append(event(epoch=self.session_id, at=at, source=source, **fields))

    def _record(self, record: Record) -> None:
        data, at, kind = record.data, epoch_seconds(record.timestamp), record.type
        source = f"transcript:{kind}"
        if kind == "session.start":
            self.session_id = self.session_id or _text(data.get("sessionId"))
            self.cli_version = _text(data.get("copilotVersion"))
            context = data.get("context")
            self.cwd = _text(context.get("cwd")) if isinstance(context, dict) else ""
            self._event(ev.SessionStarted, at, source, how="startup")
        elif kind == "user.message":
            self._prompts += 1
            self._turn, self._final = f"prompt-{self._prompts}", False
            text = _text(data.get("content"))
            self.title = self.title or text.strip().split("\n", 1)[0][:80]
            self._add(Message(id=record.id, kind="text", role="user", text=text), record)
            self._event(ev.TurnStarted, at, source, turn_id=self._turn)
        elif kind == "assistant.turn_start":
            self._final = False
        elif kind == "session.usage_record":
            usage = usage_of(data.get("usage"))
            if usage is not None:
                self.usage.add(usage)
                model = data["usage"].get("model")
                self._usage = (usage, model if isinstance(model, str) else "")
        elif kind == "assistant.message":
            self._assistant(record)
        elif kind == "tool.execution_start":
            self._tool_started(record, at, source)
        elif kind == "tool.execution_complete":
            self._tool_finished(record, at, source)
        elif kind == "permission.requested":
            request = data.get("permissionRequest")
            call_id = _text(request.get("toolCallId")) if isinstance(request, dict) else ""
            name, arguments = self._calls.get(call_id, ("", {}))
            self._event(
                ev.InputRequested,
                at,
                source,
                turn_id=self._turn,
                kind="approval",
                tool_use_id=call_id,
                tool_name=name,
                tool_input=arguments,
            )
        elif kind == "permission.completed":
            self._event(ev.InputResolved, at, source, tool_use_id=_text(data.get("toolCallId")))
        elif kind == "assistant.turn_end":
            if self._final and self._turn:
                self._event(ev.TurnStopped, at, source, turn_id=self._turn)
        elif kind == "abort":
            self._abort(record, at, source)
        elif kind == "session.shutdown":
            self._calls.clear()
            self._event(ev.SessionEnded, at, source, reason=_text(data.get("shutdownType")))

    def _add(self, message: Message, record: Record) -> None:
        message.seq = self.count + 1
        message.timestamp = record.timestamp
        self.messages.append(message)

    def _assistant(self, record: Record) -> None:
        data = record.data
        requests = [r for r in data.get("toolRequests") or () if isinstance(r, dict)]
        self._final = not requests
        made: list[Message] = []
        text = _text(data.get("content"))
        if text:
            made.append(Message(id=record.id, kind="text", role="assistant", text=text))
        for request in requests:
            call_id, name = _text(request.get("toolCallId")), _text(request.get("name"))
            message_id = call_id or f"{record.id}:{len(made)}"
            arguments = request.get("arguments")
            made.append(tool_call(message_id, call_id, name, arguments, presentation(name)))
        if not made:  # a call that produced nothing: its usage still counts (on a record)
            made.append(Message(id=record.id, kind="text", role="assistant", is_meta=True))
        if self._usage is not None:
            usage, model = self._usage
            self._usage = None
            made[0].usage, made[0].model = usage, model or _text(data.get("model"))
            made[0].message_id = _text(data.get("apiCallId")) or _text(data.get("messageId"))
        for message in made:
            self._add(message, record)

    def _tool_started(self, record: Record, at: float, source: str) -> None:
        data = record.data
        call_id, name = _text(data.get("toolCallId")), _text(data.get("toolName"))
        arguments = call_input(data.get("arguments"))
        self._calls[call_id] = (name, arguments)
        turn = self._turn
        self._event(ev.ToolStarted, at, source, turn_id=turn, tool_use_id=call_id, tool_name=name)
        if name == QUESTION_TOOL:
            self._event(
                tool_wait,
                at,
                source,
                turn_id=turn,
                call_id=call_id,
                name=name,
                arguments=arguments,
                form=dialog_for,
            )

    def _tool_finished(self, record: Record, at: float, source: str) -> None:
        data = record.data
        call_id = _text(data.get("toolCallId"))
        name, _ = self._calls.pop(call_id, ("", {}))
        result, error = data.get("result"), data.get("error")
        if isinstance(result, dict):
            text = _text(result.get("content"))
        else:
            text = _text(error.get("message")) if isinstance(error, dict) else ""
        self._add(
            Message(
                id=f"{call_id}:result",
                kind="tool_result",
                role="tool",
                text=text,
                tool_name=name,
                tool_use_id=call_id,
                is_error=data.get("success") is False,
            ),
            record,
        )
        self._event(ev.ToolFinished, at, source, turn_id=self._turn, tool_use_id=call_id)
        if name == QUESTION_TOOL:  # a hook's form (no call id) may stand for it
            self._event(ev.InputResolved, at, source, tool_use_id=call_id)

    def _abort(self, record: Record, at: float, source: str) -> None:
        reason = _text(record.data.get("reason"))
        for call_id in list(self._calls):
            self._event(ev.ToolFinished, at, source, turn_id=self._turn, tool_use_id=call_id)
        self._calls.clear()
        self._add(
            Message(id=record.id, kind="interrupt", role="system", text=reason or "aborted"),
            record,
        )
        if self._turn:
            self._event(ev.TurnStopped, at, source, turn_id=self._turn, outcome="interrupted")


RESUME_VERSION = 1
"""Bump when the parse state below, or what the parser makes of a record, changes: a
state of another version makes the file be parsed again from its first byte."""


class ResumeState(SavedParse, msgspec.Struct, gc=False):
    """What ``HistoryParser`` needs to go on from an offset: the parser's fields that
    shape a later record."""

    session_id: str = ""
    title: str = ""
    prompts: int = 0
    final: bool = False
    calls: dict[str, str] = {}
    """Open call id → its tool (a result names its tool)."""
    pending_usage: Usage | None = None
    """The latest model call's usage, until its ``assistant.message`` carries it."""
    pending_model: str = ""


_decode_state = msgspec.json.Decoder(ResumeState).decode


class HistoryParser(EventsParser):
    """``EventsParser`` for the history index: records are taken out as they are parsed
    (``take``), and the parse state round-trips through ``state``/``resumed``. Events
    are let go at each ``take``: the index reads records, not state."""

    def take(self) -> list[Message]:
        self.events.clear()
        return super().take()

    def facts(self) -> TranscriptFacts:
        return TranscriptFacts(
            session_id=self.session_id, cwd=self.cwd, cli_version=self.cli_version, title=self.title
        )

    def state(self) -> bytes:
        usage, model = self._usage or (None, "")
        saved = ResumeState(
            version=RESUME_VERSION,
            count=self.count,
            cli_version=self.cli_version,
            cwd=self.cwd,
            turn=self._turn,
            session_id=self.session_id,
            title=self.title,
            prompts=self._prompts,
            final=self._final,
            calls={call: name for call, (name, _) in self._calls.items()},
            pending_usage=usage,
            pending_model=model,
        )
        return msgspec.json.encode(saved)

    @classmethod
    def resumed(cls, state: bytes) -> HistoryParser | None:
        """A parser that goes on where ``state`` was taken; ``None`` if it cannot."""
        saved = load_state(state, _decode_state, RESUME_VERSION)
        if saved is None:
            return None
        parser = cls()
        parser._base = saved.count
        parser.cli_version, parser.cwd, parser._turn = saved.cli_version, saved.cwd, saved.turn
        parser.session_id, parser.title = saved.session_id, saved.title
        parser._prompts, parser._final = saved.prompts, saved.final
        parser._calls = {call: (name, {}) for call, name in saved.calls.items()}
        if saved.pending_usage is not None:
            parser._usage = (saved.pending_usage, saved.pending_model)
        return parser
