"""The one wire layer (pipeline/llm/wire/) is the seam every request passes.

* Round trips: pi's real request bodies (the oracle's convert vectors: OpenAI chat completions and
  Anthropic Messages as pi 0.84.0 sent them) read back by the same format module give the tool
  calls, tool results and user texts of the messages they were built from; Responses items built
  from pi messages read back as those messages; the replies the loopback servers send (built by the
  format modules) read back, by the same modules, as the scripted reply, usage included, in all four
  formats.
* One home: the loopback servers, the proxy, the OpenAI Agents adapter and the runtime's client hold
  no copy of a format's fields: their functions are the wire layer's, and no wire field name appears
  in their code (outside docstrings). The check itself is shown failing on a copy.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.llm import wire
from pipeline.llm.wire import anthropic, chat, gemini, history, responses, sse
from pipeline.llm.wire.prepare import prepare_messages
from pipeline.llm.wire.types import ConvertTexts, ModelCost, TargetModel, _clean
from pipeline.loopback.chat import normalize_reply

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "tests/data/agent_loop/convert/convert_vectors.json").read_text(encoding="utf-8"))
TEXTS = ConvertTexts(orphan_tool_result="(none)", user_image_omitted="(img)", tool_image_omitted="(img)",
                     tool_image_only="(img)", empty_tool_output="(empty)", tool_images_intro="(images)")


def _target(raw: dict) -> TargetModel:
    cost = raw.get("cost") or {}
    return TargetModel(id=raw["id"], provider=raw["provider"], api=raw["api"], reasoning=bool(raw.get("reasoning")),
                       input=tuple(raw.get("input") or ("text",)), max_tokens=raw.get("maxTokens") or 32000,
                       cost=ModelCost(input=cost.get("input", 0), output=cost.get("output", 0)))


def _essentials(messages: list[dict]) -> dict[str, Any]:
    """What a read-back must keep: every tool call (id, name, arguments), every tool result (its
    call, its tool's name) and the user messages' text."""
    calls, results, users = [], [], []
    for message in messages:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        if message["role"] == "assistant":
            calls += [(b["id"], b["name"], b.get("arguments") or {}) for b in blocks if b.get("type") == "toolCall"]
        elif message["role"] == "toolResult":
            results.append((message["toolCallId"], message["toolName"]))
        elif message["role"] == "user":
            text = "\n".join(b.get("text") or "" for b in blocks if b.get("type") == "text")
            if text.strip():
                users.append(text)
    return {"calls": calls, "results": results, "users": users}


def _read_back(module: Any, items: list[Any]) -> list[dict]:
    names: dict[str, str] = {}
    return [m for item in items if isinstance(item, dict) for m in module.read_message(item, names)]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["case"] for v in VECTORS])
def test_pis_own_request_bodies_read_back_as_the_messages_they_were_built_from(vector):
    model = _target(vector["model"])
    module = chat if model.api == "openai-completions" else anthropic
    normalize = ((lambda id: chat.openai_tool_call_id(id, model)) if module is chat else anthropic.anthropic_tool_call_id)
    sent = prepare_messages(vector["context"]["messages"], model, TEXTS, normalize)
    back = _read_back(module, vector["body"][module.KEY])
    expected, found = _essentials(sent), _essentials(back)
    assert found["calls"] == expected["calls"]
    assert found["results"] == expected["results"]
    # text blocks are joined (chat), blank ones dropped (Anthropic), lone surrogates removed: the words stay
    assert [u.split() for u in found["users"]] == [_clean(u).split() for u in expected["users"]]


def test_the_vectors_carry_tool_calls_and_results_in_both_formats():
    """The round trip above is not vacuous: both formats' vectors hold calls answered by results."""
    for api in ("openai-completions", "anthropic-messages"):
        bodies = [v["body"] for v in VECTORS if v["model"]["api"] == api]
        module = chat if api == "openai-completions" else anthropic
        results = [r for body in bodies for r in _essentials(_read_back(module, body[module.KEY]))["results"]]
        assert results and all(name for _, name in results), api


PI = [
    {"role": "user", "content": [{"type": "text", "text": "fix the bug in f3"}], "timestamp": 1},
    {"role": "assistant", "content": [{"type": "text", "text": "reading"},
                                      {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "f3"}}],
     "stopReason": "toolUse", "timestamp": 2},
    {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [{"type": "text", "text": "x = 1"}],
     "isError": False, "timestamp": 3},
    {"role": "assistant", "content": [{"type": "text", "text": "fixed"}], "stopReason": "stop", "timestamp": 4},
]


def test_responses_items_built_from_pi_messages_read_back_as_them():
    items = responses.items_of(PI, "msg_1")
    assert [i.get("type", "message") for i in items] == ["message", "message", "function_call",
                                                         "function_call_output", "message"]
    back = _read_back(responses, items)
    assert _essentials(back) == _essentials(PI)
    names: dict[str, str] = {}
    blocks = [b for i in items if i.get("role", "assistant") == "assistant" and i.get("type") != "function_call_output"
              for b in responses.reply_blocks(i, names)]
    assert blocks == PI[1]["content"] + PI[3]["content"] and names == {"c1": "read"}


def test_a_gemini_conversation_reads_back_with_each_response_named():
    contents = [{"role": "user", "parts": [{"text": "fix the bug"}]},
                {"role": "model", "parts": [{"text": "plan", "thought": True},
                                            {"functionCall": {"id": "g1", "name": "read_file", "args": {"path": "f"}}}]},
                {"role": "user", "parts": [{"functionResponse": {"id": "g1", "name": "read_file",
                                                                 "response": {"output": "x = 1"}}}]}]
    back = _read_back(gemini, contents)
    assert _essentials(back) == {"calls": [("g1", "read_file", {"path": "f"})], "results": [("g1", "read_file")],
                                 "users": ["fix the bug"]}
    assert back[1]["content"][0] == {"type": "thinking", "thinking": "plan"}
    assert back[2]["content"][0]["text"] == "x = 1"
    found: list = []
    gemini.tool_results(2, contents[2], {}, found)
    found[0].replace("masked")
    assert contents[2]["parts"][0]["functionResponse"]["response"] == {"output": "masked"}


def test_a_custom_tool_calls_output_is_a_tool_result_the_proxy_can_mask():
    """Codex's custom tools (``apply_patch``) answer in ``custom_tool_call_output`` items: the
    proxy's masking finds them at their call as it finds ``function_call_output``."""
    from pipeline.proxy.wire import tool_results as proxy_results

    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "patch it"}]},
             {"type": "custom_tool_call", "call_id": "k1", "name": "apply_patch", "input": "*** Begin Patch"},
             {"type": "custom_tool_call_output", "call_id": "k1", "output": "Success. Updated the files."},
             {"type": "function_call", "call_id": "f1", "name": "shell", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "f1", "output": "ok"}]
    found = proxy_results("responses", items)
    assert [(r.message, r.tool, r.text) for r in found] == [(2, "apply_patch", "Success. Updated the files."),
                                                            (4, "shell", "ok")]
    found[0].replace("masked")
    assert items[2] == {"type": "custom_tool_call_output", "call_id": "k1", "output": "masked"}


REPLY = normalize_reply({"text": "done", "toolCalls": [{"name": "read", "arguments": {"path": "a"}, "id": "t1"}],
                         "usage": {"input": 10, "output": 5, "cacheRead": 3, "cacheWrite": 2}})
MODEL = TargetModel(id="m", provider="openai", api="openai-completions")


def _said(message: dict) -> tuple[str, list]:
    blocks = message["content"]
    return ("".join(b["text"] for b in blocks if b["type"] == "text"),
            [(b["id"], b["name"], b["arguments"]) for b in blocks if b["type"] == "toolCall"])


@pytest.mark.parametrize("kind", ["chat", "messages", "responses", "gemini"])
def test_what_the_loopback_servers_send_reads_back_as_the_scripted_reply(kind):
    if kind == "chat":
        answer = chat.openai_completion(REPLY, "m", 0)
        message = chat.from_openai_chat(answer, model=MODEL, timestamp=0)
        streamed = chat.from_openai_stream([json.loads(c) for c in chat.openai_chunks(REPLY, "m", 0, True)
                                            if c != "[DONE]"], model=MODEL, timestamp=0)
        assert _said(streamed) == _said(message)
    elif kind == "messages":
        answer = anthropic.anthropic_message(REPLY, "m", 0)
        message = anthropic.from_anthropic_messages(answer, model=MODEL, timestamp=0)
        streamed = anthropic.from_anthropic_stream([d for _, d in anthropic.anthropic_events(REPLY, "m", 0)],
                                                   model=MODEL, timestamp=0)
        assert _said(streamed) == _said(message)
    elif kind == "responses":
        answer = responses.response_object(REPLY, "m", 0)
        merged = [b for m in _read_back(responses, answer["output"]) for b in m["content"]]
        message = {"content": merged}
        events = list(responses.response_events(REPLY, "m", 0))
        assert events[-1]["response"] == answer
    else:
        answer = gemini.gemini_response(REPLY, "m")
        [message] = gemini.read_message(answer["candidates"][0]["content"], {})
        message["content"] = [{**b, "id": "t1"} if b["type"] == "toolCall" else b for b in message["content"]]
    assert _said(message) == ("done", [("t1", "read", {"path": "a"})])
    # input 10, cache read 3, written 2: Gemini counts no writes in its prompt, only Anthropic reports them
    assert wire.reported(answer) == {"chat": (15, 3, 0), "messages": (15, 3, 2), "responses": (15, 3, 0),
                                     "gemini": (13, 3, 0)}[kind]


def test_an_sse_stream_written_by_the_wire_layer_reads_back_by_it():
    frames = [sse.data_frame(c) for c in chat.openai_chunks(REPLY, "m", 0, True)]
    frames += [sse.event_frame(name, data) for name, data in anthropic.anthropic_events(REPLY, "m", 1)]
    lines = "".join(frames).splitlines()
    decoded = list(sse.frames(lines))
    assert decoded[0]["object"] == "chat.completion.chunk" and decoded[-1] == {"type": "message_stop"}
    assert sse.payloads(["".join(frames).encode()]) == decoded
    assert "".join(t for t in map(chat.text_delta, decoded) if t) == "done"
    assert "".join(t for t in map(anthropic.text_delta, decoded) if t) == "done"


# --------------------------------------------------------------------------- one home

#: field names and event types only a format's own module may spell
MARKERS = {"tool_use", "tool_calls", "functionCall", "functionResponse", "content_block_delta", "content_block_start",
           "input_json_delta", "text_delta", "prompt_tokens", "prompt_tokens_details", "cache_read_input_tokens",
           "output_text", "usageMetadata", "promptTokenCount", "reasoning_content", "chat.completion.chunk",
           "response.output_item.added", "response.completed", "[DONE]", "summary_text", "input_text",
           "invalid_request_error", "authentication_error", "INVALID_ARGUMENT"}
#: the users of the wire layer (pipeline/proxy/summary.py keeps the Anthropic/chat cut rules it owns)
USERS = ["pipeline/loopback", "pipeline/proxy/readback.py", "pipeline/proxy/wire.py", "pipeline/proxy/turns.py",
         "pipeline/proxy/usage.py", "pipeline/proxy/history.py", "pipeline/adapters/openai_agents.py",
         "pipeline/proxy/shapes.py", "pipeline/llm/chat.py", "pipeline/runtime/request.py"]


def _copied_fields(source: str) -> set[str]:
    """The format markers among a module's string constants, docstrings left out."""
    tree = ast.parse(source)
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            found |= {m for m in MARKERS if m == node.value or f'"{m}"' in node.value}
    return found


def _files() -> list[Path]:
    out: list[Path] = []
    for name in USERS:
        path = ROOT / name
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_user_of_the_wire_layer_spells_a_format_of_its_own(path):
    assert _copied_fields(path.read_text(encoding="utf-8")) == set()


def test_the_check_finds_a_copied_reader():
    copy = '"""Reads usageMetadata."""\ndef usage(o):\n    return o.get("usageMetadata", {}).get("promptTokenCount")\n'
    assert _copied_fields(copy) == {"usageMetadata", "promptTokenCount"}
    assert _copied_fields('"""A docstring naming tool_use and [DONE]."""\n') == set()


def test_the_users_call_the_wire_layers_own_functions():
    from pipeline.loopback import chat as loopback_chat
    from pipeline.proxy import turns
    from pipeline.proxy import wire as proxy_wire

    assert loopback_chat.openai_chunks is chat.openai_chunks
    assert loopback_chat.anthropic_events is anthropic.anthropic_events
    assert turns.TURNS["responses"].boundary is responses.boundary
    assert turns.TURNS["gemini"].summary is gemini.summary_message
    for kind, module in (("messages", anthropic), ("chat", chat), ("responses", responses), ("gemini", gemini)):
        rules = turns.TURNS[kind]
        assert (rules.head, rules.boundary, rules.turn_start, rules.kept_whole, rules.parts, rules.summary) == (
            module.head, module.boundary, module.turn_start, module.kept_whole, module.parts, module.summary_message)
    assert proxy_wire.ToolResult is history.ToolResult
    assert wire.format_module("messages") is anthropic and wire.format_module("chat") is chat
    body = {"input": [1], "contents": [2], "messages": [3]}
    assert [proxy_wire.messages_of(k, body) for k in ("responses", "gemini", "chat", "messages")] == [[1], [2], [3], [3]]


def test_the_anthropic_and_chat_cut_rules():
    """Where a summary may cut a Messages or a chat body, and what is set apart (the rules the
    proxy's summaries read from these two wire modules, as from the Responses and Gemini ones)."""
    inside = {"role": "system", "content": "Claude Code's system message inside messages"}
    results = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"},
                                           {"type": "text", "text": "and a note"}]}
    asked = {"role": "user", "content": "fix it"}
    called = {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "read", "input": {}}]}
    messages = [inside, asked, called, results, called]
    assert anthropic.head(messages) == 0  # `system` is outside messages: nothing is set apart
    assert [anthropic.turn_start(m) for m in messages] == [False, True, False, False, False]
    assert [anthropic.boundary(messages, i) for i in range(5)] == [True, True, True, False, True]
    assert anthropic.kept_whole(inside) and not anthropic.kept_whole(asked)
    assert anthropic.parts(asked) == [{"type": "text", "text": "fix it"}] and anthropic.parts(results) == results["content"]
    assert anthropic.summary_message("S", [{"type": "text", "text": "fix it"}]) == {
        "role": "user", "content": [{"type": "text", "text": "S"}, {"type": "text", "text": "fix it"}]}
    tool = {"role": "tool", "tool_call_id": "c", "content": "x"}
    lead = [{"role": "system", "content": "s"}, {"role": "developer", "content": "d"}, asked,
            {"role": "assistant", "tool_calls": [{"id": "c"}]}, tool, {"role": "developer", "content": "late"}]
    assert chat.head(lead) == 2 and chat.head([asked]) == 0
    assert [chat.boundary(lead, i) for i in range(6)] == [True, True, True, True, False, True]
    assert [chat.turn_start(m) for m in lead] == [False, False, True, False, False, False]
    assert chat.kept_whole(lead[5]) and not chat.kept_whole(tool)
    assert responses.head([{"type": "message", "role": "developer", "content": []}, {"type": "message", "role": "user"}]) == 1
    assert gemini.head([{"role": "user", "parts": []}]) == 0
