"""mypy holds every adapter to the whole seam (ADR 0042): a built-in through its part
properties and its subpackage's ``type[Adapter]`` line, an outside package through its
own such line (ADR 0055). Each case plants one drift in a copy and expects mypy to fail
there, and the copy as it is to pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
OUTSIDE = REPO / "tests" / "outside_adapter" / "linelog_adapter" / "__init__.py"

# (the file, the text it holds, what replaces it): each a drift from the seam.
DRIFTS = {
    "a built-in renames a member of a part it declares": (
        "adapters/opencode/_adapter.py",
        "    def lifecycle_caller(",
        "    def lifecycle_caller_renamed(",
    ),
    "a built-in changes the signature of a part's member": (
        "adapters/gemini_cli/_adapter.py",
        "    def session_at(self, path: str) -> Session | None:",
        "    def session_at(self, path: str, listed: bool) -> Session | None:",
    ),
    "an outside adapter's read_chat drifts from the required core": (
        "outside/__init__.py",
        '    name: ClassVar[str] = "linelog"\n',
        '    name: ClassVar[str] = "linelog"\n\n'
        "    def read_chat(  # type: ignore[override]\n"
        "        self, run_id: str, runtime_dir: str, transcript_path: str\n"
        "    ) -> Chat:\n"
        "        return Chat()\n",
    ),
}
CHECKED = sorted({where for where, _, _ in DRIFTS.values()})


def _copy(where: str) -> str:
    """A module's file under a name of its own (its imports are all absolute)."""
    return where.replace("/", "_")


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    for where in CHECKED:
        source = OUTSIDE if where.startswith("outside/") else REPO / where
        text = source.read_text()
        if where.startswith("outside/"):  # what the planted read_chat names
            text += "\nfrom agentspool.core.seam import Chat  # noqa: E402\n"
        (root / _copy(where)).write_text(text)
    return root


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy-cache")


def _mypy(root: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    # Each file is checked in place; what it imports is the installed package.
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(cache),
            *(_copy(where) for where in CHECKED),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_adapters_as_they_are_pass(tmp_path: Path, cache: Path) -> None:
    proc = _mypy(_tree(tmp_path), cache)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("drift", sorted(DRIFTS))
def test_mypy_fails_on_an_adapter_that_drifts_from_the_seam(
    tmp_path: Path, cache: Path, drift: str
) -> None:
    where, old, new = DRIFTS[drift]
    root = _tree(tmp_path)
    target = root / _copy(where)
    text = target.read_text()
    assert old in text
    target.write_text(text.replace(old, new, 1))
    proc = _mypy(root, cache)
    assert proc.returncode == 1, proc.stdout
    assert _copy(where) in proc.stdout, proc.stdout
