"""Serve the profile on the wire: a gateway between coding agents and their model providers.

`pipeline proxy [PROFILE]` listens on --listen (default 127.0.0.1:8787; port 0 picks a free
one) and forwards each request to its provider (docs/proxy.md), with the profile's system prompt
around the agent's own: the team's sections (`owner: team`) are added where the profile
places them, rendered for --cwd; with `system_prompt.base: profile` the profile's whole
prompt replaces the agent's. A conversation past the profile's trigger (for its
model's window: the profile's, else a table of well-known models, else --context-window) is compacted by the profile's strategy: old tool results masked
(`mask_tool_results`), or old messages replaced by the profile's summary
(`summarize`; `hybrid`: masked, then summarized when that is not enough; one call upstream with the client's model and key, stored and reused), in
steps that repeat byte for byte (the provider's cache holds). A request the profile
leaves alone passes byte for byte. Point the agent at it:

  Claude Code   ANTHROPIC_BASE_URL=http://127.0.0.1:8787
  OpenAI SDKs   base_url=http://127.0.0.1:8787/v1   (Codex, opencode, pi: their provider's base URL)
  Gemini CLI    GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8787

Once it accepts connections it prints one line on stderr,
`pipeline proxy: listening on http://HOST:PORT`, and serves until SIGINT or SIGTERM; then
it finishes the requests in flight (cancelling those still running after --graceful
seconds) and exits 0. The client's credentials go upstream untouched, never logged or
stored. Upstreams get the profile's deadlines: no silence past summarizer.timeout_s, the
whole answer within summarizer.call_deadline_s (raise it for answers that stream longer).
Beyond loopback the proxy serves only clients presenting the token held in the
--token-env variable (header x-pipeline-token).

GET /_pipeline/stats returns the proxy's counters as JSON (requests, unchanged,
rewritten, compactions, summaries_reused, masked_results, tokens_saved, ...), kept in --store across
restarts with the masking steps. Several replicas behind one address share them with
--store redis://HOST:PORT/DB: one summary per history across the fleet; a Redis that goes
away leaves the requests passing through (one warning on stderr) until it is back.

examples:
  pipeline proxy
  pipeline proxy team.yaml --listen 127.0.0.1:0 --store sqlite:/tmp/proxy-store.db
  pipeline proxy --anthropic-url http://127.0.0.1:9000 --openai-url http://127.0.0.1:9000/v1
  pipeline proxy team.yaml --store redis://127.0.0.1:6379/0
"""

from __future__ import annotations

import argparse

HELP = ("a gateway between coding agents and their providers that applies the profile's system prompt and "
        "compaction (docs/proxy.md)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", nargs="?", default="default", metavar="PROFILE",
                        help="a profile file or built-in name (default: default)")
    parser.add_argument("--listen", default="127.0.0.1:8787", metavar="HOST:PORT",
                        help="where to listen (default: 127.0.0.1:8787; port 0 picks a free port)")
    parser.add_argument("--anthropic-url", default=None, metavar="URL",
                        help="the Anthropic upstream (default: https://api.anthropic.com)")
    parser.add_argument("--openai-url", default=None, metavar="URL",
                        help="the OpenAI upstream, with its version segment (default: https://api.openai.com/v1)")
    parser.add_argument("--gemini-url", default=None, metavar="URL",
                        help="the Gemini upstream (default: https://generativelanguage.googleapis.com)")
    parser.add_argument("--store", default=None, metavar="sqlite:PATH|redis://HOST:PORT/DB",
                        help="where summaries and counters are kept (default: sqlite under the user's state "
                             "directory, $XDG_STATE_HOME/context-pipeline/proxy-store.db); redis://... shares "
                             "them between replicas (docs/proxy.md, Running a fleet)")
    parser.add_argument("--token-env", default=None, metavar="NAME",
                        help="the environment variable holding the token clients must present (header "
                             "x-pipeline-token); required when --listen is not a loopback address")
    parser.add_argument("--cwd", default=None, metavar="DIR",
                        help="the working directory the profile's ${cwd} names (default: the proxy's own)")
    parser.add_argument("--context-window", type=int, default=None, metavar="TOKENS",
                        help="the context window the compaction trigger is read against for a model the profile "
                             "and the table of well-known models (docs/proxy.md) do not know (default: "
                             "compaction.branch.default_context_window)")
    parser.add_argument("--prepare-at", type=float, default=0.8, metavar="SHARE",
                        help="start a conversation's summary in the background once it passes this share of the "
                             "trigger's threshold, so the request that crosses it does not wait (default: 0.8; "
                             "0: off)")
    parser.add_argument("--max-body", type=int, default=64 * 1024 * 1024, metavar="BYTES",
                        help="the largest request body accepted; a larger one is answered 413 (default: 64 MiB)")
    parser.add_argument("--graceful", type=float, default=30.0, metavar="SECONDS",
                        help="how long requests in flight may run on after SIGINT/SIGTERM (default: 30)")


def run(args: argparse.Namespace) -> int:
    from pipeline import compile_profile
    from pipeline.cli._report import report
    from pipeline.proxy.command import start

    pipeline = compile_profile(args.profile)
    report(pipeline.warnings)
    start(pipeline, args)
    return 0
