"""Comparing two profiles: rendered prompts per scenario, section token deltas, changed settings.

:func:`diff_profiles` takes two compiled pipelines and, per scenario, the two
:class:`~pipeline.report.prompt.PromptReport` renders; it produces a :class:`ProfileDiff`
that :func:`diff_text`, :func:`diff_json` and :func:`diff_markdown` (a PR comment) show.
Settings are compared as flattened key paths of the merged profiles; sections are keyed by
id (``system_prompt.sections.rules.item``), other lists by index.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from pipeline.model import Profile
from pipeline.report.prompt import PromptReport

ABSENT = object()


@dataclass(frozen=True)
class SectionDelta:
    """One section id in either render; tokens are None where the section is absent."""

    id: str
    old_tokens: Optional[int]
    new_tokens: Optional[int]
    status: str  # added | removed | changed | unchanged

    @property
    def delta(self) -> int:
        return (self.new_tokens or 0) - (self.old_tokens or 0)


@dataclass(frozen=True)
class ScenarioDiff:
    label: str
    old: PromptReport
    new: PromptReport
    unified: str
    sections: tuple[SectionDelta, ...]

    @property
    def identical(self) -> bool:
        return self.old.prompt == self.new.prompt

    @property
    def token_delta(self) -> int:
        return self.new.tokens - self.old.tokens


@dataclass(frozen=True)
class SettingChange:
    key: str
    old: Any  # ABSENT when the key is new
    new: Any  # ABSENT when the key is gone

    @property
    def status(self) -> str:
        return "added" if self.old is ABSENT else "removed" if self.new is ABSENT else "changed"


@dataclass(frozen=True)
class ProfileDiff:
    old_label: str
    new_label: str
    settings: tuple[SettingChange, ...]
    scenarios: tuple[ScenarioDiff, ...]

    @property
    def identical(self) -> bool:
        """No setting changed and every scenario renders the same bytes."""
        return not self.settings and all(s.identical for s in self.scenarios)


# --------------------------------------------------------------------------- building


def diff_profiles(
    old_label: str,
    new_label: str,
    old_profile: Profile,
    new_profile: Profile,
    renders: Iterable[tuple[str, PromptReport, PromptReport]],
    context_lines: int = 3,
) -> ProfileDiff:
    """The whole comparison; ``renders`` holds ``(scenario label, old report, new report)``."""
    scenarios = tuple(
        ScenarioDiff(
            label,
            old,
            new,
            unified_diff(old.prompt, new.prompt, f"{old_label} ({label})", f"{new_label} ({label})", context_lines),
            section_deltas(old, new),
        )
        for label, old, new in renders
    )
    return ProfileDiff(old_label, new_label, settings_changes(old_profile, new_profile), scenarios)


def _lines(text: str) -> list[str]:
    """Split after every ``\\n`` only (not at other line separators)."""
    return [part for part in re.split(r"(?<=\n)", text) if part]


def unified_diff(old: str, new: str, old_name: str, new_name: str, context_lines: int = 3) -> str:
    """A unified diff of two texts; a last line without newline is marked as ``diff`` does."""
    import difflib

    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), old_name, new_name, n=context_lines):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def section_deltas(old: PromptReport, new: PromptReport) -> tuple[SectionDelta, ...]:
    """Per section id: tokens before and after (new order first, then removed sections)."""
    before = {s.id: s for s in old.sections}
    after = {s.id: s for s in new.sections}
    ids = list(after) + [i for i in before if i not in after]
    return tuple(_delta(i, before.get(i), after.get(i)) for i in ids)


def _delta(section_id: str, old, new) -> SectionDelta:
    if old is None:
        return SectionDelta(section_id, None, new.tokens, "added")
    if new is None:
        return SectionDelta(section_id, old.tokens, None, "removed")
    same = old.text == new.text and old.separator == new.separator
    return SectionDelta(section_id, old.tokens, new.tokens, "unchanged" if same else "changed")


def flatten_profile(profile: Profile) -> dict[str, Any]:
    """Every setting of a merged profile as ``{"key.path": value}`` (sections keyed by id)."""
    data = profile.model_dump(mode="json", by_alias=True, exclude={"schema_ref"})
    out: dict[str, Any] = {}
    _flatten(data, "", out)
    return out


def _flatten(value: Any, key: str, out: dict[str, Any]) -> None:
    if key == "system_prompt.sections" and isinstance(value, list):
        out[key] = [s.get("id") for s in value]
        for section in value:
            _flatten(section, f"{key}.{section.get('id')}", out)
    elif isinstance(value, dict) and value:
        for name, item in value.items():
            _flatten(item, f"{key}.{name}" if key else str(name), out)
    elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        for index, item in enumerate(value):
            _flatten(item, f"{key}.{index}", out)
    else:
        out[key] = value


def settings_changes(old: Profile, new: Profile) -> tuple[SettingChange, ...]:
    """Keys whose values differ, were added or were removed (new order first).

    A section that exists on one side only is one change holding the whole section.
    """
    a, b = _collapsed(old, new), _collapsed(new, old)
    keys = list(b) + [k for k in a if k not in b]
    return tuple(
        SettingChange(k, a.get(k, ABSENT), b.get(k, ABSENT)) for k in keys if a.get(k, ABSENT) != b.get(k, ABSENT)
    )


def _collapsed(profile: Profile, other: Profile) -> dict[str, Any]:
    flat = flatten_profile(profile)
    theirs = {s.id for s in other.system_prompt.sections}
    for section in profile.system_prompt.sections:
        if section.id in theirs:
            continue
        prefix = f"system_prompt.sections.{section.id}"
        for key in [k for k in flat if k.startswith(prefix + ".")]:
            del flat[key]
        flat[prefix] = section.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return flat


# --------------------------------------------------------------------------- formats


def show_value(value: Any, limit: int = 0) -> str:
    """A setting value for people: JSON, or ``(unset)``; cut to ``limit`` characters if given."""
    text = "(unset)" if value is ABSENT else json.dumps(value, ensure_ascii=False)
    return text if not limit or len(text) <= limit else text[: limit - 1] + "…"


def diff_json(diff: ProfileDiff) -> str:
    """The comparison as indented JSON."""
    doc = {
        "old": diff.old_label,
        "new": diff.new_label,
        "identical": diff.identical,
        "settings": [
            {"key": c.key, "status": c.status, "old": None if c.old is ABSENT else c.old, "new": None if c.new is ABSENT else c.new}
            for c in diff.settings
        ],
        "scenarios": [_scenario_json(s) for s in diff.scenarios],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2)


def _scenario_json(s: ScenarioDiff) -> dict[str, Any]:
    return {
        "scenario": s.label,
        "identical": s.identical,
        "old_tokens": s.old.tokens,
        "new_tokens": s.new.tokens,
        "token_delta": s.token_delta,
        "sections": [
            {"id": d.id, "status": d.status, "old_tokens": d.old_tokens, "new_tokens": d.new_tokens, "delta": d.delta}
            for d in s.sections
        ],
        "diff": s.unified,
        "old_prompt": s.old.prompt,
        "new_prompt": s.new.prompt,
    }


def diff_text(diff: ProfileDiff) -> str:
    """Plain text for a terminal."""
    from pipeline.report.templating import render_template

    return render_template("diff.txt.j2", diff=diff, show=show_value, signed=signed)


def diff_markdown(diff: ProfileDiff) -> str:
    """Markdown that fits a pull-request comment (diffs folded in ``<details>``)."""
    from pipeline.report.templating import render_template

    return render_template("diff.md.j2", diff=diff, show=show_value, signed=signed, cell=md_cell, fence=md_fence)


def signed(number: int) -> str:
    return f"+{number}" if number > 0 else str(number)


def md_cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    escaped = text.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("|", "\\|").replace("`", "\\`").replace("\n", " ")


def md_fence(text: str) -> str:
    """A backtick fence longer than any backtick run inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)
