"""JSON read exactly and edited in place: the user's bytes around the export's keys stay as they are.

:func:`parse` reads strict JSON (RFC 8259) and keeps where each value sits in the text.
It refuses what cannot be read back exactly, each with its line and column: a lone
surrogate escape (``"\\ud800"``), a number no float can hold (``1e400``), a key twice in
one object (which one the agent reads is its own business), ``NaN``/``Infinity``, and
nesting deeper than :data:`pipeline.limits.JSON_MAX_DEPTH` (no recursion error on a
100 000-deep file).

:func:`set_key`, :func:`remove_key`, :func:`append_items` and :func:`remove_items` edit
the text at the spans of one key or list item and leave every other byte alone; a new
member follows the indentation and separators of its neighbours (two spaces in a new
file, as ``json.dumps(indent=2)`` writes).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from pipeline.limits import JSON_MAX_DEPTH

Key = tuple[str, ...]

_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"', re.DOTALL)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class JsonTextError(ValueError):
    """Why the text is not JSON the export can read exactly, and where (1-based)."""

    def __init__(self, msg: str, text: str, pos: int) -> None:
        self.msg, self.pos = msg, pos
        self.lineno = text.count("\n", 0, pos) + 1
        self.colno = pos - (text.rfind("\n", 0, pos) + 1) + 1
        super().__init__(f"{msg} (at line {self.lineno}, column {self.colno})")


@dataclass
class Node:
    """One value: its span in the text, its Python value, and its children (object
    members by key, or list items) with the span each child starts at."""

    start: int
    end: int
    value: Any
    kind: str  # object, array, scalar
    children: list["Child"] = field(default_factory=list)

    def member(self, key: str) -> Optional["Child"]:
        return next((c for c in self.children if c.key == key), None)


@dataclass
class Child:
    start: int  # the key's opening quote (object) or the item itself (array)
    node: Node
    key: Optional[str] = None
    colon: str = ": "  # what stands between the key and the value, as written


def parse(text: str) -> Node:
    """The text's value with its spans; :class:`JsonTextError` when it cannot be read exactly."""
    parser = _Parser(text)
    pos = _skip(text, 0)
    node = parser.value(pos, 1)
    end = _skip(text, node.end)
    if end != len(text):
        raise JsonTextError("extra data after the value", text, end)
    return node


def _skip(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return m.end() if m else pos


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text

    def fail(self, msg: str, pos: int) -> JsonTextError:
        return JsonTextError(msg, self.text, pos)

    def value(self, pos: int, depth: int) -> Node:
        text = self.text
        if pos >= len(text):
            raise self.fail("expecting a value", pos)
        char = text[pos]
        if char in "{[":
            if depth > JSON_MAX_DEPTH:
                raise self.fail(f"nested too deeply (more than {JSON_MAX_DEPTH} levels, see docs/limits.md)", pos)
            return self.object(pos, depth) if char == "{" else self.array(pos, depth)
        if char == '"':
            value, end = self.string(pos)
            return Node(pos, end, value, "scalar")
        m = _NUMBER.match(text, pos)
        if m is not None and m.end() > pos:
            return Node(pos, m.end(), self.number(m, pos), "scalar")
        for word, literal in _LITERALS.items():
            if text.startswith(word, pos):
                return Node(pos, pos + len(word), literal, "scalar")
        raise self.fail("expecting a value", pos)

    def number(self, m: re.Match, pos: int) -> Any:
        raw = m.group()
        if m.group(1) is None and m.group(2) is None:
            try:
                return int(raw)
            except ValueError:  # more digits than Python converts
                raise self.fail("a number with too many digits to hold exactly", pos) from None
        value = float(raw)
        if math.isinf(value):
            raise self.fail("a number too large to hold exactly (it would become Infinity)", pos)
        return value

    def string(self, pos: int) -> tuple[str, int]:
        m = _STRING.match(self.text, pos)
        if m is None:
            raise self.fail("an unterminated string, or a control character in a string", pos)
        try:
            value = json.loads(m.group())
        except ValueError:
            raise self.fail("an invalid escape in a string", pos) from None
        for i, char in enumerate(value):
            if 0xD800 <= ord(char) <= 0xDFFF:
                raise self.fail("a lone surrogate escape (\\ud800-\\udfff without its pair) in a string", pos)
        return value, m.end()

    def object(self, pos: int, depth: int) -> Node:
        return self._members(Node(pos, pos, {}, "object"), "}", self._member, depth)

    def array(self, pos: int, depth: int) -> Node:
        return self._members(Node(pos, pos, [], "array"), "]", self._item, depth)

    def _members(self, node: Node, close: str, member: Callable[[Node, int, int], int], depth: int) -> Node:
        """An object's or an array's members, read by ``member`` (which returns where the
        member ends), separated by commas, up to ``close``."""
        text = self.text
        at = _skip(text, node.start + 1)
        if not text.startswith(close, at):
            while True:
                at = _skip(text, member(node, at, depth + 1))
                if text.startswith(close, at):
                    break
                if not text.startswith(",", at):
                    raise self.fail(f"expecting `,` or `{close}`", at)
                at = _skip(text, at + 1)
        node.end = at + 1
        return node

    def _member(self, node: Node, at: int, depth: int) -> int:
        text = self.text
        if not text.startswith('"', at):
            raise self.fail("expecting a key in double quotes", at)
        key, key_end = self.string(at)
        colon = _skip(text, key_end)
        if not text.startswith(":", colon):
            raise self.fail("expecting `:` after the key", colon)
        start = _skip(text, colon + 1)
        value = self.value(start, depth)
        if key in node.value:
            raise self.fail(f"the key {json.dumps(key)} appears twice in one object", at)
        node.value[key] = value.value
        node.children.append(Child(at, value, key, text[key_end:start]))
        return value.end

    def _item(self, node: Node, at: int, depth: int) -> int:
        value = self.value(at, depth)
        node.value.append(value.value)
        node.children.append(Child(at, value))
        return value.end


# --------------------------------------------------------------------------- editing


def find(root: Node, key: Key) -> tuple[list[Node], Optional[Node]]:
    """The nodes along ``key`` that exist, root first (the last is where a missing key
    would go), and the key's node (None when it is missing)."""
    chain = [root]
    node = root
    for i, part in enumerate(key):
        child = node.member(part) if node.kind == "object" else None
        if child is None:
            return chain, None
        node = child.node
        if i < len(key) - 1:
            chain.append(node)
    return chain, node


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    m = _WS.match(text, start)
    line = text[start:m.end() if m else start]
    return line.replace("\n", "").replace("\r", "")


def _unit(text: str, root: Node) -> str:
    """The file's indentation step (that of the root's first member; two spaces otherwise)."""
    if root.children:
        first = root.children[0].start
        between = text[root.start + 1:first]
        if "\n" in between:
            return between.rsplit("\n", 1)[1] or "  "
    return "  "


def _dump(value: Any, indent: str, unit: str, multiline: bool) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _insert(text: str, container: Node, unit: str, rendered_key: Optional[str], value: Any) -> str:
    """``text`` with a new member (or item) added at the end of ``container``."""
    own = _line_indent(text, container.start)
    if container.children:
        last = container.children[-1]
        before = container.children[-2].node.end if len(container.children) > 1 else container.start + 1
        gap = text[before:last.start]
        gap = gap[gap.index(",") + 1:] if "," in gap else gap
        multiline = "\n" in gap
        if not multiline and len(container.children) == 1:
            gap = "" if last.colon == ":" else " "  # `{"a":1}` stays compact, `{"a": 1}` spaced
        indent = gap.rsplit("\n", 1)[1] if multiline else ""
        colon = last.colon if last.key is not None else ": "
        head = f"{rendered_key}{colon}" if rendered_key is not None else ""
        new = "," + gap + head + _dump(value, indent, unit, multiline)
        return text[:last.node.end] + new + text[last.node.end:]
    inner = own + unit
    head = f"{rendered_key}: " if rendered_key is not None else ""
    new = "\n" + inner + head + _dump(value, inner, unit, True) + "\n" + own
    return text[:container.start + 1] + new + text[container.end - 1:]


def set_key(text: str, key: Key, value: Any) -> str:
    """``text`` with ``key`` set to ``value``: its value's span replaced, or the missing
    part of its path added to the deepest object that exists (a part of the path that is
    not an object is the caller's to refuse first, see :func:`blocked`)."""
    root = parse(text)
    chain, node = find(root, key)
    unit = _unit(text, root)
    if node is not None:
        indent = _line_indent(text, node.start)
        multiline = "\n" in text[node.start:node.end] or (not node.children and "\n" in text.strip())
        new = _dump(value, indent, unit, multiline)
        return text[:node.start] + new + text[node.end:]
    owner = chain[-1]
    depth = len(chain) - 1
    nested: Any = value
    for part in reversed(key[depth + 1:]):
        nested = {part: nested}
    return _insert(text, owner, unit, json.dumps(key[depth], ensure_ascii=False), nested)


def blocked(root: Node, key: Key) -> bool:
    """Whether a part of ``key``'s path exists and is not an object (the key cannot be set)."""
    node = root
    for part in key[:-1]:
        child = node.member(part)
        if child is None:
            return False
        node = child.node
        if node.kind != "object":
            return True
    return node.kind != "object"


def _cut(text: str, container: Node, index: int) -> str:
    """``text`` without child ``index`` of ``container`` (and the comma that joined it)."""
    children = container.children
    child = children[index]
    if len(children) == 1:
        return text[:container.start + 1] + text[container.end - 1:]
    if index == 0:
        return text[:child.start] + text[children[1].start:]
    return text[:children[index - 1].node.end] + text[child.node.end:]


def remove_key(text: str, key: Key) -> str:
    """``text`` without ``key``, and without the objects that leaves empty (not the root)."""
    root = parse(text)
    if find(root, key)[1] is None:
        return text
    depth = len(key)
    while depth > 0:
        owner = find(root, key[:depth - 1])[1]
        assert owner is not None
        index = next(i for i, c in enumerate(owner.children) if c.key == key[depth - 1])
        text = _cut(text, owner, index)
        root = parse(text)
        depth -= 1
        emptied = find(root, key[:depth])[1]
        if depth == 0 or emptied is None or emptied.children:
            break
    return text


def append_items(text: str, key: Key, items: list[Any]) -> str:
    """``text`` with ``items`` added at the end of the list at ``key`` (which exists)."""
    for item in items:
        root = parse(text)
        node = find(root, key)[1]
        assert node is not None and node.kind == "array"
        text = _insert(text, node, _unit(text, root), None, item)
    return text


def remove_items(text: str, key: Key, indexes: list[int]) -> str:
    """``text`` without the items at ``indexes`` of the list at ``key``."""
    for index in sorted(indexes, reverse=True):
        node = find(parse(text), key)[1]
        assert node is not None and node.kind == "array"
        text = _cut(text, node, index)
    return text
