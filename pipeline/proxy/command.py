"""``pipeline proxy``'s set-up: the flags checked and turned into settings, then serving."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from pipeline.errors import PipelineError, Problem, UsageError
from pipeline.proxy.app import ProxyApp, ProxySettings
from pipeline.proxy.hybrid import HybridPolicy
from pipeline.proxy.masking import MaskingPolicy
from pipeline.proxy.policy import Policies, Policy, Surround, SystemPromptPolicy, surround
from pipeline.proxy.summary import SummaryPolicy
from pipeline.proxy.routes import ANTHROPIC_URL, GEMINI_URL, OPENAI_URL, Upstreams
from pipeline.proxy.serve import Listen, bind, serve
from pipeline.proxy.status import StatusInfo
from pipeline.proxy.store import ProxyStore, Store, default_path, without_password
from pipeline.proxy.windows import Windows

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from pipeline.facade import Pipeline


def start(pipeline: "Pipeline", args: "argparse.Namespace") -> None:
    """Check the flags, open the store, bind, and serve until a signal."""
    listen = Listen.parse(args.listen)
    token = _token(listen, args.token_env)
    upstreams = Upstreams(_url(args.anthropic_url, ANTHROPIC_URL, "--anthropic-url"),
                          _url(args.openai_url, OPENAI_URL, "--openai-url"),
                          _url(args.gemini_url, GEMINI_URL, "--gemini-url"))
    if not 0 <= args.prepare_at < 1:
        raise UsageError(Problem(f"{args.prepare_at} is not a share below 1", key="--prepare-at",
                                 hint="for example 0.8; 0 turns preparing off", code="proxy.usage"))
    if args.context_window is not None and args.context_window < 1:
        raise UsageError(Problem(f"{args.context_window} is not a number of tokens", key="--context-window",
                                 hint="give 1 or more", code="proxy.usage"))
    if args.max_body < 1:
        raise UsageError(Problem(f"{args.max_body} is not a size in bytes", key="--max-body", hint="give 1 or more", code="proxy.usage"))
    settings = ProxySettings(upstreams=upstreams, token=token, max_body=args.max_body,
                             idle_timeout=pipeline.profile.summarizer.timeout_s,
                             answer_timeout=pipeline.profile.summarizer.call_deadline_s)
    store = open_store(args.store)
    try:
        sock = bind(listen)
        around = surround(pipeline, str(Path(args.cwd or ".").absolute()))
        windows = Windows.of(pipeline.profile, args.context_window)
        policy = policy_of(pipeline, around, windows, store, upstreams, args.prepare_at)
        compaction, window = pipeline.profile.compaction, windows.default
        status = StatusInfo(args.profile, window, compaction.threshold(window), compaction.strategy, around)
        serve(ProxyApp(settings, store, policy=policy, status=status), sock, graceful_s=args.graceful)
    finally:
        store.close()


def policy_of(pipeline: "Pipeline", around: Surround, windows: Windows, store: ProxyStore, upstreams: Upstreams,
              prepare_at: float = 0.0) -> Optional[Policy]:
    """The profile's policy on the wire: its system prompt (``around``), then the compaction of
    each strategy its settings use (each acts on the requests whose model's strategy is its
    own) against the window of the request's model; None when it changes nothing (bytes pass
    through)."""
    parts: list[Policy] = [] if around.empty else [SystemPromptPolicy(around)]
    compaction = pipeline.profile.compaction
    strategies = {compaction.strategy, *(o.strategy for o in compaction.model_overrides.values() if o.strategy)}
    if compaction.enabled and "mask_tool_results" in strategies:
        parts.append(MaskingPolicy(compaction, windows, store))
    if compaction.enabled and "summarize" in strategies:
        parts.append(SummaryPolicy(pipeline, windows, store, upstreams, prepare_at))
    if compaction.enabled and "hybrid" in strategies:
        parts.append(HybridPolicy(MaskingPolicy(compaction, windows, store, ("hybrid",)),
                                  SummaryPolicy(pipeline, windows, store, upstreams, prepare_at, ("hybrid",))))
    return None if not parts else parts[0] if len(parts) == 1 else Policies(*parts)


def _token(listen: Listen, name: Optional[str]) -> Optional[str]:
    if name is None:
        if listen.loopback:
            return None
        raise PipelineError(Problem(f"{listen.host}:{listen.port} is reachable from other machines; name the "
                                    "clients' token with --token-env NAME", key="--listen",
                                    hint="or listen on 127.0.0.1", code="proxy.token"))
    value = os.environ.get(name, "")
    if not value:
        raise PipelineError(Problem(f"the environment variable {name} is not set or empty", key="--token-env",
                                    hint=f"export {name}=... with the token clients send as x-pipeline-token",
                                    code="proxy.token"))
    return value


def _url(given: Optional[str], default: str, flag: str) -> str:
    import httpx

    url = given or default
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise UsageError(Problem(f"{url!r} is not an http(s) URL", key=flag,
                                 hint="for example http://127.0.0.1:9000", code="proxy.usage"))
    return url


def open_store(given: Optional[str]) -> ProxyStore:
    """The store ``--store`` names: ``sqlite:PATH`` (the default file when not given) or
    ``redis://HOST:PORT/DB`` (``rediss://`` for TLS); anything else is a usage error."""
    if given is not None and given.partition("://")[0] in ("redis", "rediss"):
        from pipeline.proxy.redis_store import RedisStore

        return RedisStore(_redis_url(given)).open()
    return Store(_store_path(given)).open()


_STORE_HINT = "for example --store sqlite:/var/lib/pipeline/proxy-store.db or --store redis://127.0.0.1:6379/0"


def _redis_url(given: str) -> str:
    import httpx

    try:
        url: Optional[httpx.URL] = httpx.URL(given)
        assert url is not None and (url.port or 1) > 0  # httpx checks the port lazily
    except (httpx.InvalidURL, ValueError):
        url = None
    path = url.path.strip("/") if url is not None else ""
    if url is None or not url.host or (path and not path.isdigit()) or url.query:
        raise UsageError(Problem(f"{without_password(given)!r} is not redis://HOST:PORT/DB", key="--store",
                                 hint=_STORE_HINT + " (DB a number)", code="proxy.usage"))
    return given


def _store_path(given: Optional[str]) -> Path:
    if given is None:
        return default_path()
    scheme, sep, rest = given.partition(":")
    if scheme != "sqlite" or not sep or not rest:
        raise UsageError(Problem(f"{given!r} is not sqlite:PATH or redis://HOST:PORT/DB", key="--store",
                                 hint=_STORE_HINT, code="proxy.usage"))
    return Path(rest).expanduser()
