"""Text with ``${name}`` context variables, parsed once by ``grammar/profile_text.lark``.

A :class:`Text` is what every prose field of a profile holds: the raw string (kept for
``explain``, diffs and the JSON Schema) and the parsed parts. ``render`` substitutes
values in one pass; inserted values are never re-scanned. Which variables a field may
use is checked by the compiler, which knows each field's context. This module imports no
pydantic (only its schema hooks do, when a model is built), so a text can be loaded and
rendered without the profile's models (:mod:`pipeline.model.render_plan`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from pipeline.resources import grammar_text

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler


@dataclass(frozen=True)
class Var:
    """A ``${name}`` reference; ``offset`` is its index in the raw text."""

    name: str
    offset: int
    line: int  # 1-based, within the text
    col: int  # 1-based, within the text


Part = str | Var


@lru_cache(maxsize=1)
def _parser() -> Any:
    """The Lark parser and the transformer to parts (lark is imported on the first text
    with a ``$`` that is not in a compiled profile cache)."""
    from lark import Lark, Transformer

    class ToParts(Transformer):
        def start(self, items: list[Part]) -> tuple[Part, ...]:
            merged: list[Part] = []
            for item in items:
                if isinstance(item, str) and merged and isinstance(merged[-1], str):
                    merged[-1] += item
                else:
                    merged.append(item)
            return tuple(merged)

        def variable(self, tokens: list) -> Var:
            tok = tokens[0]
            return Var(str(tok)[2:-1], tok.start_pos, tok.line, tok.column)

        def escape(self, tokens: list) -> str:
            return "${"

        def literal(self, tokens: list) -> str:
            return str(tokens[0])

    return Lark(grammar_text("profile_text.lark"), parser="lalr", propagate_positions=True), ToParts()


@lru_cache(maxsize=4096)
def _parse(raw: str) -> tuple[Part, ...]:
    if "$" not in raw:
        return (raw,) if raw else ()
    parser, to_parts = _parser()
    return to_parts.transform(parser.parse(raw))


def _restore(raw: str, parts: tuple[Part, ...]) -> "Text":
    text = object.__new__(Text)
    object.__setattr__(text, "raw", raw)
    object.__setattr__(text, "_parts", parts)
    object.__setattr__(text, "_variables", None)
    return text


class Text:
    """Immutable parsed text; compares and hashes by its raw string."""

    __slots__ = ("raw", "_parts", "_variables")

    def __init__(self, raw: str) -> None:
        object.__setattr__(self, "raw", raw)
        object.__setattr__(self, "_parts", None)
        object.__setattr__(self, "_variables", None)

    @property
    def parts(self) -> tuple[Part, ...]:
        """The literal strings and variables, in order (parsed on first use)."""
        parts = self._parts
        if parts is None:
            parts = _parse(self.raw)
            object.__setattr__(self, "_parts", parts)
        return parts

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Text is immutable")

    @property
    def variables(self) -> tuple[Var, ...]:
        if self._variables is None:  # computed once: checks ask for it per variable
            object.__setattr__(self, "_variables", tuple(p for p in self.parts if isinstance(p, Var)))
        return self._variables  # type: ignore[return-value]

    def render(self, values: Mapping[str, str] | None = None, /, **more: str) -> str:
        """Substitute variables; a variable without a value is an error (a bug, not user input)."""
        env = {**(values or {}), **more}
        return "".join(p if isinstance(p, str) else env[p.name] for p in self.parts)

    def __str__(self) -> str:
        return self.raw

    def __repr__(self) -> str:
        return f"Text({self.raw!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and other.raw == self.raw

    def __hash__(self) -> int:
        return hash(self.raw)

    def __bool__(self) -> bool:
        return bool(self.raw)

    # Immutable: copies are the object itself; a pickle holds the parts, so loading one
    # (the compiled profile cache) parses nothing.
    def __copy__(self) -> "Text":
        return self

    def __deepcopy__(self, memo: dict) -> "Text":
        return self

    def __reduce__(self):
        return (_restore, (self.raw, self.parts))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler):
        # One plain validator (not a union), so a wrong type is one clear error.
        from pydantic_core import core_schema

        return core_schema.json_or_python_schema(
            json_schema=core_schema.chain_schema(
                [core_schema.str_schema(), core_schema.no_info_plain_validator_function(cls._coerce)]
            ),
            python_schema=core_schema.no_info_plain_validator_function(cls._coerce),
            serialization=core_schema.plain_serializer_function_ser_schema(lambda t: t.raw),
        )

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: GetJsonSchemaHandler):
        return {"type": "string", "description": "Text; `${name}` inserts a context variable, `$${` a literal `${`."}

    @classmethod
    def _coerce(cls, value: Any) -> "Text":
        if isinstance(value, Text):
            return value
        if isinstance(value, str):
            return cls(value)
        from pydantic_core import PydanticCustomError

        raise PydanticCustomError("string_type", "Input should be a valid string")
