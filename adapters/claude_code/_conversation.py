"""Claude Code's conversation records: a user record (a prompt, tool results, an
interrupt, a compaction's summary, a local command's output), an assistant record (its
content blocks: text, thinking, tool calls; the response's usage), ``progress`` and
``system`` records (docs/providers/claude-code.md §4).
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentspool.adapters.claude_code._records import (
    DECODE_ERRORS,
    DIALOG_TOOLS,
    FORMS,
    INTERRUPT_PREFIX,
    SPAWNS_KEPT,
    TASK_ID,
    TASK_NOTIFICATION,
    ApiMessage,
    AsyncLaunch,
    Block,
    Line,
    decode_launch,
    digest,
    error_text,
    presentation,
    text_of,
)
from agentspool.adapters.claude_code._state import TranscriptState
from agentspool.adapters.common.calls import tool_call, tool_wait
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.core import events as ev
from agentspool.core.seam import Message, MessageKind, Usage, Visibility


class ConversationRecords(TranscriptState):
    """The handlers of conversation records."""

    def _user(self, line: Line) -> None:
        msg = line.message
        if msg is None:
            return
        uid = self._uid(line)
        if isinstance(msg.content, list):
            text = self._tool_results(line, msg.content, uid)
        else:
            text = msg.content or ""
        if not text:
            return
        at = epoch_seconds(line.timestamp)
        if text.startswith(INTERRUPT_PREFIX):
            self._interrupted(line, uid, text, at)
            return
        if text.startswith(TASK_NOTIFICATION) and not self._inline:
            # A background agent reported back (it stopped): its work is over.
            for task_id in TASK_ID.findall(text):
                self.background.pop(task_id, None)
                self.events.append(
                    ev.BackgroundFinished(
                        task_id=task_id, at=at, source="transcript:task-notification"
                    )
                )
        if line.is_compact_summary:
            self._from_user(line, uid, "summary", text)
            return
        self._said(line, uid, text, at)

    def _tool_results(self, line: Line, content: list[Block], uid: str) -> str:
        """A user record's content blocks: each tool result a record of its own (its
        call finished); the text blocks' text, joined, returned."""
        at = epoch_seconds(line.timestamp)
        stamp = line.timestamp or ""
        texts: list[str] = []
        for i, block in enumerate(content):
            if block.type == "tool_result":
                tool_use_id = block.tool_use_id or ""
                name = self.open_tools.pop(tool_use_id, ("", {}))[0]
                if name in ("Agent", "Task") and not self._inline:
                    self._launched(line.tool_use_result)
                result = block.content
                self.messages.append(
                    Message(
                        seq=self._base + len(self.messages) + 1,
                        id=f"{uid}:{i}",
                        kind="tool_result",
                        role="tool",
                        text=result if isinstance(result, str) else text_of(result),
                        timestamp=stamp,
                        tool_name=name,
                        tool_use_id=tool_use_id,
                        is_error=bool(block.is_error),
                        parent_id=line.parent_uuid or "",
                        agent_id=self._agent,
                    )
                )
                self._emit(
                    ev.ToolFinished(
                        turn_id=line.prompt_id or "",
                        tool_use_id=tool_use_id,
                        at=at,
                        source="transcript:tool_result"
                        + (f"({line.tool_denial_kind})" if line.tool_denial_kind else ""),
                    )
                )
            elif block.type == "text" and block.text:
                texts.append(block.text)
        return "\n".join(texts)

    def _interrupted(self, line: Line, uid: str, text: str, at: float) -> None:
        self._from_user(line, uid, "interrupt", text)
        self._emit(
            ev.TurnStopped(
                turn_id=line.prompt_id or self.turn,
                outcome="interrupted",
                at=at,
                source="transcript:interrupt",
            )
        )

    def _said(self, line: Line, uid: str, text: str, at: float) -> None:
        """What the user said (a prompt, opening a turn), or what the CLI said for them:
        injected context (hidden), a local command and its output."""
        prompt_id = line.prompt_id or ""
        hidden = line.is_meta or text.lstrip().startswith("<system-reminder>")
        visibility: Visibility = "hidden" if hidden else "visible"
        self._from_user(line, uid, "text", text, visibility=visibility, is_meta=line.is_meta)
        local_command = text.lstrip().startswith(("<command-name>", "<local-command-"))
        if (
            local_command
            and not prompt_id
            and not self._inline
            and not hidden
            and text.lstrip().startswith(("<local-command-stdout>", "<local-command-stderr>"))
        ):
            # A local command's output (``/context``, ``/cost``): it ran, and the CLI
            # waits on the user again. Versions before ``promptId`` make it a turn of
            # its own, so a session of local commands alone is not "nothing yet";
            # 2.1.328 (``promptId`` on it) reads as before.
            self.events.append(
                ev.TurnStarted(turn_id=uid, at=at, source="transcript:local-command")
            )
            self.events.append(
                ev.TurnStopped(
                    turn_id=uid, outcome="completed", at=at, source="transcript:local-command"
                )
            )
        if not hidden and not local_command and not self._inline:
            # A prompt opens a turn. Versions before ``promptId`` (2.1.4x and older) name
            # it by the record's own uuid: a turn is never left unopened for want of an id.
            self.turn = prompt_id or uid
            self.events.append(
                ev.TurnStarted(turn_id=self.turn, at=at, source="transcript:user-prompt")
            )

    def _assistant(self, line: Line) -> None:
        msg = line.message
        if msg is None:
            return
        message_id = msg.id or ""
        usage = self._priced(message_id, msg.usage) if msg.usage is not None else None
        carrier = self._blocks(line, msg, usage)
        if usage is not None:
            if carrier is None:
                # Nothing shown of this line (no block of a kind read here), but the
                # response was paid for: its usage on a hidden record of its own.
                carrier = self._paid(line, msg, usage)
            self._carry(message_id, carrier)
        if line.is_api_error_message:
            self._emit(
                ev.TurnStopped(
                    turn_id=self.turn,
                    outcome="failed",
                    at=epoch_seconds(line.timestamp),
                    source="transcript:api-error",
                )
            )
        elif msg.stop_reason in ("end_turn", "stop_sequence") and msg.model != "<synthetic>":
            self._turn_done(line, f"transcript:stop_reason={msg.stop_reason}")

    def _blocks(self, line: Line, msg: ApiMessage, usage: Usage | None) -> Message | None:
        """An assistant line's content blocks, a record each; the first carries the
        response's usage and is returned (``None``: no block of a kind read here)."""
        uid = self._uid(line)
        stamp = line.timestamp or ""
        message_id = msg.id or ""
        model = msg.model or ""
        content = msg.content
        blocks = (
            content
            if isinstance(content, list)
            else [Block(type="text", text=content)]
            if content
            else []  # no content (of a shape read here): nothing shown
        )
        parent = line.parent_uuid or ""
        carrier: Message | None = None
        kind: MessageKind
        for i, block in enumerate(blocks):
            bid = uid if len(blocks) == 1 else f"{uid}:{i}"
            if line.is_api_error_message:
                kind, text = "error", block.text or ""
            elif block.type == "text":
                kind, text = "text", block.text or ""
            elif block.type == "thinking":
                kind, text = "thinking", block.thinking or ""
            elif block.type == "tool_use":
                kind, text = "tool_call", ""
            else:
                continue
            if kind == "tool_call":
                record = self._tool_use(block, bid, stamp)
            else:
                record = Message(id=bid, kind=kind, role="assistant", text=text)
                record.is_error = kind == "error"
            # What every record of the response says; its usage on the first alone.
            record.seq = self._base + len(self.messages) + 1
            record.timestamp, record.parent_id, record.agent_id = stamp, parent, self._agent
            record.message_id, record.model = message_id, model
            if carrier is None:
                record.usage, carrier = usage, record
            self.messages.append(record)
        return carrier

    def _tool_use(self, block: Block, bid: str, stamp: str) -> Message:
        at = epoch_seconds(stamp)
        name, tool_use_id, tool_input = block.name or "", block.id or "", block.input or {}
        self.open_tools[tool_use_id] = (name, tool_input)
        if name in ("Agent", "Task") and not self._inline and tool_use_id:
            self._spawns[tool_use_id] = (
                digest(str(tool_input.get("prompt") or "")),
                str(tool_input.get("description") or "")[:200],
            )
            if len(self._spawns) > SPAWNS_KEPT:
                del self._spawns[next(iter(self._spawns))]
        record = tool_call(bid, tool_use_id, name, tool_input, presentation(name))
        self._emit(
            ev.ToolStarted(
                turn_id=self.turn,
                tool_use_id=tool_use_id,
                tool_name=name,
                at=at,
                source="transcript:tool_use",
            )
        )
        if name in DIALOG_TOOLS:
            # The tool's execution *is* the dialog: while it has no result, the
            # question/plan is on screen (docs/providers/claude-code.md §3.3).
            self._emit(
                tool_wait(
                    self.turn,
                    tool_use_id,
                    name,
                    tool_input,
                    form=FORMS[name],
                    at=at,
                    source="transcript:tool_use",
                )
            )
        return record

    def _launched(self, result: msgspec.Raw) -> None:
        try:
            launch = decode_launch(result)
        except DECODE_ERRORS:
            return  # another shape: nothing launched
        if not isinstance(launch, AsyncLaunch):
            return  # a string result (denied, failed): nothing launched
        if launch.agentId and (launch.isAsync or launch.status == "async_launched"):
            self.background[launch.agentId] = None

    def _turn_done(self, line: Line, source: str) -> None:
        """The main agent's turn ended: completed, the background agents still at work
        named."""
        self._emit(
            ev.TurnStopped(
                turn_id=self.turn,
                outcome="completed",
                at=epoch_seconds(line.timestamp),
                source=source,
                background=self._running(),
            )
        )

    def _running(self) -> tuple[str, ...] | None:
        """The turn ends with these agents still at work; ``None`` (keep what is known)
        when the transcript knows of none. The end-of-turn records can be stamped before
        the ``Stop`` hook that lists the same agents, and a turn is finalized once: the
        first signal of its end must already say the work goes on."""
        return tuple(self.background) or None

    def _progress(self, line: Line) -> None:
        """A ``progress`` record (2.1.x): a Stop hook ran, so the main agent's turn ended
        — in the real files of 2.1.x whose last response's ``stop_reason`` is ``null``
        (written before the API's final event) it is the only end the transcript shows.
        Other progress (a command's output so far, a subagent's records mirrored, an MCP
        call's) is not read: the tool's result and the subagent's own file hold it."""
        data = line.data
        if data is not None and data.type == "hook_progress" and data.hookEvent == "Stop":
            self._turn_done(line, "transcript:hook_progress(Stop)")

    def _system(self, line: Line) -> None:
        subtype = line.subtype
        if subtype == "turn_duration":
            self._turn_done(line, "transcript:turn_duration")
        elif subtype in ("compact_boundary", "microcompact_boundary"):
            # microcompact (2.1.x): older tool results cleared from the context.
            self._from_system(line, "compaction", line.content or "")
        elif subtype in ("api_error", "error", "api_refusal"):
            # A request that failed (retried, or given up) or that the API refused: the
            # turn goes on (a retry) or ends with the synthetic error message after it.
            text = (
                line.api_refusal_explanation or line.content or "refused"
                if subtype == "api_refusal"
                else error_text(line)
            )
            self._from_system(line, "error", text, is_error=True, parent_id=line.parent_uuid or "")
        elif (
            subtype in ("local_command", "informational", "model_refusal_fallback", None)
            and line.content
        ):
            # ``None``: a 1.0.x notice with no subtype ("… limit reached, now using …").
            self._from_system(line, "text", line.content)

    def _from_system(self, line: Line, kind: MessageKind, text: str, **fields: Any) -> None:
        stamp = line.timestamp or ""
        self._add(
            Message(
                id=self._uid(line), kind=kind, role="system", text=text, timestamp=stamp, **fields
            )
        )
