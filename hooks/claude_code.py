"""Claude Code hook entry point.

Claude Code gives hooks the agent's pid only in the environment (``CLAUDE_PID``); the
adapter needs it to find the native status file ``~/.claude/sessions/<pid>.json``.
"""

from agentspool.hooks._entry import run


def main(argv: list[str]) -> None:
    """Records the event and ends the process (``run``)."""
    run(argv, "CLAUDE_PID", provider="claude-code")
