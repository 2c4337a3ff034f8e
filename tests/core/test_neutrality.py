"""core/ owns run lifecycle only: it never names a provider, nor imports one."""

import re
from pathlib import Path

from agentspool.adapters import registry

CORE = Path(__file__).resolve().parents[2] / "core"


def _provider_words() -> set[str]:
    words = set()
    for name, target in registry.known.items():
        words |= {name, name.replace("-", "_"), target.split(":")[1]}
    return words | {"claude", "anthropic", "openai"}


def test_core_never_names_a_provider() -> None:
    pattern = re.compile("|".join(re.escape(w) for w in sorted(_provider_words())), re.I)
    offenders = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted(CORE.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_the_neutrality_check_would_catch_a_provider_name(tmp_path: Path) -> None:
    pattern = re.compile("|".join(re.escape(w) for w in sorted(_provider_words())), re.I)
    assert pattern.search("from agentspool.adapters.claude_code import ClaudeCode")
    assert pattern.search('if adapter.name == "codex":')
