"""GitHub Copilot CLI hook entry point.

Copilot CLI 1.0.102 runs each hook through ``bash -c`` from its native process, the one
that writes the session's transcript and holds its ``inuse.<pid>.lock``: the hook's
parent past that shell is the agent.
"""

from agentspool.hooks._entry import run


def main(argv: list[str]) -> None:
    """Records the event and ends the process (``run``)."""
    run(argv, agent_is_parent=True, provider="copilot")
