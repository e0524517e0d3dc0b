"""Reading one profile file: bytes -> text -> YAML nodes -> positioned tree.

ruamel.yaml only *composes* the file (parses it into nodes with line/column marks);
no object is ever constructed from a tag, so a profile cannot run code. Values are
converted here from the core schema (strings, numbers, booleans, null, lists,
mappings); any other explicit tag is refused. Everything a broken file can do is a
located :class:`~pipeline.errors.Problem`: too large, binary, not UTF-8, empty, a
syntax error, tabs, duplicate keys, an alias bomb, a non-mapping top level.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

from pipeline.errors import Location, Problem, ProfileError
from pipeline.limits import FILE_LIMITS, YAML_MAX_DEPTH, YAML_MAX_NODES
from pipeline.source.syntax import syntax_problem
from pipeline.source.tree import Entry, Map, Node, Scalar, Seq, Span

#: Largest profile file accepted, in bytes.
MAX_BYTES = FILE_LIMITS["profile"]
#: Most values a file may hold once aliases are expanded (stops "billion laughs").
MAX_NODES = YAML_MAX_NODES
#: Deepest nesting of mappings and lists accepted.
MAX_DEPTH = YAML_MAX_DEPTH

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = {"str", "int", "float", "bool", "null"}
_PLAIN_HINT = "profiles use plain YAML: text, numbers, true/false, null, lists and mappings"
#: The YAML 1.2 core schema's numbers (ruamel also reads ``1_000``, ``0b101`` and ``+0x1F``
#: as numbers; the core schema, and so an editor's YAML server, reads them as text).
_CORE_NUMBER = {
    "int": re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"),
    "float": re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)"),
}


class _Abort(Exception):
    """Stops building the tree; carries the problem that made further work pointless."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


# --------------------------------------------------------------------------- bytes -> text


def read_text(path: Path, label: str) -> str:
    """The file's text; refuses directories, FIFOs, devices, huge, binary and non-UTF-8
    files (read by the one bounded reader, :mod:`pipeline.files`)."""
    from pipeline import files

    return decode(files.read_bytes(path, "profile", label), label)


def decode(data: bytes, label: str) -> str:
    """UTF-8 (a BOM is allowed); NUL bytes and invalid UTF-8 are located errors."""
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    data = data[bom:]
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ProfileError(
            Problem("binary file (contains a NUL byte)", _byte_location(data, nul, label), code="profile.binary-file")
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        problem = Problem(
            f"not UTF-8 text: invalid byte 0x{data[err.start]:02x} at byte offset {err.start + bom}",
            _byte_location(data, err.start, label),
            hint="save the profile as UTF-8",
            code="profile.not-utf8",
        )
    raise ProfileError(problem)


def _byte_location(data: bytes, offset: int, label: str) -> Location:
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    col = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    return Location(label, line, col)


# --------------------------------------------------------------------------- text -> nodes


def parse(text: str, label: str) -> Map:
    """The positioned tree of one YAML document whose top level is a mapping."""
    root = _compose(text, label)
    if root is None or (_is_scalar(root) and str(root.tag) == _CORE + "null" and root.value in ("", "~", "null")):
        raise ProfileError(
            Problem(
                "empty profile",
                Location(label, 1, 1),
                hint="a profile is a YAML mapping; start with `name: my-profile`",
                code="profile.empty-file",
            )
        )
    builder = _Builder(text, label)
    try:
        tree = builder.build(root, (), ())
    except _Abort as stop:
        raise ProfileError(builder.problems + [stop.problem]) from None
    if builder.problems:
        raise ProfileError(builder.problems)
    if not isinstance(tree, Map):
        what = "a list" if isinstance(tree, Seq) else "a single value"
        raise ProfileError(
            Problem(
                f"the top level must be a mapping of keys, not {what}",
                tree.span.location,
                hint="a profile looks like `name: my-profile` followed by more `key: value` lines",
                code="profile.not-a-mapping",
            )
        )
    return tree


def load(path: Path, label: str) -> Map:
    """Read and parse one profile file."""
    return parse(read_text(path, label), label)


def _compose(text: str, label: str):
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt", pure=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return yaml.compose(text)
    except MarkedYAMLError as err:
        raise ProfileError(syntax_problem(err, label)) from None
    except YAMLError as err:  # ReaderError: a forbidden character
        raise ProfileError(_reader_problem(err, text, label)) from None
    except RecursionError:
        raise ProfileError(
            Problem(f"nested too deeply (more than {MAX_DEPTH} levels)", Location(label), code="profile.too-deep")
        ) from None


def _is_scalar(node) -> bool:
    from ruamel.yaml.nodes import ScalarNode

    return isinstance(node, ScalarNode)


# --------------------------------------------------------------------------- syntax errors

def _reader_problem(err, text: str, label: str) -> Problem:
    position = getattr(err, "position", None)
    char = getattr(err, "character", None)
    where = Location(label)
    if isinstance(position, int) and 0 <= position <= len(text):
        line = text.count("\n", 0, position) + 1
        where = Location(label, line, position - (text.rfind("\n", 0, position) + 1) + 1)
    code = f"U+{ord(char):04X}" if isinstance(char, str) else (f"U+{char:04X}" if isinstance(char, int) else "a")
    return Problem(
        f"control character {code} is not allowed in YAML",
        where,
        hint="remove it or write it as an escape in double quotes",
        code="profile.yaml-syntax",
    )


# --------------------------------------------------------------------------- nodes -> tree


class _Builder:
    """Converts composed nodes into the positioned tree, expanding aliases with a budget."""

    def __init__(self, text: str, label: str) -> None:
        self.text = text
        self.label = label
        self.count = 0
        self.active: set[int] = set()
        self.problems: list[Problem] = []
        self.keys: list[Span] = []  # keys being built, outermost first
        self.built: set[int] = set()  # nodes built once; building one again expands an alias
        self.expansions = 0

    def span(self, node, *, scalar: bool = False) -> Span:
        start, end = node.start_mark, node.end_mark
        source = self.text[start.index : end.index] if scalar else None
        style = getattr(node, "style", None) if scalar else None
        return Span(self.label, start.line + 1, start.column + 1, source, style or None)

    def problem(self, message: str, span: Span, labels: tuple, hint: str | None = None, code: str | None = None):
        key = ".".join(str(k) for k in labels) or None
        self.problems.append(Problem(message, span.location, key=key, hint=hint, code=code))

    def build(self, node, path: tuple, labels: tuple) -> Node:
        self.count += 1
        if self.count > MAX_NODES:
            raise _Abort(self._bomb(node))
        if len(path) > MAX_DEPTH:
            message = f"nested too deeply (more than {MAX_DEPTH} levels)"
            raise _Abort(Problem(message, self.span(node).location, code="profile.too-deep"))
        if id(node) in self.active:
            raise _Abort(
                Problem("an alias refers to a value that contains it", self.span(node).location, code="profile.recursive-alias")
            )
        if id(node) in self.built:
            self.expansions += 1
        self.built.add(id(node))
        self.active.add(id(node))
        try:
            return self._build(node, path, labels)
        finally:
            self.active.discard(id(node))

    def _bomb(self, node) -> Problem:
        where = self.keys[0] if self.keys else self.span(node)  # the top-level key that explodes
        if not self.expansions:
            return Problem(f"too many values (more than {MAX_NODES})", where.location, code="profile.too-many-values")
        return Problem(
            f"too many values once aliases are expanded (more than {MAX_NODES})",
            where.location,
            hint="this looks like an alias bomb",
            code="profile.alias-bomb",
        )

    def _build(self, node, path: tuple, labels: tuple) -> Node:
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        tag = str(node.tag)
        if isinstance(node, MappingNode):
            self._check_tag(node, tag, "map", labels)
            return self._mapping(node, path, labels)
        if isinstance(node, SequenceNode):
            self._check_tag(node, tag, "seq", labels)
            items = tuple(
                self.build(item, path + (i,), labels + (_item_label(item, i, path),))
                for i, item in enumerate(node.value)
            )
            return Seq(items, self.span(node))
        return Scalar(self._scalar(node, tag, labels), self.span(node, scalar=True))

    def _check_tag(self, node, tag: str, expected: str, labels: tuple) -> None:
        if tag != _CORE + expected:
            self._bad_tag(node, tag, labels)

    def _bad_tag(self, node, tag: str, labels: tuple) -> None:
        self.problem(f"YAML tag `{_short_tag(tag)}` is not allowed", self.span(node), labels, _PLAIN_HINT, "profile.yaml-tag")

    def _mapping(self, node, path: tuple, labels: tuple) -> Map:
        entries: dict[str, Entry] = {}
        merges: list = []
        for key_node, value_node in node.value:
            key = self._key(key_node, labels)
            if key is None:
                continue
            if str(key_node.tag) == _CORE + "merge":
                merges.append(value_node)
                continue
            key_span = self.span(key_node, scalar=True)
            if key in entries:
                first = entries[key].key_span
                hint = f"first set at line {first.line}"
                self.problem("duplicate key", key_span, labels + (key,), hint, "profile.duplicate-key")
                continue
            self.keys.append(key_span)
            try:
                child = self.build(value_node, path + (key,), labels + (key,))
            finally:
                self.keys.pop()
            if isinstance(child, Scalar) and child.span.source == "":
                child = Scalar(child.value, key_span)  # an empty value: point at its key
            entries[key] = Entry(key_span, child)
        for source in merges:
            self._merge_key(source, entries, path, labels)
        return Map(entries, self.span(node))

    def _key(self, key_node, labels: tuple) -> str | None:
        if not _is_scalar(key_node):
            message = "a key must be a plain name, not a list or mapping"
            self.problem(message, self.span(key_node), labels, code="profile.bad-key")
            return None
        return self._text(key_node, labels)

    def _merge_key(self, source, entries: dict[str, Entry], path: tuple, labels: tuple) -> None:
        """YAML merge keys (``<<: *base``): keys not written here are taken from the alias."""
        merged = self.build(source, path, labels)
        maps = merged.items if isinstance(merged, Seq) else (merged,)
        for item in maps:
            if not isinstance(item, Map):
                self.problem("`<<` must refer to a mapping or a list of mappings", item.span, labels, code="profile.bad-merge")
                continue
            for key, entry in item.entries.items():
                entries.setdefault(key, entry)

    def _text(self, node, labels: tuple) -> str | None:
        """The scalar's text; escaped surrogate pairs (``\\ud83d\\ude00``) are joined,
        and an escape for half a character is an error (None)."""
        text = str(node.value)
        if getattr(node, "style", None) == ">":
            text = text.replace("\a", "")  # ruamel marks fold points of `>` scalars with BEL
        if not any("\ud800" <= c <= "\udfff" for c in text):
            return text
        try:
            return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
        except UnicodeDecodeError:
            bad = next(c for c in text if "\ud800" <= c <= "\udfff")
        self.problem(
            f"escape for half a character (U+{ord(bad):04X})", self.span(node), labels,
            "write the character itself, or escape the whole character (`\\U0001F600`)", "profile.bad-escape",
        )
        return None

    def _scalar(self, node, tag: str, labels: tuple) -> object:
        text = self._text(node, labels)
        if text is None:
            return ""
        kind = tag[len(_CORE) :] if tag.startswith(_CORE) else None
        explicit = getattr(node.ctag, "handle", None) is not None
        if kind == "timestamp" and not explicit:
            return text  # an unquoted date is just text here
        if kind in _CORE_NUMBER and not explicit and not _CORE_NUMBER[kind].fullmatch(text):
            return text  # `24_000` is text in YAML 1.2 core; a number key says so, with a hint
        if kind not in _SCALAR_TAGS:
            self._bad_tag(node, tag, labels)
            return text
        try:
            return _convert(kind, text)
        except ValueError:
            self.problem(f"`{text}` is not a valid !!{kind}", self.span(node), labels, code="profile.yaml-tag")
            return text


def _item_label(node, index: int, path: tuple) -> str | int:
    """Sections are named by their id in key paths (``system_prompt.sections.rules``)."""
    from ruamel.yaml.nodes import MappingNode

    if path == ("system_prompt", "sections") and isinstance(node, MappingNode):
        for key, value in node.value:
            if _is_scalar(key) and key.value == "id" and _is_scalar(value) and isinstance(value.value, str):
                return value.value or index
    return index


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


def _convert(kind: str, raw: str) -> object:
    """A core-schema scalar's value (YAML 1.2: no ``_`` digit separators, no ``0b``)."""
    if kind == "str":
        return raw
    if kind == "null":
        if raw not in ("", "~", "null", "Null", "NULL"):
            raise ValueError(raw)
        return None
    if kind == "bool":
        if raw.lower() not in ("true", "false"):
            raise ValueError(raw)
        return raw.lower() == "true"
    if kind == "int":
        return _int(raw)
    return _float(raw)


def _int(raw: str) -> int:
    if not _CORE_NUMBER["int"].fullmatch(raw.strip()):
        raise ValueError(raw)
    text = raw.strip()
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    for prefix, base in (("0x", 16), ("0o", 8)):
        if digits.lower().startswith(prefix):
            return sign * int(digits[2:], base)
    return sign * int(digits, 10)


def _float(raw: str) -> float:
    if not _CORE_NUMBER["float"].fullmatch(raw.strip()):
        raise ValueError(raw)
    text = raw.strip().lower()
    if text.lstrip("+-") == ".inf":
        return -math.inf if text.startswith("-") else math.inf
    if text == ".nan":
        return math.nan
    return float(text)
