"""The JSON Schema editors use for profile files (``pipeline schema``).

It is generated from the models, then widened for what files may say but a merged
:class:`~pipeline.model.profile.Profile` never holds: ``extends:``, and on sections
the overlay keys ``remove``, ``replace``, ``before`` and ``after``, and beside every
list ``KEY`` (sections aside) its append form ``KEY+``. An overlay (a file
with ``extends:``) may leave out anything; a standalone file must have every
required key. Both are expressed with two sets of definitions: ``Overlay*`` (nothing
required but a section's ``id``) apply everywhere, the full ones only when the file
has no ``extends:``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pipeline.model.base import APPEND, Strict
from pipeline.model.profile import Profile

DIALECT = "https://json-schema.org/draft/2020-12/schema"
OVERLAY = "Overlay"
DESCRIPTION = "A context-pipeline profile (see docs/profile.md): standalone, or an overlay with `extends:`."

_EXTENDS = {
    "anyOf": [{"type": "string"}, {"type": "null"}],
    "description": "the profile this one builds on: a path relative to this file, or `builtin:NAME`",
}
_DIRECTIVES = {
    "remove": {"type": "boolean", "description": "overlay: delete the section with this id"},
    "replace": {
        "type": "boolean",
        "description": "overlay: replace the section with this id instead of merging into it",
    },
    "before": {"type": "string", "description": "place this section just before the section with this id"},
    "after": {"type": "string", "description": "place this section just after the section with this id"},
}


def _build_models() -> None:
    """Build every profile model's schema (they defer it): the defaults made by
    ``model_construct`` are serialized into the schema by their own class's serializer."""
    pending: list[type[Strict]] = [Strict]
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        if not model.__pydantic_complete__:
            model.model_rebuild(force=True)


def editor_schema() -> dict[str, Any]:
    """The JSON Schema of a profile file (standalone or overlay)."""
    _build_models()
    full = Profile.model_json_schema(by_alias=True, mode="validation")
    defs = full.pop("$defs")
    required = full.pop("required", [])
    for definition in defs.values():
        definition.pop("title", None)
    defs["Section"]["properties"].update(copy.deepcopy(_DIRECTIVES))
    for name, definition in defs.items():
        _add_append_forms(definition, skip=("sections",) if name == "SystemPrompt" else ())
    overlay_defs = {OVERLAY + name: _partial(body, name) for name, body in defs.items()}
    root = _retarget(copy.deepcopy(full))
    root["properties"] = {"extends": _EXTENDS, **root["properties"]}
    standalone = {k: full["properties"][k] for k in required}
    return {
        "$schema": DIALECT,
        "title": "context-pipeline profile",
        **{k: v for k, v in root.items() if k != "title"},
        "description": DESCRIPTION,
        "if": {"properties": {"extends": {"type": "string"}}, "required": ["extends"]},
        "else": {"required": required, "properties": standalone},
        "$defs": {**defs, **overlay_defs},
    }


def _add_append_forms(definition: dict[str, Any], skip: tuple[str, ...]) -> None:
    """``KEY+`` beside every list ``KEY``: an overlay's entries added to the inherited list."""
    properties = definition.get("properties", {})
    for key, body in list(properties.items()):
        if body.get("type") == "array" and key not in skip:
            form = {k: v for k, v in copy.deepcopy(body).items() if k not in ("default", "title")}
            form["description"] = f"overlay: entries added after the inherited `{key}` (`{key}:` replaces it)"
            properties[key + APPEND] = form


def _partial(body: dict[str, Any], name: str) -> dict[str, Any]:
    partial = _retarget(copy.deepcopy(body))
    partial.pop("required", None)
    if name == "Section":
        partial["required"] = ["id"]
    return partial


def _retarget(node: Any) -> Any:
    """Point every ``$ref`` at the overlay definitions."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                out[key] = "#/$defs/" + OVERLAY + value[len("#/$defs/") :]
            else:
                out[key] = _retarget(value)
        return out
    if isinstance(node, list):
        return [_retarget(item) for item in node]
    return node


def schema_json() -> str:
    """The schema as the committed ``docs/profile.schema.json`` holds it."""
    return json.dumps(editor_schema(), indent=2, ensure_ascii=False) + "\n"
