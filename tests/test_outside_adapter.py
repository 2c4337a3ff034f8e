"""An adapter package outside agentspool: installed with pip into a fresh venv, it is
found through the ``agentspool.adapters`` entry-point group, listed by the CLI, and
passes the shipped conformance suite through a subclass of a few lines
(``tests/outside_adapter/``)."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import agentspool

PACKAGE = Path(__file__).resolve().parent / "outside_adapter"


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv that sees this environment's packages (agentspool, msgspec, pytest)
    and has the outside package pip-installed into its own site-packages."""
    root = tmp_path_factory.mktemp("outside")
    venv = root / "venv"
    proc = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], root)
    assert proc.returncode == 0, proc.stderr
    python = venv / "bin" / "python"
    purelib = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], root
    ).stdout.strip()
    outer = sysconfig.get_paths()["purelib"]
    # addsitedir, not a bare path: the outer .pth files (the editable install) must run.
    Path(purelib, "outer-env.pth").write_text(f"import site; site.addsitedir({outer!r})\n")
    proc = _run(
        [
            sys.executable,  # this environment's pip, installing into the new venv
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            str(PACKAGE),
        ],
        root,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return python


def test_the_outside_adapter_is_listed_by_the_cli(venv_python: Path, tmp_path: Path) -> None:
    proc = _run([str(venv_python), "-m", "agentspool.cli.main", "setup", "--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    listed = sorted([*agentspool.providers(), "linelog"])  # the built-ins, and the one from outside
    assert "{" + ",".join(listed) + "}" in proc.stdout
    proc = _run(
        [
            str(venv_python),
            "-c",
            "import agentspool; print(agentspool.providers()); "
            "print(type(agentspool.read_chat('linelog', 'r', "
            f"{str(tmp_path / 'rt')!r}, '')).__name__)",
        ],
        tmp_path,
    )
    assert proc.stdout == f"{listed}\nChat\n", proc.stderr


def test_the_outside_adapter_passes_the_shipped_suite(venv_python: Path, tmp_path: Path) -> None:
    proc = _run(
        [
            str(venv_python),
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--pyargs",
            "linelog_adapter.test_conformance",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


def test_this_environment_does_not_see_the_outside_adapter() -> None:
    import agentspool

    assert "linelog" not in agentspool.providers()


def test_the_registry_reads_entry_points_as_importlib_metadata_does() -> None:
    """``registry.entry_points`` reads ``entry_points.txt`` itself (importlib.metadata costs
    ~36 ms to import): the same answer for every group this environment's ~80
    distributions declare."""
    from importlib.metadata import distributions
    from importlib.metadata import entry_points as metadata

    from agentspool.adapters import registry

    groups = {e.group for d in distributions() for e in d.entry_points}
    assert len(groups) > 5
    for group in groups:
        assert registry.entry_points(group) == {e.name: e.value for e in metadata(group=group)}
