"""Loading and filling the settings templates shipped as package data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_PLACEHOLDER_PREFIX = "{{hook:"
_WRITER_LINE = "// @spool-writer\n"
_ARMED_LINE = "const ARMED = null;"


def template_text(name: str) -> str:
    # importlib.resources pulls in pathlib, tempfile and shutil (~7 ms): setup pays it,
    # not every reader that imports an adapter.
    from importlib import resources

    return resources.files("agentspool.settings_templates").joinpath(name).read_text("utf-8")


def spool_script(name: str, runtime_dir: str | None = None, run_id: str | None = None) -> str:
    """A script the CLI loads itself (OpenCode's plugin, Pi's extension), with the shared
    spool writer (``spool-writer.js``) rendered in at its ``// @spool-writer`` line:
    installed (``ARMED`` null: the run is the CLI's process) or armed for one run."""
    text = template_text(name).replace(_WRITER_LINE, template_text("spool-writer.js"), 1)
    if run_id is None or runtime_dir is None:
        return text
    import msgspec  # setup's, not a reader's

    armed = msgspec.json.encode({"runtimeDir": runtime_dir, "runId": run_id}).decode()
    line = next(ln for ln in text.splitlines() if ln.startswith(_ARMED_LINE))
    return text.replace(line, f"const ARMED = {armed};", 1)


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
