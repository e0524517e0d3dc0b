"""YAML as pi's parser (the ``yaml`` npm package, YAML 1.2 core schema) reads it.

ruamel.yaml (safe, pure Python) does the parsing; this module closes the gaps that
matter for frontmatter:

* implicit types of the 1.2 *core* schema only: no timestamps, no ``yes``/``no``,
  ``1_000`` stays a string; integers beyond 2**53 become floats, like JavaScript numbers;
* NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR are ordinary characters in YAML 1.2, not
  line breaks (ruamel follows 1.1 there), and NUL is an ordinary character for pi (ruamel
  stops reading at it): they are swapped for unused private-use characters while
  parsing and swapped back in the result;
* tabs separate tokens anywhere but in indentation (``key:<TAB>value``, ``value<TAB>``);
* a quoted scalar's continuation lines must be indented more than its block;
* control characters and lone surrogates are accepted;
* keys become JavaScript object keys (``null`` -> ``""``, ``1`` -> ``"1"``; a mapping or a
  list as key becomes some string), ``1`` and ``true`` are different keys, ``<<`` is a
  plain key, not a merge;
* a block scalar at the very end still gets its final line break;
* a document beyond the profile reader's limits (:mod:`pipeline.limits`: values once
  aliases are expanded, nesting depth) is refused with :class:`YamlLimitError` before
  anything walks it, so an alias bomb costs no more than its text.

"""

from __future__ import annotations

import re
import warnings
from functools import cache

from pipeline.js.numbers import MAX_SAFE
from pipeline.limits import yaml_excess
from pipeline.js.values import js_string

_T = "tag:yaml.org,2002:"
#: The implicit types of the YAML 1.2 core schema (patterns of the ``yaml`` package).
_CORE_SCALARS = (
    (_T + "null", r"(?:~|[Nn]ull|NULL)?\Z", "~nN"),
    (_T + "bool", r"(?:[Tt]rue|TRUE|[Ff]alse|FALSE)\Z", "tTfF"),
    (_T + "int", r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z", "-+0123456789"),
    (
        _T + "float",
        r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)\Z",
        "-+0123456789.",
    ),
)
#: Ordinary characters in pi's YAML that ruamel treats specially (1.1 line breaks; NUL
#: ends ruamel's input).
_ORDINARY = "\x00\x85\u2028\u2029"


def load_yaml(text: str):
    """Parse one YAML document; raises ruamel's ``YAMLError`` subclasses when invalid."""
    swap = _swap_table(text)
    source = text.translate(swap) if swap else text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = _yaml().load(source if source.endswith("\n") else source + "\n")
    excess = yaml_excess(value)
    if excess is not None:  # checked before anything walks the value (an alias bomb)
        raise YamlLimitError(excess)
    back = {v: k for k, v in swap.items()}
    return _to_js(value, back)


class YamlLimitError(ValueError):
    """The document is beyond :mod:`pipeline.limits` (too many values once aliases are
    expanded, nested too deeply, or a value that contains itself)."""


def _swap_table(text: str) -> dict[int, int]:
    """Map each such character present in ``text`` to a private-use character absent from it."""
    present = [ch for ch in _ORDINARY if ch in text]
    if not present:
        return {}
    free = (chr(c) for c in range(0xF8FF, 0xE000, -1) if chr(c) not in text)
    return {ord(ch): ord(next(free)) for ch in present}


def _to_js(value: object, back: dict[int, int]) -> object:
    """Python values from YAML -> the values JavaScript would hold."""
    if isinstance(value, str):
        return value.translate(back) if back else value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return float(value) if abs(value) > MAX_SAFE else value
    if isinstance(value, dict):
        return {js_key(_to_js(k, back)): _to_js(v, back) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_js(v, back) for v in value]
    return value


def js_key(key: object) -> str:
    """A mapping key as a JavaScript object key (``null`` -> ``""``)."""
    if key is None:
        return ""
    return key if isinstance(key, str) else yaml_string(key)


def yaml_string(value: object) -> str:
    """``String(value)`` (:func:`pipeline.js.js_string`) for values that come out of
    YAML; the YAML-only types explicit tags make (``!!timestamp`` dates, ``!!binary``
    bytes, ``!!set`` sets) keep Python's ``str()``."""
    return js_string(value, other=str)


@cache
def _yaml():
    """The ruamel.yaml loader with the adjustments described in the module docstring."""
    from ruamel.yaml import YAML
    from ruamel.yaml.constructor import SafeConstructor
    from ruamel.yaml.reader import Reader
    from ruamel.yaml.resolver import VersionedResolver
    from ruamel.yaml.scanner import Scanner

    table: dict = {}
    for tag, pattern, first in _CORE_SCALARS:
        for ch in (*first, ""):
            table.setdefault(ch, []).append((tag, re.compile(pattern)))

    class CoreResolver(VersionedResolver):
        versioned_resolver = property(lambda self: {k: list(v) for k, v in table.items()})

    class LaxReader(Reader):
        def check_printable(self, data) -> None:
            return None

    yaml = YAML(typ="safe", pure=True)
    yaml.Resolver, yaml.Reader, yaml.Scanner = CoreResolver, LaxReader, _tab_scanner(Scanner)
    yaml.Constructor = _js_constructor(SafeConstructor)
    return yaml


def _js_constructor(base):
    from ruamel.yaml.constructor import ConstructorError
    from ruamel.yaml.nodes import MappingNode

    class JsConstructor(base):
        """Mappings as pi's parser builds them: any key allowed, no ``<<`` merging."""

        def construct_mapping(self, node, deep=False):
            if not isinstance(node, MappingNode):
                raise ConstructorError(None, None, f"expected a mapping node, but found {node.id}",
                                       node.start_mark)
            mapping: dict = {}
            seen: set = set()
            for key_node, value_node in node.value:
                key = self.construct_object(key_node, deep=True)
                if _identity(key) in seen:
                    raise ConstructorError("while constructing a mapping", node.start_mark,
                                           f"found duplicate key {key!r}", key_node.start_mark)
                seen.add(_identity(key))
                mapping[js_key(key)] = self.construct_object(value_node, deep=deep)
            return mapping

    return JsConstructor


def _identity(key: object) -> tuple:
    """When two keys are the same for pi's parser (``1`` and ``true`` are not)."""
    if isinstance(key, bool) or key is None or isinstance(key, str):
        return (type(key).__name__, key)
    if isinstance(key, (int, float)):
        return ("number", float(key))
    return ("other", repr(key))


def _tab_scanner(base):
    class TabScanner(base):
        """Tabs as blanks after indentation; quoted scalars' continuation lines indented."""

        def _after_indentation(self) -> bool:
            reader = self.reader
            line = reader.buffer[reader.pointer - reader.column : reader.pointer]
            return line.strip(" ") != ""

        def _blank_rest(self) -> bool:
            n = 0
            while self.reader.peek(n) in " \t":
                n += 1
            return self.reader.peek(n) in "\r\n\0#"

        def scan_to_next_token(self) -> None:
            while True:
                super().scan_to_next_token()
                if self.reader.peek() != "\t":
                    return
                if not (self.flow_level or self._after_indentation() or self._blank_rest()):
                    return  # a tab in indentation: let ruamel report it
                while self.reader.peek() in " \t":
                    self.reader.forward()

        def scan_plain_spaces(self, indent, start_mark):
            reader = self.reader
            length = 0
            while reader.peek(length) in " \t":
                length += 1
            blanks = reader.prefix(length)
            if "\t" not in blanks:
                return super().scan_plain_spaces(indent, start_mark)
            reader.forward(length)
            if reader.peek() in "\r\n\0":
                return super().scan_plain_spaces(indent, start_mark)  # trailing blanks
            return [blanks]  # blanks inside the scalar (or before a comment)

        def scan_flow_scalar_breaks(self, double, start_mark):
            chunks = super().scan_flow_scalar_breaks(double, start_mark)
            reader = self.reader
            if not self.flow_level and reader.column <= self.indent and reader.peek() != "\0":
                from ruamel.yaml.scanner import ScannerError

                raise ScannerError("while scanning a quoted scalar", start_mark,
                                   "found a continuation line that is not indented enough",
                                   reader.get_mark())
            return chunks

    return TabScanner
