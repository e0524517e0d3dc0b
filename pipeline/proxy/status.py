"""The proxy's status page (``GET /``): what the policy does, for the people who run it.

Server-rendered HTML (jinja2, tool output only) with no script and nothing fetched: the
profile and its trigger, the counters, the system prompt the profile puts around the
agent's own, and per conversation (the most recent first) its context over its last
requests against the trigger, as an inline SVG: the tokens the agent sent and the tokens
forwarded after the policy. No message text is shown: the store keeps none.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any

from pipeline.proxy.policy import Surround
from pipeline.proxy.store import ProxyStore

TEMPLATE_DIR = Path(__file__).resolve().parent / "jinja"
#: conversations shown, the most recent first
SHOWN = 50
WIDTH, HEIGHT = 360, 80


@dataclass(frozen=True)
class StatusInfo:
    """What the page says of the proxy itself."""

    profile: str
    window: int
    threshold: float
    strategy: str
    around: Surround


@lru_cache(maxsize=1)
def _environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    return Environment(loader=FileSystemLoader(str(TEMPLATE_DIR)), undefined=StrictUndefined,
                       autoescape=select_autoescape(enabled_extensions=("html.j2",), default_for_string=True),
                       trim_blocks=True, lstrip_blocks=True)


def status_html(info: StatusInfo, store: ProxyStore) -> bytes:
    counters = store.counters()
    inputs = counters.get("input_tokens", 0)
    share = counters.get("cache_read_tokens", 0) / inputs if inputs else None
    rows = [_row(c, store.history(str(c["id"])), info.threshold) for c in islice(store.conversations(), SHOWN)]
    page = _environment().get_template("status.html.j2").render(
        info=info, counters=counters, share=share, conversations=rows, width=WIDTH, height=HEIGHT)
    return page.encode("utf-8")


def _row(record: dict[str, Any], history: list[tuple[float, int, int]], threshold: float) -> dict[str, Any]:
    top = max([threshold * 1.1, *(b for _, b, _ in history), 1.0])

    def points(column: int) -> str:
        n = max(len(history) - 1, 1)
        return " ".join(f"{i * WIDTH / n:.1f},{HEIGHT - h[column] * HEIGHT / top:.1f}" for i, h in enumerate(history))

    inputs = int(record.get("input_tokens") or 0)
    return {**record, "short": str(record["id"])[:12], "sent": points(1), "forwarded": points(2),
            "trigger_y": f"{HEIGHT - threshold * HEIGHT / top:.1f}", "points": len(history),
            "share": (int(record.get("cache_read") or 0) / inputs) if inputs else None}
