"""Tier 1: the Gemini CLI adapter, a row of the registry's table, is enrolled in the
shipped suite with every built-in (``tests/adapters/test_conformance.py``); here the same
obligations run once more on the older chat file, one JSON document (§7), through a
subclass naming the adapter and that kit, as an adapter from outside would."""

from agentspool.adapters.gemini_cli import GeminiCli
from agentspool.adapters.gemini_cli._kit import DocumentKit
from agentspool.adapters.testing import AdapterConformance, enrolled


class TestGeminiCliDocumentConformance(AdapterConformance):
    """The same obligations on the older chat file, one JSON document (§7)."""

    adapter_class = GeminiCli
    kit_class = DocumentKit


def test_enrolled_from_the_built_in_table() -> None:
    assert "gemini-cli" in enrolled()
