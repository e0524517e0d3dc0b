"""A small check of tool-call arguments against the tool's JSON schema.

Covers what tool schemas use: ``type`` (object, string, number, integer, boolean,
array, null, or a list of them), ``required``, ``properties``, ``items`` and ``enum``.
Other keywords are not checked. Problems are returned as ``path: what`` lines (data,
not prose the model reads: the profile's ``runtime.tool_errors.invalid_arguments`` wraps them).
"""

from __future__ import annotations

from typing import Any, Mapping

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def argument_problems(value: Any, schema: Mapping[str, Any], path: str = "") -> list[str]:
    """Where ``value`` breaks ``schema`` (empty: it fits)."""
    where = path or "(arguments)"
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if kinds and not any(_TYPES.get(k, lambda v: True)(value) for k in kinds):
        return [f"{where}: expected {' or '.join(kinds)}, got {_type_name(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{where}: expected one of {', '.join(map(repr, schema['enum']))}"]
    problems: list[str] = []
    if isinstance(value, dict):
        for name in schema.get("required") or ():
            if name not in value:
                problems.append(f"{path + '.' if path else ''}{name}: required")
        for name, sub in (schema.get("properties") or {}).items():
            if name in value and isinstance(sub, Mapping):
                problems += argument_problems(value[name], sub, f"{path + '.' if path else ''}{name}")
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            problems += argument_problems(item, schema["items"], f"{path}[{i}]")
    return problems


def _type_name(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](value):
            return name
    return type(value).__name__
