"""What a dialect has and context-pipeline does not run, found per file.

Each hit becomes a located :class:`~pipeline.errors.Problem` (a warning) on the loaded
template, so ``pipeline templates`` and ``pipeline validate`` show it instead of
dropping it: shell commands run before sending (Claude Code and opencode ``!`cmd```,
Gemini ``!{cmd}``), files pulled in (``@path``, ``@{path}``), ``{{args}}`` inside a
Gemini shell block, and frontmatter keys that steer the tool (``allowed-tools``,
``model``, ``agent``...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from pipeline.errors import Location, Problem

#: frontmatter keys every dialect's loader uses; any other key is reported
USED_KEYS = frozenset({"description", "argument-hint"})

TOOL_NAMES = {"claude-code": "Claude Code", "opencode": "opencode", "gemini": "Gemini CLI", "codex": "Codex"}

_EXT = r"(?:md|ts|js|py|json|toml|yaml|yml|txt|go|rs|tsx|sh)"


@dataclass(frozen=True)
class Feature:
    code: str
    pattern: re.Pattern
    what: str  # "{tool}" and "{src}" are filled in
    hint: str


SHELL = Feature("template.dialect-shell", re.compile(r"!`[^`\n]+`"),
                "`{src}` runs a shell command in {tool} and inserts its output; it is not run here "
                "and stays as written", "give the output as an argument, or leave the line out")
FILE_REF = Feature("template.dialect-file", re.compile(
    rf"(?:^|(?<=[\s(]))@(?:\.{{0,2}}/|[\w-]+/|[\w-]+\.{_EXT}\b)[\w./-]*", re.M),
    "`{src}` makes {tool} include that file; it is not read here and stays as written",
    "pass the file's path as an argument and let the agent read it")
GEMINI_SHELL = Feature("template.dialect-shell", re.compile(r"!\{[^}\n]*\}"),
                       "`{src}` runs a shell command in {tool} and inserts its output; it is not run here "
                       "and stays as written", "give the output as an argument, or leave it out")
GEMINI_FILE = Feature("template.dialect-file", re.compile(r"@\{[^}\n]+\}"),
                      "`{src}` makes {tool} include that file or directory; it is not read here and stays "
                      "as written", "pass the path as an argument and let the agent read it")
GEMINI_SHELL_ARGS = Feature("template.dialect-shell-args", re.compile(r"!\{[^}\n]*\{\{args\}\}[^}\n]*\}"),
                            "`{src}`: {tool} puts the arguments, shell-quoted, into a command it runs; "
                            "here the block is kept as text with the arguments inserted as typed",
                            "ask for the command's output as an argument instead")

PRICE = Feature("template.dollar-amount", re.compile(r"\$[0-9]+(?:[.,][0-9]+)+"),
                "`{src}` looks like an amount, but {tool} replaces its `$` and digits with an argument",
                "there is no escape for `$`: write the amount without it")
CODEX_PRICE = Feature("template.dollar-amount", re.compile(r"\$[1-9](?:[.,][0-9]+)+"), PRICE.what, PRICE.hint)

BODY_FEATURES = {
    "claude-code": (SHELL, FILE_REF, PRICE),
    "opencode": (SHELL, FILE_REF, PRICE),
    "codex": (CODEX_PRICE,),
    "gemini": (GEMINI_SHELL_ARGS, GEMINI_SHELL, GEMINI_FILE),
}


def locate(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, col) of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def body_notes(dialect: str, text: str, start: int, file: str) -> list[Problem]:
    """Findings for the features of ``text[start:]`` that ``dialect`` runs and we do not."""
    tool = TOOL_NAMES[dialect]
    out: list[Problem] = []
    taken: list[tuple[int, int]] = []
    for feature in BODY_FEATURES[dialect]:
        for m in feature.pattern.finditer(text, start):
            if any(a <= m.start() < b for a, b in taken):
                continue
            taken.append(m.span())
            line, col = locate(text, m.start())
            message = feature.what.format(src=m.group(0), tool=tool)
            out.append(Problem(message, Location(file, line, col), severity="warning",
                               code=feature.code, hint=feature.hint))
    return sorted(out, key=lambda p: (p.location.line, p.location.col))


def key_notes(dialect: str, data: Mapping[str, object], text: str, file: str,
              used: Iterable[str] = USED_KEYS) -> list[Problem]:
    """A warning per frontmatter (or TOML) key that is not used here."""
    tool = TOOL_NAMES[dialect]
    out = []
    for key in data:
        if key in used:
            continue
        m = re.search(rf"(?m)^{re.escape(key)}[ \t]*[:=]", text)
        line, col = locate(text, m.start()) if m else (None, None)
        out.append(Problem(f"`{key}` ({tool}) is not applied here: only the body, `description` and "
                           "`argument-hint` are used", Location(file, line, col), severity="warning",
                           code="template.dialect-key", hint="the setting is kept in the file but has no effect"))
    return out


def source_file(path: Path | None, name: str) -> str:
    return str(path) if path is not None else f"/{name}"
