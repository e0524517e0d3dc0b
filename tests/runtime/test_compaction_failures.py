"""How a compaction's failure reaches the caller (issue 19, item 7), and constructors that write nothing.

A provider's failure (our LLM errors, any :class:`~pipeline.errors.PipelineError` from the
summary client) is the expected one: an automatic compaction ends with the error in its
event and the run goes on without a retry; a manual one raises it. Anything else is a bug:
the event says so and the exception propagates, never a silent "compaction failed".
"""

from __future__ import annotations

import pytest

from pipeline import compile_profile
from pipeline.errors import ProviderError
from pipeline.llm.errors import LLMConnectionError
from pipeline.runtime.conversation import Conversation
from pipeline.runtime.host import ModelInfo
from pipeline.runtime.loop import Agent
from pipeline.runtime import events as ev
from pipeline.session import SessionFile
from pipeline.model.run_plan import RunPlan

PROFILE = compile_profile("default", overrides={"compaction.keep_recent_tokens": 50,
                                                "compaction.reserve_tokens": 1000}).profile
MODEL = ModelInfo(id="m", provider="local", context_window=4000, max_tokens=1000)


class Failing:
    """A summary client whose every call raises ``error``."""

    def __init__(self, error: BaseException) -> None:
        self.error, self.calls = error, 0

    def build_body(self, request):
        return {}

    def complete(self, request):
        self.calls += 1
        raise self.error


def _reply(text: str, tokens: int) -> dict:
    usage = {"input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "openai-completions",
            "provider": "local", "model": "m", "usage": usage, "stopReason": "stop"}


def _over_threshold(tmp_path, error):
    """A conversation whose second run ends over the threshold; its summarizer raises ``error``."""
    events: list = []
    session = SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    conv = Conversation(RunPlan.of(PROFILE), session, model=MODEL, cwd=str(tmp_path), summarizer=Failing(error),
                        listener=events.append)
    conv.prompt("tell me everything about this project " * 10)
    conv.record(_reply("a long answer " * 40, 500))
    conv.prompt("and more " * 10)
    step = conv.record(_reply("another long answer " * 40, 3500))
    assert step.action == "compact"
    return conv, step, events


def _ends(events):
    return [e for e in events if isinstance(e, ev.CompactionEnd)]


def test_a_provider_failure_ends_an_automatic_compaction_with_its_error(tmp_path):
    conv, step, events = _over_threshold(tmp_path, LLMConnectionError("the summarizer is unreachable"))
    before = (tmp_path / "s.jsonl").read_bytes()
    assert conv.auto_compact(step) is False  # no retry, the run stops
    [end] = _ends(events)
    assert end.entry_id is None and "the summarizer is unreachable" in end.error
    assert (tmp_path / "s.jsonl").read_bytes() == before
    assert conv.summarizer.calls >= 1


def test_a_provider_failure_of_a_manual_compaction_is_raised(tmp_path):
    conv, _, events = _over_threshold(tmp_path, LLMConnectionError("the summarizer is unreachable"))
    with pytest.raises(ProviderError, match="the summarizer is unreachable"):
        conv.compact()
    assert "the summarizer is unreachable" in _ends(events)[-1].error


@pytest.mark.parametrize("manual", [False, True])
def test_a_bug_in_a_compaction_propagates(tmp_path, manual):
    conv, step, events = _over_threshold(tmp_path, TypeError("a bug"))
    with pytest.raises(TypeError, match="a bug"):
        conv.compact() if manual else conv.auto_compact(step)
    [end] = _ends(events)
    assert end.error == "internal error: TypeError: a bug"


# --------------------------------------------------------------------------- constructors write nothing


def test_constructing_a_conversation_writes_nothing_starting_it_does(tmp_path):
    path = tmp_path / "s.jsonl"
    session = SessionFile.create(path, cwd=str(tmp_path))
    header = path.read_bytes()
    conv = Conversation(RunPlan.of(PROFILE), session, model=MODEL, cwd=str(tmp_path), thinking_level="high")
    assert path.read_bytes() == header and not session.entries
    assert conv.start() is conv and conv.start() is conv  # once
    assert [e.type for e in SessionFile.open(path).entries] == ["model_change", "thinking_level_change"]
    assert conv.thinking_level == "high"


def test_the_first_write_starts_the_conversation(tmp_path):
    path = tmp_path / "s.jsonl"
    conv = Conversation(RunPlan.of(PROFILE), SessionFile.create(path, cwd=str(tmp_path)), model=MODEL, cwd=str(tmp_path))
    assert not SessionFile.open(path).entries
    conv.prompt("hi")
    assert [e.type for e in SessionFile.open(path).entries] == ["model_change", "thinking_level_change", "message"]
    assert conv.thinking_level == "off"  # the level the new session recorded, as before


def test_pipeline_conversation_returns_a_started_conversation(tmp_path):
    path = tmp_path / "s.jsonl"
    conv = compile_profile("default").conversation(SessionFile.create(path, cwd=str(tmp_path)), model=MODEL,
                                                   cwd=str(tmp_path))
    assert [e.type for e in SessionFile.open(path).entries] == ["model_change", "thinking_level_change"]
    assert conv.thinking_level == "off"


def test_constructing_an_agent_leaves_the_conversations_listener_alone(tmp_path):
    events: list = []
    conv = Conversation(RunPlan.of(PROFILE), SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path)), model=MODEL,
                        cwd=str(tmp_path), listener=events.append)
    agent = Agent(conv, client=None, listener=lambda event: None)  # type: ignore[arg-type]
    assert conv.listener == events.append
    assert Agent.open(conv, client=None).conversation.listener != events.append  # type: ignore[arg-type]
    heard: list = []
    agent = Agent(conv, client=None, listener=heard.append)  # type: ignore[arg-type]
    agent.compact()  # attaches first: the manual compaction's events reach the agent's listener
    assert conv.listener == agent._emit and [type(e) for e in heard] == [ev.CompactionStart, ev.CompactionEnd]
