"""The whole shipped Tier-1 suite, run against this package's adapter."""

from agentspool.adapters.testing import AdapterConformance
from linelog_adapter import LineLog, LineLogKit


class TestLineLog(AdapterConformance):
    adapter_class = LineLog
    kit_class = LineLogKit
