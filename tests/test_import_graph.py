"""Imports flow one way (ADR 0012): ``hooks → spool``; ``adapters → core → spool``; the
public API → core and the registry; ``cli →`` the public API (and ``serve``, inside its
command); ``serve →`` the public API. The exception tree (standard library only) lives at
the bottom, ``agentspool.spool.errors``, importable from every layer below the facade;
``cli`` and ``serve`` take it from the public API (``agentspool.errors``). No layer below
the facade imports the facade (``agentspool``, ``agentspool.errors``): a planted
``from agentspool import read_chat`` is caught in each.

The graph is read from the source with ``ast`` — every import, including those inside
functions and ``TYPE_CHECKING`` blocks — so a lazy back-import is caught too. A second
check keeps provider names out of core's code: core never branches on a provider.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from agentspool.adapters import registry

REPO = Path(__file__).resolve().parent.parent

# folder → the agentspool module prefix its files are installed under
FOLDERS = {
    "hooks": "agentspool.hooks",
    "spool": "agentspool.spool",
    "core": "agentspool.core",
    "adapters": "agentspool.adapters",
    "cli": "agentspool.cli",
    "serve": "agentspool.serve",
    "api": "agentspool",
}
ERRORS = "agentspool.spool.errors"
FACADE = "agentspool"  # the package itself: the public API's names
PUBLIC_ERRORS = "agentspool.errors"  # the facade's name for the exception tree
BELOW_THE_FACADE = ("hooks", "spool", "core", "adapters")
# What each layer may import of agentspool (module prefixes), beyond itself (and, below
# the facade, ERRORS).
ALLOWED: dict[str, tuple[str, ...]] = {
    "hooks": ("agentspool.spool.write",),
    "spool": (),
    "core": ("agentspool.spool",),
    "adapters": ("agentspool.core", "agentspool.spool"),
    "api": ("agentspool.core", "agentspool.adapters.registry", "agentspool.spool"),
    # the public API's modules; serve only lazily, inside its command
    "cli": (PUBLIC_ERRORS, "agentspool.api", "agentspool.follow", "agentspool.serve"),
    "serve": (PUBLIC_ERRORS, "agentspool.api", "agentspool.follow"),
}


def _modules(root: Path) -> dict[Path, str]:
    """Every source file of the tree → the module name it is installed as."""
    out = {}
    for folder, prefix in FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            out[path] = ".".join([prefix, *(p for p in parts if p != "__init__")])
    return out


def _imports(path: Path, module: str, known: set[str]) -> list[tuple[int, str]]:
    """Every ``agentspool`` module ``path`` imports, absolute, with its line.
    ``from X import a`` imports module ``X.a`` when that is a module, else ``X``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((node.lineno, sub if sub in known else base))
    return [(n, m) for n, m in found if m == "agentspool" or m.startswith("agentspool.")]


def _layer_of(module: str) -> str:
    for folder, prefix in FOLDERS.items():
        if folder != "api" and (module == prefix or module.startswith(prefix + ".")):
            return folder
    return "api"


def _allowed(folder: str, module: str) -> bool:
    if folder in BELOW_THE_FACADE:
        if module == ERRORS:
            return True
    elif module == FACADE:
        return True  # the public API, from the facade and the layers above it
    own = FOLDERS[folder]
    if folder == "api":
        if _layer_of(module) == "api":
            return True
    elif module == own or module.startswith(own + "."):
        return True
    return any(module == p or module.startswith(p + ".") for p in ALLOWED[folder])


def violations(root: Path) -> list[str]:
    modules = _modules(root)
    known = set(modules.values())
    out = []
    for path, module in modules.items():
        folder = path.relative_to(root).parts[0]
        for line, imported in _imports(path, module, known):
            if not _allowed(folder, imported):
                out.append(f"{path.relative_to(root)}:{line}: {folder} imports {imported}")
    return sorted(set(out))


def test_imports_flow_one_way() -> None:
    assert violations(REPO) == []


@pytest.mark.parametrize(
    ("folder", "module", "planted"),
    [
        ("core", "reducer.py", "import agentspool.adapters\n"),
        ("core", "reader.py", "def f():\n    from agentspool.adapters import registry\n"),
        ("spool", "read.py", "from agentspool.core import seam\n"),
        ("adapters", "fake.py", "from agentspool import api\n"),
        ("hooks", "_entry.py", "from agentspool.spool import read\n"),
        ("cli", "main.py", "from agentspool.adapters.claude_code import ClaudeCode\n"),
        ("serve", "app.py", "from agentspool.core import runs\n"),
        ("api", "follow.py", "def f():\n    from agentspool.serve import app\n"),
        # the facade, from each layer below it
        ("spool", "read.py", "from agentspool import read_chat\n"),
        ("core", "reducer.py", "from agentspool import read_chat\n"),
        ("hooks", "_entry.py", "def f():\n    from agentspool import read_chat\n"),
        ("adapters", "registry.py", "from agentspool import read_chat\n"),
        ("adapters", "common/commands.py", "import agentspool\n"),
        ("core", "seam.py", "from agentspool.errors import TranscriptGoneError\n"),
    ],
)
def test_a_planted_back_import_is_caught(
    tmp_path: Path, folder: str, module: str, planted: str
) -> None:
    for name in FOLDERS:
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / folder / module
    target.write_text(target.read_text() + "\n" + planted)
    found = violations(tmp_path)
    assert len(found) == 1 and found[0].startswith(f"{folder}/{module}:"), found


def _string_constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        node.value.lower()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    }


def test_core_code_never_names_a_provider() -> None:
    names = {name.lower() for name in registry.names()} | {
        name.replace("-", "_") for name in registry.names()
    }
    offenders = {
        str(path.relative_to(REPO)): found
        for path in sorted((REPO / "core").rglob("*.py"))
        if (found := _string_constants(path) & names)
    }
    assert offenders == {}
