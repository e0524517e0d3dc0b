"""The docs say one thing about pi's wording: structure, decisions, order and wire shape
are pi's; the sentences are ours (docs/profile.md, "What equals pi, and what does not")."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ANCHOR = "what-equals-pi-and-what-does-not"
# claims that a request or a render is pi's own bytes
CLAIMS = re.compile(r"pi(?: 0\.84\.0)?'s byte for byte|renders what pi would send|requests are pi", re.I)


def test_no_doc_claims_pi_bytes():
    found = [f"{doc.name}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}"
             for doc in DOCS for text in [doc.read_text(encoding="utf-8")] for m in CLAIMS.finditer(text)]
    assert found == []


def test_profile_md_states_what_equals_pi_and_what_does_not():
    text = (ROOT / "docs" / "profile.md").read_text(encoding="utf-8")
    section = text.split("\n## What equals pi, and what does not\n", 1)[1].split("\n## ", 1)[0]
    for part in ("**structure**", "**decisions**", "**order**", "**wire shape**", "Not equal: **the wording**"):
        assert part in section, part
    assert "configs/*.yaml" in section and "masked" in section


def test_runtime_and_the_import_paragraph_point_at_it():
    assert f"profile.md#{ANCHOR}" in (ROOT / "docs" / "runtime.md").read_text(encoding="utf-8")
    profile = (ROOT / "docs" / "profile.md").read_text(encoding="utf-8")
    importing = profile.split("* `import pi` writes an overlay profile", 1)[1].split("\n\n", 1)[0]
    assert f"(#{ANCHOR}" in importing or f"[what equals pi](#{ANCHOR})" in importing
