"""pydantic validation errors -> located problems in plain English.

Every error of a validation run becomes one :class:`~pipeline.errors.Problem`: the
key path, where it is written (the caller's ``locate``), a sentence without pydantic
jargon or URLs, and a "did you mean" hint for unknown keys and misspelt values.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Callable, Literal, Sequence

from pydantic import BaseModel, ValidationError

from pipeline.errors import Location, Problem, did_you_mean
from pipeline.model import introspect
from pipeline.model.base import APPEND, SECTION_DIRECTIVES
from pipeline.model.prompt import Section

Where = Literal["key", "value", "parent"]
#: ``locate(path, where)`` -> the location of a key path's key, value or parent key.
Locate = Callable[[tuple, Where], "Location | None"]
RenderKey = Callable[[tuple], str]
#: ``written(path)`` -> the key of ``path`` as the file writes it, when known.
Written = Callable[[tuple], "str | None"]

_EXPECTED = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "int_parsing": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "tuple_type": "a list",
    "list_type": "a list",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "dict_type": "a mapping",
}
_BOUNDS = {
    "greater_than": ("must be greater than {}", "gt"),
    "greater_than_equal": ("must be at least {}", "ge"),
    "less_than": ("must be less than {}", "lt"),
    "less_than_equal": ("must be at most {}", "le"),
}
#: A number as people write it (``24000``, ``2.5``, ``-1e3``), and with ``_`` separators.
_DECIMAL = re.compile(r"[-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?")
_SEPARATED = re.compile(r"[-+]?[0-9]+(_[0-9]+)*(\.[0-9]+(_[0-9]+)*)?")
_ID_HINT = "an id starts with a letter or `_` and holds only letters, digits, `_`, `.` and `-`"


def describe(value: Any) -> str:
    """A YAML value as a message shows it: ``the text "abc"``, ``a list``..."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"`{'true' if value else 'false'}`"
    if isinstance(value, (int, float)):
        return f"the number {_inline(value) if isinstance(value, int) else value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return "the text " + json.dumps(shown, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _inline(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int) and abs(value) >= 10**40:  # a 4000-digit number is not shown whole
        return f"a number of {len(str(abs(value)))} digits"
    return str(value)


def problems_from(err: ValidationError, root: type[BaseModel], locate: Locate, render: RenderKey,
                  written: Written | None = None) -> list[Problem]:
    """One problem per pydantic error (duplicates merged); the errors of a value that fits
    none of a union's forms are one set of problems about the value (:func:`_union_problems`).
    ``written(path)``: a key as the file writes it, so an unknown ``KEY+`` is named so."""
    problems: list[Problem] = []
    unions: dict[tuple, dict[str, list[tuple[dict, tuple]]]] = {}

    def add(problem: Problem) -> None:
        if problem not in problems:
            problems.append(problem)

    for error in err.errors(include_url=False):
        path = tuple(p for p in error["loc"] if isinstance(p, int) or "[" not in str(p))
        split = _union_split(root, path)
        if split is not None:
            prefix, member, rest = split
            unions.setdefault(prefix, {}).setdefault(member, []).append((error, rest))
            continue
        add(_appended(_problem(error, path, root, locate, render), error, path, root, written))
    for prefix, members in unions.items():
        for problem in _union_problems(prefix, members, root, locate, render):
            add(problem)
    return problems


def _problem(error: dict, path: tuple, root: type[BaseModel], locate: Locate, render: RenderKey) -> Problem:
    message, hint, where = _translate(error, path, root)
    return Problem(message, locate(path, where), key=render(path) or None, hint=hint, code=code_of(error["type"], path))


def _appended(problem: Problem, error: dict, path: tuple, root: type[BaseModel], written: Written | None) -> Problem:
    """An unknown key the file writes as ``KEY+`` (the append form, merged as ``KEY``):
    named as written, its did-you-mean in the append form too."""
    shown = written(path) if written is not None and error["type"] == "extra_forbidden" else None
    if shown is None or shown != f"{path[-1]}{APPEND}":
        return problem
    parent = introspect.model_at(root, path[:-1]) if len(path) > 1 else root
    lists = [key for key in _key_choices(parent, len(path) == 1)
             if parent is not None and introspect.item_type(introspect.field_annotation(parent, key)) is not None]
    hint = did_you_mean(shown, [key + APPEND for key in lists])
    return dataclasses.replace(problem, key=f"{problem.key}{APPEND}", hint=hint)


def _union_split(root: type[BaseModel], path: tuple) -> tuple[tuple, str, tuple] | None:
    """``(prefix, member, rest)`` when pydantic named a union member in ``path`` (its
    ``loc`` holds the model's class name after the union's key), else None."""
    for k, part in enumerate(path):
        forms = introspect.union_models(_annotation_at(root, path[:k])) if isinstance(part, str) else ()
        if part in {form.__name__ for form in forms}:
            return path[:k], str(part), path[k + 1:]
    return None


def _annotation_at(root: type[BaseModel], path: tuple) -> Any:
    """The annotation at ``path`` (``root`` itself at the top)."""
    return introspect.annotation_at(root, path) if path else root


_STRUCTURAL = {"extra_forbidden", "missing"}


def _union_problems(prefix: tuple, members: dict[str, list[tuple[dict, tuple]]], root: type[BaseModel],
                    locate: Locate, render: RenderKey) -> list[Problem]:
    """The problems of a value that fits none of a union's forms, said without the forms'
    class names: a form whose keys the value has (only a value of it is wrong) gives its
    errors; a key no form has is unknown, with a did-you-mean over every form's keys; else
    the value must hold exactly one form's keys."""
    forms = introspect.union_models(_annotation_at(root, prefix))
    for form in forms:  # the form the user wrote: its keys are right, a value is not
        errors = members.get(form.__name__, [])
        if errors and all(rest and not (len(rest) == 1 and e["type"] in _STRUCTURAL) for e, rest in errors):
            return [_problem(e, prefix + rest, root, locate, render) for e, rest in errors]
    keys = [k for form in forms for k in introspect.keys_of(form)]
    choices = _one_of(keys)
    flat = [(e, rest) for errors in members.values() for e, rest in errors]
    whole = next((e for e, rest in flat if not rest), None)
    if whole is not None:  # not a mapping at all
        message, _, where = _translate(whole, prefix, root)
        hint = f"write a mapping with {choices}"
        return [Problem(message, locate(prefix, where), key=render(prefix) or None, hint=hint,
                        code=code_of(whole["type"], prefix))]
    written = _written_keys(flat)
    unknown = [k for k in written if k not in keys]
    if unknown:
        return [Problem("unknown key", locate(prefix + (k,), "key"), key=render(prefix + (k,)) or None,
                        hint=did_you_mean(k, keys) or f"expected {choices}", code="profile.unknown-key")
                for k in unknown]
    given = [k for k in keys if k in written]
    got = ", ".join(f"`{k}`" for k in given) if given else "none"
    code, hint = ("profile.invalid-value", "keep one of them") if given else ("profile.missing-key", f"write {choices}")
    return [Problem(f"expected exactly one of the keys {', '.join(f'`{k}`' for k in keys)}, got {got}",
                    locate(prefix, "key"), key=render(prefix) or None, hint=hint, code=code)]


def _written_keys(errors: list[tuple[dict, tuple]]) -> list[str]:
    """The keys of the mapping a union's errors are about, in the order they were found."""
    written: list[str] = []
    for error, rest in errors:
        found = list(error["input"]) if error["type"] == "missing" and isinstance(error.get("input"), dict) else []
        if error["type"] == "extra_forbidden" and len(rest) == 1:
            found = [rest[0]]
        written += [str(k) for k in found if str(k) not in written]
    return written


_CODES = {
    "extra_forbidden": "profile.unknown-key",
    "missing": "profile.missing-key",
    "literal_error": "profile.invalid-choice",
    "string_too_short": "profile.empty-value",
    **{kind: "profile.wrong-type" for kind in _EXPECTED},
    **{kind: "profile.out-of-range" for kind in _BOUNDS},
}


def code_of(kind: str, path: tuple) -> str:
    """Our registered code for a pydantic error type (see ``docs/errors.md``)."""
    if kind == "string_pattern_mismatch":
        return "profile.invalid-id" if path and path[-1] == "id" else "profile.bad-form"
    return _CODES.get(kind, "profile.invalid-value")


def _translate(error: dict, path: tuple, root: type[BaseModel]) -> tuple[str, str | None, Where]:
    kind, value, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    if kind == "extra_forbidden":
        parent = introspect.model_at(root, path[:-1]) if len(path) > 1 else root
        return "unknown key", did_you_mean(str(path[-1]), _key_choices(parent, len(path) == 1)), "key"
    if kind == "missing":
        return "missing required key", None, "parent"
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got {describe(value)}", _unquote_hint(kind, value), "value"
    if kind == "literal_error":
        return _literal(value, path, root, ctx)
    if kind in _BOUNDS:
        template, name = _BOUNDS[kind]
        return f"{template.format(_inline(ctx.get(name)))}, got {_inline(value)}", None, "value"
    if kind == "string_too_short":
        return "must not be empty", None, "value"
    if kind == "string_pattern_mismatch":
        if path and path[-1] == "id":
            return f"invalid section id `{value}`", _ID_HINT, "value"
        return f"`{value}` does not have the expected form", f"it must match `{ctx.get('pattern')}`", "value"
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, "), None, "value"
    msg = str(error["msg"])
    return msg[:1].lower() + msg[1:], None, "value"


def _unquote_hint(kind: str, value: Any) -> str | None:
    """How to write a number or boolean that was written as text (``"24000"``,
    ``24_000``, ``"true"``), when the text plainly means one."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if kind.startswith("bool"):
        return f"write {text.lower()} without quotes" if text.lower() in ("true", "false") else None
    if not kind.startswith(("int", "float")):
        return None
    digits = text.replace("_", "") if _SEPARATED.fullmatch(text) else text
    if not _DECIMAL.fullmatch(digits) or (kind.startswith("int") and not digits.lstrip("+-").isdigit()):
        return None
    shown = digits.lstrip("+")
    if digits != text:
        return f"write {shown}: YAML 1.2 has no `_` digit separators, so `{text}` is text"
    return f"write {shown} without quotes"


def _key_choices(model: type[BaseModel] | None, top: bool) -> list[str]:
    """The keys a file may write where ``model`` is read: its fields, and the keys the
    merge takes away first (``extends`` at the top, a section's overlay keys)."""
    if model is None:
        return []
    extra = ["extends"] if top else list(SECTION_DIRECTIVES) if model is Section else []
    return introspect.keys_of(model) + extra


def _literal(value: Any, path: tuple, root: type[BaseModel], ctx: dict) -> tuple[str, str | None, Where]:
    allowed = introspect.literal_values(introspect.annotation_at(root, path))
    shown = [_inline(v) for v in allowed] or [str(ctx.get("expected", ""))]
    hint = did_you_mean(_inline(value), shown) if isinstance(value, str) else None
    if hint is None:
        hint = "expected " + _one_of(shown)
    return f"invalid value `{_inline(value)}`", hint, "value"


def _one_of(values: Sequence[str]) -> str:
    quoted = [f"`{v}`" for v in values]
    if len(quoted) == 1:
        return quoted[0]
    return "one of " + ", ".join(quoted)
