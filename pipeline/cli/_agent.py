"""What `pipeline run` (and an interactive front end) share: a conversation, a model
client and an agent built from the command's flags (a helper module, not a command)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from pipeline.cli._options import API_KEY_ENV_HELP, COMPACTION_FLAGS, SUMMARIZER_FLAGS, add_compaction_flags, positive
from pipeline.cli._output import print_notices
from pipeline.errors import Location, PipelineError, Problem, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from pipeline import Agent, Conversation, Pipeline
    from pipeline.model.run_plan import RunPlan


def add_agent_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags `pipeline run` and `pipeline chat` share."""
    parser.add_argument("--session", metavar="FILE", required=True, help="the pi session file (.jsonl)")
    parser.add_argument("--new", action="store_true", help="create FILE as a new session")
    parser.add_argument("--json", action="store_true", help="print the events as JSON lines")
    parser.add_argument("--llm", choices=("openai", "anthropic"), default="openai", help="wire format (default: openai)")
    parser.add_argument("--model", metavar="M", help="model name (default: the profile's summarizer.model)")
    parser.add_argument("--base-url", metavar="U", help="provider base URL")
    parser.add_argument("--api-key-env", metavar="NAME", help=API_KEY_ENV_HELP)
    parser.add_argument("--tools", metavar="LIST", default="read,ls,find,grep",
                        help="comma-separated tools (default: read,ls,find,grep; bash,edit,write are opt-in)")
    parser.add_argument("--cwd", metavar="DIR", default=".", help="working directory of the tools (default: .)")
    parser.add_argument("--context-window", metavar="N", type=positive, help="the model's context window in tokens")
    parser.add_argument("--max-tokens", metavar="N", type=positive, help="the model's maximum output tokens")
    parser.add_argument("--mid-conversation-system", action="store_true",
                        help="the model reads system messages mid-conversation: a profile that records the system "
                             "prompt (runtime.record_system_prompt) sends each change in place, keeping the "
                             "leading prompt (and the provider's cached prefix) unchanged")
    add_compaction_flags(parser)
    parser.add_argument("--compact", action="store_true",
                        help="compact the session before the first prompt (as /compact; the compaction flags apply)")


def _profile_flags() -> dict:
    """Flags that set a profile value (the one override path, `compact`'s table: checked as the
    profile's last layer, problems name the flag, a key given as a name or in a URL is refused
    unshown). `--llm` is the chat's wire format here, not the summarizer's provider; `--context-window`
    and `--max-tokens` describe the chat model, not the summarizer: no override."""
    return {**COMPACTION_FLAGS, **{flag: SUMMARIZER_FLAGS[flag] for flag in ("--model", "--base-url", "--api-key-env")}}


def profile_overrides(args: argparse.Namespace) -> tuple[dict, dict]:
    """The flags given, as dotted profile overrides and the flag that set each."""
    from pipeline.cli._options import profile_overrides as overrides

    return overrides(args, _profile_flags())


@dataclass(frozen=True)
class AgentSetup:
    """The agent the flags chose, and how to get the whole compiled profile (compiled, or read
    from the cache, only when a command such as ``--compact`` asks for it)."""

    agent: Agent
    compiled: Callable[[], Pipeline]

    @property
    def pipeline(self) -> Pipeline:
        return self.compiled()

    @property
    def conversation(self) -> Conversation:
        return self.agent.conversation

    @property
    def session_path(self) -> str:
        return str(self.agent.conversation.session.path)

    def close(self) -> None:
        """Close the model client's connections (``Pipeline.agent`` builds a ``ChatClient``, which has them)."""
        close = getattr(self.agent.client, "close", None)
        if close is not None:
            close()


def run_plan(args: argparse.Namespace) -> tuple[RunPlan, Callable[[], Pipeline]]:
    """The run plan of the profile and flags ``args`` name (a built-in's from the cache's head when it
    is there: no profile model is loaded), and the compiled profile on demand (compiled once)."""
    from pipeline import profile_cache

    overrides, origin = profile_overrides(args)

    @cache
    def compiled() -> Pipeline:
        from pipeline import compile_profile

        return compile_profile(args.profile, overrides, origin)

    found = profile_cache.cached_plan(args.profile, overrides, origin)
    if found is None:
        print_notices(compiled().warnings)
        return compiled().run_plan, compiled
    print_notices(found.warnings)
    return found.run.with_profile(lambda: compiled().profile), compiled


def build_agent(args: argparse.Namespace, listener: Any = None) -> AgentSetup:
    """The agent for ``args``: the flags checked here (each named in its message), then the agent
    wired from the profile's run plan (:func:`pipeline.wiring.build_agent`, as :meth:`Pipeline.agent`)."""
    from pipeline import LLMAuthError
    from pipeline.wiring import AgentOptions, build_agent as wire_agent, builtin_tool_names

    plan, compiled = run_plan(args)
    if plan.runtime is None:
        raise PipelineError(Problem("the profile has no `runtime` block, which `pipeline run` needs",
                                    Location(plan.origin), key="runtime", hint="extend builtin:default",
                                    code="profile.missing-key"))
    cwd = os.path.abspath(args.cwd)
    if not os.path.isdir(cwd):
        raise UsageError(f"--cwd {args.cwd}: the working directory does not exist or is not a directory")
    if not (args.model or plan.summarizer.model):
        raise PipelineError(Problem("no model given", key="--model", hint="pass --model or set summarizer.model",
                                    code="provider.config"))
    names = [n.strip() for n in args.tools.split(",") if n.strip()]
    known = builtin_tool_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"--tools: unknown tool {unknown[0]!r} (built-in tools: {', '.join(known)})")
    _check_session(args.session, args.new)
    try:  # the key is checked before the session file is touched
        agent = wire_agent(plan, args.session, AgentOptions(
            model=args.model, wire=args.llm, base_url=args.base_url, api_key_env=args.api_key_env,
            tools=names, cwd=cwd, context_window=args.context_window, max_tokens=args.max_tokens,
            mid_conversation_system=args.mid_conversation_system,
            listener=listener or (print_event if args.json else None),
        ))
    except LLMAuthError as err:
        raise _key_problem(err) from None
    return AgentSetup(agent, compiled)


def status_line(event: Any) -> str | None:
    """The stderr line for ``event`` (tool calls, compactions, retries, failures), or None."""
    kind = event.kind
    if kind == "tool_start":
        return f"· {event.name} {_short(event.arguments)}"
    if kind == "compaction_start":
        return f"compacting ({event.reason})…"
    if kind == "compaction_end":
        if event.error:
            return None if event.reason == "manual" else f"compaction failed: {event.error}"
        if event.tokens_before is None or event.tokens_after is None:
            return "compacted"
        return f"compacted: {event.tokens_before:.0f} → {event.tokens_after:.0f} tokens"
    if kind == "retry_start":
        return f"retrying in {event.delay_ms / 1000:g} s ({event.attempt}/{event.max_attempts}): {event.error}"
    return None


def show_status(event: Any, out: Any = None, *, tools: bool = True) -> None:
    """``event`` as its status line on ``out`` (stderr), and a compaction's warnings as `compact` shows them."""
    from pipeline.cli._report import report

    out = out or sys.stderr
    if event.kind == "tool_start" and not tools:
        return
    line = status_line(event)
    if line is not None:
        print(line, file=out, flush=True)
    if event.kind == "compaction_end" and getattr(event, "warnings", ()):
        report(event.warnings, out, count=False)


def force_compaction(setup: AgentSetup, focus: str | None = None, out: Any = None) -> None:
    """`--compact` (and `/compact`): a manual compaction now, its outcome in one line."""
    from pipeline import NothingToCompact
    from pipeline.cli.compact import nothing_line

    out = out or sys.stderr
    session, model = setup.conversation.session, setup.conversation.model
    settings = setup.pipeline.compaction_settings(model)
    summarize = settings.strategy == "summarize"
    done = setup.pipeline.plan_compaction(session, model=model) if summarize else None
    if not isinstance(done, NothingToCompact):  # asked first, so nothing to compact is one line
        done = setup.agent.compact(focus or None).nothing
    if isinstance(done, NothingToCompact):
        print(nothing_line(done, settings), file=out, flush=True)


def _short(value: Any, width: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def print_event(event: Any) -> None:
    """One event as a JSON line on stdout (``--json``)."""
    print(json.dumps(event.to_json(), ensure_ascii=False), flush=True)


def _key_problem(err: Any) -> PipelineError:
    """A missing key, named by the flag that chooses its variable."""
    name = err.env_name
    return PipelineError(Problem(f"no API key: environment variable {name} is not set", key="--api-key-env",
                                 hint=f"export {name}, or name another variable with --api-key-env "
                                      "(a local server that needs no key: pass --base-url alone)",
                                 code="provider.auth"))


def _empty(path: str) -> bool:
    """An existing 0-byte regular file: pi starts a new session in it."""
    target = Path(path)
    return target.is_file() and target.stat().st_size == 0


def _check_session(path: str, new: bool) -> None:
    """The session file's state against ``--new``, before anything else is asked of the user."""
    exists = Path(path).exists()
    if new and exists and not _empty(path):
        raise PipelineError(Problem("file already exists", Location(path), hint="leave out --new to continue it",
                                    code="session.exists"))
    if not new and not exists:
        raise PipelineError(Problem("no such session file", Location(path),
                                    hint=f"to start it, add --new: --session {path} --new",
                                    code="session.unreadable"))
