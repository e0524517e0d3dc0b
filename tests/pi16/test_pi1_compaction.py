"""``builtin:pi-1``'s summary requests against pi 1.6.0's (``tests/data/pi16/compaction.json``).

All 26 cases, 37 calls: the cases that compact a session (a shared file, or the case's
entries; ``keepRecentTokens``, ``reserveTokens``, per-model overrides through a profile that
extends pi-1, custom instructions, a thinking level, a model's output limit and reasoning),
the two that summarize given messages, and the branch summaries. Per call: its shape (history, update,
turn prefix), the serialized conversation exactly (thinking left out), the structure of every
text around it (our lines and pi's masked lines both become one placeholder; headings, blank
lines, tags and the custom-instructions line's user part stay), no budget from
``reserveTokens`` (the model's own limit) and the reasoning level asked for. Also the branch
summary requests (earlier summaries in their conversation masked as pi's lines are), the
thinking-free serialization on ``serialize``, and the budgets of both profiles.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.compaction.engine import planned_requests

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((ROOT / "tests" / "data" / "pi16" / "compaction.json").read_text(encoding="utf-8"))
PLAIN = {"keepRecentTokens", "reserveTokens"}


CASES = [c for c in DATA["summary_requests"] if c["op"] == "summary_request"]
MESSAGE_CASES = [c for c in DATA["summary_requests"] if c["op"] == "generate_summary"]
LABEL = compile_profile("builtin:pi-1").profile.summary.instructions.custom_label.render()


def structure(text: str, ours: bool) -> list[str]:
    """Each line: kept when empty, a heading, `---` or a bare tag; the custom line keeps its user part; else `L`."""
    out = []
    for line in text.split("\n"):
        if not line or line.startswith("#") or line == "---" or re.fullmatch(r"</?[\w-]+>", line):
            out.append(line)
        elif ours and line.startswith(LABEL + ": "):
            out.append("L: " + line[len(LABEL) + 2:])
        elif not ours and re.match(r"P16_\d+: ", line):
            out.append("L: " + line.split(": ", 1)[1])
        else:
            out.append("L")
    return out


def split(user_text: str) -> tuple[str, str, str]:
    """(shape, conversation, the rest)."""
    if user_text.startswith("# Conversation\n"):
        conversation, _, rest = user_text[len("# Conversation\n"):].partition("\n\n# Instructions\n")
        return "turn_prefix", conversation, "# Instructions\n" + rest
    body, _, rest = user_text.removeprefix("<conversation>\n").partition("\n</conversation>\n\n")
    return ("update" if rest.startswith("<previous-summary>") else "history"), body, rest


def session_file(case: dict, tmp: Path) -> Path:
    """The case's session: a shared file, or its entries written under a version 3 header."""
    if case["session"] is not None:
        return ROOT / case["session"]
    header = {"type": "session", "version": 3, "id": "00000000-0000-7000-8000-000000000000",
              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    path = tmp / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [header, *case["request"]["entries"]]), encoding="utf-8")
    return path


def _model_overrides(request: dict, tmp: Path) -> str:
    """A profile extending pi-1 with the case's ``modelOverrides`` in our keys; the window of
    the model the settings are for goes with its override (the profile checks it there)."""
    names = {"keepRecentTokens": "keep_recent_tokens", "reserveTokens": "reserve_tokens"}
    model, target = request.get("model", {}), request["settingsFor"]
    lines = ["extends: builtin:pi-1", "compaction:", "  model_overrides:"]
    for key, override in request["settings"]["modelOverrides"].items():
        ours = {names[k]: v for k, v in override.items()}
        if key == f"{target['provider']}/{target['id']}" and model.get("contextWindow"):
            ours["context_window"] = model["contextWindow"]
        lines.append(f"    {json.dumps(key)}: {json.dumps(ours)}")
    path = tmp / "overrides.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _pipeline(request: dict, tmp: Path):
    model, settings = request.get("model", {}), request.get("settings", {})
    overrides = {"compaction.keep_recent_tokens": settings.get("keepRecentTokens", 20000),
                 "compaction.reserve_tokens": settings.get("reserveTokens", 16384),
                 "summarizer.reasoning": bool(model.get("reasoning"))}
    if model.get("maxTokens"):
        overrides["summarizer.max_tokens"] = model["maxTokens"]
    if model.get("contextWindow") and "settingsFor" not in request:
        overrides["summarizer.context_window"] = model["contextWindow"]
    source = _model_overrides(request, tmp) if "settingsFor" in request else "builtin:pi-1"
    return compile_profile(source, overrides)


def our_requests(case: dict, tmp: Path) -> list:
    from pipeline.compaction.plan import plan_compaction
    from pipeline.session import SessionFile

    request = case["request"]
    pipeline = _pipeline(request, tmp)
    settings = pipeline.profile.compaction
    if "settingsFor" in request:  # what `pipeline compact --for-model` and the runtime resolve
        settings = settings.for_model(request["settingsFor"]["provider"], request["settingsFor"]["id"])
    plan = plan_compaction(SessionFile.open(session_file(case, tmp)).path_to(), settings)
    return planned_requests(plan, pipeline.profile, pipeline.profile.summarizer,
                            custom_instructions=request.get("customInstructions"),
                            thinking_level=request.get("thinkingLevel", "off"))  # the oracle's level, not the session's


def test_every_case_is_compared() -> None:
    branch = [c for c in DATA["summary_requests"] if c["op"] == "branch_summary_request"]
    assert (len(CASES), len(MESSAGE_CASES), len(branch)) == (17, 2, 7)
    assert len(DATA["summary_requests"]) == 26 and sum(len(c["calls"]) for c in DATA["summary_requests"]) == 37


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{Path(c['session'] or 'entries').stem}-{json.dumps({k: v for k, v in c['request'].items() if k != 'entries'}, sort_keys=True)[:60]}")
def test_summary_requests_have_pi16_structure(case: dict, tmp_path: Path) -> None:
    ours = our_requests(case, tmp_path)
    assert len(ours) == len(case["calls"])
    model = case["request"].get("model", {})
    for mine, theirs in zip(ours, case["calls"]):
        shape, conversation, rest = split(mine.user_text)
        want_shape, want_conversation, want_rest = split(theirs["userText"])
        assert (shape, want_shape) == (theirs["shape"], theirs["shape"])
        assert conversation == want_conversation
        assert structure(rest, True) == structure(want_rest, False)
        assert structure(mine.system_prompt, True) == structure(theirs["systemPrompt"], False)
        assert mine.reasoning == theirs["options"].get("reasoning")
        assert not theirs["has_max_tokens"]
        if model.get("maxTokens"):  # the model's own limit, not a share of reserve_tokens
            assert mine.max_tokens == model["maxTokens"]


@pytest.mark.parametrize("index", range(len(DATA["serialize"])))
def test_serialization_leaves_thinking_out(index: int) -> None:
    from pipeline.compaction.serialize import serialize_conversation
    from pipeline.compaction.requests import RequestContext
    from pipeline.session import parse_message

    case = DATA["serialize"][index]
    for name, shows in (("builtin:pi-1", False), ("default", True)):
        profile = compile_profile(name).profile
        assert profile.summary.serialize_thinking is shows
        options = RequestContext(summary=profile.summary, compaction=profile.compaction).serialize_options
        text = serialize_conversation([parse_message(m) for m in case["messages"]], options)
        if not shows:  # the vector file cannot hold a lone surrogate (a cut emoji): pi's JSON dropped it
            assert re.sub("[\ud800-\udfff]", "", text) == case["pi16"]
        else:
            thinking = any(b.get("type") == "thinking" and b["thinking"] for m in case["messages"]
                           if isinstance(m.get("content"), list) for b in m["content"])
            assert (profile.summary.labels.thinking in text) is thinking


def test_the_default_profile_keeps_084_budgets() -> None:
    default = compile_profile("default", {"summarizer.max_tokens": 64000})
    pi1 = compile_profile("builtin:pi-1", {"summarizer.max_tokens": 64000})
    case = next(c for c in CASES if (c["session"] or "").endswith("short-chat.jsonl"))
    budgets = {}
    for pipe in (default, pi1):
        plan = pipe.plan_compaction(ROOT / case["session"], keep_recent_tokens=100)
        budgets[pipe.profile.name] = [r.max_tokens for r in planned_requests(plan, pipe.profile, pipe.profile.summarizer)]
    assert budgets == {"default": case["pi084_maxTokens"], "pi-1": [64000, 64000]}


def test_branch_summaries_take_the_models_limit_under_pi1() -> None:
    from pipeline.compaction.requests import RequestContext, branch_request
    from pipeline.session import parse_message

    messages = [parse_message({"role": "user", "content": "hello", "timestamp": 1})]
    budgets = {}
    for name in ("default", "builtin:pi-1"):
        profile = compile_profile(name).profile
        for model_max in (None, 50000):
            ctx = RequestContext(summary=profile.summary, compaction=profile.compaction, max_output_tokens=model_max)
            budgets[(profile.name, model_max)] = branch_request(messages, ctx).max_tokens
    assert budgets == {("default", None): 2048, ("default", 50000): 2048, ("pi-1", None): 2048, ("pi-1", 50000): 50000}


BRANCH_CASES = [c for c in DATA["summary_requests"] if c["op"] == "branch_summary_request"]


class Recorder:
    """A summary client that answers from the vector's responses and keeps every request."""

    provider = "recorder"

    def __init__(self, responses: list) -> None:
        self.responses, self.requests = list(responses), []

    def build_body(self, request):  # pragma: no cover - not used by the branch path
        return {}

    def complete(self, request):
        from pipeline.llm.types import Completion
        from pipeline.session import Usage

        self.requests.append(request)
        answer = self.responses.pop(0)
        return Completion(answer["text"], Usage.from_json(answer.get("usage") or {}), "stop", "m", "recorder")


@pytest.mark.parametrize("case", BRANCH_CASES, ids=lambda c: json.dumps(c["request"], sort_keys=True)[:70])
def test_branch_requests_have_pi16_structure(case: dict) -> None:
    from pipeline.compaction.branch import branch_entries, summarize_branch
    from pipeline.compaction.engine import request_context
    from pipeline.session import ContextTexts, SessionFile, parse_entry

    request = case["request"]
    pipe = compile_profile("builtin:pi-1", {"summary.on_schema_violation": "warn"})  # pi makes no corrective call
    if case["session"]:
        session = SessionFile.open(ROOT / case["session"])
        entries = branch_entries(session.tree, request["oldLeafId"], request["targetId"]).entries
    else:  # the oracle summarizes the given entries as the abandoned branch
        entries = tuple(parse_entry(raw) for raw in request["entries"])
    ctx = request_context(pipe.profile, pipe.profile.compaction, pipe.profile.summarizer)
    client = Recorder(case["responses"])
    summarize_branch(entries, client, ctx, ContextTexts.from_profile(pipe.profile),
                     context_window=request.get("model", {}).get("contextWindow"),
                     custom_instructions=request.get("customInstructions"),
                     replace_instructions=bool(request.get("replaceInstructions")))
    assert len(client.requests) == len(case["calls"])
    for mine, theirs in zip(client.requests, case["calls"]):
        _, conversation, rest = split(mine.user_text)
        _, want_conversation, want_rest = split(theirs["userText"])
        assert masked_lines(conversation, pipe.profile) == re.sub(r"P16_\d+", "P16", want_conversation)
        assert structure(rest, True) == structure(want_rest, False)
        assert structure(mine.system_prompt, True) == structure(theirs["systemPrompt"], False)


def masked_lines(text: str, profile) -> str:
    """Our summary texts inside a conversation (earlier summaries put back) as pi's masked lines."""
    summary = profile.summary
    texts = [summary.projection.compaction.open, summary.projection.compaction.close, summary.projection.branch.open,
             summary.projection.branch.close, summary.branch_preamble, summary.no_history, summary.branch_empty]
    lines = {line for t in texts for line in t.render().split("\n") if line and not re.fullmatch(r"</?[\w-]+>", line)}
    for line in sorted(lines, key=len, reverse=True):
        text = text.replace(line, "P16")
    return text


@pytest.mark.parametrize("case", MESSAGE_CASES, ids=["first", "update"])
def test_message_summaries_have_pi16_structure(case: dict) -> None:
    """``generate_summary`` on given messages: the history or update request."""
    from pipeline.compaction.requests import history_request
    from pipeline.compaction.engine import request_context
    from pipeline.session import ContextTexts, convert_to_llm, parse_message

    request, model = case["request"], case["request"].get("model", {})
    pipe = compile_profile("builtin:pi-1", {"summarizer.reasoning": bool(model.get("reasoning"))})
    ctx = request_context(pipe.profile, pipe.profile.compaction, pipe.profile.summarizer, request.get("thinkingLevel"))
    messages = convert_to_llm([parse_message(m) for m in request["messages"]], ContextTexts.from_profile(pipe.profile))
    mine = history_request(messages, ctx, previous_summary=request.get("previousSummary"),
                           custom_instructions=request.get("customInstructions"))
    (theirs,) = case["calls"]
    shape, conversation, rest = split(mine.user_text)
    want_shape, want_conversation, want_rest = split(theirs["userText"])
    assert shape == want_shape == theirs["shape"]
    mine_text = re.sub("[\ud800-\udfff]", "", masked_lines(conversation, pipe.profile))  # a cut emoji: pi's JSON dropped it
    assert mine_text == re.sub(r"P16_\d+", "P16", want_conversation)
    assert structure(rest, True) == structure(want_rest, False)
    assert structure(mine.system_prompt, True) == structure(theirs["systemPrompt"], False)
    assert mine.reasoning == theirs["options"].get("reasoning") and not theirs["has_max_tokens"]
