"""The offline summarizer: the embedded default that needs no network and no key.

It has the same shape as the HTTP clients (``provider``, ``build_body(request)``,
``complete(request)``), so the compaction engine treats every provider alike. Instead of
asking a model it reads the request it is given (the serialized conversation between
the profile's conversation tags, and the previous summary between its tags) and fills
the profile's schema, deterministically, from what the conversation itself shows:

* ``requests`` — the user's messages; ``last_request`` — the last one. Only messages the
  user typed count: the requests of :mod:`pipeline.compaction.requests` list them
  (``user_requests``), since summaries, extension messages and ``!command`` runs are
  user messages in the serialized conversation too; without that list every user part
  of the conversation counts;
* ``tool_calls`` — the calls the assistant made (``name(args)``);
* ``files_read`` / ``files_modified`` — paths of ``read`` / ``write``/``edit`` calls;
* ``notes`` — the assistant's last text.

``summary.offline.fill`` says which of these goes under which heading (``Goal``,
``Progress/Done``...); a heading with nothing to show gets ``summary.offline.empty``.
Every heading of the schema is written, so the result always passes the schema check.
On an update the previous summary's lines are kept and the new ones added (fills using
``last_request`` replace instead). All words come from the profile.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from pipeline.js import JS_WS_RE, js_trim, u16len, u16slice
from pipeline.llm.errors import LLMConfigError
from pipeline.llm.types import Completion, SummaryRequest
from pipeline.session.messages import Usage
from pipeline.model.summary import Offline, OfflineFill, SchemaSection, Summary

PROVIDER = "offline"
_DECODER = json.JSONDecoder()
_SPACE_RUN = re.compile(JS_WS_RE + "+")


# --------------------------------------------------------------------------- reading the request


@dataclass
class Facts:
    """What the conversation shows, in order of appearance."""

    requests: list[str] = field(default_factory=list)
    tool_calls: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    files_modified: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def values(self, source: str) -> list[str]:
        """The values of one fill source."""
        if source == "last_request":
            return self.requests[-1:]
        if source == "notes":
            return self.notes[-1:]
        if source == "files_read":
            return [p for p in self.files_read if p not in self.files_modified]
        return list(getattr(self, source))


def split_request(user_text: str, summary: Summary) -> tuple[str, str | None]:
    """The serialized conversation and the previous summary (if any) of a request's user text."""
    conv, prev = summary.tags.conversation, summary.tags.previous_summary
    opening = f"<{conv}>\n"
    start = user_text.find(opening)
    if start < 0:
        return "", None
    body = start + len(opening)
    marker = f"\n</{conv}>\n\n<{prev}>\n"
    cut = user_text.rfind(marker)
    if cut >= body:
        prev_start = cut + len(marker)
        prev_end = user_text.rfind(f"\n</{prev}>", prev_start)
        return user_text[body:cut], (user_text[prev_start:prev_end] if prev_end >= 0 else None)
    end = user_text.rfind(f"\n</{conv}>", body)
    return (user_text[body:end] if end >= 0 else ""), None


def _parts(conversation: str, summary: Summary) -> list[tuple[str, str]]:
    """``(label name, body)`` of each part of the serialized conversation."""
    labels = summary.labels.model_dump()
    by_text = sorted(labels.items(), key=lambda kv: -len(kv[1]))
    alternatives = "|".join(re.escape(text) for _, text in by_text if text)
    if not alternatives:
        return []
    out = []
    for chunk in re.split(f"\n\n(?={alternatives})", conversation):
        for name, text in by_text:
            if text and chunk.startswith(text):
                out.append((name, chunk[len(text) :]))
                break
    return out


def _parse_arguments(body: str, pos: int) -> tuple[dict | None, int]:
    """``key=JSON, key=JSON`` from ``pos`` up to the closing parenthesis; returns its index."""
    args: dict = {}
    decoder = _DECODER
    while pos < len(body) and body[pos] != ")":
        eq = body.find("=", pos)
        if eq < 0:
            return None, len(body)
        try:
            args[body[pos:eq]], pos = decoder.raw_decode(body, eq + 1)
        except json.JSONDecodeError:
            close = body.find(")", eq)
            return None, close if close >= 0 else len(body)
        if body.startswith(", ", pos):
            pos += 2
    return args, pos


def parse_calls(body: str) -> list[tuple[str, dict | None, str]]:
    """Tool calls of a ``name(key=JSON, ...); ...`` line: ``(name, arguments or None, text)``."""
    calls, pos = [], 0
    while pos < len(body):
        open_at = body.find("(", pos)
        if open_at < 0:
            break
        args, close = _parse_arguments(body, open_at + 1)
        calls.append((body[pos:open_at], args, body[pos : close + 1]))
        pos = close + 1
        if body.startswith("; ", pos):
            pos += 2
    return calls


def call_text(name: str, args: dict | None, text: str) -> str:
    """A call as one short value: ``name path``, ``name: command``, or the call as serialized."""
    path = args.get("path") if isinstance(args, dict) else None
    if isinstance(path, str) and path:
        return f"{name} {path}"
    command = args.get("command") if isinstance(args, dict) else None
    return f"{name}: {command}" if isinstance(command, str) and command else text


def _add_call(facts: Facts, name: str, args: dict | None, text: str) -> None:
    facts.tool_calls.append(call_text(name, args, text))
    path = args.get("path") if isinstance(args, dict) else None
    if not isinstance(path, str) or not path:
        return
    target = facts.files_read if name == "read" else facts.files_modified if name in ("write", "edit") else None
    if target is not None and path not in target:
        target.append(path)


def read_facts(conversation: str, summary: Summary) -> Facts:
    """Collect :class:`Facts` from a serialized conversation."""
    facts = Facts()
    for label, body in _parts(conversation, summary):
        if label == "user":
            facts.requests.append(body)
        elif label == "assistant" and js_trim(body):
            facts.notes.append(body)
        elif label == "tool_calls":
            for name, args, text in parse_calls(body):
                _add_call(facts, name, args, text)
    return facts


# --------------------------------------------------------------------------- the previous summary


def _strip_appendix(previous: str, summary: Summary) -> str:
    """The previous summary without a split-turn part and without the file lists."""
    cut_at = [previous.find(summary.split_turn_separator.render())]
    for tag in (summary.tags.read_files, summary.tags.modified_files):
        cut_at.append(previous.find(f"\n\n<{tag}>\n"))
    found = [i for i in cut_at if i >= 0]
    return previous[: min(found)] if found else previous


def previous_lines(previous: str, sections: Sequence[SchemaSection], summary: Summary) -> dict[str, list[str]]:
    """The lines under each heading (``Goal``, ``Progress/Done``) of a previous summary."""
    fmt, empty = summary.schema_format, summary.offline.empty.render() if summary.offline else ""
    heads = {fmt.section_prefix + s.heading: s for s in sections}
    out: dict[str, list[str]] = {}
    key, section = None, None
    for line in _strip_appendix(previous, summary).split("\n"):
        stripped = line.rstrip()
        if stripped in heads:
            section = heads[stripped]
            key = section.heading
        elif section and stripped in {fmt.item_prefix + i.heading for i in section.items}:
            key = f"{section.heading}/{stripped[len(fmt.item_prefix):]}"
        elif key and js_trim(line) and js_trim(line) != empty:
            out.setdefault(key, []).append(line)
    return out


# --------------------------------------------------------------------------- writing the summary


def one_line(text: str, offline: Offline) -> str:
    """Whitespace runs collapsed, trimmed, cut to ``max_item_chars`` with the ellipsis.

    The cut never splits a surrogate pair (an emoji is kept whole or left out).
    """
    flat = js_trim(_SPACE_RUN.sub(" ", text))
    if u16len(flat) <= offline.max_item_chars:
        return flat
    cut = u16slice(flat, 0, offline.max_item_chars)
    if cut and "\ud800" <= cut[-1] <= "\udbff":
        cut = cut[:-1]
    return cut + offline.ellipsis


def _dedupe(lines: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(lines))


def fill_lines(fill: OfflineFill, facts: Facts, offline: Offline, previous: list[str]) -> list[str]:
    """The lines written for one fill: new values (formatted), merged with the previous lines."""
    values = [one_line(v, offline) for source in fill.sources for v in facts.values(source)]
    new = [fill.item.render(text=v) for v in _dedupe(v for v in values if v)]
    replaces = "last_request" in fill.sources and new
    lines = new if replaces else _dedupe([*previous, *new])
    return lines[-fill.max_items :]


@dataclass(frozen=True)
class _Writer:
    summary: Summary
    offline: Offline
    facts: Facts
    previous: dict[str, list[str]]

    def body(self, key: str, fills: dict[str, OfflineFill]) -> str:
        fill = fills.get(key)
        if fill is not None:
            lines = fill_lines(fill, self.facts, self.offline, self.previous.get(key, []))
        else:
            lines = self.previous.get(key, [])
        return "\n".join(lines) if lines else self.offline.empty.render()

    def section(self, section: SchemaSection, fills: dict[str, OfflineFill]) -> str:
        fmt = self.summary.schema_format
        text = fmt.section_prefix + section.heading
        if not section.items or section.heading in fills:
            text += "\n" + self.body(section.heading, fills)
        items = (
            fmt.item_prefix + item.heading + "\n" + self.body(f"{section.heading}/{item.heading}", fills)
            for item in section.items
        )
        return text + ("\n" + "\n\n".join(items) if section.items else "")


def write_summary(
    sections: Sequence[SchemaSection], fills: Sequence[OfflineFill], facts: Facts, previous: str | None, summary: Summary
) -> str:
    """Every section of ``sections`` filled from ``facts`` (and the previous summary's lines)."""
    offline = _offline(summary)
    before = previous_lines(previous, sections, summary) if previous else {}
    writer = _Writer(summary, offline, facts, before)
    by_heading = {fill.heading: fill for fill in fills}
    return "\n\n".join(writer.section(section, by_heading) for section in sections)


def _offline(summary: Summary) -> Offline:
    if summary.offline is None:
        raise LLMConfigError(
            "offline: the profile has no `summary.offline` block, so the offline summarizer has no words to use",
            hint="add summary.offline (see the default profile), or choose another summarizer provider",
        )
    return summary.offline


# --------------------------------------------------------------------------- the client


class OfflineClient:
    """A summary client that writes the summary itself from the request's conversation."""

    provider = PROVIDER

    def __init__(self, summary: Summary, *, model: str = PROVIDER) -> None:
        _offline(summary)
        self.summary = summary
        self.model = model or PROVIDER

    def build_body(self, request: SummaryRequest) -> dict[str, object]:
        """Our internal request (nothing is sent anywhere)."""
        return {
            "provider": PROVIDER,
            "model": request.model or self.model,
            "kind": request.kind,
            "max_tokens": request.max_tokens,
            "system": request.system_prompt,
            "user": request.user_text,
        }

    def complete(self, request: SummaryRequest) -> Completion:
        """The filled schema for ``request``; deterministic, no usage."""
        conversation, previous = split_request(request.user_text, self.summary)
        facts = read_facts(conversation, self.summary)
        asked = getattr(request, "user_requests", None)  # the genuine user messages, when the request knows them
        if asked is not None:
            facts.requests = list(asked)
        sections, fills = self._layout(request.kind)
        text = write_summary(sections, fills, facts, previous, self.summary)
        return Completion(text=text, usage=Usage(), stop_reason="stop", model=request.model or self.model, provider=PROVIDER)

    def _layout(self, kind: str) -> tuple[tuple[SchemaSection, ...], tuple[OfflineFill, ...]]:
        offline = _offline(self.summary)
        if kind.startswith("turn_prefix") and offline.turn_prefix:
            return tuple(SchemaSection(heading=f.heading) for f in offline.turn_prefix), offline.turn_prefix
        if kind.startswith("branch"):
            return self.summary.branch_schema or self.summary.schema_, offline.fill
        return self.summary.schema_, offline.fill
