"""Old tool results masked on the wire (``compaction.strategy: mask_tool_results`` or ``hybrid``).

The rule, per request:

1. **The settings of the request's model** (``compaction.model_overrides`` for the route's
   provider and the body's model, :func:`~pipeline.proxy.policy.governed`); no masking
   strategy, or compaction off: nothing to do.
2. **Earlier steps first.** The store keeps each masking step as the hash of the prefix it
   covers and its length (:meth:`~pipeline.proxy.store.Store.mask_step`). The longest step
   whose prefix this request repeats is applied again: the same tool results get the same
   placeholder, so the forwarded prefix is byte for byte the one forwarded before and the
   provider's prompt cache keeps hitting. The client, which never sees the masking, keeps
   sending its full history; the proxy masks it the same way each time.
3. **What counts toward the trigger**: the body as it would be forwarded (system prompt,
   tools, messages, the earlier steps applied), a quarter of its JSON characters in tokens,
   anchored to the upstream's last reported input for the conversation
   (:meth:`~pipeline.proxy.wire.Request.tokens`).
4. **A new step** when that estimate fires the profile's trigger for the model's window:
   the messages from the end that fit in ``compaction.keep_recent_tokens`` (estimated the same
   way) are kept; the tool results of every message before them become
   ``compaction.masking.placeholder`` (``${tool}``: the tool's name, ``${chars}``: the
   result's length). Tool calls and results stay paired, only a result's content changes.
   The step is recorded under the hash of the prefix it masks (counted in ``compactions``
   and ``masked_results``).

``hybrid`` masks as ``mask_tool_results`` does, then summarizes when masking is not enough
(:mod:`pipeline.proxy.hybrid`).
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Collection, Optional

from pipeline.compaction.triggers import fires
from pipeline.proxy.policy import governed
from pipeline.proxy.routes import Route
from pipeline.proxy.store import ProxyStore
from pipeline.proxy.wire import Json, Request, messages_of, tool_results
from pipeline.proxy.windows import Windows

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.model.compaction import Compaction



class MaskingPolicy:
    """:class:`~pipeline.proxy.policy.Policy` masking old tool results in recorded, repeatable steps."""

    def __init__(self, settings: "Compaction", windows: Windows, store: ProxyStore,
                 strategies: Collection[str] = ("mask_tool_results",)) -> None:
        self.settings = settings
        self.windows = windows
        self.store = store
        self.strategies = tuple(strategies)

    def apply(self, request: Request, body: Json, shown: Optional[Callable[[Json], Json]] = None) -> Optional[Json]:
        """As :meth:`Policy.apply <pipeline.proxy.policy.Policy.apply>`; ``shown``: the body as it
        would be forwarded after the policies that follow (``hybrid``: its stored summary
        applied), what a new step is measured on (default: the masked body itself)."""
        found = governed(request, body, self.settings, self.windows, self.strategies)
        if found is None or found.settings.masking.placeholder is None:
            return None
        route, settings, messages = request.route, found.settings, found.messages
        hashes = request.chain(messages)
        step = self.store.mask_step(hashes)
        out = _masked(route, body, step, settings)
        if fires(request.tokens(shown(out) if shown is not None else out), found.window, settings):
            new = _step(messages, settings, request.size)
            if new > step:
                self._record(route, messages, hashes[new], step, new)
                before = request.size(out)
                out = _masked(route, body, new, settings)
                self.store.count("tokens_saved", max(before - request.size(out), 0) // 4)
                step = new
        return None if step == 0 else out

    def _record(self, route: Route, messages: list[Any], prefix: str, old: int, new: int) -> None:
        self.store.record_mask_step(prefix, new)
        self.store.count("compactions")
        fresh = sum(1 for r in tool_results(route.kind, messages) if old <= r.message < new)
        self.store.count("masked_results", fresh)


def _masked(route: Route, body: Json, count: int, settings: "Compaction") -> Json:
    """``body`` with the tool results of its first ``count`` messages masked (a copy)."""
    if count == 0:
        return body
    out = copy.deepcopy(body)
    placeholder = settings.masking.placeholder
    assert placeholder is not None
    for result in tool_results(route.kind, messages_of(route.kind, out) or []):
        if result.message < count:
            result.replace(placeholder.render(tool=result.tool, chars=str(len(result.text))))
    return out


def _step(messages: list[Any], settings: "Compaction", size: Callable[[Any], int]) -> int:
    """How many leading messages a new step masks: all but those from the end that fit in
    ``keep_recent_tokens`` (always at least the last message is kept)."""
    kept = 0.0
    at = len(messages)
    while at > 0:
        cost = size(messages[at - 1]) / 4
        if at < len(messages) and kept + cost > settings.keep_recent_tokens:
            break
        kept += cost
        at -= 1
    return at
