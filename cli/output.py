"""What every room prints the same way: JSON, one safe line, a usage error, the warnings
``ls``/``watch``/``read``/``show`` share. Tables and colour are ``render``'s (rich); this
module stays light, so a command that prints JSON never pays for rich."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import agentspool
from agentspool.cli._terminal import one_line
from agentspool.cli.options import EXIT_USAGE

if TYPE_CHECKING:
    import msgspec

    from agentspool import Chat


def print_json(value: Any) -> bytes:
    """``value`` as one line of JSON on stdout; the bytes written."""
    import msgspec

    output = msgspec.json.encode(value) + b"\n"
    sys.stdout.buffer.write(output)
    return output


def print_json_by_item(value: msgspec.Struct) -> None:
    """``print_json`` of a Struct, the same bytes, written a list item at a time: a long
    session's detail is tens of MB of JSON, and it is never in memory whole."""
    import msgspec

    encode = msgspec.json.Encoder().encode
    out = sys.stdout.buffer
    out.write(b"{")
    for i, (name, key) in enumerate(
        zip(value.__struct_fields__, value.__struct_encode_fields__, strict=True)
    ):
        out.write(b"," * (i > 0) + encode(key) + b":")
        field = getattr(value, name)
        if isinstance(field, list):
            out.write(b"[")
            for j, item in enumerate(field):
                out.write(b"," * (j > 0) + encode(item))
            out.write(b"]")
        else:
            out.write(encode(field))
    out.write(b"}\n")


def say(text: str, file: Any = None) -> None:
    """``print`` of one line made of what others wrote (conversation text, tool input,
    file names): control characters shown, never sent to the terminal."""
    print(one_line(text), file=file)


def usage_error(message: str) -> int:
    print(f"agentspool: {message}", file=sys.stderr)
    return EXIT_USAGE


def stdout_gone() -> None:
    """The reader left (``show | head``): done, not an error. Nothing more may reach the
    closed pipe, not even the interpreter's flush at exit."""
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def drift_warning(provider: str, run_id: str, chat: Chat) -> str:
    """One line: which CLI version wrote what this agentspool does not know (ADR 0014)."""
    version = chat.drift.cli_version or "version not stated"
    return (
        f"agentspool: warning: {run_id}: {provider} {version} wrote records this "
        f"agentspool does not know (state may be incomplete): {chat.drift.describe()}"
    )


def install_warning() -> str:
    """One line when an installed hook cannot record (``agentspool.broken_installs``),
    else ``""``: what ``ls`` and ``watch`` say before anything else."""
    broken = agentspool.broken_installs()
    if not broken:
        return ""
    more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
    return f"agentspool: warning: {broken[0]}{more}; agentspool doctor says how to mend it"


def when(at: float) -> str:
    """A record's local time to the millisecond; twelve dashes when it has none."""
    import time

    if not at:
        return "-" * 12
    return time.strftime("%H:%M:%S", time.localtime(at)) + f".{int(at * 1000) % 1000:03d}"


def step_phrase(step: Any) -> str:
    """A step's state in words (``state_phrase`` of its state and activity: a step does
    not carry the pending call, so an open prompt reads "approve a tool call")."""
    return agentspool.state_phrase(agentspool.Chat(state=step.state, activity=step.activity))
