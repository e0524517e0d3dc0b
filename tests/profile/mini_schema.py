"""A small JSON Schema checker for the keywords `pipeline schema` emits (tests only).

Enough to check that editors would accept our profiles and overlays and reject typos:
$ref, type, enum, const, properties, additionalProperties, required, items, anyOf,
if/then/else, minLength, pattern, minimum/maximum and their exclusive forms.
"""

from __future__ import annotations

import re
from typing import Any

_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def errors(schema: dict, value: Any, root: dict | None = None, path: str = "") -> list[str]:
    root = root or schema
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return errors(target, value, root, path)
    found: list[str] = []
    for check in (_type, _enum, _object, _array, _string, _number, _any_of, _condition):
        found += check(schema, value, root, path)
    return found


def _is(kind: str, value: Any) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[kind]) and not (kind != "boolean" and isinstance(value, bool))


def _type(schema, value, root, path):
    kinds = schema.get("type")
    if kinds is None:
        return []
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return [] if any(_is(k, value) for k in kinds) else [f"{path}: not {kinds}"]


def _enum(schema, value, root, path):
    out = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} not in enum")
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: {value!r} != const")
    return out


def _object(schema, value, root, path):
    if not isinstance(value, dict):
        return []
    out = [f"{path}.{k}: required" for k in schema.get("required", []) if k not in value]
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            out += errors(props[key], item, root, f"{path}.{key}")
        elif extra is False:
            out.append(f"{path}.{key}: additional property")
        elif isinstance(extra, dict):
            out += errors(extra, item, root, f"{path}.{key}")
    return out


def _array(schema, value, root, path):
    if not isinstance(value, list) or "items" not in schema:
        return []
    return [e for i, item in enumerate(value) for e in errors(schema["items"], item, root, f"{path}.{i}")]


def _string(schema, value, root, path):
    if not isinstance(value, str):
        return []
    out = []
    if len(value) < schema.get("minLength", 0):
        out.append(f"{path}: too short")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        out.append(f"{path}: pattern")
    return out


def _number(schema, value, root, path):
    if not _is("number", value):
        return []
    checks = {
        "minimum": lambda b: value >= b,
        "maximum": lambda b: value <= b,
        "exclusiveMinimum": lambda b: value > b,
        "exclusiveMaximum": lambda b: value < b,
    }
    return [f"{path}: {k}" for k, ok in checks.items() if k in schema and not ok(schema[k])]


def _any_of(schema, value, root, path):
    if "anyOf" not in schema:
        return []
    if any(not errors(option, value, root, path) for option in schema["anyOf"]):
        return []
    return [f"{path}: matches no anyOf option"]


def _condition(schema, value, root, path):
    if "if" not in schema:
        return []
    branch = "then" if not errors(schema["if"], value, root, path) else "else"
    return errors(schema[branch], value, root, path) if branch in schema else []
