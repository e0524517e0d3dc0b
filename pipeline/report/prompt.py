"""A rendered prompt described for people and tools: sections, token estimates, origins.

:func:`build_prompt_report` renders once and annotates every section with its estimated
tokens (:func:`pipeline.compaction.tokens.text_tokens`, the profile's ``compaction.chars_per_token``)
and the profile file and line that defined it (from the pipeline's source map). The
formats: :func:`prompt_json` (machine-readable) and :func:`prompt_html` (one
self-contained page, rendered by ``templates/prompt.html.j2`` with autoescaping on).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from pipeline.errors import Location
from pipeline.compaction.tokens import text_tokens
from pipeline.js import u16len
from pipeline.prompt import RenderContext, RenderedSection
from pipeline.source.chain import shown_file, shown_location

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

SECTIONS_PATH = ("system_prompt", "sections")


@dataclass(frozen=True)
class SectionReport:
    id: str
    kind: str
    index: int
    separator: str
    text: str
    tokens: int
    items: Optional[int]
    source: Location

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "index": self.index,
            "separator": self.separator,
            "text": self.text,
            "tokens": self.tokens,
            "items": self.items,
            "source": {"file": self.source.file, "line": self.source.line, "col": self.source.col},
        }


@dataclass(frozen=True)
class PromptReport:
    """One render of one profile, with everything the formats show."""

    profile: str
    origin: str
    files: tuple[str, ...]
    fingerprint: str
    chars_per_token: int
    context: RenderContext
    sections: tuple[SectionReport, ...]
    label: str = ""

    @property
    def prompt(self) -> str:
        return "".join(s.separator + s.text for s in self.sections)

    @property
    def tokens(self) -> int:
        return text_tokens(self.prompt, self.chars_per_token)

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": {"name": self.profile, "origin": self.origin, "files": list(self.files), "fingerprint": self.fingerprint},
            "label": self.label or None,
            "chars_per_token": self.chars_per_token,
            "tokens": self.tokens,
            "chars": u16len(self.prompt),
            "prompt": self.prompt,
            "sections": [s.to_json() for s in self.sections],
            "context": self.context.to_json(),
        }


def section_location(pipeline: "Pipeline", index: int) -> Location:
    """Where section ``index`` of the merged profile was written (file only when unknown)."""
    source_map = getattr(pipeline, "source_map", None)
    if source_map is not None and len(source_map):
        location = source_map.value_location(SECTIONS_PATH + (index,))
        if location is not None:
            return location
    return Location(pipeline.origin)


def build_prompt_report(pipeline: "Pipeline", context: RenderContext, label: str = "") -> PromptReport:
    """Render exactly ``context`` (gathered with the tool catalog already, or not) with
    ``pipeline`` and annotate every section."""
    cpt = pipeline.profile.compaction.chars_per_token
    sections = tuple(_section(pipeline, s, cpt) for s in pipeline.render_sections(context, catalog=False))
    return PromptReport(
        profile=pipeline.profile.name,
        origin=shown_file(pipeline.origin),
        files=tuple(shown_file(f) for f in getattr(pipeline, "files", (pipeline.origin,))),
        fingerprint=pipeline.fingerprint,
        chars_per_token=cpt,
        context=context,
        sections=sections,
        label=label,
    )


def _section(pipeline: "Pipeline", s: RenderedSection, cpt: int) -> SectionReport:
    return SectionReport(
        id=s.id,
        kind=s.kind,
        index=s.index,
        separator=s.separator,
        text=s.text,
        tokens=text_tokens(s.text, cpt),
        items=s.items,
        source=shown_location(section_location(pipeline, s.index)),
    )


def prompt_json(report: PromptReport) -> str:
    """The report as indented JSON (non-ASCII kept)."""
    return json.dumps(report.to_json(), ensure_ascii=False, indent=2)


def prompt_html(report: PromptReport) -> str:
    """One self-contained HTML page: every section marked, with its tokens and origin."""
    from pipeline.report.templating import render_template

    return render_template("prompt.html.j2", report=report, visible=visible_separator)


def visible_separator(separator: str) -> str:
    """A separator as a short label: ``\\n\\n`` -> ``⏎⏎``."""
    return separator.replace("\r", "␍").replace("\n", "⏎").replace("\t", "⇥") or "∅"
