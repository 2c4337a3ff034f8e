"""The facade's modules never share a name with a name it exports: importing
``agentspool.<module>`` binds the module on the package, over the exported function."""

from pathlib import Path

import agentspool

API = Path(__file__).resolve().parent.parent / "api"


def test_no_module_of_the_facade_is_named_after_an_exported_name() -> None:
    modules = {p.stem for p in API.glob("*.py")} | {p.name for p in API.iterdir() if p.is_dir()}
    assert modules & set(agentspool.__all__) == set()
