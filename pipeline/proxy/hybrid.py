"""``compaction.strategy: hybrid`` on the wire: mask old tool results, then summarize when masking
is not enough, as the runtime's :func:`pipeline.compaction.driver.compact` does for a session.

Per request, the two policies of the other strategies, in order:

1. **mask** (:class:`~pipeline.proxy.masking.MaskingPolicy`): its recorded steps applied again;
   a new step when the body *as it would be forwarded* (the stored summary of its history
   applied, :meth:`~pipeline.proxy.summary.SummaryPolicy.shown`) fires the trigger, so once a
   summary stands in for the old messages no step is taken until the forwarded context
   grows past the trigger again;
2. **summarize** (:class:`~pipeline.proxy.summary.SummaryPolicy`) the masked body: when it
   still fires the trigger after masking (the runtime's rule: ``fires(tokens after masking)``),
   the runtime's plan and summary request over the masked messages, so the summary is of
   the masked history. Summaries are stored under the chain of the client's own messages
   (before masking): a later masking step does not hide a stored summary, and never a
   second summary of the same history.

Both steps are deterministic functions of what is stored, so between two steps the
forwarded bytes are the same and the provider's prompt cache keeps hitting.
"""

from __future__ import annotations

from typing import Optional

from pipeline.proxy.masking import MaskingPolicy
from pipeline.proxy.summary import SummaryPolicy
from pipeline.proxy.wire import Json, Request, messages_of


class HybridPolicy:
    """:class:`~pipeline.proxy.policy.Policy` of ``hybrid``: ``masking``, then ``summary`` on its result."""

    def __init__(self, masking: MaskingPolicy, summary: SummaryPolicy) -> None:
        self.masking = masking
        self.summary = summary

    def apply(self, request: Request, body: Json) -> Optional[Json]:
        messages = messages_of(request.kind, body)
        if not messages:
            return None
        known: list[list[str]] = []

        def keys() -> list[str]:  # the client's chain, hashed once and only when a policy has work
            if not known:
                known.append(request.chain(messages))
            return known[0]

        masked = self.masking.apply(request, body, shown=lambda out: self.summary.shown(request, out, keys()))
        # Masking keeps the number of messages, so the client's chain is that of the masked body's.
        summarized = self.summary.apply(request, masked if masked is not None else body, keys=keys)
        return summarized if summarized is not None else masked
