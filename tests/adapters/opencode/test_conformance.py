"""OpenCode passes the shipped conformance suite the way an adapter from another package
does: it is registered through the ``agentspool.adapters`` entry-point group (not the
built-in table), so it runs the suite through a subclass naming its adapter and kit."""

from __future__ import annotations

from agentspool.adapters.opencode import OpenCode
from agentspool.adapters.opencode._kit import Kit
from agentspool.adapters.registry import BUILTIN
from agentspool.adapters.testing import AdapterConformance


class TestOpenCode(AdapterConformance):
    adapter_class = OpenCode
    kit_class = Kit


def test_registered_as_an_installed_adapter() -> None:
    import agentspool
    from agentspool.adapters import registry

    assert "opencode" not in BUILTIN
    assert "opencode" in agentspool.providers()
    assert isinstance(registry.load("opencode"), OpenCode)
