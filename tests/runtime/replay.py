"""Replay pi's recorded agent runs through the pure runtime policy.

A scenario (``tests/data/runtime/scenarios.json``) is one ``agent_request`` pi ran on a copy
of a real session: its scripted replies, the entries pi appended (every reply, failed ones
included, tool results, compactions — with pi's own timestamps) and the events pi emitted.
:class:`Replay` walks those entries the way pi's ``AgentSession`` does and asks
:mod:`pipeline.runtime` what to do at each decision point; the events it derives must be
pi's. The walk keeps pi's in-memory context (``agent.state.messages``): the session context
at load, plus each message as it arrives, minus dropped replies, rebuilt after a compaction.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from pipeline.compaction.plan import NothingToCompact, plan_compaction
from pipeline.model.compaction import Compaction
from pipeline.runtime.policy import (
    CompactionDecision,
    CurrentModel,
    RecoveryCycle,
    RetrySettings,
    TurnRetry,
    check_compaction,
    latest_compaction_time,
)
from pipeline.model.run_plan import CompactionCheck
from pipeline.session import (
    AssistantMessage,
    CompactionEntry,
    MessageEntry,
    SessionFile,
    build_session_context,
    parse_entry,
    session_path,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "runtime"
REAL = ROOT / "tests" / "data" / "sessions" / "real"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def compaction_settings(settings: dict) -> Compaction:
    """pi's compaction settings (camelCase, as sent to the oracle) as the profile block."""
    return Compaction(
        enabled=settings.get("enabled", True),
        reserve_tokens=settings.get("reserveTokens", 16384),
        keep_recent_tokens=settings.get("keepRecentTokens", 20000),
    )


def retry_settings(retry: dict) -> RetrySettings:
    return RetrySettings(enabled=retry["enabled"], max_retries=retry["maxRetries"], base_delay_ms=retry["baseDelayMs"])


class Replay:
    """One scenario, replayed; :meth:`run` returns the events the policy implies."""

    def __init__(self, scenario: dict) -> None:
        base = list(SessionFile.open(REAL / f"{scenario['session']}.jsonl").entries)
        if "preload" in scenario:
            base.append(parse_entry(scenario["preload"]))
        self.entries = base
        self.pending = deque(parse_entry(raw) for raw in scenario["newEntries"])
        self.memory = list(build_session_context(self.entries).messages)
        self.settings = compaction_settings(scenario["settings"])
        self.retry_settings = retry_settings(scenario["retry"])
        m = scenario["model"]
        self.model = CurrentModel(m["provider"], m["id"], m["contextWindow"], m["maxTokens"])
        self.inputs = scenario["inputs"]
        self.retry = TurnRetry()
        self.cycle = RecoveryCycle()
        self.events: list[dict] = []
        self.empty_compactions = 0

    # ------------------------------------------------------------------ the walk

    def run(self) -> list[dict]:
        for _ in range(self.inputs):
            last = self._last_assistant()
            if last is not None:
                self._apply(self._check(last, "before_prompt"))
            self.memory.append(self._take_message("user"))
            self.cycle = self.cycle.on_user_message()
            self._agent_run()
        assert not self.pending, f"entries left over: {[e.raw for e in self.pending]}"
        return self.events

    def _agent_run(self) -> None:
        while True:
            reply = self._take_message("assistant")
            self.memory.append(reply)
            self.retry, succeeded = self.retry.on_reply(reply)
            if succeeded is not None:
                self.events.append({"type": "auto_retry_end", "success": True, "attempt": succeeded})
            self.cycle = self.cycle.on_reply(reply)
            if reply.stop_reason == "toolUse":
                self.memory.extend(self._take_message("toolResult") for _ in reply.tool_calls)
                continue
            if not self._after_run(reply):
                return

    def _after_run(self, reply: AssistantMessage) -> bool:
        """pi's ``_handlePostAgentRun``: True when the agent continues."""
        decision = self.retry.after_run(reply, self.retry_settings, self.model.context_window)
        self.retry = decision.state
        if decision.action == "retry":
            self.events.append({"type": "auto_retry_start", "attempt": decision.attempt,
                                "maxAttempts": decision.max_attempts, "delayMs": decision.delay_ms})
            self._drop_reply()
            return True
        if decision.action == "give_up":
            self.events.append({"type": "auto_retry_end", "success": False, "attempt": decision.attempt})
        return self._apply(self._check(reply, "after_run"))

    def _check(self, reply: AssistantMessage, phase: str) -> CompactionDecision:
        decision = check_compaction(
            reply, phase=phase, model=self.model,
            latest_compaction_ms=latest_compaction_time(session_path(self.entries)),
            recovery_attempts=self.cycle.attempts, messages=self.memory, settings=CompactionCheck.of(self.settings),
        )
        self.cycle = self.cycle.after(decision)
        return decision

    def _apply(self, decision: CompactionDecision) -> bool:
        if decision.action == "fail":
            self.events.append({"type": "compaction_end", "reason": "overflow", "aborted": False,
                                "willRetry": False, "failed": True})
            return False
        if decision.action != "compact":
            return False
        if decision.drop_reply:
            self._drop_reply()
        plan = plan_compaction(session_path(self.entries), self.settings)
        compacted = bool(self.pending) and isinstance(self.pending[0], CompactionEntry)
        if isinstance(plan, NothingToCompact):
            assert not compacted, f"pi compacted where the planner finds nothing ({plan.reason})"
            self.empty_compactions += 1  # pi finds nothing to summarise: no events, no retry
            return False
        assert compacted, "the planner would compact but pi did not"
        entry = self.pending.popleft()
        assert entry.first_kept_entry_id == plan.first_kept_entry_id
        self.entries.append(entry)
        self.events.append({"type": "compaction_start", "reason": decision.reason})
        self.events.append({"type": "compaction_end", "reason": decision.reason, "aborted": False,
                            "willRetry": decision.retry, "failed": False})
        self.memory = list(build_session_context(self.entries).messages)
        if decision.retry:
            last = self.memory[-1] if self.memory else None
            if isinstance(last, AssistantMessage) and last.stop_reason in ("error", "length"):
                self.memory.pop()
        return decision.retry

    # ------------------------------------------------------------------ helpers

    def _take_message(self, role: str) -> Any:
        entry = self.pending.popleft()
        assert isinstance(entry, MessageEntry) and entry.message.role == role, (role, entry.raw)
        self.entries.append(entry)
        return entry.message

    def _drop_reply(self) -> None:
        if self.memory and isinstance(self.memory[-1], AssistantMessage):
            self.memory.pop()

    def _last_assistant(self) -> AssistantMessage | None:
        return next((m for m in reversed(self.memory) if isinstance(m, AssistantMessage)), None)
