"""Gemini CLI hook entry point.

Gemini CLI 0.61.0 cannot be armed per run (docs/adr/0028-gemini-cli-arming.md): its hooks
are installed once in the user's settings, and a wrapper's run travels in the agent's
environment (``AGENTSPOOL_RUN_ID``), so the installed hook records a wrapped run too.
The agent's pid is the hook's parent: the node process the CLI restarted itself as runs
each hook through a shell that execs the one-command line.
"""

from agentspool.hooks._entry import run


def main(argv: list[str]) -> None:
    """Records the event and ends the process (``run``)."""
    run(argv, agent_is_parent=True, provider="gemini-cli", armed_by_env=True)
