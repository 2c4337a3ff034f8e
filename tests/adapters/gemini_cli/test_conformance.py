"""Tier 1: the Gemini CLI adapter passes the shipped suite the way an adapter from outside
does — a subclass naming its adapter and kit — since it registers through the
``agentspool.adapters`` entry-point group, not the built-in table."""

from agentspool.adapters.gemini_cli import GeminiCli
from agentspool.adapters.gemini_cli._kit import DocumentKit, Kit
from agentspool.adapters.testing import AdapterConformance


class TestGeminiCliConformance(AdapterConformance):
    adapter_class = GeminiCli
    kit_class = Kit


class TestGeminiCliDocumentConformance(AdapterConformance):
    """The same obligations on the older chat file, one JSON document (§7)."""

    adapter_class = GeminiCli
    kit_class = DocumentKit
