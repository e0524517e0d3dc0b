"""Writing pi templates in another tool's dialect (``pipeline templates export``).

Each placeholder of pi's language (:mod:`pipeline.templates.nodes`) is written in the
target's spelling when the target expands it the same way; when it cannot, the template
is **not written** and the reasons are returned instead, so nothing wrong lands on disk:

| pi | Claude Code | opencode | Codex | Gemini CLI |
| --- | --- | --- | --- | --- |
| `$N` | `$ARGUMENTS[N-1]` | `$N` (note: the highest one takes the rest) | `$N` for N ≤ 9 | cannot |
| `$@`, `$ARGUMENTS` | `$ARGUMENTS` (note: the text as typed) | `$ARGUMENTS` (same note) | `$ARGUMENTS` | cannot (`{{args}}` is the text as typed) |
| `${@:N}`, `${@:N:L}`, `${N:-d}` | cannot | cannot | cannot | cannot |

Literal text the target would read as its own syntax is escaped where the target has an
escape (every literal ``$`` is ``$$`` for Codex) and is a reason not to write otherwise (a literal ``$2`` or
``{{args}}``, a Claude Code ``!`cmd```). Notes are differences that only show with
unusual input; the template is written and the note returned with it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pipeline import files
from ..files import PromptTemplate
from ..nodes import AllArgs, Default, Literal, Positional, Slice

TARGETS = ("claude-code", "opencode", "gemini", "codex")
#: where ``export`` writes when no directory is given (relative to the working directory)
DEFAULT_DIRS = {"claude-code": ".claude/commands", "opencode": ".opencode/commands",
                "gemini": ".gemini/commands", "codex": ".codex/prompts"}


@dataclass(frozen=True)
class Exported:
    """One template in the target dialect: ``relpath`` and ``text`` to write (None when
    it cannot be written), ``reasons`` why not, ``notes`` on what differs with rare input."""

    name: str
    relpath: str | None
    text: str | None
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())


def export_template(t: PromptTemplate, target: str) -> Exported:
    """``t`` written for ``target`` (one of :data:`TARGETS`), or the reasons it cannot be."""
    if t.dialect != "pi":
        if t.dialect == target:
            text = files.read_text(t.path, "template", lenient=True) if t.path else None  # copied as it is
            return Exported(t.name, _relpath(t.name, target), text)
        return Exported(t.name, None, None, (f"it is a {t.dialect} template; only pi templates are converted",))
    body, reasons, notes = _body(t, target)
    if reasons:
        return Exported(t.name, None, None, tuple(dict.fromkeys(reasons)), tuple(dict.fromkeys(notes)))
    return Exported(t.name, _relpath(t.name, target), _file(t, body, target), (), tuple(dict.fromkeys(notes)))


def _relpath(name: str, target: str) -> str:
    suffix = ".toml" if target == "gemini" else ".md"
    base = name[len("prompts:"):] if target == "codex" and name.startswith("prompts:") else name
    return "/".join(base.split(":")) + suffix


def _body(t: PromptTemplate, target: str) -> tuple[str, list[str], list[str]]:
    out: list[str] = []
    reasons: list[str] = []
    notes: list[str] = []
    nodes = t.template.nodes
    for i, node in enumerate(nodes):
        src = t.template.source(node)
        if isinstance(node, Literal):
            out.append(_literal(node.text, target, reasons))
        elif isinstance(node, Positional):
            out.append(_positional(node, src, target, reasons, notes))
        elif isinstance(node, AllArgs):
            after = nodes[i + 1] if i + 1 < len(nodes) else None
            if target == "claude-code" and isinstance(after, Literal) and re.match(r"\[[0-9]", after.text):
                reasons.append(f"`{src}` followed by `[` would read as Claude Code's `$ARGUMENTS[N]`")
            out.append(_all(src, target, reasons, notes))
        elif isinstance(node, (Slice, Default)):
            what = "a slice" if isinstance(node, Slice) else "a default"
            reasons.append(f"`{src}` is {what}, which {_tool(target)} has no form for")
    if not t.template.placeholders and target in ("claude-code", "opencode", "gemini"):
        notes.append(f"{_tool(target)} appends the arguments to a body without placeholders; pi ignores them")
    return "".join(out), reasons, notes


def _positional(node: Positional, src: str, target: str, reasons: list, notes: list) -> str:
    n = node.index
    if n == 0:
        return ""  # always empty in pi
    if target == "claude-code":
        notes.append("Claude Code leaves `$ARGUMENTS[N]` as written when that argument is not given; "
                     "pi expands it to nothing")
        return f"$ARGUMENTS[{n - 1}]"
    if target == "opencode":
        notes.append("in opencode the highest `$N` also takes every argument after it")
        return f"${n}"
    if target == "codex" and n <= 9:
        return f"${n}"
    reasons.append(f"`{src}`: {_tool(target)} has no " + ("position above 9" if target == "codex" else
                                                          "positional arguments"))
    return src


def _all(src: str, target: str, reasons: list, notes: list) -> str:
    if target == "gemini":
        reasons.append(f"`{src}`: Gemini CLI's `{{{{args}}}}` is the text as typed, quotes included; "
                       "pi joins the parsed arguments")
        return src
    if target in ("claude-code", "opencode"):
        notes.append(f"{_tool(target)}'s `$ARGUMENTS` is the text as typed: quoted arguments keep their quotes")
    return "$ARGUMENTS"


_CLAIMED = {
    "claude-code": (re.compile(r"\$ARGUMENTS|\$[0-9]"), re.compile(r"!`[^`\n]+`")),
    "opencode": (re.compile(r"\$ARGUMENTS|\$[0-9]"), re.compile(r"!`[^`\n]+`")),
    "gemini": (re.compile(r"\{\{args\}\}"), re.compile(r"!\{|@\{")),
    "codex": (None, None),
}


def _literal(text: str, target: str, reasons: list) -> str:
    if target == "codex":
        return text.replace("$", "$$")  # Codex reads `$$` as one `$`, whatever follows
    placeholder, runs = _CLAIMED[target]
    for rx in (placeholder, runs):
        m = rx.search(text) if rx is not None else None
        if m:
            reasons.append(f"the text `{m.group(0)}` would be read by {_tool(target)} as its own syntax "
                           "and it has no escape")
    return text


def _tool(target: str) -> str:
    return {"claude-code": "Claude Code", "opencode": "opencode", "gemini": "Gemini CLI", "codex": "Codex"}[target]


def _file(t: PromptTemplate, body: str, target: str) -> str:
    if target == "gemini":
        return f"description = {json.dumps(t.description, ensure_ascii=False)}\nprompt = {_toml_string(body)}\n"
    lines = ["---", f"description: {json.dumps(t.description, ensure_ascii=False)}"]
    if t.hint_text:
        lines.append(f"argument-hint: {json.dumps(t.hint_text, ensure_ascii=False)}")
    return "\n".join(lines) + "\n---\n" + body + ("" if body.endswith("\n") else "\n")


def _toml_string(text: str) -> str:
    if "'''" not in text and "\r" not in text:
        return "'''\n" + text + "'''"
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def write_exported(items: list[Exported], directory: Path) -> list[Path]:
    """Write the items that can be written under ``directory``; returns the paths."""
    written = []
    for item in items:
        if item.text is None or item.relpath is None:
            continue
        path = directory / item.relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(item.text, encoding="utf-8")
        written.append(path)
    return written
