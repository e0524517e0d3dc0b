"""The summary schema: rendering it into the instructions, checking an answer against it.

Layout of ``${schema}`` (with pi's wording in the profile this is pi's format block
byte for byte): sections joined by a blank line; a section is
``<section_prefix><heading>`` + (``\\n`` + guidance) + (``\\n`` + its items joined by a
blank line, each ``<item_prefix><heading>`` + (``\\n`` + guidance)).

The check looks for the heading line ``<section_prefix><heading>`` of every required
section (a whole line; trailing whitespace ignored).
"""

from __future__ import annotations

from typing import Sequence

from pipeline.js import js_trim_end
from pipeline.model.summary import SchemaFormat, SchemaItem, SchemaSection


def _with_guidance(head: str, item: SchemaItem | SchemaSection) -> str:
    return head + ("\n" + item.guidance.render() if item.guidance else "")


def render_section(section: SchemaSection, fmt: SchemaFormat) -> str:
    """One section: heading line, guidance, then its items."""
    text = _with_guidance(fmt.section_prefix + section.heading, section)
    if section.items:
        items = (_with_guidance(fmt.item_prefix + item.heading, item) for item in section.items)
        text += "\n" + "\n\n".join(items)
    return text


def render_schema(sections: Sequence[SchemaSection], fmt: SchemaFormat) -> str:
    """The value of ``${schema}``: every section, joined by a blank line."""
    return "\n\n".join(render_section(section, fmt) for section in sections)


def heading_line(section: SchemaSection, fmt: SchemaFormat) -> str:
    """The line that opens ``section`` in a summary."""
    return fmt.section_prefix + section.heading


def missing_sections(summary: str, sections: Sequence[SchemaSection], fmt: SchemaFormat) -> tuple[str, ...]:
    """Heading lines of the required sections that ``summary`` lacks, in schema order."""
    lines = {js_trim_end(line) for line in summary.split("\n")}
    wanted = (heading_line(s, fmt) for s in sections if s.required)
    return tuple(line for line in wanted if js_trim_end(line) not in lines)
