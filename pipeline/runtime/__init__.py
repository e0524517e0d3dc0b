"""The agent runtime: pi's agent loop on a session file, and its policies.

Pure policies (no I/O, no clock: every function takes what it needs and returns a decision;
delays are returned in milliseconds, never slept), loaded eagerly:

* :mod:`~pipeline.runtime.classify` — is a reply a context overflow (docs/pi-rules.md#overflow), a recoverable
  ``length`` stop, a transient error (docs/pi-rules.md#retries)? (pi-ai's pattern lists, as data);
* :mod:`~pipeline.runtime.policy` — the compaction check after a run and before a prompt
  (docs/pi-rules.md#after-a-run-the-compaction-check) with overflow recovery, the recovery cycle, turn retries with backoff (capped by
  ``retry.max_agent_delay_ms`` when set), the summarisation-call retry rule;
* :mod:`~pipeline.runtime.override` — per-turn system-prompt overrides (docs/pi-rules.md#per-run-prompt-overrides).

The conversation and what it is built from, loaded on first use:

* :mod:`~pipeline.runtime.conversation` — :class:`Conversation`, the facade a host drives
  (prompt, next request, record a reply or tool result, compact, navigate);
* :mod:`~pipeline.runtime.loop` — :class:`Agent`, the reference loop over an HTTP client;
* :mod:`~pipeline.runtime.memory` — the context kept in memory incrementally;
* :mod:`~pipeline.runtime.system` — sessions that record the system prompt and send
  section patches (``runtime.record_system_prompt``);
* :mod:`~pipeline.runtime.edits` — context edits that omit a failed attempt before a
  retry (``runtime.context_edits``) and the snapshot a compaction carries;
* :mod:`~pipeline.runtime.host` (what a host gives: models, tools, hooks),
  :mod:`~pipeline.runtime.tools` (the built-in tools), :mod:`~pipeline.runtime.events`,
  :mod:`~pipeline.runtime.arguments`.

Typical driver step after an agent run::

    decision = retry.after_run(reply, retry_settings, model.context_window)
    retry = decision.state
    if decision.action == "retry":
        ...  # wait decision.delay_ms, drop the reply from memory, continue the agent
    else:
        check = check_compaction(reply, phase="after_run", model=model,
                                 latest_compaction_ms=latest_compaction_time(branch),
                                 recovery_attempts=cycle.attempts, messages=memory,
                                 settings=profile.compaction)
        cycle = cycle.after(check)
"""

from pipeline.lazy import lazy_attributes
from pipeline.runtime.classify import (
    OVERFLOW_PATTERNS,
    Reply,
    is_context_overflow,
    is_recoverable_length,
    is_retryable_error,
    is_turn_retryable,
)
from pipeline.runtime.override import HookChain, RunPrompt, run_hooks, start_run
from pipeline.runtime.policy import (
    NOTHING,
    CompactionDecision,
    CurrentModel,
    Phase,
    RecoveryCycle,
    RetryDecision,
    RetrySettings,
    TurnRetry,
    check_compaction,
    latest_compaction_time,
    summary_retry_delay,
)

# The conversation facade and the reference loop import the stages (prompt, compaction,
# llm converters); they are loaded on first use so the pure policy stays light.
_LAZY = {
    "Conversation": "pipeline.runtime.conversation", "ModelRequest": "pipeline.runtime.request",
    "Next": "pipeline.runtime.request", "Agent": "pipeline.runtime.loop", "RunResult": "pipeline.runtime.loop", "model_client": "pipeline.runtime.loop",
    "builtin_tools": "pipeline.runtime.tools",
    "ModelInfo": "pipeline.runtime.host", "Tool": "pipeline.runtime.host", "ToolOutput": "pipeline.runtime.host",
    "HookResult": "pipeline.runtime.host", "AgentStart": "pipeline.runtime.host",
}


__getattr__ = lazy_attributes(__name__, globals(), _LAZY)


__all__ = [
    "Agent", "AgentStart", "Conversation", "HookResult", "ModelInfo", "ModelRequest", "Next", "RunResult", "Tool",
    "ToolOutput", "builtin_tools", "model_client",
    "NOTHING", "OVERFLOW_PATTERNS", "CompactionDecision", "CurrentModel", "HookChain", "Phase",
    "RecoveryCycle", "Reply", "RetryDecision", "RetrySettings", "RunPrompt", "TurnRetry", "check_compaction",
    "is_context_overflow", "is_recoverable_length", "is_retryable_error", "is_turn_retryable",
    "latest_compaction_time", "run_hooks", "start_run", "summary_retry_delay",
]
