"""The pi 1.6.0 vector files (``tests/data/pi16/``) are well-formed, big enough, and obey the
rules ``tests/data/pi16/README.md`` states.

Besides shape and counts, small reference functions written from the README reproduce
pi's answers on every vector: every section's text from the options (in masked space), the
join rule (sections -> prompt), the section wrapping and order, the patch rule (``diffSystemPromptSections``), the replay rule (what a model without
mid-conversation system messages is sent), the update framing, and 1.6's argument
splitting. They are test code only; the feature that renders pi 1.6's layout from a
profile is tested against the same files elsewhere.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipeline.js import JS_WHITESPACE, js_trim

DATA = Path(__file__).resolve().parent.parent / "data" / "pi16"


def load(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


SECTIONS = load("sections.json")
PATCHES = load("patches.json")
ARGS = load("args.json")
COMPACTION = load("compaction.json")
AGENT = load("agent.json")

BUILTIN_ORDER = ("preamble", "tools", "rules", "docs", "addendum", "project_context", "skills", "cwd")
NAME_RULE = re.compile(r"[a-z][a-z0-9_-]*")


# --------------------------------------------------------------------------- reference rules


def join(content: str, sections: dict | None) -> str:
    """getSystemMessageText: content, then every non-null section, empties dropped, blank-line joined."""
    parts = [content, *(v for v in (sections or {}).values() if v is not None)]
    return "\n\n".join(p for p in parts if p)


def diff(previous: dict, current: dict) -> dict | None:
    """diffSystemPromptSections: changed/added in current order, then removed (null) in previous order."""
    patch = {name: text for name, text in current.items() if previous.get(name, ...) != text}
    patch.update({name: None for name in previous if name not in current})
    return patch or None


def replay(previous: dict, patch: dict | None) -> dict:
    """getCurrentSystemMessage's section map: a changed key keeps its place, a new one goes last."""
    out = dict(previous)
    for name, text in (patch or {}).items():
        if text is None:
            out.pop(name, None)
        else:
            out[name] = text
    return out


def update_text(patch: dict) -> str:
    """renderSystemMessageUpdate in masked form (<UPD> / <REM> stand for pi's framing words)."""
    return "\n\n".join(f'<UPD>"{n}":\n\n{v}' if v is not None else f'<REM>"{n}".' for n, v in patch.items())


def expected_order(options: dict) -> list[str]:
    """buildSystemPromptSections' key order, from the options alone."""
    selected = options.get("selectedTools", ["read", "bash", "edit", "write"])
    declared = [t for t in selected if t not in options.get("hiddenTools", [])]
    order = ["preamble"]
    if not options.get("customPrompt"):
        order += ["tools", "rules", "docs"]
    if options.get("appendSystemPrompt"):
        order.append("addendum")
    if options.get("contextFiles"):
        order.append("project_context")
    reader = any(t in declared for t in ("read", "bash")) or any(t in selected for t in ("read", "bash"))
    if reader and any(not s.get("disableModelInvocation") for s in options.get("skills", [])):
        order.append("skills")
    order.append("cwd")
    order += [n for n, text in options.get("sections", {}).items() if text and n not in order]
    return order


def xml_escape(text: str) -> str:
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&apos;")):
        text = text.replace(a, b)
    return text


def rules_text(declared: list[str], options: dict) -> str:
    candidates = []
    shells = [t for t in ("bash", "powershell") if t in declared]
    if shells and not any(t in declared for t in ("grep", "find", "ls")):
        candidates.append({1: "<G_PS>" if shells == ["powershell"] else "<G_BASH>"}.get(len(shells), "<G_BASH_PS>"))
    for tool in declared:
        candidates += options.get("toolGuidelines", {}).get(tool, [])
    candidates += [*options.get("promptGuidelines", []), "<G_CONCISE>", "<G_PATHS>"]
    rules: list[str] = []
    for rule in map(js_trim, candidates):
        if rule and rule not in rules:
            rules.append(rule)
    return "\n".join(f"- {r}" for r in rules)


def skills_text(declared: list[str], selected: list[str], skills: list[dict]) -> str | None:
    reader = next((t for t in ("read", "bash") if t in declared), None)
    if reader is None and any(t in selected for t in ("read", "bash")):
        reader = "any"
    visible = [s for s in skills if not s.get("disableModelInvocation")]
    if reader is None or not visible:
        return None
    lines = ["<SK_INTRO>", {"read": "<SK_READ>", "bash": "<SK_BASH>"}.get(reader, "<SK_ANY>"), "<SK_PATHS>", "",
             "<available_skills>"]
    for s in visible:
        lines += ["  <skill>", f"    <name>{xml_escape(s['name'])}</name>",
                  f"    <description>{xml_escape(s['description'])}</description>",
                  f"    <location>{xml_escape(s['filePath'])}</location>", "  </skill>"]
    return "\n".join([*lines, "</available_skills>"])


def render_sections(options: dict) -> dict:
    """buildSystemPromptSections in masked space, from the README's account."""
    selected = options.get("selectedTools", ["read", "bash", "edit", "write"])
    declared = [t for t in selected if t not in options.get("hiddenTools", [])]
    out = {"preamble": options.get("customPrompt") or "<PRE>"}
    if not options.get("customPrompt"):
        snippets = options.get("toolSnippets", {})
        lines = [f"- {t}: {snippets[t]}" for t in declared if snippets.get(t)]
        out["tools"] = ("\n".join(lines) or "(none)") + "\n\n<MORE_TOOLS>"
        out["rules"] = rules_text(declared, options)
        out["docs"] = "<DOCS>"
    if options.get("appendSystemPrompt"):
        out["addendum"] = options["appendSystemPrompt"]
    if options.get("contextFiles"):
        files = [f'<project_instructions path="{f["path"]}">\n{f["content"]}\n</project_instructions>'
                 for f in options["contextFiles"]]
        out["project_context"] = "\n\n".join(["<PCI>", *files])
    skills = skills_text(declared, selected, options.get("skills", []))
    if skills:
        out["skills"] = skills
    out["cwd"] = options["cwd"].replace("\\", "/")
    out.update({name: text for name, text in options.get("sections", {}).items() if text})
    return {n: t if n == "preamble" else f"<{n}>\n{t}\n</{n}>" for n, t in out.items()}


def split_args(text: str) -> list[str]:
    """parseCommandArgs of pi 1.6.0 (1.3.0 empty quotes, 1.5.1 word-start quotes and escapes)."""
    args, current, has_token, quote, start, i = [], "", False, None, 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and i + 1 < len(text) and text[i + 1] == quote:
                current += quote
                i += 1
            elif ch == quote:
                quote = None
            else:
                current += ch
        elif ch in "\"'" and not has_token:
            quote, start, has_token = ch, i, True
        elif ch in JS_WHITESPACE:
            if has_token:
                args.append(current)
                current, has_token = "", False
        else:
            current += ch
            has_token = True
        if quote and i == len(text) - 1:  # unclosed: the quote is text, the rest is read again
            quote, current, i = None, text[start], start
        i += 1
    if has_token:
        args.append(current)
    return args


# --------------------------------------------------------------------------- sections.json


def test_sections_file_is_big_and_varied() -> None:
    vectors = SECTIONS["vectors"]
    assert SECTIONS["pi_version"] == "1.6.0" and len(vectors) >= 300
    assert len({v["id"] for v in vectors}) == len(vectors)
    options = [v["options"] for v in vectors]
    assert sum("customPrompt" in o for o in options) >= 30
    assert sum(bool(o.get("sections")) for o in options) >= 60
    assert sum("hiddenTools" in o for o in options) >= 30
    assert sum("forceSystemPrompt" in o for o in options) >= 3
    assert sum("skills" in (v["order"]) for v in vectors) >= 40
    assert sum("addendum" in v["order"] for v in vectors) >= 40
    assert sum("project_context" in v["order"] for v in vectors) >= 60
    assert len({tuple(v["order"]) for v in vectors}) >= 50


@pytest.mark.parametrize("vector", SECTIONS["vectors"], ids=lambda v: v["id"])
def test_prompt_is_the_join_of_the_sections(vector: dict) -> None:
    sections = vector["sections"]
    if sections is None:
        assert vector["order"] == [] and vector["prompt"] == vector["content"]
        return
    assert list(sections) == vector["order"]
    assert vector["prompt"] == join("", sections)
    assert vector["order"][0] == "preamble" and "cwd" in vector["order"]
    for name, text in sections.items():
        assert NAME_RULE.fullmatch(name)
        if name != "preamble":
            assert text.startswith(f"<{name}>\n") and text.endswith(f"\n</{name}>")
    assert vector["order"] == expected_order(vector["options"])
    rendered = render_sections(vector["options"])
    assert sections == rendered and list(sections) == list(rendered)


def test_custom_section_names_follow_the_rule() -> None:
    names = SECTIONS["section_names"]
    assert len(names) >= 15 and any(n["accepted"] for n in names) and any(not n["accepted"] for n in names)
    for case in names:
        expected = bool(NAME_RULE.fullmatch(case["name"])) and case["name"] != "preamble"
        assert case["accepted"] is expected, case["name"]


def test_no_pi_sentence_left_unmasked() -> None:
    masks = set(SECTIONS["masks"])
    assert {"<PRE>", "<DOCS>", "<G_CONCISE>", "<G_PATHS>", "<MORE_TOOLS>", "<PCI>"} <= masks
    default = SECTIONS["vectors"][0]
    assert default["sections"]["preamble"] == "<PRE>" and default["sections"]["docs"] == "<docs>\n<DOCS>\n</docs>"


# --------------------------------------------------------------------------- patches.json


def test_patch_file_is_big_and_varied() -> None:
    vectors = PATCHES["vectors"]
    assert len(vectors) >= 100
    patches = [v["patch"] for v in vectors]
    assert any(p is None for p in patches)
    assert sum(1 for p in patches if p and None in p.values()) >= 20
    assert sum(1 for v in vectors if not v["replay_matches_fresh"]) >= 20
    assert sum(1 for v in vectors if v["replay_matches_fresh"] and v["patch"]) >= 20


@pytest.mark.parametrize("vector", PATCHES["vectors"], ids=lambda v: v["id"])
def test_patch_replay_and_update_follow_the_rules(vector: dict) -> None:
    prev, cur = vector["previous_sections"], vector["current_sections"]
    assert list(prev) == vector["previous_order"] and list(cur) == vector["current_order"]
    patch = diff(prev, cur)
    assert patch == vector["patch"] and list(patch or {}) == vector["patch_order"]
    assert vector["fresh_prompt"] == join("", cur)
    assert vector["replayed_prompt"] == join("", replay(prev, patch))
    assert vector["replay_matches_fresh"] is (vector["replayed_prompt"] == vector["fresh_prompt"])
    assert vector["update"] == (update_text(patch) if patch else None)


# --------------------------------------------------------------------------- args.json


def test_args_file_counts() -> None:
    groups = {v["group"] for v in ARGS["parse_args"]}
    assert groups == {"exhaustive", "dense", "v084"}
    assert ARGS["counts"]["exhaustive"] == 3906 and ARGS["counts"]["v084"] >= 700
    assert len(ARGS["parse_args"]) >= 5000 and len(ARGS["expand"]) >= 400
    assert ARGS["differ"]["parse_args"] > 0 and ARGS["differ"]["expand"] > 0


def test_split_reference_reproduces_pi16_on_every_case() -> None:
    wrong = [v for v in ARGS["parse_args"] if split_args(v["args"]) != v["pi16"]]
    assert not wrong, wrong[:5]


def test_the_084_inputs_are_all_there() -> None:
    old = json.loads((DATA.parent / "template_vectors.json").read_text(encoding="utf-8"))["parse_args"]
    mine = [v for v in ARGS["parse_args"] if v["group"] == "v084"]
    assert [v["args"] for v in mine] == [v["args"] for v in old]
    assert [v["pi084"] for v in mine] == [v["result"] for v in old]


# --------------------------------------------------------------------------- compaction.json


def test_compaction_plans_cover_the_shared_sessions() -> None:
    plans = COMPACTION["plans"]
    assert len(plans) >= 200
    sessions = {p["session"] for p in plans}
    assert {f"tests/data/sessions/real/{n}.jsonl" for n in ("short-chat", "long-coding", "compacted-branched",
                                                              "multi-compaction")} <= sessions
    assert sum(1 for p in plans if "settingsFor" in p) >= 16
    changed = [p for p in plans if "pi084" in p and p["pi084"] != ({k: v for k, v in p["pi16"].items() if k != "settings"}
                                                                  if p["pi16"] else None)]
    assert changed, "1.6 cuts on the projection: some plans must differ from 0.84"


def test_summary_requests_have_no_output_budget() -> None:
    calls = [c for case in COMPACTION["summary_requests"] for c in case["calls"]]
    assert len(calls) >= 25
    assert all(not c["has_max_tokens"] for c in calls)
    assert all(c["options"]["cacheRetention"] == "none" for c in calls)
    shapes = {c["shape"] for c in calls}
    assert shapes == {"history", "update", "turn_prefix"}
    for c in calls:
        if c["shape"] == "turn_prefix":
            assert c["userText"].startswith("# Conversation\n") and "\n\n# Instructions\n" in c["userText"]
            assert "<conversation>" not in c["userText"][:20]
        else:
            assert c["userText"].startswith("<conversation>\n")


def test_thinking_is_not_serialized() -> None:
    cases = COMPACTION["serialize"]
    with_thinking = [c for c in cases if any(b.get("type") == "thinking" for m in c["messages"]
                                             if isinstance(m.get("content"), list) for b in m["content"])]
    assert len(with_thinking) >= 6
    for case in with_thinking:
        for m in case["messages"]:
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if b.get("type") == "thinking" and len(b["thinking"]) > 3:
                    assert b["thinking"] not in case["pi16"]


def test_model_overrides_resolve_by_provider_slash_id() -> None:
    for case in COMPACTION["settings"]:
        base = {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000}
        settings = case["settings"]
        want = {**base, **{k: v for k, v in settings.items() if k != "modelOverrides"}}
        model = case["model"]
        if model:
            override = settings.get("modelOverrides", {}).get(f"{model['provider']}/{model['id']}", {})
            want.update({k: v for k, v in override.items() if k in ("reserveTokens", "keepRecentTokens")})
        assert case["pi16"] == want, case


# --------------------------------------------------------------------------- agent.json


def scenario(group: str, name: str) -> dict:
    return next(s for s in AGENT[group] if s["name"] == name)


def test_agent_scenarios_change_sections_mid_run() -> None:
    assert len(AGENT["mid_run"]) >= 8 and len(AGENT["resume"]) >= 7
    for s in AGENT["mid_run"] + AGENT["resume"]:
        for req in s["requests"]:
            mids = [m for m in req["messages"] if m["role"] == "system"]
            assert req["midSystemMessages"] == len(mids)
            assert list(req["systemSections"] or {}) == req["systemSectionOrder"]
            if req["systemSections"] is not None:
                assert req["systemPrompt"] == join("", req["systemSections"])
            for m in mids:
                if "sections" in m:
                    assert m["update"] == update_text(m["sections"])


def test_agent_replay_equals_leading_plus_patches() -> None:
    s = scenario("mid_run", "two_sections_remove_readd")
    leading = s["requests"][0]["systemSections"]
    for req in s["requests"][1:]:
        sections = leading
        for m in req["messages"]:
            if m["role"] == "system":
                sections = replay(sections, m["sections"])
        assert sections == req["systemSections"]
    assert s["requests"][2]["systemSectionOrder"][-2:] == ["beta", "alpha"]


def test_forced_prompt_is_not_recorded() -> None:
    s = scenario("mid_run", "forced_prompt_on_turn_two")
    second = s["requests"][1]
    assert second["systemSections"] is None and second["systemPrompt"] == "FORCED PROMPT"
    assert all(r["midSystemMessages"] == 0 for r in s["requests"])
