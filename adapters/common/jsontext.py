"""Editing a JSON document as text: insert or remove one entry, and nothing else moves.

``agentspool install`` edits files the user owns (a CLI's settings). Parsing and dumping
them again would re-indent, re-order and re-escape the user's text; here the document is
parsed only to learn where each value starts and ends, and an edit splices our entry
into the text in the document's own style (line ending, indentation unit, separators,
one-line or not). Removing is the exact inverse of inserting: insert then remove gives
back the original bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agentspool.errors import SettingsError

_WS = " \t\n\r"
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"')
_LITERALS = {"true": True, "false": False, "null": None}


class Node:
    """A value and where its text is: ``text[start:end]``. Objects keep ``keys`` (the
    key's start offset beside each) and arrays ``items``, in document order."""

    __slots__ = ("end", "items", "key_starts", "keys", "start", "value")

    def __init__(self, start: int) -> None:
        self.start = start
        self.end = start
        self.value: Any = None
        self.keys: list[str] = []
        self.key_starts: list[int] = []
        self.items: list[Node] = []

    def is_object(self) -> bool:
        return isinstance(self.value, dict)

    def is_array(self) -> bool:
        return isinstance(self.value, list)

    def child_starts(self) -> list[int]:
        return self.key_starts if self.is_object() else [n.start for n in self.items]

    def member(self, key: str) -> Node | None:
        """The value of ``key`` (the last one, as JSON parsers keep a repeated key)."""
        for name, node in zip(reversed(self.keys), reversed(self.items), strict=True):
            if name == key:
                return node
        return None


def where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {column}"


class _Parser:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path

    def fail(self, pos: int, problem: str) -> SettingsError:
        return SettingsError(
            self.path, f"not valid JSON at {where(self.text, pos)}: {problem}; left untouched"
        )

    def skip(self, pos: int) -> int:
        text = self.text
        while pos < len(text) and text[pos] in _WS:
            pos += 1
        return pos

    def value(self, pos: int) -> Node:
        text = self.text
        pos = self.skip(pos)
        node = Node(pos)
        if pos >= len(text):
            raise self.fail(pos, "unexpected end of file")
        ch = text[pos]
        if ch == "{":
            node.value = {}
            pos = self.skip(pos + 1)
            if text.startswith("}", pos):
                node.end = pos + 1
                return node
            while True:
                pos = self.skip(pos)
                if not text.startswith('"', pos):
                    raise self.fail(pos, "expected a key in double quotes")
                key_start = pos
                key, pos = self.string(pos)
                pos = self.skip(pos)
                if not text.startswith(":", pos):
                    raise self.fail(pos, "expected ':' after the key")
                child = self.value(pos + 1)
                node.keys.append(key)
                node.key_starts.append(key_start)
                node.items.append(child)
                node.value[key] = child.value
                pos = self.skip(child.end)
                if text.startswith(",", pos):
                    pos += 1
                    continue
                if text.startswith("}", pos):
                    node.end = pos + 1
                    return node
                raise self.fail(pos, "expected ',' or '}'")
        if ch == "[":
            node.value = []
            pos = self.skip(pos + 1)
            if text.startswith("]", pos):
                node.end = pos + 1
                return node
            while True:
                child = self.value(pos)
                node.items.append(child)
                node.value.append(child.value)
                pos = self.skip(child.end)
                if text.startswith(",", pos):
                    pos += 1
                    continue
                if text.startswith("]", pos):
                    node.end = pos + 1
                    return node
                raise self.fail(pos, "expected ',' or ']'")
        if ch == '"':
            node.value, node.end = self.string(pos)
            return node
        number = _NUMBER.match(text, pos)
        if number:
            node.value = json.loads(number.group())
            node.end = number.end()
            return node
        for word, literal in _LITERALS.items():
            if text.startswith(word, pos):
                node.value, node.end = literal, pos + len(word)
                return node
        raise self.fail(pos, f"unexpected character {ch!r}")

    def string(self, pos: int) -> tuple[str, int]:
        match = _STRING.match(self.text, pos)
        if match is None:
            raise self.fail(pos, "unterminated string, or a raw control character in it")
        try:
            value: str = json.loads(match.group())
        except json.JSONDecodeError as exc:
            raise self.fail(pos + exc.pos, exc.msg.lower()) from None
        return value, match.end()


def parse(text: str, path: str) -> Node:
    """The document's root, with every value's span; ``SettingsError`` naming the line
    and column when ``text`` is not one strict JSON value (comments are refused)."""
    parser = _Parser(text, path)
    start = 1 if text.startswith("\ufeff") else 0
    root = parser.value(start)
    end = parser.skip(root.end)
    if end != len(text):
        raise parser.fail(end, "unexpected text after the document")
    return root


class Style:
    """How a document writes itself, learnt from its own text."""

    def __init__(self, text: str, root: Node) -> None:
        self.newline = "\r\n" if "\r\n" in text else "\n"
        body = text[root.start : root.end]
        self.one_line = bool(root.items) and "\n" not in body
        self.unit = "  "
        for line in body.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and stripped[0] not in "}]":
                self.unit = line[: len(line) - len(stripped)]
                break
        self.key_sep = ": "
        self.item_sep = ", "  # an inline array in a pretty document reads best spaced
        sep = re.search(r'"\s*:\s*(?=\S)', body)
        if sep is not None and "\n" not in sep.group():
            self.key_sep = sep.group()[1:]
        comma = re.search(r'[\]}"0-9el],[ \t]*(?=[\["{0-9tfn-])', body)
        if comma is not None and self.one_line:
            self.item_sep = comma.group()[1:]

    def render(self, value: Any, indent: str, one_line: bool) -> str:
        if one_line:
            return json.dumps(value, ensure_ascii=False, separators=(self.item_sep, self.key_sep))
        text = json.dumps(
            value, ensure_ascii=False, indent=self.unit, separators=(",", self.key_sep)
        )
        return text.replace("\n", self.newline + indent)


def line_indent(text: str, pos: int) -> str:
    """The whitespace that opens the line ``pos`` is on."""
    begin = text.rfind("\n", 0, pos) + 1
    end = begin
    while end < pos and text[end] in " \t":
        end += 1
    return text[begin:end]


def _multi_line(text: str, container: Node, style: Style) -> bool:
    starts = container.child_starts()
    if not starts:
        return not style.one_line
    return "\n" in text[container.start : starts[0]]


def insert(text: str, container: Node, style: Style, value: Any, key: str | None = None) -> str:
    """``text`` with ``value`` added as the last entry of ``container`` (an object
    member under ``key``, or an array item), written in the document's style."""

    def entry(indent: str, one_line: bool) -> str:
        rendered = style.render(value, indent, one_line)
        if key is None:
            return rendered
        return json.dumps(key, ensure_ascii=False) + style.key_sep + rendered

    starts = container.child_starts()
    multi = _multi_line(text, container, style)
    if not starts:
        at = container.start + 1
        if not multi:
            return text[:at] + entry("", True) + text[at:]
        base = line_indent(text, container.start)
        inner = base + style.unit
        nl = style.newline
        return text[:at] + nl + inner + entry(inner, False) + nl + base + text[at:]
    last = container.items[-1]
    if multi:
        indent = line_indent(text, starts[-1])
        added = "," + style.newline + indent + entry(indent, False)
    else:
        sep = style.item_sep
        if len(starts) > 1:
            sep = "," + text[container.items[-2].end : starts[-1]].split(",", 1)[-1]
        added = sep + entry("", True)
    return text[: last.end] + added + text[last.end :]


def remove(text: str, container: Node, index: int, style: Style) -> str:
    """``text`` without entry ``index`` of ``container``; the inverse of ``insert``."""
    starts = container.child_starts()
    items = container.items
    if len(items) == 1:
        begin = container.start + 1
        cut = text[begin : items[0].end]
        out = text[:begin] + text[items[0].end :]
        closing = style.newline + line_indent(text, container.start)
        if "\n" in cut and out.startswith(closing, begin):
            out = out[:begin] + out[begin + len(closing) :]
        return out
    if index > 0:
        return text[: items[index - 1].end] + text[items[index].end :]
    return text[: starts[0]] + text[starts[1] :]


def replace(text: str, node: Node, style: Style, value: Any) -> str:
    """``text`` with ``node``'s value rewritten in place, at its own indentation."""
    one_line = "\n" not in text[node.start : node.end]
    rendered = style.render(value, line_indent(text, node.start), one_line)
    return text[: node.start] + rendered + text[node.end :]


def find_path(root: Node, *keys: str) -> Node | None:
    node: Node | None = root
    for key in keys:
        if node is None or not node.is_object():
            return None
        node = node.member(key)
    return node


Predicate = Callable[[Any], bool]
