"""The Gemini API (``POST /v1beta/models/M:generateContent``, ``:streamGenerateContent``, the wire
Gemini CLI speaks): everything the project knows of the format.

* the conversation's key in a body: :data:`KEY` (``contents``);
* reply building (what the loopback server sends): :func:`gemini_response` from a normalized
  scripted reply (:mod:`pipeline.loopback.chat` says its shape); streamed, each chunk is one;
* reply reading: :func:`reported` (the input usage of an answer's ``usageMetadata``, for the proxy);
* reading back: :func:`read_message` (one content as pi's messages; a part marked ``thought`` is
  thinking), :func:`tool_results` (the ``functionResponse`` parts);
* turns (where the proxy may cut a conversation, its summary message): :func:`boundary`,
  :func:`turn_start`, :func:`parts`, :func:`summary_message` (no content is kept whole:
  ``systemInstruction`` is outside ``contents``).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from pipeline.llm.wire.history import ToolResult, arguments, assistant, call, joined, result, text, user
from pipeline.llm.wire.reply import SummaryAnswer, count, obj

JSON = dict[str, Any]

KEY = "contents"

_FINISH_OF = {"stop": "STOP", "length": "MAX_TOKENS", "toolUse": "STOP"}


# =========================================================================== reply building


def gemini_response(r: JSON, model: str) -> JSON:
    """The ``GenerateContentResponse`` for a normalized scripted reply."""
    out: list[JSON] = []
    if r.get("text"):
        out.append({"text": r["text"]})
    for tool_call in r.get("toolCalls") or []:
        out.append({"functionCall": {"name": tool_call["name"], "args": tool_call.get("arguments") or {}}})
    u = r["usage"]
    prompt = u["input"] + u["cacheRead"]
    return {
        "candidates": [{"content": {"role": "model", "parts": out or [{"text": ""}]},
                        "finishReason": _FINISH_OF.get(r["stopReason"], "STOP"), "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": u["output"],
                          "totalTokenCount": prompt + u["output"], "cachedContentTokenCount": u["cacheRead"]},
        "modelVersion": model,
    }


#: the ``error.status`` of an error body, by HTTP status (else ``INTERNAL``)
_ERROR_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND", 413: "INVALID_ARGUMENT",
                 502: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def error_body(status: int, message: str) -> JSON:
    """An error as the API writes it for HTTP ``status``: ``{"error": {code, message, status}}``."""
    return {"error": {"code": status, "message": message, "status": _ERROR_STATUS.get(status, "INTERNAL")}}


# =========================================================================== reply reading


def reported(meta: Mapping[str, Any]) -> tuple[int, int, int]:
    """An answer's input tokens (cached ones included) and those read from the cache (``usageMetadata``)."""
    return count(meta.get("promptTokenCount")), count(meta.get("cachedContentTokenCount")), 0


# =========================================================================== reading back


def read_message(content: JSON, names: dict[str, str]) -> list[JSON]:
    """One content as pi's messages (a user content of function responses: one result each, then its text)."""
    found = [p for p in content.get("parts") or [] if isinstance(p, dict)]
    if content.get("role") == "model":
        blocks: list[JSON] = []
        for at, part in enumerate(found):
            function = part.get("functionCall")
            if isinstance(function, dict):
                blocks.append(call(str(function.get("id") or f"call{at}"), str(function.get("name") or ""),
                                   arguments(function.get("args"))))
            elif isinstance(part.get("text"), str):
                blocks.append({"type": "thinking", "thinking": part["text"]} if part.get("thought")
                              else {"type": "text", "text": part["text"]})
        return [assistant(blocks)]
    out: list[JSON] = []
    for at, part in enumerate(found):
        response = part.get("functionResponse")
        if isinstance(response, dict):
            body = response.get("response")
            said = body.get("output", body) if isinstance(body, dict) else body
            out.append(result(str(response.get("id") or f"call{at}"), str(response.get("name") or ""),
                              said if isinstance(said, str) else json.dumps(said, ensure_ascii=False), False))
    said = text(found)
    return out + ([user(said)] if said else [])


def tool_results(index: int, content: JSON, names: dict[str, str], out: list[ToolResult]) -> None:
    """The ``functionResponse`` parts of ``content`` (at ``index``) are added to ``out``."""
    for part in content.get("parts") or []:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(response, dict):
            out.append(ToolResult(index, str(response.get("name") or ""), joined(response.get("response")),
                                  _response_setter(response)))


def _response_setter(response: JSON) -> Callable[[str], None]:
    def put(text: str) -> None:
        response["response"] = {"output": text}
    return put


# =========================================================================== turns


def parts(content: Any) -> list[Any]:
    """A content's parts."""
    found = content.get("parts") if isinstance(content, dict) else None
    return list(found) if isinstance(found, list) else []


def turn_start(content: Any) -> bool:
    """Is ``content`` the user's own (a user content without function responses)?"""
    return isinstance(content, dict) and content.get("role") == "user" and not any(
        isinstance(p, dict) and "functionResponse" in p for p in parts(content))


def boundary(contents: list[Any], at: int) -> bool:
    """May the kept contents start at ``contents[at]`` (a model content, or the user's own)?"""
    return turn_start(contents[at]) or (isinstance(contents[at], dict) and contents[at].get("role") == "model")


def kept_whole(content: Any) -> bool:
    """No content is kept whole (``systemInstruction`` is outside ``contents``)."""
    return False


def head(contents: list[Any]) -> int:
    """No leading content is set apart (``systemInstruction`` is outside ``contents``)."""
    return 0


def summary_message(summary: str, extra: list[Any]) -> JSON:
    """The summary as one user content: its text, then ``extra`` parts."""
    return {"role": "user", "parts": [{"text": summary}, *extra]}


# =========================================================================== summary calls


def summary_body(system_prompt: str, user_text: str, max_tokens: int, *, thinking: JSON | None = None) -> JSON:
    """A ``generateContent`` body for a summary call (the model is in the path); ``thinking``:
    its ``generationConfig.thinkingConfig`` when one is sent."""
    config: JSON = {"maxOutputTokens": max_tokens}
    if thinking is not None:
        config["thinkingConfig"] = thinking
    return {
        "systemInstruction": {"parts": [{"text": system_prompt}]},
        "contents": [{"role": "user", "parts": [{"text": user_text}]}],
        "generationConfig": config,
    }


def read_summary(data: JSON) -> SummaryAnswer | None:
    """A summary call's answer (the ``text`` parts of ``candidates[0].content`` joined by newlines,
    those marked ``thought`` as thinking; None without a candidate); ``stop`` is ``finishReason``."""
    candidates = data.get("candidates")
    candidate = obj(candidates[0]) if isinstance(candidates, list) and candidates else None
    if candidate is None:
        return None
    found = [p for p in (obj(part) for part in (obj(candidate.get("content")) or {}).get("parts") or [])
             if p is not None and isinstance(p.get("text"), str)]
    usage = obj(data.get("usageMetadata")) or {}
    cached = count(usage.get("cachedContentTokenCount"))
    return SummaryAnswer(text="\n".join(str(p["text"]) for p in found if not p.get("thought")),
                         thinking="\n".join(str(p["text"]) for p in found if p.get("thought")) or None,
                         usage=(max(0, count(usage.get("promptTokenCount")) - cached),
                                count(usage.get("candidatesTokenCount")), cached, 0),
                         stop=candidate.get("finishReason"))
