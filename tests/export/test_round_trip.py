"""The round trip (issue 20 item 5): `pipeline import TARGET` of what `pipeline export TARGET` wrote
renders the same prompt, expands the same templates and holds the same compaction numbers, for
every setting the export's report calls native or extension (docs/export.md, "Round trip")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli import main

TARGETS = ("pi", "claude-code", "codex", "opencode", "gemini", "qwen-code", "kilo", "copilot", "agents-md")
#: targets that carry only the team's sections (no templates, no compaction key)
SECTIONS_ONLY = ("copilot", "agents-md")
CWD = "/work/checkout-a"
#: a compaction policy each target can carry natively (or through its extension)
COMPACTION = {
    "pi": "  trigger: {percent_of_window: 60}\n  keep_recent_tokens: 12345\n",
    "claude-code": "  enabled: false\n",
    "codex": "  trigger: {tokens: 90000}\n",
    "opencode": "  reserve_tokens: 20000\n  keep_recent_tokens: 12345\n",
    "gemini": "  trigger: {percent_of_window: 60}\n",
    "qwen-code": "  trigger: {percent_of_window: 60}\n",
    "kilo": "  reserve_tokens: 20000\n  keep_recent_tokens: 12345\n",
    "copilot": "  reserve_tokens: 20000\n",  # lost: Copilot CLI has no compaction key
    "agents-md": "  reserve_tokens: 20000\n",  # lost: AGENTS.md has no form for it
}
OVERLAY = """extends: builtin:default
name: rt-overlay
system_prompt:
  sections:
    - id: house
      text: "House rule: run the checks in ${{cwd}} before you commit; a literal $${{x}} stays."
    - id: style
      text: "Prefer short functions with one purpose."
templates:
  sources: [project, ./prompts, global]
compaction:
{compaction}"""


def _profile(target: str, which: str, tmp: Path) -> str:
    if not which.startswith("overlay"):
        return which
    (tmp / "prompts").mkdir()
    (tmp / "prompts" / "review.md").write_text("---\ndescription: review files\n---\nReview these files: $@\n")
    path = tmp / "overlay.yaml"
    text = OVERLAY.format(compaction=COMPACTION[target])
    if which == "overlay-replacing":  # the profile's whole prompt in place of the agent's own
        text = text.replace("system_prompt:\n", "system_prompt:\n  base: profile\n")
    path.write_text(text)
    return str(path)


def _roundtrip(target: str, profile: str, tmp: Path, capsys) -> tuple[dict, Path, Path]:
    project = tmp / "project"
    project.mkdir()
    capsys.readouterr()
    assert main(["export", target, profile, "--project", str(project), "--format", "json", "--force"]) == 0
    report = {c["key"]: c for c in json.loads(capsys.readouterr().out)["report"]}
    back = tmp / "back" / "profile.yaml"
    assert main(["import", target, "--project", str(project), "-o", str(back)]) == 0
    assert "read back the export" in capsys.readouterr().err
    return report, project, back


def _static_expected(original, report: dict, cwd: str, rendered=None) -> str:
    """The original's sections the report calls native/extension (``base: profile``: mismatch too),
    joined as the file joins them."""
    from pipeline.prompt.catalog import with_catalog
    from pipeline.prompt.context import RenderContext
    from pipeline.prompt.render import render_sections

    plan = original.render_plan
    if rendered is None:
        rendered = {s.id: s for s in render_sections(plan, with_catalog(plan, RenderContext(cwd=cwd)))}
    return _joined([s for s in rendered.values() if report.get(f"system_prompt.sections.{s.id}", {}).get("how")
                    in ("native", "extension", "mismatch")])


def _joined(sections) -> str:
    return "".join(("" if i == 0 else s.separator) + s.text for i, s in enumerate(sections))


def _effective_trigger(comp) -> dict:
    trigger = comp.trigger
    if trigger is None or hasattr(trigger, "reserve_tokens"):
        return {"reserve_tokens": getattr(trigger, "reserve_tokens", None) or comp.reserve_tokens}
    return trigger.model_dump()


def _setting(profile, key: str):
    from pipeline.compaction.summary_schema import render_schema

    s = profile.summary
    schema = render_schema(s.schema_, s.schema_format)
    texts = {"summary.system_prompt": lambda: s.system_prompt.render(),
             "summary.instructions.initial": lambda: s.instructions.initial.render(schema=schema),
             "summary.schema": lambda: s.instructions.initial.render(schema=schema),
             "summary.instructions.update": lambda: s.instructions.update.render(schema=schema),
             "summary.instructions.turn_prefix": lambda: s.instructions.turn_prefix.render(),
             "summary.instructions.branch": lambda: s.instructions.branch.render(
                 schema=render_schema(s.branch_schema or s.schema_, s.schema_format)),
             "compaction.trigger": lambda: _effective_trigger(profile.compaction)}
    if key in texts:
        return texts[key]()
    value = profile
    for part in key.split("."):
        value = value[part] if isinstance(value, dict) else getattr(value, part)
    return value.model_dump() if hasattr(value, "model_dump") else value


#: settings the report calls extension that the import does not read back (docs/export.md, Round trip)
NOT_READ_BACK = ("compaction.model_overrides",)
COMPARED_PREFIXES = ("compaction.", "retry.", "summary.")


@pytest.mark.parametrize("which", ["builtin:default", "builtin:pi-1", "configs/examples/team.yaml", "overlay",
                                   "overlay-replacing"])
@pytest.mark.parametrize("target", TARGETS)
def test_import_of_an_export_renders_expands_and_compacts_as_the_original(target, which, tmp_path, capsys):
    from pipeline import compile_profile
    from pipeline.prompt.context import RenderContext

    profile = _profile(target, which, tmp_path)
    report, project, back = _roundtrip(target, profile, tmp_path, capsys)
    original, imported = compile_profile(profile), compile_profile(str(back))
    # the prompt
    if target == "pi":
        for ctx in (RenderContext(cwd=CWD), RenderContext(cwd=CWD, tools=("read", "bash")),
                    RenderContext(cwd="/elsewhere", custom_prompt="Custom words.", append_prompts=("More words.",))):
            assert imported.render_system_prompt(ctx) == original.render_system_prompt(ctx)
    elif original.profile.system_prompt.base == "agent" or "system_prompt.base" in report:
        # the agent's own prompt stays (a target that cannot replace it reports `base: profile` lost);
        # the team's sections come back as team sections, which the imported profile exports again
        # as the same text
        from pipeline.export.static_prompt import rendered_for

        assert imported.profile.system_prompt.base == "agent"
        for cwd in (CWD, "/elsewhere"):
            expected = _static_expected(original, report, cwd, rendered_for(original, cwd, False))
            team = [s.id for s in imported.profile.system_prompt.sections if s.owner == "team"]
            back_text = _joined([rendered_for(imported, cwd)[i] for i in team if i in rendered_for(imported, cwd)])
            assert back_text == expected
            assert bool(expected) is (which in ("configs/examples/team.yaml", "overlay", "overlay-replacing"))
    else:
        for cwd in (CWD, "/elsewhere"):
            expected = _static_expected(original, report, cwd)
            assert expected  # every profile here has sections a static file holds
            assert imported.render_system_prompt(RenderContext(cwd=cwd)) == expected
    # the templates
    natives = [k.removeprefix("templates.") for k, c in report.items()
               if k.startswith("templates.") and c["how"] == "native"]
    if which.startswith("overlay") and target not in ("codex", *SECTIONS_ONLY):
        assert natives == ["review"]
    ours, theirs = original.load_templates(str(project)), imported.load_templates(str(project))
    for name in natives:
        typed = f"/{name} a.py b.py"
        assert imported.expand(typed, theirs.templates) == original.expand(typed, ours.templates) != typed
    # the compaction, summary and retry settings
    compared = 0
    for key, carried in report.items():
        if (carried["how"] == "lost" or not key.startswith(COMPARED_PREFIXES)
                or key.startswith(NOT_READ_BACK) or key == "compaction.enabled" and "where" in carried
                and "settings.json" not in carried["where"] and "=" not in carried["where"]
                and "compaction.auto" not in carried["where"]):
            continue
        assert _setting(imported.profile, key) == _setting(original.profile, key), key
        compared += 1
    # Gemini CLI and Qwen Code carry only a share-of-window trigger, which only the overlay declares
    assert compared >= (0 if target in SECTIONS_ONLY or target in ("gemini", "qwen-code") and which != "overlay"
                        else 1)


def test_import_codex_without_an_export_is_a_located_error(tmp_path, capsys):
    assert main(["import", "codex", "--project", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path}/.codex/context-pipeline-export.json" in err and "pipeline export codex" in err
    assert "Traceback" not in err


def test_a_manifest_of_another_target_is_a_located_error(tmp_path, capsys):
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "context-pipeline-export.json").write_text('{"target": "pi"}')
    assert main(["import", "gemini", "--project", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "not a manifest of `pipeline export gemini`" in err and "Traceback" not in err


def test_import_help_names_the_round_trip(capsys):
    for tool in TARGETS:
        with pytest.raises(SystemExit):
            main(["import", tool, "--help"])
        out = capsys.readouterr().out
        assert "context-pipeline-export.json" in out and f"pipeline export {tool}" in out, tool


SUMMARY_RULES = """extends: builtin:default
name: rt-summary
summary:
  schema:
    - {heading: Aim, guidance: "What the user wants; a literal $${x} stays."}
    - heading: State
      required: false
      items: [{heading: Done}, {heading: Open, guidance: "Still to do."}]
  schema_format: {section_prefix: "# ", item_prefix: "## "}
  branch_schema: [{heading: Tried}, {heading: Learned, required: false}]
  branch_preamble: "Before coming back, the user tried this:\n\n"
  branch_empty: "(nothing there)"
  on_schema_violation: warn
  serialize_thinking: false
  validity: {reject: [empty], retries: 3, retry_note: "Answer again: ${problem}"}
  tags: {conversation: chat, previous_summary: before}
  labels: {user: "U: ", tool_result: "R: "}
  truncation_marker: "[cut ${count}]"
  split_turn_separator: "\\n----\\n"
  no_history: "(no history)"
  turn_prefix_request: "${conversation}\\n\\n${instructions}"
  offline: {fill: []}  # the default's fill names the default's headings
  instructions:
    custom_label: Also
    schema_retry: "Add ${missing}; the schema: ${schema}"
compaction:
  tool_result_max_chars: 999
  summary_budget: {history: 0.7, turn_prefix: 0.4, limit: model}
  branch: {max_tokens: 1500, default_context_window: 64000}
"""
MASKING = """extends: builtin:default
name: rt-masking
compaction:
  strategy: mask_tool_results
  masking: {placeholder: "[${tool} result, ${chars} characters, masked]"}
"""


@pytest.mark.parametrize("text", [SUMMARY_RULES, MASKING, MASKING.replace("mask_tool_results", "hybrid")],
                         ids=["summary-rules", "masking", "hybrid"])
def test_import_pi_reads_back_the_summary_rules_and_the_masking(text, tmp_path, capsys):
    """What the pi extension applies beyond the summary's texts comes back exactly: the
    schemas and their format, the branch summary's words and budget, the checks, the transcript's tags and labels, the budgets, the
    masking strategy and its placeholder."""
    from pipeline import compile_profile

    (tmp_path / "p.yaml").write_text(text)
    _, project, back = _roundtrip("pi", str(tmp_path / "p.yaml"), tmp_path, capsys)
    original, imported = compile_profile(str(tmp_path / "p.yaml")).profile, compile_profile(str(back)).profile
    default = compile_profile("builtin:default").profile
    keys = ("schema_", "schema_format", "branch_schema", "branch_preamble", "branch_empty", "on_schema_violation", "serialize_thinking", "validity", "tags", "labels",
            "truncation_marker", "split_turn_separator", "no_history", "turn_prefix_request", "instructions")
    changed = [k for k in keys if getattr(original.summary, k) != getattr(default.summary, k)]
    assert len(changed) == (len(keys) if text is SUMMARY_RULES else 0)
    for key in keys[:-1]:
        assert getattr(imported.summary, key) == getattr(original.summary, key), key
    for key in ("custom_label", "schema_retry", "turn_prefix"):
        assert getattr(imported.summary.instructions, key) == getattr(original.summary.instructions, key), key
    for key in ("initial", "update", "branch"):  # these come back rendered: the schema inside, not `${schema}`
        assert _setting(imported, f"summary.instructions.{key}") == _setting(original, f"summary.instructions.{key}")
    for key in ("strategy", "masking", "tool_result_max_chars", "summary_budget", "branch"):
        assert getattr(imported.compaction, key) == getattr(original.compaction, key), key
    written = back.read_text()
    assert ("on_schema_violation" in written) == (text is SUMMARY_RULES)  # a default is not written
