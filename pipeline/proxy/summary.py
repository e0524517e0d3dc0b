"""Summaries on the wire (``compaction.strategy: summarize``), made once and reused.

The rule, per request of a conversation in any of the four wire formats (where a cut may
fall and how the summary stands in, per format: here for Anthropic Messages and OpenAI chat,
:mod:`pipeline.proxy.turns` for OpenAI Responses and Gemini):

1. **A stored summary first.** The store keeps each summary under the hash of the messages
   it replaces (:mod:`pipeline.proxy.wire`'s chain). The longest one whose messages this
   request repeats stands in for them: the request is forwarded as the summary (one user
   message, wrapped in ``summary.projection.compaction``'s words) and the messages after it,
   byte for byte as the last time (``summaries_reused``). Never a second summary of the
   same history.
2. **What counts toward the trigger**: the body as it would be forwarded, a quarter of its
   JSON characters in tokens, against the model's window (as for masking).
3. **A new summary** when that fires ``compaction.trigger``: the messages from the end that
   fit in ``compaction.keep_recent_tokens`` are kept, from the start of a turn (a user
   message that is not a tool result, so calls and results stay paired and the user's
   latest request is kept whole); the messages before are summarized by the profile's
   summary request (its system prompt, instructions and schema, the validity check and its
   retry; the update instructions over the previous summary when there is one), sent to the
   request's own upstream with the client's model and credentials, or to the profile's
   summarizer when it names a provider other than ``offline``. The summary is stored under
   the hash of what it replaces (``compactions``). It is made holding the conversation's lock
   in the store (:meth:`~pipeline.proxy.store.ProxyStore.claim`, expiring after the profile's
   deadline): a request that finds the lock held, on this replica or another sharing the
   store, waits for that summary up to the deadline and is forwarded with it (reused), else
   as it came; never two summaries of one history. A store that cannot be reached (Redis
   away) makes and reuses no summary: the request goes on as it came.
4. **Prepared ahead**: with ``--prepare-at SHARE`` (default 0.8), a request whose estimate
   passes that share of the trigger's threshold starts the summary the crossing request
   will need in a background thread (once per history; ``summaries_prepared``); the request
   itself goes on at once. The crossing request then finds it stored (step 1) and does not
   wait.
5. **Failure is not the client's**: a summary call that fails (a key the upstream refuses
   for it, a timeout, an answer that fails the checks) leaves the request as it came
   (``summary_failures``); the next request tries again.

``system``/``developer`` messages among the replaced ones (a chat body's leading ones,
Claude Code's ``role: "system"`` message inside ``messages``) are kept whole before the
summary, never summarized.
"""

from __future__ import annotations

import copy
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from pipeline.compaction.driver import summarize_messages
from pipeline.compaction.triggers import fires
from pipeline.errors import PipelineError, ProviderError
from pipeline.llm.clients import profile_bounds, summarizer_client
from pipeline.llm.errors import LLMError
from pipeline.llm.factory import make_client
from pipeline.proxy.readback import pi_messages
from pipeline.proxy.routes import Route, Upstreams
from pipeline.proxy.store import ProxyStore, Summary
from pipeline.proxy.turns import TURNS, client_key, summary_client
from pipeline.proxy.wire import Json, chain, messages_of, size

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

#: how often a replica waiting for another's summary looks for it in the store (seconds)
POLL_S = 0.05
#: the variable name the client's key is handed to the summary client under (never the environment)
_KEY = "PIPELINE_PROXY_CLIENT_KEY"


@dataclass(frozen=True)
class Cut:
    """Where a conversation is cut: leading system messages kept, then ``summarized`` messages replaced."""

    head: int
    summarized: int


class SummaryPolicy:
    """:class:`~pipeline.proxy.app.Policy` replacing old messages by the profile's summary."""

    def __init__(self, pipeline: "Pipeline", window: int, store: ProxyStore, upstreams: Upstreams,
                 prepare_at: float = 0.0) -> None:
        self.profile = pipeline.profile
        self.texts = (self.profile.summary.projection.compaction.open.render(),
                      self.profile.summary.projection.compaction.close.render())
        self.window = window
        self.store = store
        self.upstreams = upstreams
        self.prepare_at = prepare_at
        #: the conversations (the hash of their first message) with a summary being prepared
        self._pending: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def apply(self, route: Route, body: Json, headers: Mapping[str, str] = {}) -> Optional[Json]:
        if route.kind not in ("messages", "chat", *TURNS):
            return None
        model = str(body.get("model") or route.model or "")
        settings = self.profile.compaction.for_model(route.provider, model)
        messages = messages_of(route.kind, body)
        if not settings.enabled or settings.strategy != "summarize" or not messages:
            return None
        raw = size(body) / 4
        if not fires(raw / (self.prepare_at or 1.0), self.window, settings):
            return None  # below the trigger (and the share that prepares): nothing stored can be this history's
        hashes = chain(messages)
        head = _head(route, messages)
        self._await_prepared(hashes[1])
        stored = self.store.summary_for(hashes)
        out = body if stored is None else self._forwarded(route, body, head, stored.messages, stored.text)
        if stored is not None:
            self.store.count("summaries_reused")
        tokens = size(out) / 4
        done = stored.messages if stored is not None else head
        cut = _cut(route, messages, done, settings.keep_recent_tokens)
        if not fires(tokens, self.window, settings):
            if self.prepare_at and cut > done and fires(tokens / self.prepare_at, self.window, settings):
                self._prepare(route, body, messages, hashes, head, (done, cut), stored, headers)
            return None if stored is None else out
        if cut <= done:
            return None if stored is None else out
        new = self._step(route, body, messages, hashes, head, (done, cut), stored, headers)
        return new if new is not None else None if stored is None else out

    def _step(self, route: Route, body: Json, messages: list[Any], hashes: list[str], head: int,
              span: tuple[int, int], stored: Optional[Summary], headers: Mapping[str, str],
              wait: bool = True) -> Optional[Json]:
        """Summarize ``messages[span]`` (over the stored summary) holding the conversation's lock,
        store it; the body to forward. Another holder's summary is waited for (``wait``) up to the
        profile's deadline, else the request goes on without one: never two summaries of one history."""
        lock = "summary:" + hashes[1]
        claim = self.store.claim(lock, self._deadline())
        if claim != "held":  # busy: another replica or thread summarizes; unavailable: pass-through
            return self._awaited(route, body, hashes, head, span[0], lock) if claim == "busy" and wait else None
        try:
            newer = self.store.summary_for(hashes)  # made and stored while this one waited for the lock
            if newer is not None and newer.messages > span[0]:
                return self._reused(route, body, head, newer) if wait else None
            return self._made(route, body, messages, hashes, head, span, stored, headers)
        finally:
            self.store.release(lock)

    def _made(self, route: Route, body: Json, messages: list[Any], hashes: list[str], head: int,
              span: tuple[int, int], stored: Optional[Summary], headers: Mapping[str, str]) -> Optional[Json]:
        done, cut = span
        model = str(body.get("model") or route.model or "")
        settings = self.profile.compaction.for_model(route.provider, model)
        text = self._summarize(route, messages[done:cut], model, settings, headers,
                               None if stored is None else stored.text)
        if text is None:
            return None
        before = self._forwarded(route, body, head, stored.messages, stored.text) if stored is not None else body
        new = self._forwarded(route, body, head, cut, text)
        self.store.record_summary(hashes[1], hashes[cut], cut, text, size(before) // 4, size(new) // 4)
        self.store.count("compactions")
        return new

    def _awaited(self, route: Route, body: Json, hashes: list[str], head: int, done: int,
                 lock: str) -> Optional[Json]:
        """The summary another holder of ``lock`` is making, once stored; None when the deadline
        passes or the lock is given back (or expires) without one."""
        until = time.monotonic() + self._deadline()
        while time.monotonic() < until:
            time.sleep(POLL_S)
            held = self.store.locked(lock)
            newer = self.store.summary_for(hashes)
            if newer is not None and newer.messages > done:
                return self._reused(route, body, head, newer)
            if not held:
                return None
        return None

    def _reused(self, route: Route, body: Json, head: int, stored: Summary) -> Json:
        self.store.count("summaries_reused")
        return self._forwarded(route, body, head, stored.messages, stored.text)

    def _deadline(self) -> float:
        """How long a summary may take: the profile's deadline for one call, else its timeout."""
        return float(self.profile.summarizer.call_deadline_s or self.profile.summarizer.timeout_s)

    def _prepare(self, route: Route, body: Json, messages: list[Any], hashes: list[str], head: int,
                 span: tuple[int, int], stored: Optional[Summary], headers: Mapping[str, str]) -> None:
        """Make the summary the crossing request will need in the background (once per history)."""
        conversation = hashes[1]
        with self._lock:
            if conversation in self._pending:
                return
            done = self._pending[conversation] = threading.Event()

        def run() -> None:
            try:
                if self._step(route, body, messages, hashes, head, span, stored, dict(headers), wait=False) is not None:
                    self.store.count("summaries_prepared")
            finally:
                with self._lock:
                    del self._pending[conversation]
                done.set()

        threading.Thread(target=run, name="pipeline-proxy-summary", daemon=True).start()

    def _await_prepared(self, conversation: str) -> None:
        """A summary of this conversation under way is waited for (never two of one history)."""
        with self._lock:
            pending = self._pending.get(conversation)
        if pending is not None:
            pending.wait(self._deadline())

    def _forwarded(self, route: Route, body: Json, head: int, replaced: int, summary: str) -> Json:
        """``body`` with messages ``head:replaced`` replaced by one user message: the summary, then
        the user's request when the cut is inside its turn, then the first kept message when it
        is the user's (a copy)."""
        if route.kind in TURNS:
            return TURNS[route.kind].forwarded(body, route.kind, head, replaced, self.texts[0] + summary + self.texts[1])
        out = copy.deepcopy(body)
        messages = messages_of(route.kind, out) or []
        blocks: list[Any] = [{"type": "text", "text": self.texts[0] + summary + self.texts[1]}]
        kept = messages[replaced:]
        if kept and _turn_start(route, kept[0]):
            blocks += _blocks(kept.pop(0).get("content"))
        else:
            request = next((m for m in reversed(messages[head:replaced]) if _turn_start(route, m)), None)
            blocks += _blocks(request.get("content")) if request is not None else []
        inside = [m for m in messages[head:replaced] if _role(m) in ("system", "developer")]
        messages[head:] = [*inside, {"role": "user", "content": blocks}, *kept]
        return out

    def _summarize(self, route: Route, replaced: list[Any], model: str, settings: Any, headers: Mapping[str, str],
                   previous: Optional[str]) -> Optional[str]:
        try:
            with self._client(route, model, headers) as client:
                return summarize_messages(pi_messages(route.kind, replaced), self.profile, client, settings,
                                          model=model, previous_summary=previous)
        except (LLMError, ProviderError, PipelineError):
            self.store.count("summary_failures")
            return None

    def _client(self, route: Route, model: str, headers: Mapping[str, str]) -> Any:
        summarizer = self.profile.summarizer
        if summarizer.provider != "offline":
            return summarizer_client(summarizer)
        if route.kind in TURNS:
            return summary_client(route, self.upstreams, model, _KEY, {_KEY: client_key(route, headers)},
                                  summarizer.max_retries, profile_bounds(summarizer))
        base = self.upstreams.anthropic if route.provider == "anthropic" else self.upstreams.openai
        return make_client(route.provider, model=model, base_url=base, api_key_env=_KEY,
                           env={_KEY: _key(headers)}, max_retries=summarizer.max_retries, **profile_bounds(summarizer))


def _key(headers: Mapping[str, str]) -> str:
    """The client's own key: Anthropic's ``x-api-key``, else the bearer token."""
    bearer = headers.get("authorization", "")
    return headers.get("x-api-key") or (bearer[7:] if bearer.lower().startswith("bearer ") else "")


def _head(route: Route, messages: list[Any]) -> int:
    """How many leading messages are system or developer messages (chat, Responses)."""
    if route.kind in TURNS:
        return TURNS[route.kind].head(messages)
    at = 0
    while route.kind == "chat" and at < len(messages) and isinstance(messages[at], dict) \
            and messages[at].get("role") in ("system", "developer"):
        at += 1
    return at


def _blocks(content: Any) -> list[Any]:
    return list(content) if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]


def _turn_start(route: Route, message: Any) -> bool:
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    content = message.get("content")
    return not (route.kind == "messages" and isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content))


def _cut(route: Route, messages: list[Any], done: int, keep: int) -> int:
    """Where the kept messages start: ``keep`` tokens (estimated) of recent messages, from the
    start of a turn or of an assistant message (its tool calls' results follow it, so pairs
    stay whole); ``done`` when there is no such place after it."""
    kept = 0.0
    at = len(messages)
    while at > done and kept < keep:
        at -= 1
        kept += size(messages[at]) / 4
    while at > done and not _boundary(route, messages, at):
        at -= 1
    return at


def _boundary(route: Route, messages: list[Any], at: int) -> bool:
    if route.kind in TURNS:
        return TURNS[route.kind].boundary(messages, at)
    return _turn_start(route, messages[at]) or _role(messages[at]) == "assistant"


def _role(message: Any) -> str:
    return str(message.get("role")) if isinstance(message, dict) else ""
