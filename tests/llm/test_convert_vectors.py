"""Our converters against pi-ai 0.84.0's own providers (vectors in tests/data/agent_loop/convert/).

pi-ai's openai-completions and anthropic-messages stream functions sent each context to the
loopback server; the vectors hold the request bodies they sent and the assistant messages
they built from the server's events. Ours must send the same bodies and build the same
messages from the same events.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.llm.wire import (
    ConvertTexts, ModelCost, TargetModel, from_anthropic_stream, from_openai_stream, to_anthropic_messages,
    to_openai_chat,
)
from pipeline.llm.wire.anthropic import anthropic_events
from pipeline.llm.wire.chat import openai_chunks
from pipeline.testing.loopback import normalize_reply

DATA = Path(__file__).resolve().parents[1] / "data" / "agent_loop" / "convert" / "convert_vectors.json"
VECTORS = json.loads(DATA.read_text(encoding="utf-8"))
TEXTS = ConvertTexts(orphan_tool_result="(none)", user_image_omitted="(img)", tool_image_omitted="(img)",
                     tool_image_only="(img)", empty_tool_output="(empty)", tool_images_intro="(images)")
IDS = [f"{v['case']}-{v['model']['api']}" for v in VECTORS]


def target(spec: dict) -> TargetModel:
    cost = spec["cost"]
    return TargetModel(id=spec["id"], provider=spec["provider"], api=spec["api"], reasoning=spec["reasoning"],
                       input=tuple(spec["input"]), max_tokens=spec["maxTokens"],
                       cost=ModelCost(input=cost["input"], output=cost["output"], cache_read=cost["cacheRead"],
                                      cache_write=cost["cacheWrite"]))


def test_vectors_cover_both_formats():
    assert {v["model"]["api"] for v in VECTORS} == {"openai-completions", "anthropic-messages"}
    assert len(VECTORS) >= 20


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_request_body_is_pis(vector):
    context, model = vector["context"], target(vector["model"])
    options = vector["options"]
    if model.api == "openai-completions":
        convert, extra = to_openai_chat, {"reasoning_effort": options.get("reasoningEffort")}
    else:
        convert = to_anthropic_messages
        extra = {"thinking_budget": options.get("thinkingBudgetTokens") if options.get("thinkingEnabled") else None}
    body = convert(context["messages"], system_prompt=context["systemPrompt"], tools=context.get("tools", []),
                   model=model, texts=TEXTS, max_tokens=vector["maxTokens"], stream=True, **extra)
    assert body == vector["body"]
    assert list(body) == list(vector["body"])


@pytest.mark.parametrize("index", range(len(VECTORS)), ids=IDS)
def test_reply_message_is_pis(index):
    vector = VECTORS[index]
    model, reply = target(vector["model"]), normalize_reply(vector["reply"])
    if model.api == "openai-completions":
        chunks = [json.loads(c) for c in openai_chunks(reply, model.id, index, include_usage=True) if c != "[DONE]"]
        message = from_openai_stream(chunks, model=model, timestamp=0)
    else:
        message = from_anthropic_stream([data for _, data in anthropic_events(reply, model.id, index)],
                                        model=model, timestamp=0)
    message.pop("timestamp")
    assert message == vector["message"]
