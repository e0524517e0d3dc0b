"""A model reference: which model a setting is for (``provider`` and ``id``), parsed in one place.

``compaction.model_overrides`` is keyed ``provider/id`` (the id may hold more slashes:
``ollama/qwen/coder``); ``Pipeline.compact(model=...)`` and its siblings take a
``"provider/id"`` string, a ``(provider, id)`` pair, or a model object with ``provider`` and
``id`` (:class:`pipeline.runtime.host.ModelInfo`, whose current identity counts). :meth:`ModelRef.of`
reads every one of those; :attr:`ModelRef.key` is the override key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Optional


@dataclass(frozen=True)
class ModelRef:
    """``provider`` and ``id`` of a model (either ``None``: no particular model)."""

    provider: Optional[str] = None
    id: Optional[str] = None

    @classmethod
    def parse(cls, text: str) -> "ModelRef":
        """``provider/id`` (the id may contain slashes); a ``ValueError`` names the form otherwise."""
        provider, sep, name = text.partition("/")
        if not sep or not provider or not name:
            raise ValueError(f"a model is named provider/id, got {text!r}")
        return cls(provider, name)

    @classmethod
    def of(cls, model: Any) -> "ModelRef":
        """A reference from ``None``, ``"provider/id"``, a ``(provider, id)`` pair, a reference, or an
        object with ``provider`` and ``id`` (one with ``current()``: its current identity)."""
        if model is None:
            return cls()
        if isinstance(model, ModelRef):
            return model
        if isinstance(model, str):
            return cls.parse(model)
        if isinstance(model, tuple):
            return cls(model[0], model[1])
        current = getattr(model, "current", None)  # a ModelInfo: its current identity
        model = current() if callable(current) else model
        return cls(getattr(model, "provider", None), getattr(model, "id", None))

    @property
    def key(self) -> Optional[str]:
        """The ``compaction.model_overrides`` key, ``provider/id``; ``None`` without both."""
        return f"{self.provider}/{self.id}" if self.provider and self.id else None

    def __iter__(self) -> Iterator[Optional[str]]:
        """``provider, id = ref``."""
        return iter((self.provider, self.id))
