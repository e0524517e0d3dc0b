"""One prompt template file: a Markdown body with optional YAML frontmatter.

The template's name is the file name minus one trailing ``.md``. Its display description
is the frontmatter ``description`` when truthy, else the first body line with a
non-whitespace character, untrimmed, cut to 60 UTF-16 units with ``...`` appended only
when the line was longer (a cut may leave half an emoji, as in pi). ``argument-hint``
is kept for autocomplete. Files are read as UTF-8 with replacement characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Sequence

from pipeline.errors import Location, PipelineError, Problem, TemplateError
from pipeline.js import js_trim, js_truthy, u16len, u16slice, yaml_string

from .invoke import parse_args
from .hints import hint_list_notes, unquoted_hint
from .frontmatter import Frontmatter, FrontmatterError, parse_frontmatter

if TYPE_CHECKING:  # the language is imported when a body is first parsed, not when files are read
    from .analysis import TemplateAnalysis
    from .plan import Template

SourceKind = Literal["project", "user", "path", "inline"]
DESCRIPTION_LIMIT = 60


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template; ``template`` is its parsed body."""

    name: str
    description: str
    body: str
    #: pi's value: text, or a tuple when the YAML wrote a list (``[file]``); see :attr:`hint_text`
    argument_hint: str | tuple | None = None
    path: Path | None = None
    source: SourceKind = "inline"
    #: where the body starts in the file (1-based), to locate findings
    body_line: int = 1
    body_col: int = 1
    #: the tool whose format the file is written in (see :mod:`pipeline.templates.dialects`)
    dialect: str = "pi"
    #: remarks made while loading (frontmatter, dialect features not run here), located in the file
    notes: tuple[Problem, ...] = ()

    @cached_property
    def template(self) -> Template:
        """The parsed body (parsed on first use, so loading many files stays cheap)."""
        from .plan import parse_template

        return parse_template(self.body)

    def expand(self, args: Sequence[str]) -> str:
        """The body with ``args`` substituted."""
        return self.template.substitute(args)

    @property
    def hint_text(self) -> str | None:
        """``argument-hint`` as text: a YAML list is shown in its bracketed form."""
        value = self.argument_hint
        if isinstance(value, tuple):
            return "[" + ", ".join(yaml_string(v) for v in value) + "]"
        return value

    def invoke(self, args_text: str) -> str:
        """The expansion of ``/name args_text`` (the argument string as typed)."""
        return self.template.substitute(parse_args(args_text))

    def analyze(self) -> TemplateAnalysis:
        """Static analysis of the body (positions relative to the body)."""
        from .analysis import analyze

        return analyze(self.template)

    def problems(self) -> list[Problem]:
        """The analysis findings as problems (warnings and infos) located in the template file."""
        file = str(self.path) if self.path is not None else f"/{self.name}"
        return list(self.notes) + [self._locate(f.to_problem(file)) for f in self.analyze().findings]

    def _locate(self, problem: Problem) -> Problem:
        loc = problem.location
        if loc is None or loc.line is None:
            return problem
        col = loc.col + self.body_col - 1 if loc.line == 1 and loc.col else loc.col
        return problem.at(Location(loc.file, loc.line + self.body_line - 1, col))

    @classmethod
    def from_text(
        cls, name: str, text: str, *, path: Path | None = None, source: SourceKind = "inline"
    ) -> "PromptTemplate":
        """Build from file text; raises :class:`FrontmatterError` for invalid YAML."""
        fm = parse_frontmatter(text)
        notes = tuple(hint_list_notes(fm, text, path, name))
        return cls(name, describe(fm), fm.body, argument_hint(fm), path, source, fm.body_line, fm.body_col,
                   notes=notes)


def describe(fm: Frontmatter) -> str:
    """The display description: frontmatter ``description`` or the first body line."""
    value = fm.get("description")
    if js_truthy(value):
        return yaml_string(value)
    return first_line_description(fm.body)


def argument_hint(fm: Frontmatter) -> str | tuple | None:
    """The ``argument-hint`` key when truthy (a list kept as pi keeps it), else None."""
    value = fm.get("argument-hint")
    if isinstance(value, list):
        return tuple(value)
    return yaml_string(value) if js_truthy(value) else None


def first_line_description(body: str) -> str:
    """First line with a non-whitespace character, cut to 60 UTF-16 units (+ ``...``)."""
    for line in body.split("\n"):
        if js_trim(line):
            cut = u16slice(line, 0, DESCRIPTION_LIMIT)
            return cut + "..." if u16len(line) > DESCRIPTION_LIMIT else cut
    return ""


def template_name(path: Path) -> str:
    """File name minus one trailing ``.md``."""
    name = path.name
    return name[:-3] if name.endswith(".md") else name


def read_template(path: Path, source: SourceKind = "path") -> PromptTemplate:
    """Read one template file; raises :class:`PipelineError` (one Problem) when it cannot."""
    from dataclasses import replace

    from pipeline import files

    try:
        text = files.read_text(path, "template", lenient=True)  # invalid bytes -> U+FFFD, as pi
    except PipelineError as err:
        skipped = [replace(p, severity="warning", hint="the template is skipped") for p in err.problems]
        raise TemplateError(skipped) from None
    try:
        return PromptTemplate.from_text(template_name(path), text, path=path, source=source)
    except FrontmatterError as err:
        loc = Location(str(path), err.line, err.col)
        quote = unquoted_hint(text, err.line)
        hint = f"{quote}; the template is skipped" if quote else "the template is skipped"
        raise TemplateError(Problem(err.reason, loc, severity="warning", code="template.frontmatter",
                                    hint=hint)) from None
