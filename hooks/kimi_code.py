"""Kimi Code hook entry point.

Kimi Code 2.1.0 cannot be armed per run (docs/adr/0048-kimi-code.md): its hooks are
installed once in ``config.toml``, and a wrapper's run travels in the agent's environment
(``AGENTSPOOL_RUN_ID``), which the CLI passes on to its hooks. Each hook runs through a
shell, a child of the kimi process: the agent is the hook's parent past that shell.
"""

from agentspool.hooks._entry import run


def main(argv: list[str]) -> None:
    """Records the event and ends the process (``run``)."""
    run(argv, agent_is_parent=True, provider="kimi-code", armed_by_env=True)
