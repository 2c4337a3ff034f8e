"""Tier 1: every registered adapter, plus the fake, meets the shipped contract suite."""

import pytest

from agentspool.adapters.testing import AdapterConformance, enrolled


@pytest.fixture(params=enrolled())
def adapter_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class TestConformance(AdapterConformance):
    pass
