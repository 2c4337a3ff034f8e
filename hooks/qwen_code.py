"""Qwen Code hook entry point.

Qwen Code 0.24.4 runs each hook as a child of its agent process (the pid its
``~/.qwen/sessions/<pid>.json`` names), so the agent's pid is the hook's parent. The run
is in the command ``setup`` baked into the run's settings layer; an installed hook finds
a wrapper's run in the environment, which the CLI passes on to its hooks.
"""

from agentspool.hooks._entry import run


def main(argv: list[str]) -> None:
    """Records the event and ends the process (``run``)."""
    run(argv, agent_is_parent=True, provider="qwen-code")
