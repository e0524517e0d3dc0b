"""Message converters: pi's LLM messages -> provider request bodies, provider replies -> pi's assistant message."""

from __future__ import annotations

import json

import httpx
import pytest

from pipeline.llm.wire import (
    ConvertTexts, ModelCost, OpenAICompat, TargetModel, ToolDefinition, anthropic_tool_call_id, calculate_cost,
    error_message, error_reply, from_anthropic_messages, from_anthropic_stream, from_openai_chat,
    from_openai_stream, openai_tool_call_id, prepare_messages, to_anthropic_messages, to_openai_chat,
)
from pipeline.session import parse_message
from pipeline.testing.loopback import LoopbackServer

TEXTS = ConvertTexts(
    orphan_tool_result="[tool gave no result]", user_image_omitted="[picture left out]",
    tool_image_omitted="[tool picture left out]", tool_image_only="[see the picture]",
    empty_tool_output="[empty output]", tool_images_intro="Pictures from the tool:",
)
GPT = TargetModel(id="gpt-x", provider="openai", api="openai-completions")
CLAUDE = TargetModel(id="claude-x", provider="anthropic", api="anthropic-messages", max_tokens=4096)
READ = ToolDefinition(name="read", description="Read a file.",
                      parameters={"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}})
IMAGE = {"type": "image", "data": "AAAA", "mimeType": "image/png"}


def user(content, ts=1):
    return {"role": "user", "content": content, "timestamp": ts}


def assistant(*content, model=GPT, stop="stop", **extra):
    return {"role": "assistant", "content": list(content), "api": model.api, "provider": model.provider,
            "model": model.id, "usage": {}, "stopReason": stop, "timestamp": 2, **extra}


def call(id, name="read", **arguments):
    return {"type": "toolCall", "id": id, "name": name, "arguments": arguments}


def result(id, *content, error=False):
    return {"role": "toolResult", "toolCallId": id, "toolName": "read", "content": list(content) or
            [{"type": "text", "text": "out"}], "isError": error, "timestamp": 3}


def text(t):
    return {"type": "text", "text": t}


def oa(messages, model=GPT, tools=(), **kw):
    return to_openai_chat(messages, system_prompt="SYS", tools=list(tools), model=model, texts=TEXTS, **kw)


def an(messages, model=CLAUDE, tools=(), **kw):
    return to_anthropic_messages(messages, system_prompt="SYS", tools=list(tools), model=model, texts=TEXTS, **kw)


# =========================================================================== preparation


def test_failed_replies_are_dropped_and_orphan_calls_answered():
    messages = [user("a"), assistant(text("x"), stop="error", errorMessage="boom"), assistant(text("y"), stop="aborted"),
                assistant(call("c1"), stop="toolUse"), user("b")]
    out = prepare_messages(messages, GPT, TEXTS)
    assert [m["role"] for m in out] == ["user", "assistant", "toolResult", "user"]
    assert out[2]["toolCallId"] == "c1" and out[2]["isError"] is True
    assert out[2]["content"] == [text("[tool gave no result]")]


def test_orphan_call_at_the_end_is_answered_and_answered_calls_are_not():
    out = prepare_messages([user("a"), assistant(call("c1"), call("c2"), stop="toolUse"), result("c1")], GPT, TEXTS)
    assert [(m["role"], m.get("toolCallId")) for m in out] == [
        ("user", None), ("assistant", None), ("toolResult", "c1"), ("toolResult", "c2")]


def test_other_models_thinking_becomes_text_and_redacted_is_dropped():
    other = TargetModel(id="old", provider="p", api="a")
    reply = assistant({"type": "thinking", "thinking": "why", "thinkingSignature": "s"},
                      {"type": "thinking", "thinking": "", "thinkingSignature": "r", "redacted": True},
                      {"type": "thinking", "thinking": "  "}, text("t"), model=other)
    assert prepare_messages([reply], GPT, TEXTS)[0]["content"] == [text("why"), text("t")]
    same = prepare_messages([reply], other, TEXTS)[0]["content"]
    assert [b["type"] for b in same] == ["thinking", "thinking", "text"]


def test_images_for_a_model_without_image_input():
    blind = TargetModel(id="b", provider="p", api="a", input=("text",))
    out = prepare_messages([user([text("see"), IMAGE, IMAGE]), result("c", IMAGE)], blind, TEXTS)
    assert out[0]["content"] == [text("see"), text("[picture left out]")]
    assert out[1]["content"] == [text("[tool picture left out]")]


def test_typed_messages_are_accepted():
    typed = [parse_message(user("hello")), parse_message(assistant(text("hi")))]
    assert oa(typed)["messages"][1:] == [{"role": "user", "content": "hello"},
                                         {"role": "assistant", "content": "hi"}]


# =========================================================================== OpenAI requests


def test_openai_body_layout():
    body = oa([user("q")], tools=[READ], max_tokens=1000)
    assert list(body) == ["model", "messages", "stream", "stream_options", "store", "max_completion_tokens", "tools"]
    assert body["messages"][0] == {"role": "system", "content": "SYS"}
    assert body["tools"] == [{"type": "function", "function": {
        "name": "read", "description": "Read a file.", "parameters": READ.parameters, "strict": False}}]


@pytest.mark.parametrize(("messages", "expected"), [
    ([user("hi")], [{"role": "user", "content": "hi"}]),
    ([user([text("look"), IMAGE])],
     [{"role": "user", "content": [{"type": "text", "text": "look"},
                                   {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]),
    ([user([])], []),
    ([assistant(text("a"), text(" "), text("b"))], [{"role": "assistant", "content": "ab"}]),
    ([assistant(text(""))], []),
    ([assistant(text("x"), call("c1", path="a é"), stop="toolUse"), result("c1")],
     [{"role": "assistant", "content": "x", "tool_calls": [
         {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"path":"a é"}'}}]},
      {"role": "tool", "content": "out", "tool_call_id": "c1"}]),
    ([assistant(call("c1"), call("c2"), stop="toolUse"), result("c1"), result("c2", text("l1"), text("l2"))],
     [{"role": "assistant", "content": None, "tool_calls": [
         {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}},
         {"id": "c2", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
      {"role": "tool", "content": "out", "tool_call_id": "c1"},
      {"role": "tool", "content": "l1\nl2", "tool_call_id": "c2"}]),
    ([assistant({"type": "thinking", "thinking": "hm", "thinkingSignature": "reasoning_content"}, text("ok"))],
     [{"role": "assistant", "content": "ok", "reasoning_content": "hm"}]),
    ([user("x\ud800y")], [{"role": "user", "content": "xy"}]),
], ids=["text", "image", "empty-blocks", "text-joined", "empty-assistant", "tool-call", "parallel", "thinking",
        "surrogate"])
def test_openai_messages(messages, expected):
    assert oa(messages)["messages"][1:] == expected


def test_openai_tool_result_images():
    body = oa([assistant(call("c1"), stop="toolUse"), result("c1", IMAGE), user("next")])
    assert body["messages"][2] == {"role": "tool", "content": "[see the picture]", "tool_call_id": "c1"}
    assert body["messages"][3]["content"][0] == text("Pictures from the tool:")
    assert body["messages"][3]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    empty = oa([assistant(call("c1"), stop="toolUse"), result("c1", text(""))])
    assert empty["messages"][2]["content"] == "[empty output]"


def test_openai_reasoning_model_developer_role_and_effort():
    thinker = TargetModel(id="o9", provider="openai", api="openai-completions", reasoning=True)
    body = oa([user("q")], model=thinker, reasoning_effort="high")
    assert body["messages"][0]["role"] == "developer" and body["reasoning_effort"] == "high"
    plain = oa([user("q")], model=thinker, compat=OpenAICompat(supports_developer_role=False))
    assert plain["messages"][0]["role"] == "system" and "reasoning_effort" not in plain
    assert "reasoning_effort" not in oa([user("q")], reasoning_effort="high")


def test_openai_no_tools_with_tool_history_sends_empty_list():
    assert oa([assistant(call("c"), stop="toolUse"), result("c")])["tools"] == []
    assert "tools" not in oa([user("q")])
    legacy = oa([user("q")], compat=OpenAICompat(max_tokens_field="max_tokens", supports_store=False), max_tokens=5,
                stream=False)
    assert legacy["max_tokens"] == 5 and "store" not in legacy and "stream_options" not in legacy


@pytest.mark.parametrize(("id", "provider", "expected"), [
    ("call_1", "openai", "call_1"),
    ("x" * 50, "openai", "x" * 40),
    ("x" * 50, "local", "x" * 50),
    ("call_a|item+b/c", "local", "call_a_item_b_c"),
    ("call_abc|" + "y" * 60, "openai", "call_abc_" + "0"),  # prefix_hash: checked by shape below
])
def test_openai_tool_call_ids(id, provider, expected):
    got = openai_tool_call_id(id, TargetModel(id="m", provider=provider, api="a"))
    if "|" in id and len(id) > 40:
        prefix, _, digest = got.rpartition("_")
        assert prefix == "call_abc" and len(digest) == 8 and len(got) <= 40
    else:
        assert got == expected


def test_foreign_tool_call_ids_are_normalised_with_their_results():
    other = TargetModel(id="o", provider="p", api="a")
    body = an([assistant(call("call|a.b/c"), stop="toolUse", model=other), result("call|a.b/c")])
    assert body["messages"][0]["content"][0]["id"] == "call_a_b_c"
    assert body["messages"][1]["content"][0]["tool_use_id"] == "call_a_b_c"
    same = an([assistant(call("call|a.b/c"), stop="toolUse", model=CLAUDE), result("call|a.b/c")])
    assert same["messages"][0]["content"][0]["id"] == "call|a.b/c"
    assert anthropic_tool_call_id("toolu_" + "z" * 80) == ("toolu_" + "z" * 80)[:64]


# =========================================================================== Anthropic requests


def test_anthropic_body_layout():
    body = an([user("q")], tools=[READ], eager_tool_input=False)
    assert list(body) == ["model", "messages", "max_tokens", "stream", "system", "tools"]
    assert body["system"] == [{"type": "text", "text": "SYS"}]
    assert body["max_tokens"] == 4096
    assert body["tools"] == [{"name": "read", "description": "Read a file.", "input_schema": {
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]
    assert list(an([user("q")], tools=[READ])["tools"][0]) == ["name", "description", "eager_input_streaming",
                                                             "input_schema"]


@pytest.mark.parametrize(("messages", "expected"), [
    ([user("hi")], [{"role": "user", "content": "hi"}]),
    ([user("  ")], []),
    ([user([text(""), IMAGE])],
     [{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                               "data": "AAAA"}}]}]),
    ([assistant(call("c1", path="a"), call("c2"), model=CLAUDE, stop="toolUse"), result("c1"),
      result("c2", error=True), user("more")],
     [{"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "read", "input": {"path": "a"}},
                                        {"type": "tool_use", "id": "c2", "name": "read", "input": {}}]},
      {"role": "user", "content": [
          {"type": "tool_result", "tool_use_id": "c1", "content": "out", "is_error": False},
          {"type": "tool_result", "tool_use_id": "c2", "content": "out", "is_error": True}]},
      {"role": "user", "content": "more"}]),
    ([assistant({"type": "thinking", "thinking": "t", "thinkingSignature": "sig"}, text("a"), model=CLAUDE)],
     [{"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "sig"},
                                        {"type": "text", "text": "a"}]}]),
    ([assistant({"type": "thinking", "thinking": "t"}, model=CLAUDE)],
     [{"role": "assistant", "content": [{"type": "text", "text": "t"}]}]),
    ([assistant({"type": "thinking", "thinking": "x", "thinkingSignature": "DATA", "redacted": True}, model=CLAUDE)],
     [{"role": "assistant", "content": [{"type": "redacted_thinking", "data": "DATA"}]}]),
    ([assistant(text(" "), model=CLAUDE)], []),
], ids=["text", "blank", "image-only", "tools-merged", "signed-thinking", "unsigned-thinking", "redacted", "blank"])
def test_anthropic_messages(messages, expected):
    assert an(messages)["messages"] == expected


def test_anthropic_tool_result_images_and_cache_marks():
    body = an([assistant(call("c1"), stop="toolUse", model=CLAUDE), result("c1", IMAGE)], tools=[READ], cache=True)
    block = body["messages"][1]["content"][0]
    assert block["content"][0] == text("[see the picture]") and block["content"][1]["type"] == "image"
    assert block["cache_control"] == {"type": "ephemeral"}
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    plain = an([user("q")], cache=True)
    assert plain["messages"][-1]["content"] == [{"type": "text", "text": "q", "cache_control": {"type": "ephemeral"}}]


def test_anthropic_thinking_for_reasoning_models():
    thinker = TargetModel(id="c", provider="anthropic", api="anthropic-messages", reasoning=True)
    assert an([user("q")], model=thinker, thinking_budget=2048)["thinking"] == {
        "type": "enabled", "budget_tokens": 2048, "display": "summarized"}
    assert an([user("q")], model=thinker)["thinking"] == {"type": "disabled"}
    assert "thinking" not in an([user("q")])


# =========================================================================== replies


PRICED = TargetModel(id="gpt-x", provider="openai", api="openai-completions",
                     cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))


def test_openai_reply():
    response = {"id": "r1", "choices": [{"message": {"role": "assistant", "content": "hi", "reasoning_content": "why",
                                                     "tool_calls": [{"id": "c", "function": {"name": "read",
                                                                                             "arguments": '{"p":1}'}}]},
                                         "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 100,
                          "prompt_tokens_details": {"cached_tokens": 600}}}
    out = from_openai_chat(response, model=PRICED, timestamp=5)
    assert out["content"] == [{"type": "thinking", "thinking": "why", "thinkingSignature": "reasoning_content"},
                              text("hi"), {"type": "toolCall", "id": "c", "name": "read", "arguments": {"p": 1}}]
    assert out["stopReason"] == "toolUse" and out["responseId"] == "r1" and out["timestamp"] == 5
    usage = out["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"], usage["totalTokens"]) == (
        400, 100, 600, 0, 1100)
    assert usage["cost"]["total"] == pytest.approx((400 * 3 + 100 * 15 + 600 * 0.3) / 1e6)
    assert parse_message(out).tool_calls[0].arguments == {"p": 1}


@pytest.mark.parametrize(("finish", "stop"), [
    ("stop", "stop"), ("end", "stop"), (None, "stop"), ("length", "length"), ("tool_calls", "toolUse"),
    ("function_call", "toolUse"), ("content_filter", "error")])
def test_openai_finish_reasons(finish, stop):
    out = from_openai_chat({"choices": [{"message": {"content": "x"}, "finish_reason": finish}]}, model=GPT, timestamp=1)
    assert out["stopReason"] == stop
    assert ("errorMessage" in out) == (stop == "error")


@pytest.mark.parametrize(("reason", "stop"), [
    ("end_turn", "stop"), ("pause_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"),
    ("tool_use", "toolUse"), ("refusal", "error")])
def test_anthropic_stop_reasons(reason, stop):
    out = from_anthropic_messages({"content": [], "stop_reason": reason, "usage": {}}, model=CLAUDE, timestamp=1)
    assert out["stopReason"] == stop


def test_anthropic_reply_blocks_and_usage():
    response = {"id": "m1", "content": [{"type": "thinking", "thinking": "a", "signature": "s"},
                                        {"type": "redacted_thinking", "data": "D"}, text("b"),
                                        {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "x"}}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 5, "output_tokens": 7,
                                                     "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}}
    out = from_anthropic_messages(response, model=CLAUDE, timestamp=9, redacted_text="(hidden)")
    assert out["content"] == [
        {"type": "thinking", "thinking": "a", "thinkingSignature": "s"},
        {"type": "thinking", "thinking": "(hidden)", "thinkingSignature": "D", "redacted": True}, text("b"),
        {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "x"}}]
    assert out["usage"]["totalTokens"] == 132 and out["rawStopReason"] == "tool_use"
    assert list(out)[:8] == ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"]


def test_cost_per_million():
    usage = {"input": 1_000_000, "output": 2_000_000, "cacheRead": 0, "cacheWrite": 10}
    cost = calculate_cost(usage, ModelCost(input=1, output=2, cache_write=100))
    assert cost == {"input": 1.0, "output": 4.0, "cacheRead": 0.0, "cacheWrite": 0.001, "total": 5.001}


@pytest.mark.parametrize(("provider", "status", "body", "expected"), [
    ("openai", 400, '{"error": {"message": "maximum context length", "code": "context_length_exceeded"}}',
     '400: {"message":"maximum context length","code":"context_length_exceeded"}'),
    ("anthropic", 400, '{"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}',
     '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}'),
    ("openai", 502, "<html>bad gateway</html>", "502 <html>bad gateway</html>"),
    ("anthropic", 503, "", "503 status code (no body)"),
])
def test_error_messages(provider, status, body, expected):
    assert error_message(provider, status, body) == expected


def test_error_reply_keeps_the_partial_reply():
    partial = from_anthropic_stream([{"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 3}}},
                                     {"type": "content_block_start", "index": 0, "content_block": text("")},
                                     {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": "par"}}], model=CLAUDE, timestamp=1)
    out = error_reply("Request was aborted", model=CLAUDE, timestamp=1, aborted=True, partial=partial)
    assert out["stopReason"] == "aborted" and out["content"] == [text("par")] and out["usage"]["input"] == 3
    assert error_reply("x", model=GPT, timestamp=2)["content"] == []


# =========================================================================== round trip through the loopback server


REPLIES = [
    {"text": "hello", "usage": {"input": 50, "output": 5, "cacheRead": 10}},
    {"thinking": "plan", "thinkingSignature": "sig", "text": "reading",
     "toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}, "id": "call_7"}]},
    {"text": "cut", "stopReason": "length", "usage": {"output": 99}},
]


def _sse_data(response: httpx.Response) -> list:
    frames = [f for f in response.text.split("\n\n") if f.strip()]
    data = [line.split(": ", 1)[1] for f in frames for line in f.splitlines() if line.startswith("data: ")]
    return [json.loads(d) for d in data if d != "[DONE]"]


def _expected(reply: dict, model: TargetModel, openai: bool) -> list:
    blocks = []
    if "thinking" in reply:
        blocks.append({"type": "thinking", "thinking": reply["thinking"],
                       "thinkingSignature": "reasoning_content" if openai else reply["thinkingSignature"]})
    blocks.append(text(reply["text"]))
    blocks += [{"type": "toolCall", "id": c["id"], "name": c["name"], "arguments": c["arguments"]}
               for c in reply.get("toolCalls", [])]
    return blocks


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_round_trip(provider, stream):
    model = GPT if provider == "openai" else CLAUDE
    history = [user("read a.txt")]
    with LoopbackServer(REPLIES) as server, httpx.Client(timeout=5) as client:
        for reply in REPLIES:
            if provider == "openai":
                body = oa(history, model=model, tools=[READ], stream=stream)
                url = server.openai_base_url + "/chat/completions"
            else:
                body = an(history, model=model, tools=[READ], stream=stream)
                url = server.anthropic_base_url + "/v1/messages"
            response = client.post(url, json=body)
            assert response.status_code == 200
            if provider == "openai":
                message = (from_openai_stream(_sse_data(response), model=model, timestamp=1) if stream
                           else from_openai_chat(response.json(), model=model, timestamp=1))
            else:
                message = (from_anthropic_stream(_sse_data(response), model=model, timestamp=1) if stream
                           else from_anthropic_messages(response.json(), model=model, timestamp=1))
            assert message["content"] == _expected(reply, model, provider == "openai")
            assert message["stopReason"] == reply.get("stopReason", "toolUse" if "toolCalls" in reply else "stop")
            usage = reply.get("usage", {})
            assert message["usage"]["output"] == usage.get("output", 0)
            assert message["usage"]["cacheRead"] == usage.get("cacheRead", 0)
            history += [message] + [result(c["id"]) for c in reply.get("toolCalls", [])]
        assert server.bodies[-1]["messages"][-1]["role"] == ("tool" if provider == "openai" else "user")
    # the reply fed back: the tool call the server sent comes back as the provider's own structure
    sent = server.bodies[2]["messages"]
    if provider == "openai":
        assert sent[-2]["tool_calls"][0]["function"] == {"name": "read", "arguments": '{"path":"a.txt"}'}
        assert sent[-2]["reasoning_content"] == "plan"
    else:
        assert sent[-2]["content"][0] == {"type": "thinking", "thinking": "plan", "signature": "sig"}
        assert sent[-1]["content"][0]["tool_use_id"] == "call_7"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_round_trip_overflow_error(provider):
    overflow = {"stopReason": "error", "errorMessage": "prompt is too long: 213456 tokens > 200000 maximum"}
    with LoopbackServer([overflow]) as server:
        path = "/v1/chat/completions" if provider == "openai" else "/v1/messages"
        response = httpx.post(server.url + path, json={"model": "m"}, timeout=5)
    message = error_message(provider, response.status_code, response.content)
    assert message.startswith("400") and "prompt is too long: 213456 tokens > 200000 maximum" in message
