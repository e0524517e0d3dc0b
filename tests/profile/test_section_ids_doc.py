"""docs/profile.md lists the section ids of the built-in profiles, as configs/ defines them.

Run this file (`python tests/profile/test_section_ids_doc.py`) to rewrite the table after
changing a built-in profile's sections.
"""

from __future__ import annotations

import re
from pathlib import Path

from pipeline import compile_profile

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "profile.md"
START, END = "<!-- section-ids:start -->", "<!-- section-ids:end -->"
BUILTINS = ("default", "minimal")


def _when(section) -> str:
    parts = []
    if section.replaced_by_custom_prompt:
        parts.append("no custom prompt")
    w = section.when
    if w is not None:
        parts += [f"`{t}` selected" for t in w.tools_include]
        parts += [f"`{t}` not selected" for t in w.tools_exclude]
        parts += [f"{i} given" for i in w.present] + [f"no {i}" for i in w.absent]
    return ", ".join(parts) or "always"


def table() -> str:
    lines = []
    for name in BUILTINS:
        lines += [f"`builtin:{name}` (`configs/{name}.yaml`):", "", "| id | kind | rendered when |", "| --- | --- | --- |"]
        for s in compile_profile(name).profile.system_prompt.sections:
            lines.append(f"| `{s.id}` | `{s.kind}` | {_when(s)} |")
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def _current() -> str:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(re.escape(START) + r"\n(.*?)\n" + re.escape(END), text, re.S)
    assert m, f"{DOC} has no {START} ... {END} block"
    return m.group(1)


def test_the_section_id_table_matches_the_builtin_profiles():
    assert _current() == table(), "run `python tests/profile/test_section_ids_doc.py` to rewrite the table"


def test_every_default_section_id_is_listed():
    ids = {s.id for s in compile_profile("default").profile.system_prompt.sections}
    assert ids and all(f"| `{i}` |" in _current() for i in ids)


if __name__ == "__main__":
    text = DOC.read_text(encoding="utf-8")
    new = re.sub(re.escape(START) + r"\n.*?\n" + re.escape(END), lambda m: f"{START}\n{table()}\n{END}", text,
                 flags=re.S)
    DOC.write_text(new, encoding="utf-8")
    print("rewrote the section-id table in", DOC)
