"""``/skill:name args``: a skill's instructions put into the user message (pi's ``_expandSkillCommand``).

The name runs from after ``/skill:`` to the first space; the rest, trimmed, is the
arguments. A known skill's file is read, its frontmatter stripped and the body trimmed;
the message is ``open + body + close`` (+ ``args`` when there are arguments), texts
from the profile's ``runtime.skill``. Unknown skills and unreadable files leave the
input unchanged.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Protocol

from pipeline import files
from pipeline.errors import PipelineError
from pipeline.js import js_trim

from .frontmatter import normalize_newlines, split_frontmatter

PREFIX = "/skill:"


class SkillLike(Protocol):
    name: str
    file_path: str
    base_dir: str


def expand_skill(text: str, skills: Iterable[SkillLike], texts: Any) -> Optional[str]:
    """The expansion of ``/skill:name args`` with ``texts`` (a ``runtime.skill`` block), or
    ``None`` when ``text`` is no skill command, names no known skill or the file cannot be read."""
    if not text.startswith(PREFIX):
        return None
    space = text.find(" ")
    name = text[len(PREFIX):] if space < 0 else text[len(PREFIX):space]
    args = "" if space < 0 else js_trim(text[space + 1:])
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return None
    try:  # the bounded reader: a FIFO or a giant file named as a skill cannot hang or fill memory
        content = files.read_text(skill.file_path, "skill")
    except PipelineError:
        return None
    body = js_trim(split_frontmatter(normalize_newlines(content))[1])
    block = texts.open.render(name=skill.name, location=skill.file_path, base_dir=skill.base_dir) + body
    block += texts.close.render()
    return block + texts.args.render(args=args) if args else block
