"""Summaries on the wire (``compaction.strategy: summarize``, and ``hybrid``'s through
:mod:`pipeline.proxy.hybrid`), made once and reused.

The rule, per request of a conversation in any of the four wire formats (where a cut may
fall and how the summary stands in, per format: :mod:`pipeline.proxy.turns`, from each
format's wire module):

1. **A stored summary first.** The store keeps each summary under the hash of the messages
   it replaces (:mod:`pipeline.proxy.wire`'s chain). The longest one whose messages this
   request repeats stands in for them: the request is forwarded as the summary (one user
   message, wrapped in ``summary.projection.compaction``'s words) and the messages after it,
   byte for byte as the last time (``summaries_reused``). Never a second summary of the
   same history.
2. **What counts toward the trigger**: the body as it would be forwarded, a quarter of its
   JSON characters in tokens anchored to the upstream's last reported input
   (:meth:`~pipeline.proxy.wire.Request.tokens`), against the window of the request's model
   (:mod:`pipeline.proxy.windows`).
3. **A new summary** when that fires ``compaction.trigger``, planned and asked for by the
   runtime's own functions (:mod:`pipeline.proxy.history`): the body's messages read as a
   session path (the stored summary a compaction entry in it), cut by
   :func:`~pipeline.compaction.plan.plan_compaction` (``keep_recent_tokens`` of recent
   messages kept, a cut inside a turn summarizing its prefix apart, as the profile's
   ``instructions.turn_prefix`` says), summarized by
   :func:`~pipeline.compaction.driver.summarize_planned`: the profile's summary request (its
   system prompt, instructions and schema, the validity check and its retry, the schema
   check and its corrective retry; the update instructions over the previous summary when
   there is one; the read and modified files of the tool calls appended), the same requests
   ``pipeline run`` makes for the same history (in the Responses and Gemini formats, a cut
   the runtime places where :mod:`pipeline.proxy.turns` forbids one moves to the nearest
   allowed place before it). It goes to the request's own upstream, in its format, with
   the client's model and credentials, or to the profile's summarizer when it names a
   provider other than ``offline``. The summary is stored under the hash of what it
   replaces (``compactions``). It is made holding the conversation's lock in the store
   (:meth:`~pipeline.proxy.store.ProxyStore.claim`, expiring after the profile's
   ``summarizer.compaction_deadline_s``, within which the summary is made: a summary that
   comes back after its lock was lost is dropped, a failure): a
   request that finds the lock held, on this replica or another sharing the store, waits for
   that summary up to the deadline and is forwarded with it (reused), else as it came; never
   two summaries of one history. A store that cannot be reached (Redis away) makes and
   reuses no summary: the request goes on as it came.
4. **Prepared ahead**: with ``--prepare-at SHARE`` (default 0.8), a request whose estimate
   passes that share of the trigger's threshold starts the summary the crossing request
   will need in a background thread (once per history; ``summaries_prepared``), stored
   apart as prepared; the request itself goes on at once. A prepared summary stands in for
   nothing until a request crosses the trigger: the requests below it keep the summary in
   force (their forwarded prefix byte-stable, the provider's cache hitting); the crossing
   request finds it (:meth:`SummaryPolicy._ready`), records it as the history's summary
   (``compactions``) and does not wait.
5. **Failure is not the client's**: a summary call that fails (a key the upstream refuses
   for it, a timeout, an answer that fails the checks) leaves the request as it came
   (``summary_failures``); the next request tries again.

``system``/``developer`` messages among the replaced ones (a chat body's leading ones,
Claude Code's ``role: "system"`` message inside ``messages``) are kept whole before the
summary, never summarized.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Collection, Mapping, Optional

from pipeline.compaction.driver import summarize_planned
from pipeline.compaction.plan import CompactionPlan
from pipeline.compaction.triggers import fires
from pipeline.errors import PipelineError, ProviderError
from pipeline.llm.clients import profile_bounds, summarizer_client
from pipeline.llm.deadline import compaction_deadline
from pipeline.llm.errors import LLMError
from pipeline.llm.factory import make_client
from pipeline.proxy.history import WirePlan, wire_plan
from pipeline.proxy.policy import governed
from pipeline.proxy.routes import Route, Upstreams
from pipeline.proxy.store import ProxyStore, Summary
from pipeline.proxy.turns import TURNS, client_key, summary_client
from pipeline.proxy.wire import Json, Request, messages_of
from pipeline.proxy.windows import Windows

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

#: how often a replica waiting for another's summary looks for it in the store (seconds)
POLL_S = 0.05
#: the conversations whose last unprepared history is remembered (the oldest forgotten first)
_UNPREPARED_KEPT = 4096
#: the variable name the client's key is handed to the summary client under (never the environment)
_KEY = "PIPELINE_PROXY_CLIENT_KEY"


class SummaryPolicy:
    """:class:`~pipeline.proxy.policy.Policy` replacing old messages by the profile's summary."""

    def __init__(self, pipeline: "Pipeline", windows: Windows, store: ProxyStore, upstreams: Upstreams,
                 prepare_at: float = 0.0, strategies: Collection[str] = ("summarize",)) -> None:
        self.profile = pipeline.profile
        self.texts = (self.profile.summary.projection.compaction.open.render(),
                      self.profile.summary.projection.compaction.close.render())
        self.windows = windows
        self.store = store
        self.upstreams = upstreams
        self.prepare_at = prepare_at
        self.strategies = tuple(strategies)
        #: the conversations (the hash of their first message) with a summary being prepared
        self._pending: dict[str, threading.Event] = {}
        #: per conversation, the last link of the history whose preparing ended without a summary
        #: (nothing to cut, or the call failed): that same history is not prepared again
        self._unprepared: dict[str, str] = {}
        self._lock = threading.Lock()

    def apply(self, request: Request, body: Json, keys: Optional[Callable[[], list[str]]] = None) -> Optional[Json]:
        """As :meth:`Policy.apply <pipeline.proxy.policy.Policy.apply>`; ``keys``: the chain the
        summaries are stored under when it is not that of ``body``'s messages (``hybrid``: the
        client's messages, before masking), asked for only past the early exit."""
        route = request.route
        if route.kind not in TURNS:
            return None
        found = governed(request, body, self.profile.compaction, self.windows, self.strategies, self.prepare_at)
        if found is None:  # below the trigger (and the share that prepares): nothing stored can be this history's
            return None
        settings, messages, window = found.settings, found.messages, found.window
        hashes = keys() if keys is not None else request.chain(messages)
        head = TURNS[route.kind].head(messages)
        # a summary prepared meanwhile is looked up afresh; else hybrid's masking looked it up already
        stored = self.store.summary_for(hashes) if self._await_prepared(hashes[1]) else self._stored(request, hashes)
        out = body if stored is None else self._forwarded(request, body, head, stored.messages, stored.text)
        if stored is not None:
            self.store.count("summaries_reused")
        tokens = request.tokens(out)
        if not fires(tokens, window, settings):
            if self.prepare_at and fires(tokens / self.prepare_at, window, settings):
                self._prepare(request, body, messages, hashes, head, stored)
            return None if stored is None else out
        ready = self._ready(request, body, hashes, head, stored)
        if ready is not None:
            stored, out = ready
            if not fires(request.tokens(out), window, settings):
                return out
        new = self._step(request, body, messages, hashes, head, stored)
        return new if new is not None else None if stored is None else out

    def shown(self, request: Request, body: Json, keys: list[str]) -> Json:
        """``body`` as forwarded with the stored summary of its history (``body`` when there is none);
        ``keys``: the chain of its client's messages."""
        messages = messages_of(request.kind, body)
        stored = self._stored(request, keys) if messages and request.kind in TURNS else None
        if stored is None or messages is None:
            return body
        return self._forwarded(request, body, TURNS[request.kind].head(messages), stored.messages, stored.text)

    def _stored(self, request: Request, keys: list[str]) -> Optional[Summary]:
        """The stored summary of the history ``keys`` hashes, looked up once a request."""
        found: Optional[Summary] = request.once(keys, "summary", lambda: self.store.summary_for(keys))
        return found

    def _ready(self, request: Request, body: Json, hashes: list[str], head: int,
               stored: Optional[Summary]) -> Optional[tuple[Summary, Json]]:
        """A summary prepared ahead of a longer prefix than ``stored``'s, for a request that crosses
        the trigger: recorded now as the history's summary (``compactions``), and the body it
        forwards. Before a request crosses the trigger a prepared summary stands in for nothing:
        the requests below it keep the summary in force, their prefix byte-stable."""
        prepared = self.store.summary_for(hashes, prepared=True)
        if prepared is None or prepared.messages <= (stored.messages if stored is not None else head):
            return None
        self.store.record_summary(hashes[1], prepared.prefix, prepared.messages, prepared.text, prepared.tokens_before,
                                  prepared.tokens_after)
        self.store.count("compactions")
        self.store.count("tokens_saved", max(prepared.tokens_before - prepared.tokens_after, 0))
        return prepared, self._forwarded(request, body, head, prepared.messages, prepared.text)

    def _step(self, request: Request, body: Json, messages: list[Any], hashes: list[str], head: int,
              stored: Optional[Summary], wait: bool = True) -> Optional[Json]:
        """Plan as the runtime does (over the stored summary), then summarize holding the
        conversation's lock, store it; the body to forward. Another holder's summary is waited
        for (``wait``) up to the profile's deadline, else the request goes on without one:
        never two summaries of one history. Without ``wait`` (prepared ahead) the summary is
        stored as prepared, apart (:meth:`_ready`)."""
        route = request.route
        model = str(body.get("model") or route.model or "")
        settings = self.profile.compaction.for_model(route.provider, model)
        planned = wire_plan(route.kind, messages, head, settings, stored)
        done = stored.messages if stored is not None else head
        if planned is None or planned.cut <= done:
            return None
        lock = "summary:" + hashes[1]
        claim = self.store.claim(lock, self._lock_s())
        if claim != "held":  # busy: another replica or thread summarizes; unavailable: pass-through
            return self._awaited(request, body, hashes, head, done, lock) if claim == "busy" and wait else None
        try:
            # made and stored while this one waited for the lock (prepared ahead: one prepared already)
            newer = self.store.summary_for(hashes, prepared=not wait)
            if newer is not None and newer.messages > done:
                return self._reused(request, body, head, newer) if wait else None
            return self._made(request, body, hashes, head, planned, stored, model, lock, ahead=not wait)
        finally:
            self.store.release(lock)

    def _made(self, request: Request, body: Json, hashes: list[str], head: int, planned: WirePlan,
              stored: Optional[Summary], model: str, lock: str, ahead: bool = False) -> Optional[Json]:
        """Summarize what ``planned`` cuts off, store it; the body to forward. The summary must end
        within the lock's time (every call and retry of it is bounded by it); one that comes back
        after the lock was lost (expired, so another may be summarizing this history) is
        dropped, a failure: never two summaries of one history."""
        with compaction_deadline(self._lock_s()):
            text = self._summarize(request.route, planned.plan, model, request.headers)
        if text is not None and not self.store.holds(lock):
            self.store.count("summary_failures")
            return None
        if text is None:
            return None
        before = self._forwarded(request, body, head, stored.messages, stored.text) if stored is not None else body
        new = self._forwarded(request, body, head, planned.cut, text)
        self.store.record_summary(hashes[1], hashes[planned.cut], planned.cut, text, request.size(before) // 4,
                                  request.size(new) // 4, prepared=ahead)
        if not ahead:
            self.store.count("compactions")
            self.store.count("tokens_saved", max(request.size(before) - request.size(new), 0) // 4)
        return new

    def _awaited(self, request: Request, body: Json, hashes: list[str], head: int, done: int,
                 lock: str) -> Optional[Json]:
        """The summary another holder of ``lock`` is making, once stored; None when the deadline
        passes or the lock is given back (or expires) without one."""
        until = time.monotonic() + self._deadline()
        while time.monotonic() < until:
            time.sleep(POLL_S)
            held = self.store.locked(lock)
            newer = self.store.summary_for(hashes)
            if newer is not None and newer.messages > done:
                return self._reused(request, body, head, newer)
            if not held:
                return None
        return None

    def _reused(self, request: Request, body: Json, head: int, stored: Summary) -> Json:
        self.store.count("summaries_reused")
        return self._forwarded(request, body, head, stored.messages, stored.text)

    def _deadline(self) -> float:
        """How long a request waits for a summary another makes: the profile's deadline for one
        call, else its timeout."""
        return float(self.profile.summarizer.call_deadline_s or self.profile.summarizer.timeout_s)

    def _lock_s(self) -> float:
        """How long the lock of a summary holds: the profile's bound of one whole compaction
        (``summarizer.compaction_deadline_s``: its calls, checks and retries), which the summary is
        made within."""
        return float(self.profile.summarizer.compaction_deadline_s)

    def _prepare(self, request: Request, body: Json, messages: list[Any], hashes: list[str], head: int,
                 stored: Optional[Summary]) -> None:
        """Make the summary the crossing request will need in the background, on a view of its own
        (the request's is its thread's); once per history: one that ended without a summary is not
        prepared again, each request spawning a thread to find the same nothing."""
        own = Request(request.route, request.body, dict(request.headers))
        conversation = hashes[1]
        with self._lock:
            if conversation in self._pending or self._unprepared.get(conversation) == hashes[-1]:
                return
            done = self._pending[conversation] = threading.Event()

        def run() -> None:
            try:
                if self._step(own, body, messages, hashes, head, stored, wait=False) is not None:
                    self.store.count("summaries_prepared")
                else:  # the next message, or the request crossing the trigger, tries again
                    with self._lock:
                        if len(self._unprepared) >= _UNPREPARED_KEPT:
                            self._unprepared.pop(next(iter(self._unprepared)))
                        self._unprepared[conversation] = hashes[-1]
            finally:
                with self._lock:
                    del self._pending[conversation]
                done.set()

        threading.Thread(target=run, name="pipeline-proxy-summary", daemon=True).start()

    def _await_prepared(self, conversation: str) -> bool:
        """A summary of this conversation under way is waited for (never two of one history);
        whether there was one."""
        with self._lock:
            pending = self._pending.get(conversation)
        if pending is not None:
            pending.wait(self._deadline())
        return pending is not None

    def _forwarded(self, request: Request, body: Json, head: int, replaced: int, summary: str) -> Json:
        """``body`` with messages ``head:replaced`` replaced by one user message: the summary, then
        the user's request when the cut is inside its turn, then the first kept message when it
        is the user's (a copy, made once a request: hybrid's masking measures it first)."""
        made: Json = request.once(body, f"forwarded {head} {replaced} " + summary,
                                  lambda: self._rewritten(request.route, body, head, replaced, summary))
        return made

    def _rewritten(self, route: Route, body: Json, head: int, replaced: int, summary: str) -> Json:
        return TURNS[route.kind].forwarded(body, route.kind, head, replaced, self.texts[0] + summary + self.texts[1])

    def _summarize(self, route: Route, plan: CompactionPlan, model: str, headers: Mapping[str, str]) -> Optional[str]:
        try:
            with self._client(route, model, headers) as client:
                return summarize_planned(plan, self.profile, client, model=model).summary
        except (LLMError, ProviderError, PipelineError):
            self.store.count("summary_failures")
            return None

    def _client(self, route: Route, model: str, headers: Mapping[str, str]) -> Any:
        summarizer = self.profile.summarizer
        if summarizer.provider != "offline":
            return summarizer_client(summarizer)
        if route.kind in ("responses", "gemini"):
            return summary_client(route, self.upstreams, model, _KEY, {_KEY: client_key(route, headers)},
                                  summarizer.max_retries, profile_bounds(summarizer))
        base = self.upstreams.anthropic if route.provider == "anthropic" else self.upstreams.openai
        return make_client(route.provider, model=model, base_url=base, api_key_env=_KEY,
                           env={_KEY: _key(headers)}, max_retries=summarizer.max_retries, **profile_bounds(summarizer))


def _key(headers: Mapping[str, str]) -> str:
    """The client's own key: Anthropic's ``x-api-key``, else the bearer token."""
    bearer = headers.get("authorization", "")
    return headers.get("x-api-key") or (bearer[7:] if bearer.lower().startswith("bearer ") else "")
