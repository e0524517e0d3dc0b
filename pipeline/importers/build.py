"""Writing an imported setup as an overlay profile (``extends: builtin:default``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from pipeline.errors import Problem

from .yamltext import profile_text, scalar, text_block

SCHEMA_LINE = "# yaml-language-server: $schema={schema}"


class ProfileText(str):
    """Text already written as a profile's prose (``$${`` for a literal ``${``): not escaped again."""


@dataclass(frozen=True)
class Imported:
    """The profile's text and what the import noticed (infos and warnings)."""

    text: str
    notes: tuple[Problem, ...] = ()


@dataclass
class Overlay:
    """The parts of an overlay profile an importer fills in."""

    name: str
    comment: Sequence[str]
    sections: list[tuple[str, dict]] = field(default_factory=list)  # (id, keys)
    sources: list[Any] = field(default_factory=list)  # keywords (str) or ("dialect", path) pairs
    values: dict[tuple[str, ...], Any] = field(default_factory=dict)
    context_file_names: Optional[Sequence[str]] = None
    #: other ``system_prompt`` keys (``join``, ``default_tools``, ``tools``...), as JSON values
    prompt_keys: dict[str, Any] = field(default_factory=dict)

    def render(self, base_dir: Optional[Path], schema: str) -> str:
        lines = [SCHEMA_LINE.format(schema=schema)] + [f"# {c}" for c in self.comment]
        lines += ["extends: builtin:default", f"name: {scalar(self.name)}"]
        lines += self._system_prompt()
        if self.sources:
            lines += ["templates:", "  sources:"] + [f"    - {self._source(s, base_dir)}" for s in self.sources]
        lines += _nested(self.values)
        return "\n".join(lines) + "\n"

    def _system_prompt(self) -> list[str]:
        if not self.sections and self.context_file_names is None and not self.prompt_keys:
            return []
        out = ["system_prompt:"]
        out += [f"  {key}: {scalar(value)}" for key, value in self.prompt_keys.items()]
        if self.context_file_names is not None:
            out.append("  context_file_names: [" + ", ".join(scalar(n) for n in self.context_file_names) + "]")
        if self.sections:
            out.append("  sections:")
        for section_id, keys in self.sections:
            out.append(f"    - id: {section_id}")
            for key, value in keys.items():
                if key == "text":
                    written = value if isinstance(value, ProfileText) else profile_text(value)
                    out.append("      text:" + text_block(written, 8))
                else:
                    out.append(f"      {key}: {scalar(value)}")
        return out

    @staticmethod
    def _source(source: Any, base_dir: Optional[Path]) -> str:
        if isinstance(source, str):
            return source
        dialect, path = source
        shown = _shown_path(path, base_dir)
        if dialect == "pi":
            return scalar(shown)
        return "{dialect: " + dialect + ", path: " + scalar(shown) + "}"


def _shown_path(path: Path | str, base_dir: Optional[Path]) -> str:
    text = str(path)
    if text.startswith("~") or base_dir is None:
        return text
    rel = os.path.relpath(text, base_dir)
    return rel if not rel.startswith("..") or len(Path(rel).parts) <= 3 else text


def _nested(values: dict[tuple[str, ...], Any]) -> list[str]:
    out: list[str] = []
    written: list[tuple[str, ...]] = []
    for path in sorted(values, key=lambda p: (p[0] != "compaction", p)):
        for depth in range(len(path) - 1):
            prefix = path[: depth + 1]
            if prefix not in written:
                written.append(prefix)
                out.append("  " * depth + f"{prefix[-1]}:")
        out.append("  " * (len(path) - 1) + f"{path[-1]}: {scalar(values[path])}")
    return out
