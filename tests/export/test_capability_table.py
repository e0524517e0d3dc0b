"""docs/export.md's capability table (issue 20 item 6) is the export's own loss report: every cell is
the exact word (`native`, `extension`, `lost`) `Target.export(...).report` gives for a profile that
declares every setting, so the doc cannot drift from the code (issue 29: a cell saying `hook` or
`plugin` where the report says `extension` is a mismatch)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "export.md"
COLUMNS = ("pi 1.6", "Claude Code 2.1", "Codex CLI 0.169", "opencode 1.18", "Gemini CLI 0.61", "Qwen Code 0.24",
           "Kilo CLI 7.7", "Copilot CLI 1.0", "AGENTS.md")
TARGETS = ("pi", "claude-code", "codex", "opencode", "gemini", "qwen-code", "kilo", "copilot", "agents-md")
EVERY_SETTING = """extends: builtin:default
name: every-setting
system_prompt:
  base: {base}
  sections:
    - {{id: team_note, after: rules, text: "Run make check before you call a change done."}}
    - {{id: team_cwd, after: team_note, text: "Build from ${{cwd}} with make."}}
    - id: team_rules
      after: team_cwd
      kind: rules
      item: "- ${{rule}}"
      rules: [{{from: tool_guidelines}}, {{text: Never commit secrets.}}]
    - {{id: team_api, after: team_rules, folder: packages/api, text: "API handlers validate every body."}}
templates:
  sources: [project, ./prompts, global]
compaction:
  trigger: {trigger}
  keep_recent_tokens: 12345
  model_overrides:
    loop/m: {{reserve_tokens: 1000, keep_recent_tokens: 2000}}
  pins: {{first_request: true}}
  branch: {{reserve_tokens: 5000}}
retry: {{enabled: true, max_retries: 2, base_delay_ms: 100, max_agent_delay_ms: 1000}}
summarizer: {{provider: openai, model: small-one}}
"""
TRIGGERS = {"percent": "{percent_of_window: 60}", "tokens": "{tokens: 90000}", "reserve": "{reserve_tokens: 20000}"}
#: the variants of the profile: (trigger, system_prompt.base)
VARIANTS = {**{name: (name, "agent") for name in TRIGGERS}, "base-profile": ("reserve", "profile")}
#: row label (the table's first cell) -> (the trigger the profile declares, the report keys of the row)
ROWS = {
    "`text` section, `owner: agent`": ("reserve", ("system_prompt.sections.identity",
                                                   "system_prompt.sections.other_tools")),
    "`text` section holding `${cwd}`, `owner: agent`": ("reserve", ("system_prompt.sections.cwd",)),
    "`tool_list` section, `owner: agent`": ("reserve", ("system_prompt.sections.tools",)),
    "`rules` section, `owner: agent`": ("reserve", ("system_prompt.sections.rules",)),
    "`text` section, `owner: team`": ("reserve", ("system_prompt.sections.team_note",)),
    "`text` section holding `${cwd}`, `owner: team`": ("reserve", ("system_prompt.sections.team_cwd",)),
    "`rules` section, `owner: team`": ("reserve", ("system_prompt.sections.team_rules",)),
    "`folder` of an `owner: team` section": ("reserve", ("system_prompt.sections.team_api.folder",)),
    "`owner: agent` sections with `system_prompt.base: profile`": (
        "base-profile", ("system_prompt.sections.identity", "system_prompt.sections.other_tools",
                         "system_prompt.sections.tools", "system_prompt.sections.rules")),
    "`owner: team` `text` section with `system_prompt.base: profile`": (
        "base-profile", ("system_prompt.sections.team_note",)),
    "`custom_prompt` section": ("reserve", ("system_prompt.sections.custom",)),
    "`append_prompt` section": ("reserve", ("system_prompt.sections.append",)),
    "`context_files` section": ("reserve", ("system_prompt.sections.project_context",)),
    "`skills` section": ("reserve", ("system_prompt.sections.skills",)),
    "`templates` (a pi template using `$@`)": ("reserve", ("templates",)),
    "`compaction.enabled`": ("reserve", ("compaction.enabled",)),
    "`compaction.trigger: {reserve_tokens}`": ("reserve", ("compaction.trigger",)),
    "`compaction.trigger: {percent_of_window}`": ("percent", ("compaction.trigger",)),
    "`compaction.trigger: {tokens}`": ("tokens", ("compaction.trigger",)),
    "`compaction.reserve_tokens`": ("reserve", ("compaction.reserve_tokens",)),
    "`compaction.keep_recent_tokens`": ("reserve", ("compaction.keep_recent_tokens",)),
    "`compaction.branch.reserve_tokens`": ("reserve", ("compaction.branch.reserve_tokens",)),
    "`compaction.model_overrides` (reserve, keep)": ("reserve", ("compaction.model_overrides",)),
    "`compaction.model_overrides.M.reserve_tokens` with a share-of-window trigger": (
        "percent", ("compaction.model_overrides.loop/m.reserve_tokens",)),
    "`compaction.pins`": ("reserve", ("compaction.pins",)),
    "`summary.system_prompt`": ("reserve", ("summary.system_prompt",)),
    "`summary.instructions.initial`": ("reserve", ("summary.instructions.initial",)),
    "`summary.schema`": ("reserve", ("summary.schema",)),
    "`summary.instructions.update`": ("reserve", ("summary.instructions.update",)),
    "`summary.instructions.turn_prefix`": ("reserve", ("summary.instructions.turn_prefix",)),
    "`summary.instructions.branch`, `summary.branch_schema`": ("reserve", ("summary.instructions.branch",
                                                                           "summary.branch_schema")),
    "`summary.on_schema_violation`, `summary.validity`": ("reserve", ("summary.on_schema_violation",
                                                                      "summary.validity")),
    "`summary.labels`, `summary.tags`": ("reserve", ("summary.labels", "summary.tags")),
    "`summarizer.model` (a provider and a model)": ("reserve", ("summarizer.model",)),
    "`retry.*`": ("reserve", ("retry.enabled", "retry.max_retries", "retry.base_delay_ms",
                              "retry.max_agent_delay_ms")),
}


def _table() -> dict[str, dict[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("\n## Capability table\n")
    after = text[start:].splitlines()[1:]
    first = next(i for i, line in enumerate(after) if line.startswith("|"))
    lines = []
    for line in after[first:]:  # the first table of the section, to its first line that is not a row
        if not line.startswith("|"):
            break
        lines.append(line)
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    assert head == ["profile setting", *COLUMNS]
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        rows[cells[0].replace("\\|", "|")] = dict(zip(TARGETS, cells[1:]))
    return rows


def _how(report, key: str) -> set[str]:
    """How the report carries ``key``: its entry, else the entries below it, else the nearest one above it."""
    hits = {c.how for c in report if c.key == key} or {c.how for c in report if c.key.startswith(key + ".")}
    if not hits:
        above = [c for c in report if key.startswith(c.key + ".")]
        hits = {max(above, key=lambda c: len(c.key)).how} if above else set()
    if not hits and key == "compaction.trigger":  # a reserve trigger is the reserve
        return _how(report, "compaction.reserve_tokens")
    return hits


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    from pipeline import compile_profile
    from pipeline.export import TARGETS as ALL, Place

    out = {}
    for name, (trigger, base) in VARIANTS.items():
        tmp = tmp_path_factory.mktemp(name)
        (tmp / "prompts").mkdir()
        (tmp / "project" / "packages" / "api").mkdir(parents=True)  # the team_api section's folder
        (tmp / "prompts" / "review.md").write_text("Review these files: $@\n")
        (tmp / "p.yaml").write_text(EVERY_SETTING.format(trigger=TRIGGERS[trigger], base=base))
        pipeline = compile_profile(str(tmp / "p.yaml"))
        out[name] = {t: ALL[t].export(pipeline, Place(str(tmp / "project"))).report for t in TARGETS}
    return out


def test_the_table_has_every_row_and_only_those():
    assert list(_table()) == list(ROWS)


@pytest.mark.parametrize("row", list(ROWS))
def test_every_cell_is_what_the_export_reports(row, reports):
    trigger, keys = ROWS[row]
    cells = _table()[row]
    for target in TARGETS:
        hows = set().union(*(_how(reports[trigger][target], k) for k in keys))
        assert len(hows) == 1, (row, target, hows)
        assert cells[target] == hows.pop(), (row, target, cells[target])


def test_every_cell_is_one_of_the_reports_words():
    """A cell is compared by its exact word: the target-specific names of the code an export writes
    (`hook`, `plugin`) are not words of the report, which calls them all `extension`."""
    words = {cell for row in _table().values() for cell in row.values()}
    assert words <= {"native", "extension", "own", "mismatch", "lost"}, words


def test_the_code_an_export_writes_is_reported_extension(reports):
    """The three cells issue 29 found: Claude Code's PreCompact hook and opencode's plugin are `extension`
    in the report (its `where` names the hook or the plugin)."""
    for target, key, named in (("claude-code", "summary.instructions.initial", "hooks.PreCompact"),
                               ("claude-code", "summary.schema", "hooks.PreCompact"),
                               ("opencode", "system_prompt.sections.team_cwd", ".opencode/plugin/"),
                               ("opencode", "summary.instructions.initial", ".opencode/plugin/")):
        [carried] = [c for c in reports["reserve"][target] if c.key == key]
        assert carried.how == "extension" and named in carried.where, (target, key, carried)
