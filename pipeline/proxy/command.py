"""``pipeline proxy``'s set-up: the flags checked and turned into settings, then serving."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from pipeline.errors import PipelineError, Problem, UsageError
from pipeline.proxy.app import ProxyApp, ProxySettings
from pipeline.proxy.policy import SystemPromptPolicy, surround
from pipeline.proxy.routes import ANTHROPIC_URL, GEMINI_URL, OPENAI_URL, Upstreams
from pipeline.proxy.serve import Listen, bind, serve
from pipeline.proxy.store import Store, default_path

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
    if args.max_body < 1:
        raise UsageError(Problem(f"{args.max_body} is not a size in bytes", key="--max-body", hint="give 1 or more", code="proxy.usage"))
    settings = ProxySettings(upstreams=upstreams, token=token, max_body=args.max_body,
                             idle_timeout=pipeline.profile.summarizer.timeout_s)
    store = Store(_store_path(args.store)).open()
    try:
        sock = bind(listen)
        serve(ProxyApp(settings, store, policy=policy_of(pipeline, args.cwd)), sock, graceful_s=args.graceful)
    finally:
        store.close()


def policy_of(pipeline: "Pipeline", cwd: Optional[str]) -> Optional[SystemPromptPolicy]:
    """The profile's policy on the wire; None when it changes nothing (bytes pass through)."""
    around = surround(pipeline, str(Path(cwd or ".").absolute()))
    return None if around.empty else SystemPromptPolicy(around)


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


def _store_path(given: Optional[str]) -> Path:
    if given is None:
        return default_path()
    scheme, sep, rest = given.partition(":")
    if scheme != "sqlite" or not sep or not rest:
        raise UsageError(Problem(f"{given!r} is not sqlite:PATH", key="--store",
                                 hint="for example --store sqlite:/var/lib/pipeline/proxy-store.db", code="proxy.usage"))
    return Path(rest).expanduser()
