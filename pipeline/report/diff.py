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

from pipeline.model.profile import Profile
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
    """Keys whose values differ, were added or were removed, in document order.

    Sections are compared by id; a section that exists on one side only is one change
    holding the whole section. Lists of mappings or lists (a schema, a section's rules)
    are aligned with difflib's :class:`~difflib.SequenceMatcher`: an entry inserted or
    deleted is one change (``added`` at its new index, ``removed`` at its old one), not a
    change of every entry after it; entries it pairs are compared key by key at their
    new index. Lists of plain values (``default_tools``) are one value.
    """
    differ = _Differ(old, new)
    differ.compare(_dumped(old), _dumped(new), "")
    return tuple(differ.out)


def _dumped(profile: Profile) -> dict[str, Any]:
    return profile.model_dump(mode="json", by_alias=True, exclude={"schema_ref"})


class _Differ:
    """Walks two dumped profiles side by side and collects the :class:`SettingChange` s."""

    def __init__(self, old: Profile, new: Profile) -> None:
        self.sections = ({s.id: s for s in old.system_prompt.sections}, {s.id: s for s in new.system_prompt.sections})
        self.out: list[SettingChange] = []

    def compare(self, a: Any, b: Any, key: str) -> None:
        if a == b:
            return
        if key == "system_prompt.sections" and isinstance(a, list) and isinstance(b, list):
            self.compare_sections(a, b, key)
        elif isinstance(a, dict) and isinstance(b, dict) and a and b:
            for name in list(b) + [k for k in a if k not in b]:
                self.compare(a.get(name, ABSENT), b.get(name, ABSENT), f"{key}.{name}" if key else str(name))
        elif _structured(a) and _structured(b):
            self.compare_lists(a, b, key)
        elif a is ABSENT or b is ABSENT:
            leaves: dict[str, Any] = {}
            _flatten(b if a is ABSENT else a, key, leaves)
            for leaf, value in leaves.items():
                self.out.append(SettingChange(leaf, ABSENT, value) if a is ABSENT else SettingChange(leaf, value, ABSENT))
        else:
            self.out.append(SettingChange(key, a, b))

    def compare_lists(self, a: list, b: list, key: str) -> None:
        import difflib

        shape = lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False)  # noqa: E731
        matcher = difflib.SequenceMatcher(None, [shape(v) for v in a], [shape(v) for v in b], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
            for k in range(paired):
                self.compare(a[i1 + k], b[j1 + k], f"{key}.{j1 + k}")
            self.out.extend(SettingChange(f"{key}.{i}", a[i], ABSENT) for i in range(i1 + paired, i2))
            self.out.extend(SettingChange(f"{key}.{j}", ABSENT, b[j]) for j in range(j1 + paired, j2))

    def compare_sections(self, a: list, b: list, key: str) -> None:
        ids_a, ids_b = [s.get("id") for s in a], [s.get("id") for s in b]
        if ids_a != ids_b:
            self.out.append(SettingChange(key, ids_a, ids_b))
        old, new = {s.get("id"): s for s in a}, {s.get("id"): s for s in b}
        for sid in ids_b + [i for i in ids_a if i not in new]:
            prefix = f"{key}.{sid}"
            if sid in old and sid in new:
                self.compare(old[sid], new[sid], prefix)
            elif sid in new:
                self.out.append(SettingChange(prefix, ABSENT, self.whole(1, sid)))
            else:
                self.out.append(SettingChange(prefix, self.whole(0, sid), ABSENT))

    def whole(self, side: int, sid: str) -> dict[str, Any]:
        """A section of one side as written: the keys that differ from the models' defaults."""
        return self.sections[side][sid].model_dump(mode="json", by_alias=True, exclude_defaults=True)


def _structured(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)


# --------------------------------------------------------------------------- formats


def show_value(value: Any, limit: int = 0) -> str:
    """A setting value for people: JSON, or ``(unset)``; cut to ``limit`` characters if given."""
    text = "(unset)" if value is ABSENT else json.dumps(value, ensure_ascii=False)
    return text if not limit or len(text) <= limit else text[: limit - 1] + "…"


def show_change(old: Any, new: Any, limit: int) -> tuple[str, str]:
    """Both sides of a change for people, each at most about ``limit`` characters.

    When a side is too long, both show the same window around where they first differ
    (``…`` marks what is left out), so an edit near the end of a long text is visible
    instead of both sides being cut at the same point.
    """
    a, b = show_value(old), show_value(new)
    if len(a) <= limit and len(b) <= limit:
        return a, b
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    start = max(0, prefix - limit // 4)
    return _window(a, start, len(a) - suffix, limit), _window(b, start, len(b) - suffix, limit)


def _window(text: str, start: int, change_end: int, limit: int) -> str:
    """``text`` from ``start``, through its changed part when it fits, within ``limit``."""
    end = min(len(text), max(change_end + limit // 4, start + limit // 2), start + limit)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


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

    return render_template("diff.txt.j2", diff=diff, show=show_value, change=show_change, signed=signed)


def diff_markdown(diff: ProfileDiff) -> str:
    """Markdown that fits a pull-request comment (diffs folded in ``<details>``)."""
    from pipeline.report.templating import render_template

    return render_template(
        "diff.md.j2", diff=diff, show=show_value, change=show_change, signed=signed, cell=md_cell, fence=md_fence
    )


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
