"""``agentspool serve --install-unit``: a systemd user unit, so serve starts at login.

The unit runs this same interpreter (``sys.executable -m agentspool.cli.main serve``)
with the options given beside ``--install-unit``; ``--uninstall-unit`` removes it. Only
the file: enabling it is the user's ``systemctl --user enable --now`` (printed).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence

UNIT = "agentspool-serve.service"


def unit_dir() -> str:
    """``$XDG_CONFIG_HOME/systemd/user`` (``~/.config`` when it is not set)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "systemd", "user")


def unit_text(serve_args: Sequence[str]) -> str:
    command = shlex.join([sys.executable, "-m", "agentspool.cli.main", "serve", *serve_args])
    # systemd expands % and $ in ExecStart: written as %% and $$ they stay literal.
    command = command.replace("%", "%%").replace("$", "$$")
    keep = {
        name: os.environ[name]
        # where this shell's agentspool and CLIs keep their files, when it is not the
        # default (a login session's environment has none of these)
        for name in (
            "AGENTSPOOL_RUNTIME_DIR",
            "AGENTSPOOL_DATA_DIR",
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "GEMINI_CLI_HOME",
        )
        if os.environ.get(name)
    }
    env = "".join(f'Environment="{k}={v.replace("%", "%%")}"\n' for k, v in keep.items())
    return (
        "[Unit]\n"
        "Description=agentspool serve: what each coding-agent CLI run is doing (read-only)\n"
        "\n"
        "[Service]\n"
        f"ExecStart={command}\n"
        f"{env}"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def install_unit(serve_args: Sequence[str]) -> tuple[str, bool]:
    """Write the unit; ``(its path, whether it changed)``."""
    from agentspool.errors import SettingsError

    directory = unit_dir()
    path = os.path.join(directory, UNIT)
    text = unit_text(serve_args)
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return path, False
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise SettingsError(path, f"cannot read: {exc.strerror}") from None
    os.makedirs(directory, exist_ok=True)
    temporary = f"{path}.agentspool-tmp"
    with open(temporary, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(temporary, path)
    return path, True


def uninstall_unit() -> tuple[str, bool]:
    """Remove the unit; ``(its path, whether there was one)``."""
    path = os.path.join(unit_dir(), UNIT)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return path, False
    return path, True
