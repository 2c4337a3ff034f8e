"""Adapters by name: the one typed table of built-ins, plus any installed package's adapters.

Every provider this package ships is a row of ``BUILTIN``: its subpackage and the adapter
class it exports (the declaration in its ``_adapter.py``, checked against the seam where
the subpackage exports it), and the hook module its CLI runs
(``agentspool.hooks.<module>``; ``""`` for one armed through a plugin of its own); its
conformance kit is the subpackage's ``_kit.Kit``. The hook modules ``setup`` may name
(``hook_modules``), the kits of the shipped suite (``kits``) and its enrolment
(``agentspool.adapters.testing.enrolled``) all derive from it, so a new provider is one
row here and one declaration.

An adapter outside this package registers through the entry-point group
``agentspool.adapters``: the entry point's name is the provider name, its value
``module:attribute`` names the adapter class (instantiated with no arguments)::

    [project.entry-points."agentspool.adapters"]
    my-agent = "my_agent_adapter:MyAgent"

and its package states the seam for mypy to check (``_: type[Adapter] = MyAgent``). It
then appears in ``providers()``, ``agentspool --help`` and ``setup``'s choices, and it
proves itself with the shipped suite (``agentspool.adapters.testing.AdapterConformance``).

Built-ins never pay for the entry-point scan: it runs only to list every name, or for a
name that is not built in — once per process (a watcher asks for every name each second;
an adapter installed meanwhile is seen by the next command). It reads the distributions'
``entry_points.txt`` itself (``entry_points``): ``importlib.metadata`` finds the same,
but costs ~36 ms to import (email, zipfile, csv), a tenth of a first ``usage``. A
built-in name cannot be taken over by an installed package.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, NamedTuple

from agentspool.spool.errors import UnknownProviderError

if TYPE_CHECKING:
    from agentspool.core.seam import Adapter

ENTRY_POINT_GROUP = "agentspool.adapters"
_PACKAGE = "agentspool.adapters"
"""Where the built-in providers' subpackages are."""


class Builtin(NamedTuple):
    """One provider this package ships, in its subpackage ``agentspool.adapters.<package>``:
    the adapter class the subpackage exports and its kit ``_kit.Kit``."""

    package: str
    adapter: str
    """The adapter class's name; the subpackage is imported on first use (a read pays for
    one provider)."""
    hook_module: str
    """``agentspool.hooks.<hook_module>`` is what its CLI runs; ``""``: a plugin instead."""
    home: str
    """The function of the subpackage's ``_home`` (standard library only) that names
    where the CLI keeps what the history reads: every transcript the adapter lists is
    under it (its session database for OpenCode). ``history_here`` asks it before the
    adapter is loaded."""

    def load(self) -> Adapter:
        return _loader(f"{_PACKAGE}.{self.package}:{self.adapter}")()()

    def where(self) -> str:
        """Where its CLI keeps what the history reads, here (``home``; ``""``: nowhere)."""
        found: str = getattr(import_module(f"{_PACKAGE}.{self.package}._home"), self.home)()
        return found

    def history_here(self) -> bool:
        where = self.where()
        return bool(where) and os.path.exists(where)

    @property
    def kit(self) -> str:
        """``module:attribute`` of its conformance kit (``agentspool.adapters.testing``)."""
        return f"{_PACKAGE}.{self.package}._kit:Kit"


# mypy checks each class against the ``Adapter`` Protocol, all of its parts included,
# where its subpackage exports it (``_: type[Adapter] = ...``), as an installed package
# states it for its own.
BUILTIN: dict[str, Builtin] = {
    "claude-code": Builtin("claude_code", "ClaudeCode", "claude_code", "config_dir"),
    "codex": Builtin("codex", "Codex", "codex", "codex_home"),
    "gemini-cli": Builtin("gemini_cli", "GeminiCli", "gemini_cli", "gemini_dir"),
    "opencode": Builtin("opencode", "OpenCode", "", "database"),
    "copilot": Builtin("copilot", "Copilot", "copilot", "copilot_home"),
    "kimi-code": Builtin("kimi_code", "KimiCode", "kimi_code", "kimi_dir"),
    "qwen-code": Builtin("qwen_code", "QwenCode", "qwen_code", "qwen_dir"),
    "pi": Builtin("pi", "Pi", "", "agent_dir"),
}
_loaded: dict[str, Adapter] = {}


def entry_points(group: str) -> dict[str, str]:
    """``name → value`` of the entry points in ``group`` that ``importlib.metadata.
    entry_points(group=group)`` gives: those of the distributions whose ``.dist-info``
    or ``.egg-info`` folder is in a folder on ``sys.path`` (of two distributions of one
    project, the first on the path; of two entry points of one name, the last). A path
    entry that is a file (a zip of packages) is left to ``importlib.metadata``."""
    if any(os.path.isfile(entry) for entry in sys.path):
        from importlib.metadata import entry_points as found

        return {e.name: e.value for e in found(group=group)}
    points: dict[str, str] = {}
    seen: set[str] = set()
    for folder in sys.path:
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for name in names:
            stem, dot, kind = name.rpartition(".")
            if kind not in ("dist-info", "egg-info") or not dot:
                continue
            # A distribution's name as importlib.metadata compares them (PEP 503).
            project = stem.partition("-")[0].lower().replace("-", "_").replace(".", "_")
            if project in seen:
                continue
            seen.add(project)
            for key, value in _section(
                os.path.join(folder or ".", name, "entry_points.txt"), group
            ):
                points[key] = value  # as importlib.metadata: the last of a name
    return points


def _section(path: str, group: str) -> list[tuple[str, str]]:
    """The ``name = value`` lines of ``[group]`` in an ``entry_points.txt``."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    pairs, inside = [], False
    for raw in lines:
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1].strip() == group
        elif inside and "=" in line:
            key, _, value = line.partition("=")
            pairs.append((key.strip(), value.strip()))
    return pairs


def _loader(value: str) -> Callable[[], type[Adapter]]:
    """``module:attribute [extras]`` as a function that imports it."""
    module, _, attribute = value.partition("[")[0].partition(":")

    def load() -> type[Adapter]:
        found: object = import_module(module.strip())
        for part in attribute.strip().split(".") if attribute.strip() else ():
            found = getattr(found, part)
        return found  # type: ignore[return-value]

    return load


@cache
def _installed() -> dict[str, Callable[[], type[Adapter]]]:
    """Adapter classes other packages registered, not yet imported (built-ins excluded)."""
    return {
        name: _loader(value)
        for name, value in entry_points(ENTRY_POINT_GROUP).items()
        if name not in BUILTIN
    }


def builtin_names() -> list[str]:
    return sorted(BUILTIN)


def names() -> list[str]:
    """Every provider name: built-in and installed."""
    return sorted({*BUILTIN, *_installed()})


def hook_modules() -> tuple[str, ...]:
    """The modules under ``agentspool.hooks`` the built-in providers' CLIs run."""
    return tuple(row.hook_module for row in BUILTIN.values() if row.hook_module)


def kits() -> dict[str, str]:
    """Each built-in provider's conformance kit, ``module:attribute``."""
    return {name: row.kit for name, row in BUILTIN.items()}


def history_here(name: str) -> bool:
    """Whether the provider may have history on this machine: for a built-in, whether
    where its CLI keeps it exists (``Builtin.home``), asked without loading the adapter
    (its imports cost a first ``usage`` ~3 ms a provider, ADR 0062); an installed
    adapter is always asked itself."""
    row = BUILTIN.get(name)
    return row is None or row.history_here()


def exported_on_use(package: str, name: str) -> Callable[[str], object]:
    """A built-in subpackage's module ``__getattr__``: its adapter class ``name``, imported
    from its ``_adapter`` when first asked for, so that importing the subpackage (for its
    ``_home``) loads nothing else."""

    def attribute(wanted: str) -> object:
        if wanted == name:
            return getattr(import_module(f"{package}._adapter"), name)
        raise AttributeError(f"module {package!r} has no attribute {wanted!r}")

    return attribute


def load(name: str) -> Adapter:
    """The adapter registered as ``name`` (one instance per process)."""
    adapter = _loaded.get(name)
    if adapter is None:
        row = BUILTIN.get(name)
        if row is not None:
            adapter = row.load()
        else:
            installed = _installed().get(name)
            if installed is None:
                raise UnknownProviderError(name, names())
            adapter = installed()()
        _loaded[name] = adapter
    return adapter
