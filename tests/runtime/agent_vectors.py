"""Our agent loop on pi's recorded agent runs (``tests/data/agent_loop``), through the loopback server.

:func:`replay_scenario` sets up what pi had (the session file, the fixture project, the
tools, the model, the compaction and retry settings, the before-agent-start hooks), feeds
pi's scripted replies to our :class:`~pipeline.runtime.loop.Agent` through a
:class:`~pipeline.testing.loopback.LoopbackServer` on 127.0.0.1 (agent turns in the
OpenAI or Anthropic wire format, summary calls on a second server) and returns, per step,
what our side sent, emitted and appended, for :mod:`test_agent_loop_vectors` to compare.

Tool calls of ``read`` and ``ls`` run our own Python tools on the fixture; ``bash``,
``edit`` and ``write`` answer with pi's recorded results (their texts are pi's words), and a
successful ``write`` also writes its file, so later calls see what pi's did.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pipeline import compile_profile
from pipeline.llm.factory import make_client
from pipeline.llm.chat import ChatClient
from pipeline.prompt.discover import discover
from pipeline.runtime.conversation import Conversation
from pipeline.runtime.host import HookResult, ModelInfo, Tool, ToolOutput
from pipeline.runtime.loop import Agent
from pipeline.runtime import events as ev
from pipeline.runtime.tools import SCHEMAS, builtin_tools
from pipeline.session import SessionFile
from pipeline.testing.loopback import LoopbackServer
from pipeline.model.run_plan import RunPlan

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "agent_loop"
REAL = ROOT / "tests" / "data" / "sessions" / "real"
FRESH_ID = "01960000-0000-7000-8000-0000000000aa"
DEFAULT_TOOLS = ["read", "bash", "edit", "write"]
OWN_TOOLS = ("read", "ls")


def scenarios() -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(DATA.glob("*.json")) if p.name != "manifest.json"]


# --------------------------------------------------------------------------- recording


class _Server(LoopbackServer):
    """A loopback server that also notes, in one list shared by both servers, who was asked when."""

    def __init__(self, kind: str, replies: Any, order: list, lock: threading.Lock) -> None:
        super().__init__(replies if isinstance(replies, list) else [replies])
        self.kind, self.order, self.order_lock = kind, order, lock

    def _take(self, received: Any) -> tuple[int, Any]:
        with self.order_lock:
            self.order.append((self.kind, len(self.received)))
        return super()._take(received)


class _Client:
    """The agent's model client: a :class:`ChatClient`, plus a cancel when pi's reply was an abort."""

    def __init__(self, inner: ChatClient, replies: list, conversation: Conversation, sent: list,
                 server: LoopbackServer) -> None:
        self.inner, self.replies, self.conversation, self.sent = inner, replies, conversation, sent
        self.server = server

    def send(self, body: Any, *, cancel: threading.Event | None = None) -> dict:
        index = len(self.sent)
        reply = self.replies[min(index, len(self.replies) - 1)]
        level = self.conversation.model.runnable_level(self.conversation.thinking_level)
        self.sent.append({"body": json.loads(json.dumps(body)), "base": self.conversation.base_prompt,
                          "system": self.conversation.system_prompt, "reasoning": None if level == "off" else level})
        if isinstance(reply, dict) and reply.get("stopReason") == "aborted" and cancel is not None:
            cancel_after_request(self.server, index + 1, cancel)
        return self.inner.send(body, cancel=cancel)


def cancel_after_request(server: LoopbackServer, count: int, cancel: threading.Event, settle: float = 0.5) -> None:
    """Set ``cancel`` once the server has taken its ``count``-th request and had time to send
    the first part of the answer (the user's Ctrl-C while the reply streams)."""
    def wait() -> None:
        deadline = time.monotonic() + 20
        while len(server.received) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(settle)
        cancel.set()

    threading.Thread(target=wait, daemon=True).start()


@dataclass
class StepResult:
    wire: str
    cwd: str
    sent: list = field(default_factory=list)  # agent requests: body, base prompt, system prompt
    order: list = field(default_factory=list)  # ("agent"|"summary", n) in the order the servers were asked
    summary_bodies: list = field(default_factory=list)
    events: list = field(default_factory=list)
    entries: list = field(default_factory=list)  # raw JSON of the entries appended in this step
    render: Any = None
    hook_seen: tuple = ()
    base_prompts: list = field(default_factory=list)


# --------------------------------------------------------------------------- set-up


def _pipeline(request: dict, profile: str = "default") -> Any:
    """The profile (the default: pi 0.84.0's) with pi's compaction and retry settings of the run (one override layer)."""
    settings, retry = request.get("settings") or {}, (request.get("piSettings") or {}).get("retry") or {}
    return compile_profile(profile, overrides={
        "compaction.enabled": settings.get("enabled", True),
        "compaction.reserve_tokens": settings.get("reserveTokens", 16384),
        "compaction.keep_recent_tokens": settings.get("keepRecentTokens", 20000),
        "retry.enabled": retry.get("enabled", True), "retry.max_retries": retry.get("maxRetries", 3),
        "retry.base_delay_ms": retry.get("baseDelayMs", 2000),
        "summary.on_schema_violation": "warn",  # pi's scripted summaries follow no schema
    })


def model_info(request: dict) -> ModelInfo:
    m = {"id": "oracle-model", "provider": "oracle", "api": "oracle-capture", "reasoning": False,
         "contextWindow": 200000, "maxTokens": 32000, **(request.get("model") or {})}
    mid = bool((m.get("compat") or {}).get("supportsMidConvoSystemMessages"))  # pi-ai's compat flag
    return ModelInfo(id=m["id"], provider=m["provider"], api=m["api"], reasoning=m["reasoning"],
                     context_window=m["contextWindow"], max_tokens=m["maxTokens"], input=("text", "image"),
                     mid_conversation_system=mid)


def _clock(request: dict):
    if request.get("now"):
        pinned = float(int(datetime.fromisoformat(request["now"].replace("Z", "+00:00")).timestamp() * 1000))
        return lambda: pinned
    ticks = iter(range(10**9))
    start = 1787220000000.0
    return lambda: start + next(ticks)


def _recorded_results(step: dict) -> dict:
    results = {}
    for entry in step["newEntries"]:
        message = entry.get("message") or {}
        if message.get("role") == "toolResult":
            results[message["toolCallId"]] = message
    return results


def _tools(names: list, cwd: Path, profile: Any, step: dict) -> list[Tool]:
    own = {t.name: t for t in builtin_tools([n for n in names if n in OWN_TOOLS], cwd, RunPlan.of(profile))}
    recorded = _recorded_results(step)
    queues: dict = {}
    for entry in step["newEntries"]:
        for block in (entry.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") == "toolCall" and block["id"] in recorded:
                key = (block["name"], json.dumps(block["arguments"], sort_keys=True))
                queues.setdefault(key, []).append(recorded[block["id"]])

    def replay(name: str):
        def run(arguments: Any) -> ToolOutput:
            result = queues[(name, json.dumps(arguments, sort_keys=True))].pop(0)
            if name == "write" and not result["isError"]:
                _write_fixture(cwd, {arguments["path"]: arguments["content"]})  # what pi's write did on disk
            return ToolOutput(content=result["content"], is_error=result["isError"], details=result.get("details"))
        return run

    return [own.get(n) or Tool(name=n, parameters=SCHEMAS[n], function=replay(n)) for n in names]


def _hooks(request: dict) -> list:
    """pi's inline ``before_agent_start`` handlers: a prompt, a message, and (pi 1.x) sections and
    guidelines, on the 1-based calls ``onCalls`` only when given."""
    out = []
    for item in request.get("beforeAgentStart") or []:
        calls = [0]

        def hook(start: Any, item: dict = item, calls: list = calls) -> HookResult | None:
            calls[0] += 1
            if item.get("onCalls") and calls[0] not in item["onCalls"]:
                return None
            return HookResult(item.get("systemPrompt"), item.get("message"), sections=item.get("sections") or {},
                              guidelines=tuple(item.get("promptGuidelines") or ()))
        out.append(hook)
    return out


def _session(scenario: dict, tmp: Path, cwd: Path) -> SessionFile:
    spec = scenario["session"]
    if spec is None:
        return SessionFile.create(tmp / "session.jsonl", cwd=str(cwd), session_id=FRESH_ID)
    shutil.copyfile(REAL / spec["file"], tmp / "session.jsonl")
    session = SessionFile.open(tmp / "session.jsonl")
    if spec.get("leafId"):
        session.branch(spec["leafId"])
    return session


def _write_fixture(cwd: Path, files: dict) -> None:
    for name, text in (files or {}).items():
        path = cwd / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def wire_for(scenario: dict, index: int) -> str:
    """Anthropic for runs with aborted replies (its stream reports usage first), else alternating."""
    for step in scenario["steps"]:
        agent = (step["request"].get("responses") or {}).get("agent") or []
        if any(isinstance(r, dict) and r.get("stopReason") == "aborted" for r in agent):
            return "anthropic"
    return "openai" if index % 2 == 0 else "anthropic"


# --------------------------------------------------------------------------- the run


def replay_scenario(scenario: dict, tmp: Path, wire: str, *, profile: str = "default",
                    adapt_tools: Any = None) -> list[StepResult]:
    """``adapt_tools``: ``tools → tools``, applied to the tools of every step."""
    cwd, agent_dir = tmp / "proj", tmp / "agent"
    cwd.mkdir()
    agent_dir.mkdir()
    session = _session(scenario, tmp, cwd)
    return [_run_step(step, session, cwd, agent_dir, wire, profile, adapt_tools) for step in scenario["steps"]]


def _run_step(step: dict, session: SessionFile, cwd: Path, agent_dir: Path, wire: str, profile_name: str = "default",
              adapt_tools: Any = None) -> StepResult:
    request = step["request"]
    _write_fixture(cwd, request.get("writeFiles"))
    pipeline = _pipeline(request, profile_name)
    profile = pipeline.profile
    found = discover(str(cwd), str(agent_dir))
    templates = pipeline.load_templates(cwd, agent=agent_dir).templates
    responses = request.get("responses") or {}
    agent_replies = responses.get("agent") or [""]
    agent_replies = agent_replies if isinstance(agent_replies, list) else [agent_replies]
    result = StepResult(wire, str(cwd))
    before = len(session.entries)
    lock = threading.Lock()
    model = model_info(request)
    clock = _clock(request)
    with _Server("agent", agent_replies, result.order, lock) as agent_server, \
            _Server("summary", responses.get("summary") or [""], result.order, lock) as summary_server:
        summarizer = make_client("openai", model=model.id, base_url=summary_server.openai_base_url,
                                 env={"OPENAI_API_KEY": "loopback"}, max_retries=0)
        tools = _tools(request["tools"] if "tools" in request else DEFAULT_TOOLS, cwd, profile, step)
        conv = Conversation(
            RunPlan.of(profile), session, model=model, cwd=str(cwd), tools=adapt_tools(tools) if adapt_tools else tools,
            summarizer=summarizer, templates=templates, skills=found.skills, context_files=found.context_files,
            before_agent_start=_hooks(request), clock=clock, thinking_level=request.get("thinkingLevel"),
        )
        inner = ChatClient(wire, model=model.target(), aborted_text=profile.runtime.aborted.render(),
                           base_url=agent_server.openai_base_url if wire == "openai" else agent_server.anthropic_base_url,
                           env={"OPENAI_API_KEY": "loopback", "ANTHROPIC_API_KEY": "loopback"}, clock=clock)
        agent = Agent(conv, _Client(inner, agent_replies, conv, result.sent, agent_server), wire=wire,
                      listener=result.events.append)
        inputs = request["input"] if isinstance(request["input"], list) else [request["input"]]
        for text in inputs:
            agent.run(text, cancel=threading.Event())
            result.hook_seen += tuple((seen, conv.base_prompt) for seen in conv.prompts.hook_seen)
        result.summary_bodies = [r.body for r in summary_server.received]
        result.render = conv.prompts.render_context()
        agent_server.release()
    result.entries = [dict(e.raw) for e in session.entries[before:]]
    return result


POLICY_EVENTS = (ev.CompactionStart, ev.CompactionEnd, ev.RetryStart, ev.RetryEnd)


def policy_events(events: list) -> list[dict]:
    """Our compaction and retry events in pi's vocabulary (the fields pi's events share with ours)."""
    out = []
    for e in events:
        if isinstance(e, ev.CompactionStart):
            out.append({"type": "compaction_start", "reason": e.reason})
        elif isinstance(e, ev.CompactionEnd):
            out.append({"type": "compaction_end", "reason": e.reason, "willRetry": e.will_retry,
                        "failed": e.error is not None,
                        **({"tokensBefore": e.tokens_before, "tokensAfter": e.tokens_after} if e.entry_id else {})})
        elif isinstance(e, ev.RetryStart):
            out.append({"type": "auto_retry_start", "attempt": e.attempt, "maxAttempts": e.max_attempts,
                        "delayMs": e.delay_ms})
        elif isinstance(e, ev.RetryEnd):
            out.append({"type": "auto_retry_end", "success": e.success, "attempt": e.attempt})
    return out


def pi_events(events: list) -> list[dict]:
    out = []
    for e in events:
        if e["type"] == "compaction_start":
            out.append({"type": e["type"], "reason": e["reason"]})
        elif e["type"] == "compaction_end":
            result = e.get("result")  # the estimate after compacting: every message of the new context
            out.append({"type": e["type"], "reason": e["reason"], "willRetry": e["willRetry"],
                        "failed": "errorMessage" in e,
                        **({"tokensBefore": result["tokensBefore"], "tokensAfter": result["estimatedTokensAfter"]}
                           if result else {})})
        elif e["type"] == "auto_retry_start":
            out.append({k: e[k] for k in ("type", "attempt", "maxAttempts", "delayMs")})
        elif e["type"] == "auto_retry_end":
            out.append({k: e[k] for k in ("type", "success", "attempt")})
    return out
