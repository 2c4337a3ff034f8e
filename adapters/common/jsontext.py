"""Editing a JSON document as text: insert or remove one entry, and nothing else moves.

``agentspool install`` edits files the user owns (a CLI's settings). Parsing and dumping
them again would re-indent, re-order and re-escape the user's text; here the document is
parsed only to learn where each value starts and ends, and an edit splices our entry
into the text in the document's own style (line ending, indentation unit, separators,
one-line or not). Removing is the exact inverse of inserting: insert then remove gives
back the original bytes.

Some CLIs read their settings as JSON with comments (Gemini CLI strips ``//`` and
``/* */`` before parsing). ``parse(..., comments=True)`` reads such a file by blanking
each comment to spaces of the same length (line breaks kept) and parsing that: every
offset is the original text's, so the edits splice into the user's text and every
comment stays byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agentspool.spool.errors import SettingsError

_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"')
# A string first, so a ``//`` inside one (a URL) is never taken for a comment.
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/)?')
_NOT_A_LINE_BREAK = re.compile(r"[^\r\n]")
MAX_DEPTH = 256
"""Nesting the decoder cannot read (it recurses, to the interpreter's recursion limit)
is refused, naming where it first goes deeper than this: no settings file nests so."""


class _NotJsonConstantError(ValueError):
    """``NaN`` / ``Infinity``: Python's json reads them, JSON has no such value."""


def _refuse_constant(name: str) -> Any:
    raise _NotJsonConstantError(name)


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
_UNSET: Any = object()


class Node:
    """A value and where its text is: ``text[start:end]``. Objects keep ``keys`` (the
    key's start offset beside each) and arrays ``items``, in document order.

    Only the root's members are found when the document is parsed; a container's own
    members are found the first time they are asked for, and every value below is read
    by the C decoder. An edit touches a few containers of a document of any size, so
    parsing stays linear in it (one decode) however large the rest is."""

    __slots__ = ("_items", "_key_starts", "_keys", "_text", "_value", "end", "path", "start")

    def __init__(
        self, text: str, start: int, end: int, value: Any = _UNSET, path: str = ""
    ) -> None:
        self._text = text
        self.start = start
        self.end = end
        self._value = value
        self.path = path
        self._keys: list[str] | None = None
        self._key_starts: list[int] = []
        self._items: list[Node] = []

    @property
    def source(self) -> str:
        """The text the spans index: the document, its comments blanked if it had any."""
        return self._text

    @property
    def value(self) -> Any:
        if self._value is _UNSET:
            self._value = _DECODER.raw_decode(self._text, self.start)[0]
        return self._value

    def is_object(self) -> bool:
        return self._text.startswith("{", self.start)

    def is_array(self) -> bool:
        return self._text.startswith("[", self.start)

    @property
    def keys(self) -> list[str]:
        self._members()
        assert self._keys is not None
        return self._keys

    @property
    def key_starts(self) -> list[int]:
        self._members()
        return self._key_starts

    @property
    def items(self) -> list[Node]:
        self._members()
        return self._items

    def _members(self) -> None:
        if self._keys is None:
            self._keys = []
            if self.is_object() or self.is_array():
                _Scanner(self._text, self.path).members(self)

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


class _Scanner:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path

    def fail(self, pos: int, problem: str) -> SettingsError:
        return SettingsError(
            self.path, f"not valid JSON at {where(self.text, pos)}: {problem}; left untouched"
        )

    def skip(self, pos: int) -> int:
        found = _WS.match(self.text, pos)
        return found.end() if found else pos

    def value(self, pos: int) -> Node:
        """The value at ``pos`` (after whitespace), read whole by the C decoder."""
        pos = self.skip(pos)
        if pos >= len(self.text):
            raise self.fail(pos, "unexpected end of file")
        try:
            value, end = _DECODER.raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.pos, exc.msg.lower()) from None
        except _NotJsonConstantError as exc:
            raise self.fail(self.text.find(str(exc), pos), f"{exc} is not JSON") from None
        except RecursionError:
            raise self.too_deep(pos) from None
        except ValueError as exc:  # an integer past Python's digit limit, say
            raise self.fail(pos, str(exc)) from None
        return Node(self.text, pos, end, value, self.path)

    def too_deep(self, pos: int) -> SettingsError:
        """Where the value at ``pos`` first nests deeper than ``MAX_DEPTH``."""
        depth = 0
        deepest = pos
        for found in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', self.text[pos:]):
            bracket = found.group()
            if bracket in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    deepest = pos + found.start()
                    break
            elif bracket in "]}":
                depth -= 1
        return SettingsError(
            self.path,
            f"nested deeper than {MAX_DEPTH} levels at {where(self.text, deepest)}; left untouched",
        )

    def string(self, pos: int) -> tuple[str, int]:
        match = _STRING.match(self.text, pos)
        if match is None:
            raise self.fail(pos, "unterminated string, or a raw control character in it")
        raw = match.group()
        if "\\" not in raw:
            return raw[1:-1], match.end()
        try:
            value: str = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise self.fail(pos + exc.pos, exc.msg.lower()) from None
        return value, match.end()

    def members(self, node: Node) -> None:
        """Find ``node``'s members (each value read whole by the decoder); checks the
        container's own punctuation as it goes."""
        text = self.text
        obj = node.is_object()
        close = "}" if obj else "]"
        keys: list[str] = []
        starts: list[int] = []
        items: list[Node] = []
        pos = self.skip(node.start + 1)
        if not text.startswith(close, pos):
            while True:
                if obj:
                    pos = self.skip(pos)
                    if not text.startswith('"', pos):
                        raise self.fail(pos, "expected a key in double quotes")
                    starts.append(pos)
                    key, pos = self.string(pos)
                    keys.append(key)
                    pos = self.skip(pos)
                    if not text.startswith(":", pos):
                        raise self.fail(pos, "expected ':' after the key")
                    pos += 1
                child = self.value(pos)
                items.append(child)
                pos = self.skip(child.end)
                if text.startswith(",", pos):
                    pos += 1
                    continue
                if text.startswith(close, pos):
                    break
                raise self.fail(pos, f"expected ',' or '{close}'")
        node.end = pos + 1
        node._keys = keys if obj else []
        node._key_starts = starts
        node._items = items


def blank_comments(text: str, path: str) -> str:
    """``text`` with every ``//`` and ``/* */`` comment outside a string turned into
    spaces (its line breaks kept): the same length, the same offsets, strict JSON left."""
    if "/" not in text:
        return text

    def blank(found: re.Match[str]) -> str:
        token = found.group()
        if token.startswith('"'):
            return token
        if token.startswith("/*") and (len(token) < 4 or not token.endswith("*/")):
            raise _Scanner(text, path).fail(found.start(), "unterminated /* comment")
        return _NOT_A_LINE_BREAK.sub(" ", token)

    return _STRING_OR_COMMENT.sub(blank, text)


def parse(text: str, path: str, *, comments: bool = False) -> Node:
    """The document's root, with every value's span; ``SettingsError`` naming the line
    and column when ``text`` is not one strict JSON value, or nests too deep to read
    (``MAX_DEPTH``). Comments are refused unless ``comments`` (``blank_comments``): then
    the nodes read the blanked text, at the original's offsets."""
    if comments:
        text = blank_comments(text, path)
    scanner = _Scanner(text, path)
    start = scanner.skip(1 if text.startswith("\ufeff") else 0)
    if text.startswith(("{", "["), start):
        root = Node(text, start, start, path=path)
        scanner.members(root)  # the root's members, each read whole: one decode in all
        if root.is_object():
            root._value = dict(zip(root.keys, (n.value for n in root.items), strict=True))
        else:
            root._value = [n.value for n in root.items]
    else:
        root = scanner.value(start)
    end = scanner.skip(root.end)
    if end != len(text):
        raise scanner.fail(end, "unexpected text after the document")
    return root


_INDENTED = re.compile(r"\n([ \t]*)([^ \t\r\n])")
_KEY_SEP = re.compile(r'"\s*:\s*(?=\S)')
_ITEM_SEP = re.compile(r'[\]}"0-9el],[ \t]*(?=[\["{0-9tfn-])')


class Style:
    """How a document writes itself, learnt from its own text."""

    def __init__(self, text: str, root: Node) -> None:
        # Searched within the root's span, never sliced or split: a document of many MB
        # is styled by its first lines. The root's own text: a comment (blanked there)
        # must not lend its indentation or a ``"x": `` it quotes.
        text = root.source
        start, end = root.start, root.end
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.one_line = bool(root.items) and text.find("\n", start, end) < 0
        self.unit = "  "
        for found in _INDENTED.finditer(text, start, end):
            if found.group(2) not in "}]":
                self.unit = found.group(1)
                break
        self.key_sep = ": "
        self.item_sep = ", "  # an inline array in a pretty document reads best spaced
        sep = _KEY_SEP.search(text, start, end)
        if sep is not None and "\n" not in sep.group():
            self.key_sep = sep.group()[1:]
        comma = _ITEM_SEP.search(text, start, end)
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


Predicate = Callable[[Any], bool]
