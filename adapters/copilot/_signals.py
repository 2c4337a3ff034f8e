"""GitHub Copilot CLI hooks → canonical events, and where the session's transcript is.

Facts: docs/providers/copilot.md §2. Payloads are camelCase (``sessionId``,
``timestamp`` in ms, ``cwd``); none carries a tool call id or a turn id, and only
``agentStop`` names the transcript. The hooks add to the file what they see first, or
alone. They name no turn: the transcript
opens and names each (``_transcript``), a hook's wait belongs to whichever is open, and
a hook's turn end ends it. (Counting prompts would not name the same turn: a resumed
session's file holds prompts no hook of this run saw.)

* ``permissionRequest`` opens an approval (tool and input, no call): it fires a few ms
  before the transcript's ``permission.requested``, which names the call and takes its
  place, and whose ``permission.completed`` closes it. In ``-p`` it fires too, and the
  request is denied by itself 2 ms later (``unattended_fallback``): the transcript's
  completion closes it. ``notification{permission_prompt}`` is not read: in ``-p`` it
  fires *after* that completion, and would reopen a wait nobody is asked.
* ``preToolUse`` of ``ask_user`` opens the question form; ``postToolUse`` closes what is
  open, ``agentStop`` ends the turn, ``sessionEnd`` the session (``/clear`` and
  ``/exit`` alike: ``user_exit``).
* Esc at a prompt and an interrupt fire no hook: the transcript's ``abort`` says so.

The agent process is the hook's parent (the native ``copilot`` the npm loader starts,
which runs each hook through ``bash -c``). Its ``COPILOT_HOME`` says where its sessions
are: ``<home>/session-state/<sessionId>/events.jsonl``. After ``sessionEnd`` the live
process's next session is the directory holding its ``inuse.<pid>.lock`` (``/clear``
moves it there at once; the new ``events.jsonl`` appears at its first prompt).
"""

from __future__ import annotations

import glob
import os
from typing import Any

from agentspool.adapters.common.calls import tool_wait
from agentspool.adapters.common.parent_agent import ParentAgentHooks
from agentspool.adapters.common.salvage import HookDecoder
from agentspool.adapters.common.translator import CamelHookFields, hook_base
from agentspool.adapters.copilot._home import HOME_ENV, copilot_home
from agentspool.adapters.copilot._schema import HOOK_FIELDS
from agentspool.adapters.copilot._transcript import QUESTION_TOOL, SHELL_TOOL, dialog_for
from agentspool.core import events as ev
from agentspool.spool.read import SpoolRecord


def transcript_of(home: str, session_id: str) -> str:
    return os.path.join(home, "session-state", session_id, "events.jsonl")


class HookPayload(CamelHookFields):
    transcript_path: str = ""
    tool_input: Any = None
    tool_args: Any = None


decode = HookDecoder(HookPayload)


def _agent_home(pid: int) -> str:
    """The agent's ``COPILOT_HOME`` as it was started (``""``: not readable, not set)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            environ = fh.read()
    except OSError:
        return ""
    for entry in environ.split(b"\0"):
        if entry.startswith(HOME_ENV.encode() + b"="):
            return entry.split(b"=", 1)[1].decode("utf-8", "replace")
    return ""


_TURN_BOUNDS = frozenset(("userPromptSubmitted", "agentStop", "sessionEnd"))


class HookTranslator(ParentAgentHooks[HookPayload]):
    """Spool records → events, in spool order."""

    def __init__(self) -> None:
        super().__init__(decode, HOOK_FIELDS)
        self.home = ""
        """The agent's ``COPILOT_HOME`` (from ``agentStop``'s transcript or its process)."""
        self.session_id = ""
        self.ended = False
        """The latest session's ``sessionEnd`` came (``/clear`` or ``/exit``)."""
        self.open_shell_calls: list[Any] = []
        """The ``toolArgs`` of each ``bash`` call whose ``preToolUse`` came and whose
        ``postToolUse`` has not (no hook names a call: told apart by their arguments)."""

    @property
    def transcript_path(self) -> str:
        if not self.session_id:
            return ""
        home = self.home or copilot_home()
        if self.ended and self.agent_pid and not self.agent_gone():
            pattern = os.path.join(glob.escape(home), "session-state", "*", "")
            locks = glob.glob(pattern + f"inuse.{self.agent_pid}.lock")
            if locks:
                return os.path.join(os.path.dirname(locks[0]), "events.jsonl")
        return transcript_of(home, self.session_id)

    @transcript_path.setter
    def transcript_path(self, path: str) -> None:
        # The file a hook names (``agentStop`` alone) says where the agent's sessions are;
        # the run's transcript is then its latest session's (after ``/clear``, the next).
        if path:
            self.home = os.path.dirname(os.path.dirname(os.path.dirname(path)))

    def translate(self, record: SpoolRecord) -> list[ev.Event]:
        agent_pid = self.agent_pid
        hook = self.take(record)
        if hook is None:
            return []
        if self.agent_pid != agent_pid and not self.home:
            self.home = _agent_home(self.agent_pid)
        name = record.event
        session = hook.session_id
        self._locate(hook.transcript_path, name)
        if session and name != "sessionEnd":
            self.session_id, self.ended = session, False
        common = hook_base(record, session)
        if name == "sessionStart":
            return [ev.SessionStarted(how=hook.source or "new", **common)]
        if name == "permissionRequest":
            return [tool_wait("", "", hook.tool_name, hook.tool_input, **common)]
        if name == "preToolUse" and hook.tool_name == QUESTION_TOOL:
            return [tool_wait("", "", QUESTION_TOOL, hook.tool_args, form=dialog_for, **common)]
        if name in _TURN_BOUNDS or hook.tool_name == SHELL_TOOL:
            self._follow_shell_call(name, hook.tool_args)
        if name == "postToolUse":
            return [ev.InputResolved(**common)]
        if name == "agentStop":
            return [ev.TurnStopped(**common)]
        if name == "sessionEnd":
            if session == self.session_id:
                self.ended = True
            return [ev.SessionEnded(reason=hook.reason, **common)]
        return []

    def _follow_shell_call(self, name: str, arguments: Any) -> None:
        if name in _TURN_BOUNDS:
            # Esc on a call's dialog fires no hook: a call of an earlier turn is over.
            self.open_shell_calls.clear()
        elif name == "preToolUse":
            self.open_shell_calls.append(arguments)
        elif name == "postToolUse" and arguments in self.open_shell_calls:
            self.open_shell_calls.remove(arguments)
