"""The ``templates`` block: where prompt templates come from and how arguments are split."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Discriminator, Field, Tag

from pipeline.agentdir import DEFAULT_GLOBAL_DIR
from pipeline.model.base import Strict

#: The template dialects a source may be read as (``pi`` is the default).
Dialect = Literal["pi", "claude-code", "opencode", "gemini", "codex"]
#: Bare ``templates.sources`` keywords: pi's two directories, then each dialect's own.
SOURCE_KEYWORDS = ("project", "global", "claude-code", "opencode", "gemini", "codex")


#: The ``templates.sources`` entries that are keywords, not paths.
TEMPLATE_KEYWORDS = ("project", "global", "pi", "claude-code", "opencode", "gemini", "codex")


class DialectSource(Strict):
    """A template source read in another tool's dialect: ``{dialect: claude-code, path: x}``."""

    dialect: Dialect = Field(description="the tool whose file format and argument language the files use")
    path: Optional[str] = Field(
        None,
        description="a directory or file, relative to the profile file; none: the dialect's own directories",
    )


def _source_kind(value: Any) -> str:
    return "[dialect]" if isinstance(value, (dict, DialectSource)) else "[name]"


#: "global", "project", a dialect keyword, a path, or a {dialect, path} mapping (a mapping
#: is checked as one, a scalar as text, so an error names one expectation; the bracketed
#: tags are left out of key paths like pydantic's own)
TemplateSource = Annotated[
    Union[Annotated[str, Tag("[name]")], Annotated[DialectSource, Tag("[dialect]")]],
    Discriminator(_source_kind),
]


__all__ = ["DEFAULT_GLOBAL_DIR", "SOURCE_KEYWORDS", "TEMPLATE_KEYWORDS", "Dialect", "DialectSource", "TemplateSource", "Templates",
           "source_path"]


class Templates(Strict):
    sources: tuple[TemplateSource, ...] = Field(
        ("project", "global"),
        description=(
            'where prompt templates come from: "project", "global", a dialect ("claude-code",'
            ' "opencode", "gemini", "codex"), paths, or {dialect, path}; order = precedence'
            " (the first template of a name wins)"
        ),
    )
    global_dir: str = Field(
        DEFAULT_GLOBAL_DIR,
        description="the user's template directory; the default follows $PI_CODING_AGENT_DIR when that is set",
    )
    project_dir: str = Field(".pi/prompts", description="the project's template directory, relative to the cwd")
    argument_splitting: Literal["pi-0.84", "pi-1.6"] = Field(
        "pi-0.84",
        description=(
            "how `/name args` is split into arguments: `pi-0.84` (quotes anywhere, no escapes, empty quotes give"
            " nothing) or `pi-1.6` (quotes only at a word's start, `\\` before the open quote, empty quotes give"
            " an empty argument, an unclosed quote is literal)"
        ),
    )


def source_path(entry: object) -> str | None:
    """The path a ``templates.sources`` entry names, or None for a keyword
    (``project``, ``global``, a dialect) and a ``{dialect}`` without ``path``."""
    if isinstance(entry, DialectSource):
        return entry.path
    return None if entry in TEMPLATE_KEYWORDS else str(entry)
