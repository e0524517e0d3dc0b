"""Walking the profile models by key path: which keys a mapping accepts, which fields
hold :class:`~pipeline.model.text.Text`. Used for "did you mean" hints and to find
every text of a (possibly invalid) profile before validation.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Iterator, Literal, Sequence, Union

from pydantic import BaseModel

from pipeline.model.text import Text

Key = Union[str, int]


def unwrap(annotation: Any) -> Any:
    """``Optional[X]`` -> ``X``, ``Annotated[X, ...]`` -> ``X``; other annotations unchanged."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return unwrap(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return unwrap(args[0])
    return annotation


def item_type(annotation: Any) -> Any | None:
    """The element type of ``tuple[X, ...]`` / ``list[X]``, else None."""
    annotation = unwrap(annotation)
    if typing.get_origin(annotation) in (tuple, list):
        args = typing.get_args(annotation)
        return args[0] if args else None
    return None


def union_models(annotation: Any) -> tuple[type[BaseModel], ...]:
    """The model classes of a union of models (``Optional`` too), else ``()``."""
    annotation = unwrap(annotation)
    if typing.get_origin(annotation) not in (Union, types.UnionType):
        return ()
    members = tuple(a for a in typing.get_args(annotation) if a is not type(None))
    return members if all(is_model(m) for m in members) else ()


def is_model(annotation: Any) -> bool:
    """True for a pydantic model class."""
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def keys_of(model: type[BaseModel]) -> list[str]:
    """The keys a profile writes for ``model`` (aliases where a field has one)."""
    return [info.alias or name for name, info in model.model_fields.items()]


def field_annotation(model: type[BaseModel], key: str) -> Any | None:
    """The annotation of the field a profile writes as ``key`` (its alias or name)."""
    for name, info in model.model_fields.items():
        if (info.alias or name) == key:
            return info.annotation
    return None


def literal_values(annotation: Any) -> tuple[Any, ...]:
    """The allowed values of a ``Literal`` (inside Optional or a tuple, too)."""
    annotation = unwrap(annotation)
    inner = item_type(annotation)
    if inner is not None:
        return literal_values(inner)
    if typing.get_origin(annotation) is Literal:
        return typing.get_args(annotation)
    return ()


def value_type(annotation: Any) -> Any | None:
    """The value type of ``dict[str, X]``, else None."""
    annotation = unwrap(annotation)
    if typing.get_origin(annotation) is dict:
        args = typing.get_args(annotation)
        return args[1] if len(args) == 2 else None
    return None


def annotation_at(root: type[BaseModel], path: Sequence[Key]) -> Any | None:
    """The annotation of the value at ``path`` below ``root`` (None when unknown)."""
    current: Any = root
    for key in path:
        current = unwrap(current)
        if isinstance(key, int):
            current = item_type(current)
        elif (model := _mapping_model(current)) is not None:
            current = field_annotation(model, key)
        elif value_type(current) is not None:
            current = value_type(current)
        else:
            return None
        if current is None:
            return None
    return current


def model_at(root: type[BaseModel], path: Sequence[Key]) -> type[BaseModel] | None:
    """The model class of the mapping at ``path``, if it is one (the one model of a union
    of it and scalars, such as a template source: a name or a mapping)."""
    return _mapping_model(unwrap(annotation_at(root, path)))


def _mapping_model(annotation: Any) -> type[BaseModel] | None:
    """The model a mapping written for ``annotation`` is read as: the model itself, or
    the one model of a union whose other members are not models; else None."""
    if is_model(annotation):
        return typing.cast("type[BaseModel]", annotation)
    if typing.get_origin(annotation) not in (Union, types.UnionType):
        return None
    models = [m for m in (unwrap(a) for a in typing.get_args(annotation)) if is_model(m)]
    return models[0] if len(models) == 1 else None


def is_text(annotation: Any) -> bool:
    """True where the field holds a :class:`~pipeline.model.text.Text` (optional or not)."""
    return unwrap(annotation) is Text


def texts(root: type[BaseModel], data: Any, path: tuple = ()) -> Iterator[tuple[tuple, str]]:
    """Every string in ``data`` that sits where ``root`` expects a Text, with its path."""
    if isinstance(data, dict):
        here = unwrap(annotation_at(root, path)) if path else root
        if not is_model(here) and value_type(here) is None:
            return
        for key, value in data.items():
            if not isinstance(key, str):
                continue
            annotation = field_annotation(here, key) if is_model(here) else value_type(here)
            if annotation is None:
                continue
            if is_text(annotation) and isinstance(value, str):
                yield path + (key,), value
            else:
                yield from texts(root, value, path + (key,))
    elif isinstance(data, (list, tuple)):
        for i, value in enumerate(data):
            if is_text(annotation_at(root, path + (i,))) and isinstance(value, str):
                yield path + (i,), value
            else:
                yield from texts(root, value, path + (i,))
