"""The Qwen Code adapter: composes a run's state from the hook spool and the chat file.

Precedence (docs/adr/0047-qwen-code-arming.md, docs/providers/qwen-code.md §2-§4). All
evidence becomes canonical events, folded by the one reducer in evidence-time order:

1. An open question — ``PermissionRequest{tool_name: "ask_user_question"}`` → ``question``
   with ``pending_dialog`` (the form's questions).
2. An open approval — ``PermissionRequest`` of any other tool → ``needs_input`` with
   ``pending_approval``; the hook names no call, the chat file's unanswered function
   call of that tool and input does. Closed by that call's ``PreToolUse`` (approved), a
   ``PostToolBatch`` listing it (Esc denied it: ``cancelled``), or the turn's end.
3. Otherwise the turn: a prompt's ``UserPromptSubmit`` opens it; ``Stop``, or the
   ``Notification{idle_prompt}`` that alone follows an Esc, ends it.

The chat file alone (a transcript-only read: an ended run) derives the turn from its
records (``_chat``). ``locate_transcript`` follows the newest hook's ``transcript_path``
but ``SessionEnd``'s, so ``/clear`` moves it to the new file (created at its first
prompt: until then the spool alone answers). A dead qwen process (the hooks' parent)
ends the run.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from typing import ClassVar

import msgspec

from agentspool.adapters.common.installer_part import HookInstallerOf
from agentspool.adapters.common.parent_agent import ParentAgentAdapter, SettledSpool
from agentspool.adapters.common.recent import changed_since
from agentspool.adapters.common.spooled import ITSELF, RunHandle
from agentspool.adapters.qwen_code import _home, _lifecycle, _signals
from agentspool.adapters.qwen_code._chat import ChatParser, is_chat_file, session_id_of
from agentspool.core.events import InputRequested
from agentspool.core.seam import Capabilities, Chat, Session


def _complete(pending: InputRequested, parser: ChatParser) -> InputRequested:
    """Name the call a permission request is about: the chat file's newest unanswered
    call of that tool and input (written before the dialog opened)."""
    if pending.tool_use_id or not pending.tool_name:
        return pending
    for call_id, (name, tool_input) in reversed(parser.open_calls.items()):
        if name == pending.tool_name and (
            not pending.tool_input or tool_input == pending.tool_input
        ):
            dialog = pending.dialog
            if dialog is not None:
                dialog = msgspec.structs.replace(dialog, tool_use_id=call_id)
            return msgspec.structs.replace(pending, tool_use_id=call_id, dialog=dialog)
    return pending


class QwenCode(ParentAgentAdapter[_signals.HookTranslator, ChatParser]):
    """The declaration: hook records through ``_signals.HookTranslator``, the chat file
    through ``ChatParser``, no native status (``sessions/<pid>.json`` holds no state; a
    dead qwen process ends the run), hooks armed per run by ``_lifecycle`` in a settings
    layer of the run's own, or installed once by ``_install``."""

    name: ClassVar[str] = "qwen-code"
    capabilities: ClassVar[Capabilities] = Capabilities(live_signals=True, install_scopes=("user",))
    executable: ClassVar[str] = "qwen"
    arm_run = _lifecycle.setup
    hook_translator = _signals.HookTranslator
    turn_parser = ChatParser  # live, the hooks own the turn (_chat's module doc)
    installer = HookInstallerOf("agentspool.adapters.qwen_code._install", "HOOKS")

    # The optional parts this adapter is itself (core/seam.py).
    discovery = session_files = ITSELF

    def _facts(
        self, run: RunHandle[SettledSpool[_signals.HookTranslator]], parser: ChatParser
    ) -> tuple[str, str, str]:
        return parser.session_id, "", parser.cwd

    def _complete(self, parser: ChatParser) -> Callable[[InputRequested], InputRequested]:
        return lambda pending: _complete(pending, parser)

    # -- sessions from the CLI's own files (ls, show, the history index) ---------------
    def sessions(self, since: float) -> list[Session]:
        """Chat files changed at or after ``since``, and the session of each live qwen
        process (``sessions/<pid>.json``, which names it; its file may not exist yet)."""
        home = glob.escape(_home.qwen_dir())
        found: dict[str, Session] = {}
        for path in changed_since(os.path.join(home, "projects", "*", "chats", "*.jsonl"), since):
            if is_chat_file(path):
                found[session_id_of(path)] = Session(
                    session_id=session_id_of(path), transcript_path=path
                )
        for status in glob.glob(os.path.join(home, "sessions", "*.json")):
            live = _signals.live_status(status)
            if live is None:
                continue
            session_id, pid, cwd = live
            chats = glob.glob(
                os.path.join(home, "projects", "*", "chats", f"{glob.escape(session_id)}.jsonl")
            )
            found[session_id] = Session(
                session_id=session_id,
                transcript_path=chats[0] if chats else "",
                pid=pid,
                process="alive",
                cwd=cwd,
                watched=(status,),
            )
        return list(found.values())

    def read_session(self, session: Session) -> Chat:
        if not session.transcript_path:
            return self.read_chat(session.session_id, "", "")
        chat = self.read_chat(session.session_id, "", session.transcript_path)
        chat.cwd = chat.cwd or session.cwd
        return chat

    def read_session_with_subagents(self, session: Session) -> Chat:
        return self.read_session(session)  # no subagent file of its own is known (0.24.4)

    def session_at(self, path: str) -> Session | None:
        if not is_chat_file(path):
            return None
        return Session(session_id=session_id_of(path), transcript_path=path)
