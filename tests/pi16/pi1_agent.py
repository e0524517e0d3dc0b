"""Our runtime on pi 1.6.0's recorded agent runs where the system-prompt sections change
(``tests/data/pi16/agent.json``), through the loopback server, with ``builtin:pi-1``.

:func:`run_scenario` sets up what pi had (the fixture project, the tools, the hooks, the
session), sends every prompt through our :class:`~pipeline.runtime.loop.Agent` against a
:class:`~pipeline.testing.loopback.LoopbackServer` on 127.0.0.1 and returns what each model
request held and the entries appended, reduced the way the generator reduced pi's
(``gen_agent_vectors.py``: texts masked, tools by name, content blocks flattened).

The fixture: each of pi's runs had a fresh directory holding just the files its request
writes (the generator clears it before every request); :func:`write_fixture` writes the
same files under a temporary directory.

Tools are the host's own: ``read`` reads the fixture; each brings pi's snippet and
guidelines as their mask tokens (``<SNIP_read>``, ``<GL_edit_1>``), so the vectors' tokens
are what our prompt holds.
"""

from __future__ import annotations

import json
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi1_masks import Masks
from pi1_shapes import flat_content

from pipeline.llm.chat import ChatClient
from pipeline.prompt.discover import discover
from pipeline.runtime.conversation import Conversation
from pipeline.runtime.host import HookResult, ModelInfo, Tool
from pipeline.runtime.loop import Agent
from pipeline.runtime.system import frame_update
from pipeline.runtime.tools import SCHEMAS
from pipeline.session import SessionFile
from pipeline.testing.loopback import LoopbackServer
from pipeline.model.run_plan import RunPlan

ROOT = Path(__file__).resolve().parents[2]
AGENT = json.loads((ROOT / "tests" / "data" / "pi16" / "agent.json").read_text(encoding="utf-8"))
FIX = AGENT["fixture_root"]
DEFAULT_TOOLS = ["read", "bash", "edit", "write"]
FRESH_ID = "019a0000-0000-7000-8000-0000000000bb"
MASKS = Masks()
PROFILE = MASKS.pipeline.profile
PATCH_TEXTS = PROFILE.system_prompt.patch
GUIDELINES = {name: tuple(sorted(t for t in AGENT["masks"] if t.startswith(f"<GL_{name}_")))
              for name in ("read", "bash", "edit", "write", "grep", "find", "ls")}


@dataclass
class Captured:
    """One model request as our runtime made it."""

    system_prompt: str
    tools: list
    messages: list
    sections: dict | None  # the replayed record (None: a forced prompt)
    body: Any = None


@dataclass
class Run:
    tmp: Path
    requests: list = field(default_factory=list)
    entries: list = field(default_factory=list)
    session_path: Path | None = None

    def mask(self, value: Any) -> Any:
        """Our text in pi's masked space: our sentences → pi's tokens, our paths → pi's."""
        if value is None:
            return None
        if isinstance(value, dict):
            return {k: self.mask(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.mask(v) for v in value]
        if isinstance(value, str):
            return MASKS.mask(value).replace(str(self.tmp), FIX)
        return value


def fixture_files(request: dict) -> dict[str, str]:
    """The files of a recorded request (paths relative to the fixture root)."""
    files = {}
    for path, text in (request.get("writeFiles") or {}).items():
        files[str(Path(path).relative_to(FIX))] = text
    return files


def write_fixture(tmp: Path, request: dict) -> None:
    for name, text in fixture_files(request).items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def tools_for(names: list, cwd: Path) -> list[Tool]:
    def read(arguments: Any) -> str:
        return (cwd / arguments["path"]).read_text(encoding="utf-8")

    def unused(arguments: Any) -> str:
        raise AssertionError("the recorded runs call only read")

    return [Tool(name=n, parameters=SCHEMAS[n], function=read if n == "read" else unused, description=f"<DESC_{n}>",
                 snippet=f"<SNIP_{n}>", guidelines=GUIDELINES[n]) for n in names]


def hooks_for(request: dict, run: Run) -> list:
    """pi's inline ``before_agent_start`` handlers: each item on its ``onCalls`` (1-based) only."""
    out = []
    for item in request.get("beforeAgentStart") or []:
        calls = [0]

        def hook(start: Any, item: dict = item, calls: list = calls) -> HookResult | None:
            calls[0] += 1
            if item.get("onCalls") and calls[0] not in item["onCalls"]:
                return None
            return HookResult(system_prompt=item.get("systemPrompt"), sections=item.get("sections") or {},
                              guidelines=tuple(item.get("promptGuidelines") or ()))
        out.append(hook)
    return out


def model(mid: bool) -> ModelInfo:
    return ModelInfo(id="oracle-model", provider="oracle", api="oracle-capture", context_window=200000,
                     max_tokens=32000, input=("text", "image"), mid_conversation_system=mid)


def run_scenario(request: dict, tmp: Path, *, wire: str, mid: bool, session: Path | None = None,
                 name: str = "session.jsonl") -> Run:
    """Our runtime on one recorded request in the fixture root ``tmp``; ``session``: a session
    file to resume (copied to ``name``)."""
    run = Run(tmp)
    write_fixture(tmp, request)
    cwd = tmp / Path(request["cwd"]).relative_to(FIX)
    cwd.mkdir(parents=True, exist_ok=True)
    path = tmp / name
    if session is not None:
        shutil.copyfile(session, path)
        file = SessionFile.open(path)
    else:
        file = SessionFile.create(path, cwd=str(cwd), session_id=FRESH_ID)
    before = len(file.entries)
    found = discover(str(cwd), str(tmp / "agent"))
    replies = request.get("responses") or ["FAKE RESPONSE"]
    with LoopbackServer(replies) as server:
        conv = Conversation(
            RunPlan.of(PROFILE), file, model=model(mid), cwd=str(cwd), tools=tools_for(request.get("tools") or DEFAULT_TOOLS, cwd),
            skills=found.skills, context_files=found.context_files, custom_prompt=request.get("systemPrompt"),
            append_prompts=(request["appendSystemPrompt"],) if request.get("appendSystemPrompt") else (),
            before_agent_start=hooks_for(request, run), clock=lambda: 1787220000000.0,
        )
        _capture(conv, run)
        base = server.openai_base_url if wire == "openai" else server.anthropic_base_url
        client = ChatClient(wire, model=conv.model.target(), aborted_text=PROFILE.runtime.aborted.render(), base_url=base,
                            env={"OPENAI_API_KEY": "loopback", "ANTHROPIC_API_KEY": "loopback"},
                            clock=lambda: 1787220000000.0)
        agent = Agent(conv, client, wire=wire)
        for text in request["input"]:
            agent.run(text, cancel=threading.Event())
        for captured, received in zip(run.requests, server.received):
            captured.body = received.body
        assert len(server.received) == len(run.requests)
    run.entries = [dict(e.raw) for e in file.entries[before:]]
    run.session_path = path
    return run


def _capture(conv: Conversation, run: Run) -> None:
    original = conv.next_request

    def next_request(wire: Any = None) -> Any:
        request = original(wire)
        sections = None if conv.prompts.forced() else dict(conv.prompts.recorded.log.replay().record)
        run.requests.append(Captured(request.system_prompt, [t.name for t in request.tools],
                                     json.loads(json.dumps(request.messages)), sections))
        return request

    conv.next_request = next_request  # type: ignore[method-assign]


# --------------------------------------------------------------------------- reduction (as the generator's)


def reduce_message(run: Run, m: dict) -> dict:
    if m["role"] == "system":
        out: dict[str, Any] = {"role": "system", "content": run.mask(m.get("content", ""))}
        if m.get("sections"):
            out["sections"] = run.mask(m["sections"])
            out["sectionOrder"] = list(m["sections"])
            out["update"] = run.mask(frame_update(m, PATCH_TEXTS))
        for key in ("toolsAdded", "toolsRemoved"):
            if key in m:
                out[key] = [t["name"] for t in m[key]]
        return out
    return {"role": m["role"], "text": flat_content(m.get("content"))}


def reduce_entry(run: Run, e: dict) -> dict:
    if e["type"] == "message":
        return {"type": "message", **reduce_message(run, e["message"])}
    return {k: v for k, v in e.items() if k in ("type", "thinkingLevel", "provider", "modelId", "targetId", "replacement")}


# --------------------------------------------------------------------------- checks against pi's


def leading_sections(scenario: dict) -> dict:
    """The sections of the system message leading pi's transcript (none: ``{}``)."""
    if scenario in AGENT["mid_run"]:
        entries = [e for e in scenario["newEntries"] if e["type"] == "message"]
        return entries[0]["sections"] if entries and entries[0]["role"] == "system" else {}
    if scenario["name"].startswith("session_from_084"):
        return {}
    assert scenario["requests"][0]["messages"][0]["role"] != "system"
    return next(e["sections"] for e in AGENT["phase_one"]["entries"] if e.get("role") == "system")


def check_run(run: Run, scenario: dict, mid: bool) -> None:
    """Every request and the entries appended, against pi's (see the test module's docstring)."""
    assert len(run.requests) == len(scenario["requests"])
    prompts = set()
    for ours, pi in zip(run.requests, scenario["requests"]):
        assert run.mask(ours.sections) == pi["systemSections"]
        assert list(ours.sections or []) == pi["systemSectionOrder"]
        assert ours.tools == pi["tools"]
        messages = [reduce_message(run, m) for m in ours.messages]
        if not mid or pi["systemSections"] is None:  # one system prompt: pi's replay (or the forced one)
            assert run.mask(ours.system_prompt) == pi["systemPrompt"]
            assert messages == [m for m in pi["messages"] if m["role"] != "system"]
        else:
            assert messages == pi["messages"]
            assert sum(m["role"] == "system" for m in messages) == pi["midSystemMessages"]
            prompts.add(ours.system_prompt)
            assert run.mask(ours.system_prompt) == "\n\n".join(t for t in leading_sections(scenario).values() if t)
    assert len(prompts) <= 1  # the leading prompt never changes: the cached prefix survives
    assert [reduce_entry(run, e) for e in run.entries] == scenario["newEntries"]


def check_wire(run: Run, wire: str, mid: bool) -> None:
    """The body sent: the system prompt and, for a mid-conversation model, every later system
    message as its framed update, where pi-ai puts it (OpenAI: in place; Anthropic: held to
    just before the next assistant message)."""
    for ours in run.requests:
        body = ours.body
        updates = [frame_update(m, PATCH_TEXTS) for m in ours.messages if m["role"] == "system"] if mid else []
        if wire == "openai":
            head = [body["messages"][0]["content"]] if ours.system_prompt else []
            assert head == ([ours.system_prompt] if ours.system_prompt else [])
            assert [m["content"] for m in body["messages"][len(head):] if m["role"] == "system"] == updates
            roles = [m["role"] for m in body["messages"][len(head):]]
            assert roles == [{"toolResult": "tool"}.get(m["role"], m["role"]) for m in ours.messages
                             if m["role"] != "system" or mid]
        else:
            assert [b["text"] for b in body.get("system", [])] == ([ours.system_prompt] if ours.system_prompt else [])
            assert [m["content"][0]["text"] for m in body["messages"] if m["role"] == "system"] == updates
            roles = [m["role"] for m in body["messages"]]
            for i, role in enumerate(roles):
                if role == "system":  # after a user message, before the next assistant one (or last)
                    assert roles[i - 1] in ("user", "system")
                    assert i + 1 == len(roles) or roles[i + 1] in ("assistant", "system")
