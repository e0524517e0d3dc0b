#!/usr/bin/env python3
"""Generate the runtime-policy test vectors from pi 0.84.0 (the oracle). Needs the oracle; the tests do not.

    /tmp/venv/bin/python tests/data/runtime/gen_vectors.py            # (re)write the vector files
    /tmp/venv/bin/python tests/data/runtime/gen_vectors.py --check --seed 99 --count 3000
        # fresh random messages (not in the vector file) classified by the oracle and by
        # pipeline.runtime; prints the mismatches and exits 1 if there are any

Writes, under ``tests/data/runtime/``:

* ``classify_vectors.json`` — ``classify`` (pi-ai ``isContextOverflow`` /
  ``isRecoverableLength`` / ``isRetryableAssistantError`` via the ``classify_error`` op) on
  hand-picked and seeded random error texts and usage combinations; ``should_compact``;
  ``overflowPatterns`` (pi-ai's list, from the ``constants`` op, to check ours against);
* ``scenarios.json`` — end-to-end ``agent_request`` runs on a copy of a real session with
  scripted replies: the events pi emitted (compaction, overflow recovery, auto-retry) and
  the entries it appended, so the tests can replay the policy over the same replies;
* ``overrides.json`` — ``agent_request`` with ``beforeAgentStart`` hooks: which system
  prompt each agent request carried and what each hook saw.

pi's sentences never reach these files: the base system prompt is replaced by ``<BASE>``
(every captured agent prompt that is not one of our override strings must equal the base
prompt, else the generator fails), summary requests keep only their kind, and compaction
summaries in stored entries are replaced by ``#`` runs of the same UTF-16 length (the
length feeds token estimates; the words do not matter).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
ORACLE_DIR = Path(os.environ.get("PI_ORACLE", "/tmp/oracle"))
REAL = ROOT / "tests" / "data" / "sessions" / "real"
WINDOW = 200000
MAX_TOKENS = 32000


# =========================================================================== oracle


def oracle(requests: list[dict]) -> list[Any]:
    """Run a batch in one ``--jsonl`` process; results in order (any failure stops the generator)."""
    text = "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in requests)
    proc = subprocess.run(
        ["./oracle", "--jsonl"], input=text, capture_output=True, text=True, cwd=ORACLE_DIR, check=True,
        encoding="utf-8", errors="surrogatepass",
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(replies) == len(requests), proc.stderr[-2000:]
    for request, reply in zip(requests, replies):
        if not reply["ok"]:
            raise RuntimeError(f"oracle failed on {json.dumps(request)[:300]}: {reply['error']}")
    return [reply["result"] for reply in replies]


# =========================================================================== error texts

TABLE = [  # docs/pi-rules.md#runtime-decisions, verbatim
    "prompt is too long: 213462 tokens > 200000 maximum",
    "Requested token count exceeds the model's maximum context length of 131072 tokens",
    "exceeds maximum context length",
    "400 status code (no body)",
    " 400 status code (no body)",
    "ThrottlingException: Too many tokens, please wait…",
    "Throttling error: Too many tokens",
    "Rate limit: too many tokens",
    "Service unavailable: prompt is too long",
    "500 Internal server error",
    "Error 5000 tokens",
    "insufficient_quota 429",
    "billing hard limit 429",
    "Server requested 120s retry delay (max: 60s)",
    "exceeded request buffer limit while retrying upstream",
]

OVERFLOW_TEXTS = [  # one or more realistic texts per pi-ai overflow pattern, plus near misses
    "prompt is too long: 250000 tokens > 200000 maximum", "PROMPT IS TOO LONG", "prompt is too  long",
    '{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
    "request too large", "Input is too long for requested model.",
    "Your input exceeds the context window of this model. Please adjust your input and try again.",
    "exceeds the context-window",
    "This model's maximum context length exceeds maximum context length of 131,072 tokens",
    "exceeds the models maximum context length of 1 token", "exceeds model's maximum context length (131072)",
    "exceeds maximum context length  (1,000)", "exceeds the maximum context length of 12 tok",
    "exceeds maximum context length of tokens", "exceeds maximum context length\t(42)",
    "exceeds maximum context length\u00a0(42)", "exceeds maximum context length\u200b(42)",
    "exceeds maximum context length of ٣ tokens", "exceeds the model’s maximum context length of 5 tokens",
    "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
    "input token count\nexceeds the maximum", "input token count\u2028exceeds the maximum",
    "input token count 😀 exceeds the maximum",
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
    "maximum prompt length is ", "maximum prompt length is 1,000",
    "Please reduce the length of the messages or completion.",
    "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens",
    "maximum context length is 200,000 tokens",
    "Input exceeds the maximum allowed input length of 32,768 tokens",
    "exceeds maximum allowed input length of 1 token",
    "Input (4096 tokens) is longer than the model's context length (2048 tokens).",
    "input (4,096 tokens) is longer than the models context length (2048 tokens)",
    "prompt token count of 130000 exceeds the limit of 128000", "exceeds the limit of",
    "the request exceeds the available context size, try increasing it",
    "The number of tokens to keep from the initial prompt is greater than the context length",
    "invalid params, context window exceeds limit (2013)",
    "Exceeded model token limit: 262144 (requested: 300000)",
    "Prompt contains 40000 tokens, too large for model with 32768 maximum context length",
    "too large for model with 32,768 maximum context length",
    "prompt has 1,234 tokens, but the configured context size is 1,000 tokens",
    "prompt has 1 token, but the configured context size is 0 token",
    "prompt has 12 tokens but the configured context size is 1 tokens",
    "finish_reason: model_context_window_exceeded", "model context window exceeded",
    "prompt too long; exceeded max context length by 100 tokens", "prompt too long; exceeded context length",
    "prompt too long: exceeded context length",
    "Range of input length should be [1, 30720]",
    "context_length_exceeded", "context length exceeded", "context_length exceeded", "Context-Length-Exceeded",
    "contextlengthexceeded", "error: too many tokens in request", "Token limit exceeded", "token-limit exceeded",
    "413 (no body)", "413status code(no body)", "400  status code   (no body)", "4000 status code (no body)",
    "400 Status Code (No Body)", "\ufeff400 (no body)", "\n400 (no body)", "400\n(no body)", "400\u2028(no body)",
    "400\u3000status code\u3000(no body)", "400\u0085(no body)", "400 status code(no body) trailing",
    "401 status code (no body)",
    "Error: 400 status code (no body)", "413 status code (no body)",
    "too many tokens, rate limit", "Throttling error: prompt is too long", "throttling error: prompt is too long",
    "Throttling error:prompt is too long", " Throttling error: prompt is too long",
    "Service Unavailable: too many tokens",
    "ServiceUnavailable: prompt is too long", "too many requests: prompt is too long", "rate-limit: prompt is too long",
    "ratelimit prompt is too long", "RATE LIMIT prompt is too long", "Too Many Tokens",
    "prompt i\u017f too long", "too many to\u212aens", "too many tokens\u017f",
    "\u0131nput is too long for requested model", "\u0130nput is too long for requested model",
]

RETRY_WORDS = [  # pi-ai's retryable alternatives, written out (with ~ = one optional char)
    "overloaded", "rate~limit", "too many requests", "429", "500", "502", "503", "504", "524",
    "service~unavailable", "server~error", "internal~error", "provider~returned~error", "network~error",
    "connection~error", "connection~refused", "connection~lost", "other side closed", "fetch failed",
    "getaddrinfo", "ENOTFOUND", "EAI_AGAIN", "upstream~connect", "reset before headers", "socket hang up",
    "socket connection was closed", "timed out", "time out", "timeout", "terminated", "websocket~closed",
    "websocket~error", "ended without", "stream ended before message_stop",
    "stream ended before a terminal response event", "http2 request did not get a response", "retry delay",
    "you can retry your request", "try your request again", "please retry your request", "ResourceExhausted",
]
SEPARATORS = [" ", "", "-", "_", ".", "  ", "\n", "\u2028", "\u2029", "\r", "😀", "\t", "\u00a0", "é", "\ufeff"]
NON_RETRYABLE = [
    "GoUsageLimitError", "FreeUsageLimitError", "Monthly usage limit reached", "available balance",
    "insufficient_quota", "out of budget", "quota exceeded", "billing",
]
RETRY_TEXTS = [
    "529 overloaded_error: Overloaded", "Error: 429 Too Many Requests", "HTTP 5000", "port 15024 refused",
    "error code 5029", "status 1429", "503", " 503 ", "\t503\n", "Service Unavailable", "service_unavailable",
    "ServiceUnavailable", "Internal Server Error", "provider returned error", "Provider-Returned-Error",
    "NetworkError when attempting to fetch resource", "ECONNREFUSED: connection refused", "connection lost",
    "other side closed", "TypeError: fetch failed", "getaddrinfo ENOTFOUND api.example.com",
    "getaddrinfo EAI_AGAIN api.example.com", "upstream connect error or disconnect/reset before headers",
    "socket hang up", "The socket connection was closed unexpectedly", "Request timed out.", "request time out",
    "timeouts", "TIMEOUT", "Timed Out", "timedout", "timed  out", "time\u00a0out", "terminated", "Terminated",
    "WebSocket closed 1006", "websocket error", "stream ended without producing a message",
    "Anthropic stream ended before message_stop", "stream ended before a terminal response event",
    "HTTP/2 request did not get a response", "Server requested 61s retry delay",
    "An error occurred while processing your request. You can retry your request",
    "Please try your request again later", "please retry your request", "ResourceExhausted: try later",
    "resourceexhausted", "Resource Exhausted", "quota exceeded 429", "Quota Exceeded: 503", "Billing: 500",
    "You exceeded your current quota (insufficient_quota) 429", "out of budget; overloaded",
    "GoUsageLimitError overloaded", "freeusagelimiterror 429", "monthly usage limit reached 503",
    "Available Balance too low 500", "billing-issue 502", "quota-exceeded 503", "quota_exceeded 503",
    "rate limit exceeded", "Rate Limit", "Rate-Limit", "RateLimit", "rate__limit", "ra te limit",
    "overload", "over loaded", "ENOTFOUND", "enotfound", "eai_again", "EAI AGAIN",
    "exceeded request buffer limit while retrying upstream", "unknown error", "invalid api key", "",
    "Error 5000 tokens", "error 5,000 tokens", "http 5OO", "http ５００", "http ٥٠٠", "lr 2.5e-04 500",
    "Stream ended before message_stop", "stream  ended without", "ended\nwithout", "Connection\u2028refused",
    "Connection😀refused", "connectionrefused", "connection--refused", "upstreamconnect", "upstream\u00a0connect",
    "\u212abilling 503", "bi\u0131lling 503", "biLLing 503",
]


def tricky_texts() -> list[str]:
    """Every retryable alternative with every separator in place of its optional/space characters."""
    out = []
    for word in RETRY_WORDS:
        if "~" in word:
            out.extend(word.replace("~", sep) for sep in SEPARATORS)
        else:
            out.extend([word, word.upper(), f"  {word}  ", f"x{word}x"])
    for word in NON_RETRYABLE:
        out.extend([f"{word} 429", f"503 {word.upper()}", word])
    return out


FRAGMENTS = [
    "prompt is too long", "too many tokens", "token limit exceeded", "context_length_exceeded", "rate limit",
    "too many requests", "Throttling error:", "Service unavailable:", "overloaded", "429", "500", "503", "5000",
    "timed out", "timeout", "terminated", "billing", "insufficient_quota", "quota exceeded", "retry delay",
    "400 status code (no body)", "413 (no body)", "exceeds the limit of 100", "maximum context length is 8 tokens",
    "exceeds maximum context length of 1,024 tokens", "fetch failed", "socket hang up", "ResourceExhausted",
    "request_too_large", "connection refused", "network error", "input token count", "exceeds the maximum",
    "Error:", "error", "the", "model", "please", "tokens", "12,345", "(131072)", "😀", "é", "日本", "\n", "{", "}",
]
CASE_SWAPS = {"k": "\u212a", "s": "\u017f", "i": "\u0131", "I": "\u0130", "K": "\u212a"}


def _mutate_case(rng: random.Random, text: str) -> str:
    mode = rng.random()
    if mode < 0.15:
        return text.upper()
    if mode < 0.3:
        return text.lower()
    if mode < 0.45:
        return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)
    if mode < 0.55:
        return "".join(CASE_SWAPS.get(c, c) if rng.random() < 0.3 else c for c in text)
    return text


def _mutate_separators(rng: random.Random, text: str) -> str:
    if rng.random() < 0.6:
        return text
    return "".join(rng.choice(SEPARATORS) if c in " _" and rng.random() < 0.5 else c for c in text)


def fuzz_text(rng: random.Random) -> str:
    """A random error text assembled from pattern-ish fragments, separators and noise."""
    parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 4))]
    text = "".join(p + rng.choice([" ", " ", ": ", "", ", ", "\n", "-"]) for p in parts)
    text = _mutate_separators(rng, _mutate_case(rng, text))
    if rng.random() < 0.2:
        text = rng.choice([" ", "\t", "\u00a0", "\ufeff", "\n", "  "]) + text
    if rng.random() < 0.2:
        text = text.rstrip() + rng.choice([" ", "\t", "\n", "\u3000"])
    return text


# =========================================================================== classify requests


def error_case(text: str, window: Any = WINDOW) -> dict:
    return {"message": {"stopReason": "error", "errorMessage": text}, "contextWindow": window}


def usage(inp: float, out: float = 0, cache_read: float = 0, cache_write: float = 0) -> dict:
    return {
        "input": inp, "output": out, "cacheRead": cache_read, "cacheWrite": cache_write,
        "totalTokens": inp + out + cache_read + cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


WINDOWS = [None, 0, 1, 3, 100, 4096, 16384, 128000, 131072, 200000, 1000000]


def usage_cases(rng: random.Random, count: int) -> list[dict]:
    """Non-error replies around the silent-overflow boundaries, plus the ``length`` rule."""
    cases = []
    for window in WINDOWS:
        w = window or 0
        for prompt in {w - 1, w, w + 1, int(w * 0.99) - 1, int(w * 0.99), int(w * 0.99) + 1, -(-w * 99 // 100)}:
            split = rng.randint(0, max(prompt, 0))
            for reason in ("stop", "length", "toolUse", "aborted", "error"):
                out = rng.choice([0, 0, 1, 100])
                cases.append({"message": {"stopReason": reason, "usage": usage(prompt - split, out, split)},
                              "contextWindow": window, "maxTokens": rng.choice([None, 0, 1, 100, 32000])})
    for _ in range(count):
        window = rng.choice(WINDOWS)
        prompt = rng.randint(0, int((window or 1000) * 1.1))
        split = rng.randint(0, prompt)
        reason = rng.choice(["stop", "length", "length", "toolUse", "aborted", "error"])
        out = rng.choice([0, 0, 1, 99, 100, 31999, 32000, 32001, rng.randint(0, 40000)])
        msg = {"stopReason": reason, "usage": usage(prompt - split, out, split, rng.choice([0, 0, 500]))}
        if reason == "error" and rng.random() < 0.5:
            msg["errorMessage"] = rng.choice(["prompt is too long", "overloaded", "bad request"])
        if reason != "error" and rng.random() < 0.2:
            msg["errorMessage"] = "prompt is too long"  # ignored: not an error reply
        cases.append({"message": msg, "contextWindow": window, "maxTokens": rng.choice([None, 0, 100, 32000, 40000])})
    return cases


def classify_cases(seed: int, count: int) -> list[dict]:
    rng = random.Random(seed)
    texts = TABLE + OVERFLOW_TEXTS + RETRY_TEXTS + tricky_texts()
    cases = [error_case(t) for t in texts]
    cases += [error_case(fuzz_text(rng)) for _ in range(count)]
    cases += usage_cases(rng, count // 4)
    cases += [  # the remaining spec rows and odd shapes
        {"message": {"stopReason": "error"}, "contextWindow": WINDOW},
        {"message": {"stopReason": "error", "errorMessage": ""}, "contextWindow": WINDOW},
        {"message": {"stopReason": "stop", "usage": usage(210000)}, "contextWindow": WINDOW},
        {"message": {"stopReason": "stop", "usage": usage(100000, 0, 100000)}, "contextWindow": WINDOW},
        {"message": {"stopReason": "stop", "usage": usage(210000)}, "contextWindow": 0},
        {"message": {"stopReason": "length", "usage": usage(198000)}, "contextWindow": WINDOW},
        {"message": {"stopReason": "length", "usage": usage(197999)}, "contextWindow": WINDOW},
        {"message": {"stopReason": "length", "usage": usage(1000, 100)}, "contextWindow": WINDOW,
         "maxTokens": MAX_TOKENS},
        {"message": {"stopReason": "length", "usage": usage(1000, 32000)}, "contextWindow": WINDOW,
         "maxTokens": MAX_TOKENS},
        {"message": {"stopReason": "stop", "errorMessage": "prompt is too long"}, "contextWindow": WINDOW},
        {"message": {"stopReason": "aborted", "errorMessage": "503 overloaded"}, "contextWindow": WINDOW},
    ]
    return cases


def classify(cases: list[dict]) -> list[dict]:
    requests = [{"op": "classify_error", **case} for case in cases]
    return [{**case, "expect": result} for case, result in zip(cases, oracle(requests))]


def should_compact_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = []
    for window in (0, 1, 16384, 32768, 128000, 200000):
        for reserve in (None, 0, 4096, 16384, 40000):
            edge = window - (16384 if reserve is None else reserve)
            for tokens in (edge - 1, edge, edge + 1, 0, rng.randint(0, 250000)):
                settings = {} if reserve is None else {"reserveTokens": reserve}
                if rng.random() < 0.15:
                    settings["enabled"] = False
                cases.append({"contextTokens": tokens, "contextWindow": window, "settings": settings})
    requests = [{"op": "should_compact", **c} for c in cases]
    return [{**case, "expect": result} for case, result in zip(cases, oracle(requests))]


# =========================================================================== agent scenarios

SUMMARY = ["H", "P"]
QUICK_RETRY = {"retry": {"baseDelayMs": 1}}
NO_RETRY = {"retry": {"enabled": False}}
FILE = "/tmp/ctxp-runtime-vectors/f.txt"
OVERFLOW = {"stopReason": "error", "errorMessage": "prompt is too long: 213456 tokens > 200000 maximum"}


def read_call(total: int) -> dict:
    return {"toolCalls": [{"name": "read", "arguments": {"path": FILE}}], "usage": {"totalTokens": total}}


def bash_call(command: str) -> dict:
    return {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}


SCENARIOS: list[dict] = [  # name, session, inputs, agent replies, settings; docs/pi-rules.md#runtime-decisions rows first
    {"name": "stop-total-183617", "agent": [{"text": "ok", "usage": {"totalTokens": 183617}}]},
    {"name": "stop-total-183616", "agent": [{"text": "ok", "usage": {"totalTokens": 183616}}]},
    {"name": "aborted-before-prompt", "input": ["a", "b"],
     "agent": [{"text": "x", "stopReason": "aborted", "usage": {"totalTokens": 190000}}, "ok"]},
    {"name": "aborted-after-run", "agent": [{"text": "x", "stopReason": "aborted", "usage": {"totalTokens": 190000}}]},
    {"name": "older-than-compaction", "input": ["a", "b"], "agent": [{"text": "ok", "usage": {"totalTokens": 190000}}]},
    {"name": "overflow-same-model", "agent": [OVERFLOW, "done"]},
    {"name": "overflow-stale-retry", "agent": [OVERFLOW, OVERFLOW]},
    {"name": "overflow-tried-twice", "session": "long-coding", "settings": {"keepRecentTokens": 8000},
     "agent": [OVERFLOW, OVERFLOW], "want": "fail"},
    {"name": "overflow-other-model-file", "preload": {"provider": "anthropic", "model": "claude-x", **OVERFLOW},
     "agent": ["ok"]},
    {"name": "overflow-same-model-file", "preload": {"provider": "oracle", "model": "oracle-model", **OVERFLOW},
     "agent": ["ok"]},
    {"name": "stop-input-210000", "agent": [{"text": "ok", "usage": {"input": 210000}}]},
    {"name": "stop-cache-overflow", "agent": [{"text": "ok", "usage": {"input": 10000, "cacheRead": 195000}}]},
    {"name": "length-output-100", "agent": [{"text": "cut", "stopReason": "length", "usage": {"output": 100}}, "done"]},
    {"name": "length-output-32000", "agent": [{"text": "cut", "stopReason": "length",
                                               "usage": {"input": 18000, "output": 32000}}]},
    {"name": "length-zero-output-overflow", "agent": [{"stopReason": "length", "usage": {"input": 198000}}, "done"]},
    {"name": "overloaded-anchor-190000", "pi": NO_RETRY, "files": True,
     "agent": [read_call(190000), {"stopReason": "error", "errorMessage": "overloaded"}]},
    {"name": "overloaded-no-anchor", "pi": NO_RETRY, "agent": [{"stopReason": "error", "errorMessage": "overloaded"}]},
    {"name": "window-0", "model": {"contextWindow": 0}, "agent": [{"text": "ok", "usage": {"totalTokens": 1}}]},
    {"name": "disabled", "settings": {"enabled": False}, "agent": [OVERFLOW]},
    {"name": "retry-4x-503", "pi": QUICK_RETRY, "agent": [{"stopReason": "error", "errorMessage": "503 overloaded"}]},
    {"name": "retry-2x-then-ok", "pi": QUICK_RETRY,
     "agent": [{"stopReason": "error", "errorMessage": "503"},
               {"stopReason": "error", "errorMessage": "socket hang up"},
               "fine"]},
    # (a transient error, then an overflow in the same run, makes pi 0.84.0 throw "Cannot continue
    # from message role: assistant": the compacted context ends with the first, retried error)
    {"name": "retry-then-permanent", "pi": QUICK_RETRY,
     "agent": [{"stopReason": "error", "errorMessage": "overloaded"},
               {"stopReason": "error", "errorMessage": "bad key"}]},
    {"name": "retry-then-aborted", "pi": QUICK_RETRY,
     "agent": [{"stopReason": "error", "errorMessage": "503"}, {"text": "x", "stopReason": "aborted"}]},
    {"name": "retry-max-1", "pi": {"retry": {"baseDelayMs": 3, "maxRetries": 1}},
     "agent": [{"stopReason": "error", "errorMessage": "timeout"}]},
    {"name": "retry-max-0", "pi": {"retry": {"baseDelayMs": 1, "maxRetries": 0}},
     "agent": [{"stopReason": "error", "errorMessage": "timeout"}]},
    {"name": "retry-disabled", "pi": NO_RETRY, "agent": [{"stopReason": "error", "errorMessage": "timeout"}]},
    {"name": "retry-overflow-text", "pi": QUICK_RETRY,
     "agent": [{"stopReason": "error", "errorMessage": "prompt is too long: 250000 tokens"}, "fine"]},
    {"name": "retry-resets-per-call", "pi": QUICK_RETRY, "files": True,
     "agent": [{"stopReason": "error", "errorMessage": "503"}, read_call(1000),
               {"stopReason": "error", "errorMessage": "503"}, {"stopReason": "error", "errorMessage": "503"},
               {"stopReason": "error", "errorMessage": "503"}, "fine"]},
    {"name": "tool-then-overflow", "files": True, "agent": [read_call(5000), OVERFLOW, "fine"]},
    {"name": "two-prompts-threshold", "input": ["a", "b", "c"], "files": True,
     "agent": [read_call(1000), {"text": "ok", "usage": {"totalTokens": 190000}}, "x", "y"]},
    {"name": "length-then-length", "session": "long-coding",
     "agent": [{"text": "c", "stopReason": "length", "usage": {"output": 5}}, bash_call("seq 1 1900; sleep 0.05"),
               {"text": "c", "stopReason": "length", "usage": {"output": 5}}, "done"]},
]


def preload_jsonl(session: str, reply: dict) -> str:
    """The session file plus one assistant error reply appended at its leaf."""
    lines = (REAL / f"{session}.jsonl").read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    message = {
        "role": "assistant", "content": [], "api": "oracle-capture", "provider": reply["provider"],
        "model": reply["model"], "usage": usage(0), "stopReason": "error",
        "errorMessage": reply["errorMessage"], "timestamp": 1767225600000,
    }
    entry = {"type": "message", "id": "feedface", "parentId": last["id"], "timestamp": "2026-01-01T00:00:00.000Z",
             "message": message}
    return "\n".join([*lines, json.dumps(entry)]) + "\n"


def scenario_request(s: dict) -> dict:
    session = s.get("session", "short-chat")
    req: dict[str, Any] = {
        "op": "agent_request", "newEntriesOnly": True, "seed": 7,
        "settings": {"keepRecentTokens": 100, **s.get("settings", {})},
        "input": s.get("input", ["go"]), "responses": {"agent": s["agent"], "summary": SUMMARY},
    }
    if "preload" in s:
        req["jsonl"] = preload_jsonl(session, s["preload"])
    else:
        req["sessionFile"] = str(REAL / f"{session}.jsonl")
    for key, field in (("pi", "piSettings"), ("model", "model")):
        if key in s:
            req[field] = s[key]
    if s.get("files"):
        req["writeFiles"] = {FILE: "hello\n"}
    return req


def _u16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def masked_entries(entries: list[dict]) -> list[dict]:
    out = []
    for entry in entries:
        if entry.get("type") == "compaction" and isinstance(entry.get("summary"), str):
            entry = {**entry, "summary": "#" * _u16(entry["summary"])}
        out.append(entry)
    return out


EVENT_KEYS = ("type", "reason", "willRetry", "aborted", "attempt", "maxAttempts", "delayMs", "success")


def trim_event(event: dict) -> dict:
    out = {k: event[k] for k in EVENT_KEYS if k in event}
    if event["type"] == "compaction_end":
        out["failed"] = "errorMessage" in event
    return out


def run_scenario(s: dict, tries: int = 12) -> dict:
    """One scenario; ``want`` re-runs it (real clock) until pi's trace shows that decision."""
    for _ in range(tries):
        result = oracle([scenario_request(s)])[0]
        events = [trim_event(e) for e in result["events"]]
        if s.get("want") != "fail" or any(e.get("failed") for e in events):
            break
    else:
        raise RuntimeError(f"scenario {s['name']}: pi never produced {s['want']!r}")
    request = scenario_request(s)
    base = {"session": s.get("session", "short-chat")}
    if "preload" in s:
        base["preload"] = json.loads(request["jsonl"].splitlines()[-1])
    return {
        "name": s["name"], **base,
        "settings": request["settings"], "retry": {**{"enabled": True, "maxRetries": 3, "baseDelayMs": 2000},
                                                     **(s.get("pi", {}).get("retry", {}))},
        "model": {"provider": "oracle", "id": "oracle-model", "contextWindow": WINDOW, "maxTokens": MAX_TOKENS,
                  **s.get("model", {})},
        "inputs": len(request["input"]),
        "kinds": [r["kind"] for r in result["requests"]],
        "events": events,
        "newEntries": masked_entries(result["newEntries"]),
    }


# =========================================================================== overrides

OVERRIDE_CWD = "/tmp/ctxp-runtime-vectors/cwd"
HOOKS: list[dict] = [
    {"name": "one", "hooks": [{"systemPrompt": "OVR-A"}]},
    {"name": "empty-wins", "hooks": [{"systemPrompt": "OVR-A"}, {"systemPrompt": ""}]},
    {"name": "none", "hooks": [None, {"message": {"customType": "note", "content": "n", "display": False}}]},
    {"name": "chain", "hooks": [{"systemPrompt": "OVR-A"}, None, {"systemPrompt": "OVR-B"}, {}]},
    {"name": "per-prompt", "hooks": [{"systemPrompt": "OVR-A"}, {"message": {"customType": "n", "content": "x"}}],
     "input": ["a", "b"]},
    {"name": "overflow-run", "hooks": [{}, {"systemPrompt": "OVR-C"}], "files": True,
     "agent": [read_call(1000), OVERFLOW, "fine"]},
    {"name": "retry-run", "hooks": [{"systemPrompt": "OVR-B"}], "pi": QUICK_RETRY, "files": True,
     "agent": [read_call(1000), {"stopReason": "error", "errorMessage": "503"}, "fine"]},
    {"name": "no-hooks-run", "hooks": [], "pi": QUICK_RETRY, "files": True,
     "agent": [read_call(1000), {"stopReason": "error", "errorMessage": "503"}, "fine"]},
]


def override_request(h: dict) -> dict:
    req: dict[str, Any] = {
        "op": "agent_request", "newEntriesOnly": True, "cwd": OVERRIDE_CWD, "packageDir": "/opt/pi",
        "sessionFile": str(REAL / "short-chat.jsonl"), "settings": {"keepRecentTokens": 100},
        "input": h.get("input", ["go"]), "beforeAgentStart": h["hooks"],
        "responses": {"agent": h.get("agent", ["ok"]), "summary": SUMMARY},
        "writeFiles": {f"{OVERRIDE_CWD}/.keep": "", **({FILE: "hello\n"} if h.get("files") else {})},
    }
    if "pi" in h:
        req["piSettings"] = h["pi"]
    return req


def run_overrides() -> list[dict]:
    results = oracle([override_request(h) for h in HOOKS])
    base = next(r["systemPrompt"] for r in results[-1]["requests"] if r["kind"] == "agent")
    ours = {"OVR-A", "OVR-B", "OVR-C", ""}

    def mask(prompt: str) -> str:
        if prompt in ours:
            return prompt
        if prompt != base:
            raise RuntimeError("an agent request carried a prompt that is neither ours nor the base prompt")
        return "<BASE>"

    out = []
    for h, result in zip(HOOKS, results):
        out.append({
            "name": h["name"], "hooks": [(x or {}).get("systemPrompt") for x in h["hooks"]],
            "inputs": len(override_request(h)["input"]),
            "requests": [
                {"kind": r["kind"], **({"systemPrompt": mask(r["systemPrompt"])} if r["kind"] == "agent" else {})}
                for r in result["requests"]
            ],
            "seen": [{"handler": s["handler"], "systemPrompt": mask(s["systemPrompt"])}
                     for s in result["beforeAgentStartSeen"]],
        })
    return out


# =========================================================================== main


def write(name: str, data: Any) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=1)
    (HERE / name).write_text(text + "\n", encoding="utf-8", errors="surrogatepass")
    print(f"wrote {name} ({len(text)} chars)")


def check(seed: int, count: int) -> int:
    """Compare fresh random cases (none from the vector file) with pipeline.runtime."""
    sys.path.insert(0, str(ROOT))
    from pipeline.runtime.classify import is_context_overflow, is_recoverable_length, is_retryable_error

    rng = random.Random(seed)
    cases = [error_case(fuzz_text(rng), rng.choice(WINDOWS)) for _ in range(count)] + usage_cases(rng, count // 3)
    bad = 0
    for case in classify(cases):
        message = {"role": "assistant", "content": [], "usage": usage(0), "stopReason": "error", **case["message"]}
        got = {
            "isContextOverflow": is_context_overflow(message, case["contextWindow"]),
            "isRecoverableLength": is_recoverable_length(message, case.get("maxTokens") or 0),
            "isRetryableAssistantError": is_retryable_error(message),
        }
        if got != case["expect"]:
            bad += 1
            print("MISMATCH", json.dumps(case, ensure_ascii=False), got)
    print(f"{len(cases)} fresh cases, {bad} mismatches")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=600)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if args.check:
        return check(args.seed, args.count)
    constants = oracle([{"op": "constants"}])[0]
    write("classify_vectors.json", {
        "pi": "0.84.0",
        "overflowPatterns": constants["overflowPatterns"],
        "retryDefaults": constants["settingsDefaults"]["retry"],
        "classify": classify(classify_cases(args.seed, args.count)),
        "should_compact": should_compact_cases(args.seed),
    })
    write("scenarios.json", [run_scenario(s) for s in SCENARIOS])
    write("overrides.json", run_overrides())
    return 0


if __name__ == "__main__":
    sys.exit(main())
