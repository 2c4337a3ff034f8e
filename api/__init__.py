"""agentspool: know what each coding-agent CLI run is doing, from evidence.

Everything a library user needs is importable from here, and from here only (the
modules behind it are internal)::

    from agentspool import setup, read_chat, Chat

    spawn = setup("claude-code", "run-1")          # before spawning the agent
    chat = read_chat("claude-code", "run-1")       # any time after
    chat.state                                     # idle | working | needs_input | question | ended

The surface is resolved lazily (a module-level ``__getattr__``): hooks import through
this package, and they must not pay for msgspec on every tool call.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentspool.api import (
        Explanation,
        Replay,
        Transition,
        explain,
        install,
        locate_transcript,
        read_chat,
        replay,
        run_provider,
        setup,
        spool_sig,
        sweep_spools,
        uninstall,
        untrust,
    )
    from agentspool.core.detail import (
        SessionDetail,
        SubagentGroup,
        ToolInvocation,
        assemble_session_detail,
    )
    from agentspool.core.history import IndexReport
    from agentspool.core.runs import RunSummary
    from agentspool.core.seam import (
        Activity,
        Adapter,
        Capabilities,
        Chat,
        ChatState,
        DialogOption,
        DialogQuestion,
        Evidence,
        InstalledFile,
        InstallReport,
        InstallScope,
        Message,
        PendingApproval,
        PendingDialog,
        Session,
        Spawn,
        TaskState,
        Trust,
        Usage,
    )
    from agentspool.core.store import SearchHit, SessionStore, StoredSession, UsageRecord
    from agentspool.core.usage import UsageGrouping, UsageReport, UsageRow
    from agentspool.core.words import state_phrase, task_phrase
    from agentspool.declarations import Declaration, declare
    from agentspool.demo import DemoReplay, DemoRun, DemoStep
    from agentspool.diagnosis import DoctorCheck, DoctorReport, broken_installs, doctor
    from agentspool.follow import RunChange, RunEvent, RunFollower
    from agentspool.history import (
        default_store_path,
        index_history,
        open_history,
        search_history,
    )
    from agentspool.polling import RunPoll, list_runs, poll_runs, run_key
    from agentspool.registered import providers
    from agentspool.sessions import SessionView, find_session, show_session
    from agentspool.spawn import run
    from agentspool.spool.errors import (
        AgentspoolError,
        AmbiguousSessionError,
        CompressedRolloutError,
        DeclarationError,
        DeltaParseError,
        NotRegularFileError,
        RunIdError,
        RunNotFoundError,
        RuntimeDirError,
        SessionNotFoundError,
        SettingsError,
        StoreError,
        TranscriptGoneError,
        UnknownProviderError,
        UnsupportedError,
    )
    from agentspool.spool.sweep import SweepReport
    from agentspool.tidying import TidyReport, TidyRun, tidy
    from agentspool.usage_totals import usage

__version__ = "0.3.0"

_LAZY = {
    **dict.fromkeys(
        [
            "Explanation",
            "Replay",
            "Transition",
            "explain",
            "install",
            "locate_transcript",
            "read_chat",
            "replay",
            "run_provider",
            "setup",
            "spool_sig",
            "sweep_spools",
            "uninstall",
            "untrust",
        ],
        "agentspool.api",
    ),
    **dict.fromkeys(
        [
            "Activity",
            "Adapter",
            "Capabilities",
            "Chat",
            "ChatState",
            "DialogOption",
            "DialogQuestion",
            "Evidence",
            "InstallReport",
            "InstallScope",
            "InstalledFile",
            "Message",
            "PendingApproval",
            "PendingDialog",
            "Session",
            "Spawn",
            "TaskState",
            "Trust",
            "Usage",
        ],
        "agentspool.core.seam",
    ),
    **dict.fromkeys(["RunPoll", "list_runs", "poll_runs", "run_key"], "agentspool.polling"),
    "providers": "agentspool.registered",
    **dict.fromkeys(["run"], "agentspool.spawn"),
    **dict.fromkeys(["Declaration", "declare"], "agentspool.declarations"),
    **dict.fromkeys(["TidyReport", "TidyRun", "tidy"], "agentspool.tidying"),
    **dict.fromkeys(["usage"], "agentspool.usage_totals"),
    **dict.fromkeys(
        ["default_store_path", "index_history", "open_history", "search_history"],
        "agentspool.history",
    ),
    **dict.fromkeys(["DemoReplay", "DemoRun", "DemoStep"], "agentspool.demo"),
    **dict.fromkeys(["RunChange", "RunEvent", "RunFollower"], "agentspool.follow"),
    **dict.fromkeys(
        ["DoctorCheck", "DoctorReport", "broken_installs", "doctor"], "agentspool.diagnosis"
    ),
    **dict.fromkeys(["SessionView", "find_session", "show_session"], "agentspool.sessions"),
    **dict.fromkeys(
        ["SessionDetail", "SubagentGroup", "ToolInvocation", "assemble_session_detail"],
        "agentspool.core.detail",
    ),
    **dict.fromkeys(["UsageGrouping", "UsageReport", "UsageRow"], "agentspool.core.usage"),
    "IndexReport": "agentspool.core.history",
    **dict.fromkeys(
        ["SearchHit", "SessionStore", "StoredSession", "UsageRecord"], "agentspool.core.store"
    ),
    "RunSummary": "agentspool.core.runs",
    **dict.fromkeys(["state_phrase", "task_phrase"], "agentspool.core.words"),
    "SweepReport": "agentspool.spool.sweep",
    **dict.fromkeys(
        [
            "AgentspoolError",
            "AmbiguousSessionError",
            "CompressedRolloutError",
            "DeclarationError",
            "DeltaParseError",
            "NotRegularFileError",
            "RunIdError",
            "RunNotFoundError",
            "RuntimeDirError",
            "SessionNotFoundError",
            "SettingsError",
            "StoreError",
            "TranscriptGoneError",
            "UnknownProviderError",
            "UnsupportedError",
        ],
        "agentspool.spool.errors",
    ),
}
__all__ = [
    "Activity",
    "Adapter",
    "AgentspoolError",
    "AmbiguousSessionError",
    "Capabilities",
    "Chat",
    "ChatState",
    "CompressedRolloutError",
    "Declaration",
    "DeclarationError",
    "DeltaParseError",
    "DemoReplay",
    "DemoRun",
    "DemoStep",
    "DialogOption",
    "DialogQuestion",
    "DoctorCheck",
    "DoctorReport",
    "Evidence",
    "Explanation",
    "IndexReport",
    "InstallReport",
    "InstallScope",
    "InstalledFile",
    "Message",
    "NotRegularFileError",
    "PendingApproval",
    "PendingDialog",
    "Replay",
    "RunChange",
    "RunEvent",
    "RunFollower",
    "RunIdError",
    "RunNotFoundError",
    "RunPoll",
    "RunSummary",
    "RuntimeDirError",
    "SearchHit",
    "Session",
    "SessionDetail",
    "SessionNotFoundError",
    "SessionStore",
    "SessionView",
    "SettingsError",
    "Spawn",
    "StoreError",
    "StoredSession",
    "SubagentGroup",
    "SweepReport",
    "TaskState",
    "TidyReport",
    "TidyRun",
    "ToolInvocation",
    "TranscriptGoneError",
    "Transition",
    "Trust",
    "UnknownProviderError",
    "UnsupportedError",
    "Usage",
    "UsageGrouping",
    "UsageRecord",
    "UsageReport",
    "UsageRow",
    "__version__",
    "assemble_session_detail",
    "broken_installs",
    "declare",
    "default_store_path",
    "doctor",
    "explain",
    "find_session",
    "index_history",
    "install",
    "list_runs",
    "locate_transcript",
    "open_history",
    "poll_runs",
    "providers",
    "read_chat",
    "replay",
    "run",
    "run_key",
    "run_provider",
    "search_history",
    "setup",
    "show_session",
    "spool_sig",
    "state_phrase",
    "sweep_spools",
    "task_phrase",
    "tidy",
    "uninstall",
    "untrust",
    "usage",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentspool' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return list(__all__)
