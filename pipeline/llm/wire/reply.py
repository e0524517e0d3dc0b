"""pi's assistant message as the wire readers build it: the empty reply, usage and its cost,
the stop reason, tool-call arguments, and the failed reply of an HTTP error.

The format modules (:mod:`.chat`, :mod:`.anthropic`) fill the content and the usage of
their answers into :func:`new_reply`; everything they share is here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from pipeline.js import js_json
from pipeline.llm.wire.types import JSON, ModelCost, TargetModel

__all__ = ["SummaryAnswer", "calculate_cost", "count", "error_message", "error_reply", "finish_reply", "new_reply",
           "obj", "parse_arguments"]


@dataclass(frozen=True)
class SummaryAnswer:
    """A summary call's answer as its format's ``read_summary`` reads it (the client maps ``stop``)."""

    text: str
    thinking: str | None
    #: input (not cached), output, read from the cache, written to it
    usage: tuple[int, int, int, int]
    #: the format's own stop reason, as the answer gives it
    stop: Any


def obj(value: object) -> JSON | None:
    """``value`` if it is a JSON object, else ``None``."""
    return value if isinstance(value, dict) else None


def calculate_cost(usage: JSON, cost: ModelCost) -> JSON:
    """pi's ``calculateCost``: dollars per part and in total (same float operations), into ``usage["cost"]``.

    Anthropic's one-hour cache writes (``cacheWrite1h``, part of ``cacheWrite``) cost twice the input rate.
    """
    long_write = usage.get("cacheWrite1h") or 0
    parts = {"input": (cost.input / 1000000) * usage["input"], "output": (cost.output / 1000000) * usage["output"],
             "cacheRead": (cost.cache_read / 1000000) * usage["cacheRead"],
             "cacheWrite": (cost.cache_write * (usage["cacheWrite"] - long_write) + cost.input * 2 * long_write)
             / 1000000}
    usage["cost"] = {**parts, "total": parts["input"] + parts["output"] + parts["cacheRead"] + parts["cacheWrite"]}
    return usage["cost"]


def _zero_usage() -> JSON:
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def count(value: Any) -> int:
    """A token count from JSON: a positive int, anything else counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def new_reply(model: TargetModel, timestamp: int | float) -> JSON:
    return {"role": "assistant", "content": [], "api": model.api, "provider": model.provider, "model": model.id,
            "usage": _zero_usage(), "stopReason": "stop", "timestamp": timestamp}


def parse_arguments(text: Any) -> Any:
    if not isinstance(text, str) or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def finish_reply(out: JSON, reason: Any, table: Mapping[str, str], provider: str) -> JSON:
    if reason is None and provider == "openai":
        out["stopReason"] = "stop"
        return out
    out["rawStopReason"] = reason
    mapped = table.get(reason) if isinstance(reason, str) else None
    if mapped is None:
        out["stopReason"] = "error"
        out["errorMessage"] = f"{provider} stop reason: {reason}"
    else:
        out["stopReason"] = mapped
    return out


def error_message(provider: str, status: int, body: str | bytes | None) -> str:
    """The ``errorMessage`` pi records for an HTTP error from ``provider`` (as its SDKs word it)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else (body or "")
    try:
        parsed = json.loads(text) if text.strip() else None
    except ValueError:
        parsed = None
    if not text.strip():
        return f"{status} status code (no body)"
    if provider == "openai" and isinstance(parsed, dict) and isinstance(parsed.get("error"), dict) and parsed["error"]:
        return f"{status}: {js_json(parsed['error'])}"
    if isinstance(parsed, (dict, list)):
        return f"{status} {js_json(parsed)}"
    return f"{status} {text.strip()}"


def error_reply(message: str, *, model: TargetModel, timestamp: int | float, aborted: bool = False,
                partial: Mapping | None = None) -> JSON:
    """A failed reply as pi records it: what arrived (``partial``), ``stopReason`` error or aborted."""
    out = dict(partial) if partial else new_reply(model, timestamp)
    out["stopReason"] = "aborted" if aborted else "error"
    out["errorMessage"] = message
    return out
