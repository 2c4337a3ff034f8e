"""The source stays readable in an afternoon: no file over 600 lines, at most two
functions over 80 lines (issue 20). Source is every Python file git tracks outside
``tests/``; a function's length runs from its ``def`` line to its last line.

ruff's complexity rules (``C901``, ``PLR0912``, ``PLR0915`` in ``pyproject.toml``) watch
each function's branches and statements; this test watches what they do not: a file's
length, and a function long in lines but plain in shape.
"""

from __future__ import annotations

import ast
import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
LONG_FUNCTIONS_ALLOWED = 2


def _source_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.py"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted(
        path
        for path in listed.split("\0")
        if path and not path.startswith("tests/") and os.path.exists(os.path.join(REPO, path))
    )


def _long_functions(path: str, text: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(text, filename=path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{path}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_the_walk_sees_the_source() -> None:
    files = _source_files()
    assert "adapters/registry.py" in files
    assert not any(path.startswith("tests/") for path in files)


def test_no_source_file_is_over_600_lines() -> None:
    over = []
    for path in _source_files():
        with open(os.path.join(REPO, path), encoding="utf-8") as fh:
            lines = sum(1 for _ in fh)
        if lines > MAX_FILE_LINES:
            over.append(f"{path} ({lines} lines)")
    assert not over, "split along the module's real seams: " + ", ".join(over)


def test_at_most_two_functions_are_over_80_lines() -> None:
    long = []
    for path in _source_files():
        with open(os.path.join(REPO, path), encoding="utf-8") as fh:
            long += _long_functions(path, fh.read())
    assert len(long) <= LONG_FUNCTIONS_ALLOWED, "decompose: " + ", ".join(long)


def test_a_long_function_is_seen() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert _long_functions("planted.py", f"def planted():\n{body}\n") == [
        f"planted.py:1 planted ({MAX_FUNCTION_LINES + 1} lines)"
    ]
    assert _long_functions("short.py", "def short():\n    return 1\n") == []
