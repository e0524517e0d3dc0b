"""Where later system messages go on the wire, against pi-ai 1.6.0's own providers
(``tests/data/pi16/wire.json``, from ``gen_wire_vectors.py``).

Each vector is a pi 1.x transcript (a leading system message, later ones patching sections
or tools) that pi-ai's ``openai-completions`` / ``anthropic-messages`` stream functions sent
to the loopback server, for a model that reads mid-conversation system messages and for one
that does not. Ours: the runtime's record rules (:mod:`pipeline.runtime.system`) give the
leading prompt or the replay and the tools, and our converters place each later message as
its update framed in ``builtin:pi-1``'s words; masked (``<UPD>``/``<REM>``), the
``messages`` (and Anthropic's ``system``) and the tool names must be pi-ai's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi1_masks import Masks

from pipeline.llm.wire import ConvertTexts, OpenAICompat, TargetModel, to_anthropic_messages, to_openai_chat
from pipeline.runtime.system import frame_update, tool_definitions
from pipeline.session.system import replay

WIRE = json.loads((Path(__file__).resolve().parents[1] / "data" / "pi16" / "wire.json").read_text(encoding="utf-8"))
VECTORS = WIRE["vectors"]
MASKS = Masks()
PROFILE = MASKS.pipeline.profile
TEXTS = ConvertTexts(**{k: v.render() for k, v in PROFILE.runtime.wire})
IDS = [f"{v['case']}-{v['kind']}-{'mid' if v['mid'] else 'replay'}" for v in VECTORS]


def _target(spec: dict) -> TargetModel:
    return TargetModel(id=spec["id"], provider=spec["provider"], api=spec["api"], reasoning=spec["reasoning"],
                       input=tuple(spec["input"]), max_tokens=spec["maxTokens"])


def _sent(vector: dict) -> dict:
    messages, model = vector["messages"], _target(vector["model"])
    systems = [m for m in messages if m["role"] == "system"]
    lead = messages[0] if messages and messages[0]["role"] == "system" else None
    rest = messages[1:] if lead is not None else messages
    tools = tool_definitions(replay(systems))
    if vector["mid"]:
        prompt = replay([lead] if lead else []).prompt(PROFILE.system_prompt.join)
        update = lambda m: frame_update(m, PROFILE.system_prompt.patch)  # noqa: E731
    else:
        prompt, update = replay(systems).prompt(PROFILE.system_prompt.join), None
        rest = [m for m in rest if m["role"] != "system"]
    if model.api == "openai-completions":
        compat = OpenAICompat(supports_developer_role=vector["model"]["compat"].get("supportsDeveloperRole", False))
        body = to_openai_chat(rest, system_prompt=prompt, tools=tools, model=model, texts=TEXTS, max_tokens=1000,
                              compat=compat, system_update=update)
        sent = {"messages": body["messages"]}
    else:
        body = to_anthropic_messages(rest, system_prompt=prompt, tools=tools, model=model, texts=TEXTS,
                                     max_tokens=1000, system_update=update)
        sent = {"system": body.get("system"), "messages": body["messages"]}
    sent["tools"] = [t.get("name") or t["function"]["name"] for t in body.get("tools") or []]
    return json.loads(MASKS.mask(json.dumps(sent)))


def test_vectors_cover_both_formats_and_both_model_kinds() -> None:
    assert {(v["model"]["api"], v["mid"]) for v in VECTORS} == {
        (api, mid) for api in ("openai-completions", "anthropic-messages") for mid in (True, False)}
    assert any(m["role"] == "developer" for v in VECTORS for m in v["sent"]["messages"])
    assert len(VECTORS) >= 40


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_system_messages_go_where_pi_ai_puts_them(vector: dict) -> None:
    assert _sent(vector) == vector["sent"]
