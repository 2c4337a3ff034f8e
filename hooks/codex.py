"""Codex hook entry point. Codex passes no per-session environment: the payload is all.

The agent's pid is the hook's parent: Codex 0.169.0 in embedded mode (which ``setup``
forces) runs each hook as a child of the native ``codex`` process, through a shell that
execs the command. The adapter watches that process's children for an approved command.
"""

from agentspool.hooks._entry import run


def main(argv: list[str]) -> None:
    """Records the event and ends the process (``run``)."""
    run(argv, agent_is_parent=True, provider="codex", daemon=True)
