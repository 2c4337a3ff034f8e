"""Codex hook entry point. Codex passes no per-session environment: the payload is all."""

from agentspool.hooks._entry import run


def main(argv: list[str]) -> int:
    return run(argv)
