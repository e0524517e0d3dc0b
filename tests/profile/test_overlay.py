"""extends: and overlay merging: sections by id, deep mappings, replaced lists, source map."""

from __future__ import annotations

import json

from cases import STANDALONE
from conftest import write_files
from pipeline import compile_profile, load_profile

BASE = STANDALONE.replace(
    "    - id: hello\n      text: Hello.\n",
    "    - id: hello\n      text: Hello.\n"
    "    - id: rules\n      kind: rules\n      heading: Rules\n      item: '- ${rule}'\n"
    "      rules:\n        - text: One.\n        - text: Two.\n"
    "    - id: tail\n      text: Bye.\n",
)


def _ids(pipeline) -> list[str]:
    return [s.id for s in pipeline.profile.system_prompt.sections]


def _section(pipeline, sid):
    return next(s for s in pipeline.profile.system_prompt.sections if s.id == sid)


def _compile(tmp_path, overlay: str):
    write_files(tmp_path, {"base.yaml": BASE, "top.yaml": "extends: base.yaml\n" + overlay})
    return compile_profile(tmp_path / "top.yaml")


def test_base_order(tmp_path):
    assert _ids(_compile(tmp_path, "")) == ["hello", "rules", "tail"]


def test_remove_replace_and_insert_before(tmp_path):
    p = _compile(
        tmp_path,
        "system_prompt:\n  sections:\n"
        "    - {id: hello, remove: true}\n"
        "    - {id: rules, replace: true, kind: text, text: Only this.}\n"
        "    - {id: new, before: tail, text: New.}\n",
    )
    assert _ids(p) == ["rules", "new", "tail"]
    rules = _section(p, "rules")
    assert (rules.kind, rules.text.raw, rules.heading, rules.rules) == ("text", "Only this.", None, ())


def test_merge_in_place_keeps_other_keys_and_replaces_lists(tmp_path):
    p = _compile(tmp_path, "system_prompt:\n  sections:\n    - id: rules\n      rules:\n        - text: Three.\n")
    rules = _section(p, "rules")
    assert _ids(p) == ["hello", "rules", "tail"]
    assert rules.heading.raw == "Rules" and rules.item.raw == "- ${rule}"
    assert [r.text.raw for r in rules.rules] == ["Three."]


def test_placement_moves_existing_sections_and_new_ones_go_last(tmp_path):
    p = _compile(
        tmp_path,
        "system_prompt:\n  sections:\n    - {id: tail, after: hello}\n    - {id: extra, text: Extra.}\n"
        "    - {id: hello, before: extra}\n",
    )
    assert _ids(p) == ["tail", "rules", "hello", "extra"]


def test_deep_merge_of_mappings(tmp_path):
    p = _compile(tmp_path, "compaction:\n  summary_budget: {turn_prefix: 0.25}\nsummary:\n  instructions: {turn_prefix: Start.}\n")
    assert p.profile.compaction.summary_budget.history == 0.8
    assert p.profile.compaction.summary_budget.turn_prefix == 0.25
    assert p.profile.summary.instructions.turn_prefix.raw == "Start."
    assert p.profile.summary.instructions.initial.raw == "Use: ${schema}"


def test_tool_catalog_merges_per_tool(tmp_path):
    write_files(tmp_path, {"mid.yaml": "extends: base.yaml\nsystem_prompt:\n  tools:\n    read: {snippet: R, guidelines: [g]}\n"})
    _compile(tmp_path, "")
    write_files(tmp_path, {"top.yaml": "extends: mid.yaml\nsystem_prompt:\n  tools:\n    read: {snippet: R2}\n    ls: {snippet: L}\n"})
    p = compile_profile(tmp_path / "top.yaml")
    tools = p.profile.system_prompt.tools
    assert (tools["read"].snippet.raw, [g.raw for g in tools["read"].guidelines], tools["ls"].snippet.raw) == ("R2", ["g"], "L")


def test_three_level_chain_and_source_map(tmp_path):
    write_files(tmp_path, {"base.yaml": BASE, "mid.yaml": "extends: base.yaml\ncompaction:\n  reserve_tokens: 9000\n  keep_recent_tokens: 8000\n"})
    write_files(tmp_path, {"top.yaml": "extends: mid.yaml\nname: top\ncompaction:\n  keep_recent_tokens: 7000\n"})
    loaded = load_profile(tmp_path / "top.yaml")
    assert loaded.profile.name == "top"
    assert (loaded.profile.compaction.reserve_tokens, loaded.profile.compaction.keep_recent_tokens) == (9000, 7000)
    where = {k: loaded.source_map.get(("compaction", k)).value for k in ("reserve_tokens", "keep_recent_tokens")}
    assert (where["reserve_tokens"].file, where["reserve_tokens"].line) == (str(tmp_path / "mid.yaml"), 3)
    assert (where["keep_recent_tokens"].file, where["keep_recent_tokens"].line) == (str(tmp_path / "top.yaml"), 4)
    assert loaded.files == tuple(str(tmp_path / n) for n in ("top.yaml", "mid.yaml", "base.yaml"))
    assert loaded.source_map.get(("compaction", "enabled")) is None  # a default


def test_fingerprint_is_of_the_merged_content(tmp_path):
    overlay = _compile(tmp_path, "compaction: {reserve_tokens: 9000}\n")
    merged = BASE.replace("summary:\n", "compaction:\n  reserve_tokens: 9000\n  enabled: true\nsummary:\n", 1)
    write_files(tmp_path, {"flat.yaml": merged})
    flat = compile_profile(tmp_path / "flat.yaml")
    assert overlay.fingerprint == flat.fingerprint
    assert overlay.fingerprint != _compile(tmp_path, "compaction: {reserve_tokens: 9001}\n").fingerprint


def test_explain_names_the_file_of_each_value(cli, tmp_path):
    write_files(tmp_path, {"base.yaml": BASE, "top.yaml": "extends: base.yaml\nname: top\ncompaction:\n  reserve_tokens: 9000\n"})
    run = cli("explain", "top.yaml", "compaction.reserve_tokens")
    assert run.lines == ["top.yaml:4:19: compaction.reserve_tokens = 9000"]
    run = cli("explain", "top.yaml", "system_prompt.sections.rules.heading")
    assert run.lines == ['base.yaml:8:16: system_prompt.sections.rules.heading = "Rules"']
    run = cli("explain", "top.yaml", "compaction.enabled")
    assert run.lines == ["(default): compaction.enabled = true"]


def test_explain_of_the_team_overlay_shows_both_files(cli):
    run = cli("explain", "builtin:examples/team", "--format", "json")  # shipped, however it is installed
    data = json.loads(run.out)
    files = {v["file"] for v in data["values"] if v["file"]}
    assert files == {"builtin:examples/team", "builtin:default"}  # shipped files by name, never by path
    assert data["files"] == ["builtin:examples/team", "builtin:default"]
    by_key = {v["key"]: v for v in data["values"]}
    assert by_key["compaction.reserve_tokens"]["file"] == "builtin:examples/team"
    assert by_key["compaction.chars_per_token"]["file"] == "builtin:default"
    assert by_key["system_prompt.sections.review_policy.text"]["file"] == "builtin:examples/team"
    assert by_key["summarizer.timeout_s"]["default"] is True
    assert not any(k.startswith("system_prompt.sections.other_tools") for k in by_key)
