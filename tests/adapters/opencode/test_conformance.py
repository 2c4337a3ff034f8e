"""OpenCode is a row of the registry's one typed table, and so enrolled in the shipped
conformance suite (``tests/adapters/test_conformance.py``) like every built-in; the
entry-point group is for adapters from other packages (``tests/test_outside_adapter.py``)."""

from __future__ import annotations

from agentspool.adapters.opencode import OpenCode
from agentspool.adapters.registry import BUILTIN
from agentspool.adapters.testing import enrolled


def test_registered_in_the_built_in_table() -> None:
    import agentspool
    from agentspool.adapters import registry

    assert "opencode" in BUILTIN and "opencode" in enrolled()
    assert "opencode" in agentspool.providers()
    assert isinstance(registry.load("opencode"), OpenCode)
