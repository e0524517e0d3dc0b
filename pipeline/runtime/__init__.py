"""The agent runtime: pi's agent loop on a session file, and its policies.

Pure policies (no I/O, no clock: every function takes what it needs and returns a decision;
delays are returned in milliseconds, never slept):

* :mod:`~pipeline.runtime.classify` — is a reply a context overflow (docs/pi-rules.md#overflow), a recoverable
  ``length`` stop, a transient error (docs/pi-rules.md#retries)? (pi-ai's pattern lists, as data);
* :mod:`~pipeline.runtime.policy` — the compaction check after a run and before a prompt
  (docs/pi-rules.md#after-a-run-the-compaction-check) with overflow recovery, the recovery cycle, turn retries with backoff (capped by
  ``retry.max_agent_delay_ms`` when set), the summarisation-call retry rule;
* :mod:`~pipeline.runtime.override` — per-turn system-prompt overrides (docs/pi-rules.md#per-run-prompt-overrides).

The conversation and what it is built from:

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

The package re-exports nothing: each name is imported from the module that defines it.

Typical driver step after an agent run::

    decision = retry.after_run(reply, retry_settings, model.context_window)
    retry = decision.state
    if decision.action == "retry":
        ...  # wait decision.delay_ms, drop the reply from memory, continue the agent
    else:
        check = check_compaction(reply, phase="after_run", model=model,
                                 latest_compaction_ms=latest_compaction_time(branch),
                                 recovery_attempts=cycle.attempts, messages=memory,
                                 settings=plan.compaction.for_model(model.provider, model.id))
        cycle = cycle.after(check)
"""
