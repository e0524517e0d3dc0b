"""`python -m pipeline.loopback`: a scripted model server on 127.0.0.1, to try the agent without a key.

  python -m pipeline.loopback [--port N] [--reply TEXT ...]

It speaks OpenAI chat completions (base URL `http://127.0.0.1:PORT/v1`) and Anthropic
messages (`http://127.0.0.1:PORT`), streaming or not. Each request gets the next `--reply`
(the last one repeats); without `--reply` it answers with the last user message it
received, echoed. It prints one line with its URLs and a `pipeline chat` command that uses
it, then serves until Ctrl-C. Nothing leaves the machine; any API key is accepted.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any, Optional, Sequence

from pipeline.loopback.chat import LoopbackServer


def echo(body: Any) -> Optional[str]:
    """The last user message's text, as the reply (None when there is none)."""
    if not isinstance(body, dict):
        return None
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            parts = content if isinstance(content, list) else [{"text": content}]
            text = "".join(str(p.get("text") or "") for p in parts if isinstance(p, dict))
            return f"echo: {text}"
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.loopback", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="the port (default: 0, a free one)")
    parser.add_argument("--reply", action="append", default=[], metavar="TEXT",
                        help="a scripted reply (repeatable; default: echo the last user message)")
    args = parser.parse_args(argv)
    server = LoopbackServer(args.reply, aside=None if args.reply else echo)
    server.port = args.port
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        print(f"pipeline.loopback: serving on {server.url} (OpenAI base URL {server.openai_base_url}, "
              f"Anthropic {server.anthropic_base_url}); try: LOOPBACK_KEY=any pipeline chat --session "
              f"/tmp/loopback.jsonl --new --llm openai --model loopback --base-url {server.openai_base_url} "
              "--api-key-env LOOPBACK_KEY", flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
