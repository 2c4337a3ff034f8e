"""The distribution: built sdist → wheel, it holds exactly the one namespaced package.

ADR 0002: the repository's top-level folders are mapped into ``agentspool.*``; nothing
generic (``hooks``, ``spool``, …) may be installed at the top level.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
VERSION = PYPROJECT["project"]["version"]
CODE_FOLDERS = ("hooks", "spool", "adapters", "core", "cli", "serve", "api")


def _build(args: list[str], cwd: Path) -> None:
    """``python -m build``; offline machines fall back to building without isolation."""
    cmd = [sys.executable, "-m", "build", *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        proc = subprocess.run(
            [*cmd, "--no-isolation"], cwd=cwd, capture_output=True, text=True, check=False
        )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the sdist (not from the checkout): the sdist must be whole."""
    out = tmp_path_factory.mktemp("dist")
    _build(["--sdist", "--outdir", str(out), str(REPO)], REPO)
    [sdist] = out.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(out / "src", filter="data")
    [src] = (out / "src").iterdir()
    _build(["--wheel", "--outdir", str(out), "."], src)
    [whl] = out.glob("*.whl")
    return whl


@pytest.fixture(scope="module")
def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


def test_wheel_holds_every_subpackage(names):
    for package in (
        "hooks",
        "spool",
        "adapters",
        "adapters/claude_code",
        "adapters/codex",
        "adapters/opencode",
        "core",
        "cli",
        "serve",
    ):
        assert f"agentspool/{package}/__init__.py" in names
    for page in ("index.html", "app.js", "style.css"):  # serve's page: package data
        assert f"agentspool/serve/static/{page}" in names
    assert "agentspool/__init__.py" in names
    assert "agentspool/hooks/claude_code.py" in names
    assert "agentspool/spool/write.py" in names
    assert "agentspool/py.typed" in names


def test_wheel_ships_the_settings_templates_and_no_readme(names):
    templates = [n for n in names if n.startswith("agentspool/settings_templates/")]
    assert "agentspool/settings_templates/claude-code.settings.json" in templates
    assert "agentspool/settings_templates/codex.hooks.toml" in templates
    assert "agentspool/settings_templates/opencode-plugin.js" in templates
    assert not [n for n in templates if n.lower().endswith((".md", ".rst", ".txt"))]


def test_wheel_has_no_folder_readmes(names):
    """Ownership notes (hooks/README.md, spool/README.md, …) are for the repository."""
    assert [n for n in names if n.startswith("agentspool/") and n.endswith(".md")] == []


def test_wheel_has_no_generic_top_level_names(names):
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"agentspool", f"agentspool-{VERSION}.dist-info"}
    for generic in (*CODE_FOLDERS, "settings-templates", "settings_templates", "tests"):
        assert generic not in tops


def test_every_console_script_target_imports(wheel, names, tmp_path):
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path)
        entry_points = zf.read(f"agentspool-{VERSION}.dist-info/entry_points.txt").decode()
    parser = configparser.ConfigParser()
    parser.read_string(entry_points)
    scripts = dict(parser["console_scripts"])
    assert scripts == {name: target for name, target in PYPROJECT["project"]["scripts"].items()}
    # Every built-in is a row of the registry's table; the entry-point group is for
    # adapters from other packages (ADR 0042), so this package registers none there.
    assert not parser.has_section("agentspool.adapters")
    for target in scripts.values():
        module, _, attr = target.partition(":")
        probe = (
            f"import {module} as m; assert callable(m.{attr}); "
            f"assert m.__file__.startswith({str(tmp_path)!r}), m.__file__"
        )
        env = {**os.environ, "PYTHONPATH": str(tmp_path)}
        subprocess.run([sys.executable, "-c", probe], check=True, cwd=tmp_path, env=env)


def test_every_code_package_is_listed_in_pyproject():
    """A new ``__init__.py`` under a code folder must be listed, or the wheel drops it."""
    package_dir: dict[str, str] = SETUPTOOLS["package-dir"]
    listed = set(SETUPTOOLS["packages"])
    found = set()
    for dotted, folder in package_dir.items():
        root = REPO / folder
        for init in root.rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            rel = init.parent.relative_to(root).parts
            found.add(".".join((dotted, *rel)))
    assert found - listed == set()
    # Listed without an __init__.py: only folders of package data (no code to lose).
    assert listed - found <= set(SETUPTOOLS["package-data"])
    for folder in CODE_FOLDERS:
        assert folder in package_dir.values()


def test_the_shipped_price_table_is_read_beside_its_module_in_the_wheel(wheel, tmp_path):
    """``load_prices`` opens ``prices.toml`` beside ``pricing.py`` with ``open()``, not
    through ``importlib.resources`` (ADR 0058): the wheel installs it there."""
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path)
    probe = (
        "from agentspool.core import pricing; "
        f"assert pricing.SHIPPED_PRICES.startswith({str(tmp_path)!r}), pricing.SHIPPED_PRICES; "
        "print(pricing.load_prices().taken)"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    shipped = tomllib.loads((REPO / "core" / "prices.toml").read_text())["taken"]
    assert done.stdout.strip() == str(shipped)
