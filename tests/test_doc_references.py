"""Every reference into the docs resolves (issue 19, item 7): a ``docs/NAME.md[#anchor]`` in the
package (a ``docs/NAME.md#anchor`` in the tests) names a file of ``docs/`` and one of its headings, and a
Markdown link between the docs pages lands on a page and a heading that exist. The rules
of pi the code cites are in the repository (docs/pi-rules.md), not in a design document
outside it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CODE_REF = re.compile(r"docs/([A-Za-z0-9_.-]+\.md)(?:#([A-Za-z0-9_-]+))?")
MD_LINK = re.compile(r"\]\(([A-Za-z0-9_.-]+\.md)?(?:#([A-Za-z0-9_-]+))?\)")
FENCE = re.compile(r"^(```|~~~)")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces to ``-``."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not line.startswith("#"):
            continue
        base = slug(line.lstrip("#"))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def _code_files() -> list[Path]:
    """The package's and the tests' Python files (this one, which names the patterns, left out)."""
    return [p for p in (*sorted((ROOT / "pipeline").rglob("*.py")), *sorted((ROOT / "tests").rglob("*.py")))
            if p != Path(__file__).resolve()]


def test_the_slug_rule():
    assert slug(" Recorded system prompt") == "recorded-system-prompt"
    assert slug(" `pipeline context`") == "pipeline-context"
    assert slug(" What equals pi, and what does not") == "what-equals-pi-and-what-does-not"
    assert slug(" After a run: the compaction check") == "after-a-run-the-compaction-check"


def test_every_docs_reference_in_the_code_resolves():
    cache: dict[str, set[str]] = {}
    checked, broken = 0, []
    for path in _code_files():
        text = path.read_text(encoding="utf-8")
        for match in CODE_REF.finditer(text):
            name, anchor = match.groups()
            if anchor is None and path.is_relative_to(ROOT / "tests"):
                continue  # tests name made-up pages in their inputs (``@{docs/style.md}``); an anchor is a reference
            page = DOCS / name
            where = f"{path.relative_to(ROOT)}:{text[:match.start()].count(chr(10)) + 1}: {match.group(0)}"
            checked += 1
            if not page.is_file():
                broken.append(f"{where} (no such page)")
            elif anchor is not None and anchor not in cache.setdefault(name, anchors(page)):
                broken.append(f"{where} (no such heading)")
    assert broken == []
    assert checked >= 60  # the former design-document references among them


def test_every_link_between_the_docs_resolves():
    broken = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in MD_LINK.finditer(text):
            name, anchor = match.groups()
            target = DOCS / name if name else page
            if not target.is_file():
                broken.append(f"{page.name}: {match.group(0)} (no such page)")
            elif anchor is not None and anchor not in anchors(target):
                broken.append(f"{page.name}: {match.group(0)} (no such heading)")
    assert broken == []


def test_no_reference_into_a_document_outside_the_repository():
    pattern = re.compile(r"spec §|§\d|DESIGN\.md|DESIGN's|pi-behaviour\.md")
    found = []
    for path in [*_code_files(), *sorted(DOCS.glob("*.md")), ROOT / "README.md"]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert found == []


def test_no_page_sends_readers_to_a_note_outside_the_repository():
    """Issue 34, item 6: the research notes live outside the repository (../shared), so a
    page may not send readers there for what it should say itself."""
    found = [f"{page.name}:{n}" for page in [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]
             for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             if "shared/research" in line or "research note" in line]
    assert found == []
