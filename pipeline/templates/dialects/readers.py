"""Reading another tool's command files into :class:`~pipeline.templates.files.PromptTemplate` s.

A :class:`DialectTemplate` keeps the file's body as written and expands it with its
dialect's :mod:`~.languages` rules, so ``/name args`` gives what that tool would send
(less what :mod:`~.features` reports as not run here).

Markdown dialects (Claude Code, opencode, Codex) read frontmatter as pi does, with one
difference: an ``argument-hint`` written unquoted with brackets
(``argument-hint: [issue-number] [priority]``, Claude Code's documented form, invalid
YAML) is read as the text it is, with a hint to quote it. Gemini CLI files are TOML
(``prompt`` required, ``description`` optional).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.errors import Location, PipelineError, Problem, TemplateError
from pipeline.js import js_trim, js_truthy, yaml_string
from pipeline.limits import toml_loads

from ..files import PromptTemplate, SourceKind, first_line_description
from ..frontmatter import Frontmatter, FrontmatterError, normalize_newlines, parse_frontmatter
from ..hints import bracket_hint_line, quoted, unquoted_hint
from .features import body_notes, key_notes, locate, source_file
from .languages import CLAUDE, CODEX, GEMINI, OPENCODE, Language

if TYPE_CHECKING:  # analysis (and the language's scanner) is imported when a file is analyzed
    from ..analysis import TemplateAnalysis

LANGUAGES = {"claude-code": CLAUDE, "opencode": OPENCODE, "codex": CODEX, "gemini": GEMINI}


@dataclass(frozen=True)
class DialectTemplate(PromptTemplate):
    """A template in another tool's dialect; expanded by that dialect's rules."""

    def _language(self) -> Language:
        return LANGUAGES[self.dialect]

    def invoke(self, args_text: str) -> str:
        typed = f"/{self.name} {args_text}" if args_text else f"/{self.name}"
        return self._language().expand(self.body, args_text, typed)

    def expand(self, args) -> str:
        return self.invoke(" ".join(quoted(a) if re.search(r"\s|['\"]", a) else a for a in args))

    def analyze(self) -> TemplateAnalysis:
        from ..analysis import TemplateAnalysis

        arity = self._language().arity(self.body)
        return TemplateAnalysis(arity.highest, arity.variadic_from is not None, False, False, arity, ())

    def problems(self) -> list[Problem]:
        return list(self.notes)

    def placeholder(self, position: int) -> str:
        """The placeholder of argument ``position`` (counted from 1) as the file writes it."""
        return self._language().placeholder(self.body, position)

    @property
    def missing_argument(self) -> str:
        """What this dialect does with a placeholder whose argument is not given."""
        return self._language().missing


def command_name(path: Path, root: Path, dialect: str) -> str:
    """The command a file defines: its path under ``root`` without the suffix, folders
    joined by ``:`` (Claude Code and Gemini namespaces: ``frontend/component.md`` →
    ``frontend:component``; opencode keeps ``/``); Codex prompts are ``prompts:NAME``."""
    try:
        rel = path.relative_to(root) if path != root else Path(path.name)
    except ValueError:
        rel = Path(path.name)
    parts = list(rel.parts)
    parts[-1] = re.sub(r"\.(md|toml)$", "", parts[-1])
    if dialect == "codex":
        return "prompts:" + parts[-1]
    return ("/" if dialect == "opencode" else ":").join(parts)


def read_dialect_file(path: Path, dialect: str, root: Path | None = None, kind: SourceKind = "path") -> PromptTemplate:
    """One file of ``dialect``; raises :class:`PipelineError` (a warning) when it cannot be used."""
    from dataclasses import replace

    from pipeline import files

    try:
        text = files.read_text(path, "template", lenient=True)  # the one bounded reader
    except PipelineError as err:
        raise TemplateError([replace(p, severity="warning", hint="the template is skipped")
                             for p in err.problems]) from None
    name = command_name(path, root or path.parent, dialect)
    if dialect == "gemini":
        return _gemini(path, text, name, kind)
    return _markdown(path, text, name, dialect, kind)


def _markdown(path: Path, text: str, name: str, dialect: str, kind: SourceKind) -> PromptTemplate:
    file = source_file(path, name)
    fm, notes = _frontmatter(text, file)
    hint, hint_notes = _argument_hint(fm, text, file, dialect)
    description = yaml_string(fm.get("description")) if js_truthy(fm.get("description")) else \
        first_line_description(fm.body)
    normalized = normalize_newlines(text)
    start = len(normalized) - len(normalized.lstrip()) if fm.yaml_text is None else _body_offset(normalized)
    notes += hint_notes + key_notes(dialect, fm.data, normalized, file) + body_notes(dialect, normalized, start, file)
    return DialectTemplate(name, description, fm.body, hint, path, kind, fm.body_line, fm.body_col,
                           dialect=dialect, notes=tuple(notes))


def _body_offset(normalized: str) -> int:
    return normalized.find("\n---", 3) + 4


def _frontmatter(text: str, file: str) -> tuple[Frontmatter, list[Problem]]:
    try:
        return parse_frontmatter(text), []
    except FrontmatterError as err:
        found = bracket_hint_line(text)
        if found is None:
            quote = unquoted_hint(text, err.line)
            hint = f"{quote}; the template is skipped" if quote else "the template is skipped"
            raise TemplateError(Problem(err.reason, Location(file, err.line, err.col), severity="warning",
                                        code="template.frontmatter", hint=hint)) from None
    line, raw = found
    lines = normalize_newlines(text).split("\n")
    lines[line - 1] = "argument-hint: " + quoted(raw)
    try:
        fm = parse_frontmatter("\n".join(lines))
    except FrontmatterError as err:
        raise TemplateError(Problem(err.reason, Location(file, err.line, err.col), severity="warning",
                                    code="template.frontmatter", hint="the template is skipped")) from None
    note = Problem(f"`argument-hint: {raw}` is not valid YAML (pi skips this file); read here as the text "
                   "written", Location(file, line, 16), severity="warning", code="template.argument-hint-unquoted",
                   hint=f"quote the value: argument-hint: {quoted(raw)}")
    return fm, [note]


def _argument_hint(fm: Frontmatter, text: str, file: str, dialect: str) -> tuple[str | None, list[Problem]]:
    value = fm.get("argument-hint")
    found = bracket_hint_line(text)
    if isinstance(value, list) and found is not None:
        line, raw = found
        note = Problem(f"`argument-hint: {raw}` is a YAML list (pi would show `{yaml_string(value)}`); "
                       "shown here as written", Location(file, line, 16), severity="info",
                       code="template.argument-hint-list", hint=f"quote it: argument-hint: {quoted(raw)}")
        return raw, [note]
    return (yaml_string(value) if js_truthy(value) else None), []


# --- Gemini CLI (TOML) -------------------------------------------------------------------


def _gemini(path: Path, text: str, name: str, kind: SourceKind) -> PromptTemplate:
    file = source_file(path, name)
    try:
        data = toml_loads(text)  # nesting past TOML_MAX_DEPTH is refused before the parser recurses
    except ValueError as err:
        line, col = _toml_position(str(err))
        raise TemplateError(Problem(f"invalid TOML: {_toml_reason(str(err))}", Location(file, line, col),
                                    severity="warning", code="template.toml", hint="the command is skipped"))
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        what = "has no `prompt`" if prompt is None else "`prompt` is not a string"
        raise TemplateError(_skip(path, f"Gemini command {what}", "template.toml"))
    desc = data.get("description")
    description = desc if isinstance(desc, str) and desc else first_line_description(prompt)
    start = _prompt_offset(text)
    notes = key_notes("gemini", data, text, file, used={"prompt", "description"})
    notes += body_notes("gemini", text, start, file)
    line, col = locate(text, start)
    return DialectTemplate(name, description, prompt, None, path, kind, line, col, dialect="gemini",
                           notes=tuple(notes))


def _prompt_offset(text: str) -> int:
    m = re.search(r"(?m)^prompt[ \t]*=[ \t]*", text)
    return m.end() if m else 0


def _toml_position(message: str) -> tuple[int | None, int | None]:
    m = re.search(r"\(at line (\d+), column (\d+)\)", message)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def _toml_reason(message: str) -> str:
    return js_trim(re.sub(r"\s*\(at line \d+, column \d+\)", "", message)) or "unreadable"


def _skip(path: Path, message: str, code: str) -> Problem:
    return Problem(message, Location(str(path)), hint="the template is skipped", severity="warning", code=code)
