"""Text from transcripts and payloads, made safe to print on a terminal: the one place.

Conversation text is anyone's: a file the agent read, a web page it fetched, a prompt
pasted from elsewhere. Printed raw, its escape sequences are the terminal's commands
(OSC 52 writes the clipboard, CSI 2J clears the screen, OSC 8 hides a link's target).
Every command that prints such text (``ls``, ``search``, ``show``, ``read``,
``explain``, ``replay``, ``watch``) passes it through ``safe`` or ``one_line`` first;
``--json`` needs none (JSON escapes every control character). Standard library only.
"""

from __future__ import annotations

# Caret notation for C0 and DEL (ESC reads ^[ as in `cat -v`); C1 controls (0x80-0x9f,
# of which 0x9b is a one-byte CSI to some terminals) as the replacement character.
# Lone surrogates (a non-UTF-8 byte in an argument or a file name, decoded by Python's
# surrogateescape) cannot be written at all: shown as the byte they stand for.
_CONTROLS = {
    **{c: f"^{chr(c + 64)}" for c in range(32)},
    0x7F: "^?",
    **dict.fromkeys(range(0x80, 0xA0), "\ufffd"),
    **{c: f"\\x{c - 0xDC00:02x}" for c in range(0xDC80, 0xDD00)},
    **dict.fromkeys([*range(0xD800, 0xDC80), *range(0xDD00, 0xE000)], "\ufffd"),
}
_KEEP_LINES = {**_CONTROLS}
del _KEEP_LINES[ord("\n")], _KEEP_LINES[ord("\t")]


def safe(text: str) -> str:
    """``text`` with every control character but newline and tab made visible."""
    return text.translate(_KEEP_LINES)


def one_line(text: str) -> str:
    """``text`` for one line of output: newlines and tabs shown too (``^J``, ``^I``)."""
    return text.translate(_CONTROLS)
