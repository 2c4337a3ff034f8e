"""Tier 1: every built-in adapter, plus the fake, meets the shipped contract suite."""

import pytest

from agentspool.adapters.testing import AdapterConformance, enrolled


class TestConformance(AdapterConformance):
    @pytest.fixture(params=enrolled())
    def adapter_name(self, request: pytest.FixtureRequest) -> str:
        return str(request.param)
