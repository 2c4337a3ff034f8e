"""Loading and filling the settings templates shipped as package data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_PLACEHOLDER_PREFIX = "{{hook:"


def template_text(name: str) -> str:
    # importlib.resources pulls in pathlib, tempfile and shutil (~7 ms): setup pays it,
    # not every reader that imports an adapter.
    from importlib import resources

    return resources.files("agentspool.settings_templates").joinpath(name).read_text("utf-8")


def fill_hooks(node: Any, command_for: Callable[[str], str]) -> Any:
    """Replace every ``"{{hook:<Event>}}"`` string in a parsed template, as data."""
    if isinstance(node, dict):
        return {key: fill_hooks(value, command_for) for key, value in node.items()}
    if isinstance(node, list):
        return [fill_hooks(value, command_for) for value in node]
    if isinstance(node, str) and node.startswith(_PLACEHOLDER_PREFIX) and node.endswith("}}"):
        return command_for(node[len(_PLACEHOLDER_PREFIX) : -2])
    return node


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string."""
    out = ['"']
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
