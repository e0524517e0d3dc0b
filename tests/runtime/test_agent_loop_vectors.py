"""Differential check: our agent loop against pi 0.84.0's own ``AgentSession`` (committed vectors).

For every scenario of ``tests/data/agent_loop`` our loop gets pi's scripted replies through
the loopback HTTP server and must show pi's behaviour:

* the same sequence of requests (agent turns and summary calls, interleaved the same way);
* agent turns: the message list pi sent, converted to the wire format, equal to what we
  sent; the system prompt pi's base one where pi used its base (ours built from the same
  data: cwd, tools, skills, context files) or the hook's text, character for character;
  the same tool names and parameter schemas;
* summary calls with the same serialized conversation (and previous summary);
* the same compaction and retry events in the same order;
* the same entries appended: types, order, parents, roles, ``firstKeptEntryId``, ``tokensBefore``.

Texts in our own words are compared by structure: tool error results the loop or a tool
writes (pi's and ours say the same thing differently) by position and error flag, and a
``/skill:`` message by its parts (name, location, directory, body, arguments).
"""

from __future__ import annotations

import json
import re

import pytest

from pipeline import compile_profile
from pipeline.llm.wire import ConvertTexts, anthropic_messages, openai_messages

from .agent_vectors import model_info, pi_events, policy_events, replay_scenario, scenarios, wire_for

SCENARIOS = scenarios()
PROFILE = compile_profile("default").profile
TEXTS = ConvertTexts(**{k: v.render() for k, v in PROFILE.runtime.wire})
_SKILL = re.compile(r'<skill name="([^"]*)" location="([^"]*)">\n([^\n]*)\n\n(.*)\n</skill>(?:\n\n(.*))?\Z', re.DOTALL)
MASK = "<error result>"
_SUMMARY = re.compile(r".*?<summary>\n(.*?)\n?</summary>\Z", re.DOTALL)


def _summary_inner(text):
    """A summary message (compaction or branch) reduced to its summary: the words around it are the profile's."""
    if not isinstance(text, str):
        return text
    m = _SUMMARY.match(text)
    return f"<summary>{m.group(1)}</summary>" if m else text


def _normalize_user(m: dict) -> None:
    if m.get("role") != "user":
        return
    if isinstance(m.get("content"), str):
        m["content"] = _summary_inner(m["content"])
    elif isinstance(m.get("content"), list):
        for block in m["content"]:
            if block.get("type") == "text":
                block["text"] = _summary_inner(block["text"])


def _paths(value, scenario_cwd: str, cwd: str, agent_dir: str, our_agent: str):
    text = json.dumps(value).replace(scenario_cwd, cwd).replace(agent_dir, our_agent)
    return json.loads(text)


def _our_skill_text(text: str) -> str:
    m = _SKILL.match(text)
    if m is None:
        return text
    name, location, line, body, args = m.groups()
    base = location.rsplit("/", 1)[0]
    assert base in line, line  # pi's line names the skill's directory
    skill = PROFILE.runtime.skill
    out = skill.open.render(name=name, location=location, base_dir=base) + body + skill.close.render()
    return out + skill.args.render(args=args) if args else out


def _pi_llm_messages(messages: list, error_ids: set) -> list:
    out = []
    for m in messages:
        m = dict(m)
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            m["content"] = [{**b, "text": _our_skill_text(b["text"])} if b.get("type") == "text" else b
                            for b in m["content"]]
        out.append(m)
    return out


def _mask_wire(messages: list, wire: str, error_ids: set) -> list:
    out = []
    for m in messages:
        m = json.loads(json.dumps(m))
        _normalize_user(m)
        if wire == "openai" and m.get("role") == "tool" and m.get("tool_call_id") in error_ids:
            m["content"] = MASK
        if wire == "anthropic" and isinstance(m.get("content"), list):
            for block in m["content"]:
                if block.get("type") == "tool_result" and block.get("tool_use_id") in error_ids:
                    block["content"] = MASK
        out.append(m)
    return out


def _error_ids(entries: list) -> set:
    return {e["message"]["toolCallId"] for e in entries
            if (e.get("message") or {}).get("role") == "toolResult" and e["message"].get("isError")}


def _split_system(body: dict, wire: str) -> tuple[str, list]:
    if wire == "openai":
        first = body["messages"][0] if body["messages"] else {}
        if first.get("role") in ("system", "developer"):
            return first["content"], body["messages"][1:]
        return "", body["messages"]
    system = body.get("system") or [{"text": ""}]
    return system[0]["text"], body["messages"]


def _tools_of(body: dict, wire: str) -> list:
    if wire == "openai":
        return [(t["function"]["name"], t["function"]["parameters"]) for t in body.get("tools") or []]
    return [(t["name"], {"properties": t["input_schema"]["properties"], "required": t["input_schema"]["required"]})
            for t in body.get("tools") or []]


def _pi_tools(tools: list, wire: str) -> list:
    if wire == "openai":
        return [(t["name"], t["parameters"]) for t in tools]
    return [(t["name"], {"properties": t["parameters"].get("properties") or {},
                         "required": t["parameters"].get("required") or []}) for t in tools]


def _conversation(body: dict, tag: str) -> str | None:
    text = body["messages"][-1]["content"]
    m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, re.DOTALL)
    return m.group(1) if m else None


def _check_requests(step: dict, ours, mapped_requests: list) -> None:
    kinds = [k for k, _ in ours.order]
    assert kinds == [r["kind"] for r in step["requests"]], "request sequence (agent/summary)"
    agent_requests = [r for r in mapped_requests if r["kind"] == "agent"]
    summary_requests = [r for r in mapped_requests if r["kind"] == "summary"]
    errors = _error_ids(step["newEntries"]) | _error_ids(ours.entries)
    model = model_info(step["request"]).target()
    for i, (pi, sent) in enumerate(zip(agent_requests, ours.sent)):
        system, messages = _split_system(sent["body"], ours.wire)
        expected_llm = _pi_llm_messages(pi["messages"], errors)
        if ours.wire == "openai":
            expected = openai_messages(expected_llm, system_prompt=None, model=model, texts=TEXTS)
        else:
            expected = anthropic_messages(expected_llm, model=model, texts=TEXTS)
        assert _mask_wire(messages, ours.wire, errors) == _mask_wire(expected, ours.wire, errors), f"agent request {i}"
        if "text" in pi["systemPrompt"]:
            assert system == pi["systemPrompt"]["text"], f"agent request {i}: the hook's system prompt"
        else:
            assert pi["systemPrompt"]["base"] == step["basePrompt"]["sha256"]
            assert system == sent["base"], f"agent request {i}: our base prompt"
        assert _tools_of(sent["body"], ours.wire) == _pi_tools(pi["tools"], ours.wire), f"agent request {i}: tools"
        assert sent["reasoning"] == pi["options"].get("reasoning"), f"agent request {i}: the thinking level asked for"
    assert len(ours.sent) == len(agent_requests)
    tags = PROFILE.summary.tags
    for i, (pi, body) in enumerate(zip(summary_requests, ours.summary_bodies)):
        message = pi["messages"][0]
        assert _conversation(body, tags.conversation) == message["conversation"], f"summary call {i}"
        assert _conversation(body, tags.previous_summary) == message.get("previous-summary"), f"summary call {i}"


def _check_base_prompt(step: dict, ours) -> None:
    options, render = step["basePrompt"]["options"], ours.render
    assert render.cwd == options["cwd"]
    assert list(render.tools) == options["selectedTools"] == step["basePrompt"]["activeTools"]
    assert [(s.name, s.description, s.file_path, s.base_dir) for s in render.skills] == [
        (s["name"], s["description"], s["filePath"], s["baseDir"]) for s in options["skills"]]
    assert [(f.path, f.content) for f in render.context_files] == [
        (f["path"], f["content"]) for f in options["contextFiles"]]


def _check_entries(pi_entries: list, ours: list, ids: dict) -> None:
    assert [e["type"] for e in ours] == [e["type"] for e in pi_entries], "entry types"
    for pi, our in zip(pi_entries, ours):
        ids[pi["id"]] = our["id"]
    for i, (pi, our) in enumerate(zip(pi_entries, ours)):
        assert our.get("parentId") == ids.get(pi.get("parentId"), pi.get("parentId")), f"entry {i}: parent"
        if pi["type"] == "message":
            assert our["message"]["role"] == pi["message"]["role"], f"entry {i}: role"
            assert our["message"].get("stopReason") == pi["message"].get("stopReason"), f"entry {i}: stopReason"
            if pi["message"]["role"] == "toolResult":  # the requests mask error results; their place is checked here
                assert our["message"].get("isError") == pi["message"].get("isError"), f"entry {i}: isError"
        if pi["type"] == "compaction":
            assert our["firstKeptEntryId"] == ids.get(pi["firstKeptEntryId"], pi["firstKeptEntryId"])
            assert our["tokensBefore"] == pi["tokensBefore"], f"entry {i}: tokensBefore"
        if pi["type"] == "custom_message":
            assert [our.get(k) for k in ("customType", "content", "display")] == [
                pi.get(k) for k in ("customType", "content", "display")]
        if pi["type"] in ("model_change", "thinking_level_change"):
            for key in ("provider", "modelId", "thinkingLevel"):
                assert our.get(key) == pi.get(key), f"entry {i}: {key}"


@pytest.mark.parametrize("index", range(len(SCENARIOS)), ids=[s["name"] for s in SCENARIOS])
def test_our_loop_behaves_as_pis(index, tmp_path):
    scenario = SCENARIOS[index]
    wire = wire_for(scenario, index)
    results = replay_scenario(scenario, tmp_path, wire)
    ids: dict = {}
    for number, (step, ours) in enumerate(zip(scenario["steps"], results), 1):
        request = step["request"]
        mapped = _paths(step, request["cwd"], ours.cwd, request["agentDir"], str(tmp_path / "agent"))
        _check_base_prompt(mapped, ours)
        _check_requests(mapped, ours, mapped["requests"])
        assert policy_events(ours.events) == pi_events(step["events"]), f"step {number}: events"
        _check_entries(mapped["newEntries"], ours.entries, ids)
        if "beforeAgentStartSeen" in step:
            assert len(ours.hook_seen) == len(step["beforeAgentStartSeen"])
            for (seen, base), pi in zip(ours.hook_seen, step["beforeAgentStartSeen"]):
                assert seen == pi["systemPrompt"].get("text", base), "what a hook saw"


def test_every_category_is_replayed():
    categories = {c for s in SCENARIOS for c in s["categories"]}
    assert len(SCENARIOS) >= 40
    assert {"tool-single", "tool-parallel", "threshold-compaction", "overflow-recovery", "overflow-twice",
            "length-stop", "transient-retry", "aborted", "per-turn-override", "tools-changed", "template",
            "skill", "model-switch"} <= categories


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_replayed_write_leaves_its_file_for_the_next_tools(wire, tmp_path):
    """tool-multistep-write on both wires: pi's write, then our ls and read of the file it wrote."""
    scenario = next(s for s in SCENARIOS if s["name"] == "tool-multistep-write")
    results = replay_scenario(scenario, tmp_path, wire)
    outcome = [(e["message"]["toolName"], e["message"]["isError"], e["message"]["content"][0]["text"])
               for e in results[0].entries if e["type"] == "message" and e["message"]["role"] == "toolResult"]
    assert [(name, error) for name, error, _ in outcome] == [("write", False), ("ls", False), ("read", False)]
    assert outcome[1][2] == "new.txt" and outcome[2][2] == "fresh\n"
