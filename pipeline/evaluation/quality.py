"""``pipeline eval``: compaction quality without an LLM judge.

For each session and each strategy (``summarize``, ``mask_tool_results``, ``hybrid``) the
evaluation compacts a private copy and measures:

* **recall** of planted facts after 1, 2 and 5 successive compactions: the share of the
  facts planted so far whose exact text is still in the context the model would get
  (summary, pinned texts and kept messages). Generated conversations get one segment
  appended before each compaction; a team's own session is compacted once, and its facts
  are the paths its tool calls name;
* **F1** of the summary's ``<read-files>``/``<modified-files>`` lists against the
  ``read``/``write``/``edit`` calls of everything summarized so far;
* **validity rate**: valid summary answers / all answers (``SummaryOutcome``);
* **compression**: context tokens before / after, per compaction (mean);
* **tokens sent per task**: the summary requests' input (estimated) plus the context
  size after each compaction (what the next turn sends);
* **saving**: 1 − final context / the same conversation uncompacted.

Token counts are the profile's estimates (``chars_per_token``). With the offline
summarizer everything is deterministic.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from pipeline.compaction.driver import STRATEGIES
from pipeline.compaction.tokens import estimate_tokens
from pipeline.evaluation.generate import Generated, facts_path
from pipeline.session import SessionFile
from pipeline.session.projection import build_context, build_session_context
from pipeline.model.run_plan import ContextTexts

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

RECALL_AT = (1, 2, 5)


class _Recording:
    """A summary client that counts the characters it is sent."""

    def __init__(self, inner) -> None:
        self.inner, self.provider, self.chars = inner, inner.provider, 0

    def complete(self, request):
        self.chars += len(request.system_prompt) + len(request.user_text)
        return self.inner.complete(request)

    def build_body(self, request):
        return self.inner.build_body(request)


@dataclass
class Measure:
    """The figures of one session under one strategy."""

    session: str
    strategy: str
    recall: dict[int, float] = field(default_factory=dict)
    f1_read: float | None = None
    f1_modified: float | None = None
    outcomes: list[str] = field(default_factory=list)
    compression: list[float] = field(default_factory=list)
    tokens_sent: float = 0
    final_tokens: float = 0
    uncompacted_tokens: float = 0

    @property
    def validity(self) -> float | None:
        return (sum(o == "valid" for o in self.outcomes) / len(self.outcomes)) if self.outcomes else None

    @property
    def saving(self) -> float:
        return 1 - self.final_tokens / self.uncompacted_tokens if self.uncompacted_tokens else 0.0

    def to_json(self) -> dict[str, object]:
        return {"session": self.session, "strategy": self.strategy,
                "recall": {str(k): v for k, v in self.recall.items()}, "f1ReadFiles": self.f1_read,
                "f1ModifiedFiles": self.f1_modified, "validity": self.validity,
                "compression": _mean(self.compression), "tokensSent": self.tokens_sent,
                "finalTokens": self.final_tokens, "uncompactedTokens": self.uncompacted_tokens,
                "saving": self.saving}


def _mean(values: Sequence[float | None]) -> float | None:
    real = [v for v in values if v is not None and not math.isnan(v)]
    return sum(real) / len(real) if real else None


def _context(session: SessionFile, texts: ContextTexts) -> tuple[str, float, object]:
    context = build_context(session, texts)
    text = "\n".join(_message_text(m) for m in context.messages)
    return text, sum(estimate_tokens(m) for m in build_session_context(session).messages), context


def _message_text(message) -> str:
    content = getattr(message, "content", ())
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        parts.append(getattr(block, "text", "") or getattr(block, "thinking", "") or "")
        if getattr(block, "type", "") == "toolCall":
            parts.append(json.dumps(getattr(block, "arguments", {}), ensure_ascii=False))
    return "\n".join(parts)


def _file_truth(session: SessionFile) -> tuple[set[str], set[str]]:
    """Read-only and modified paths of the calls before the latest compaction's kept part."""
    path = session.path_to()
    latest = next((e for e in reversed(path) if e.type == "compaction"), None)
    if latest is None:
        return set(), set()
    read, modified = set(), set()
    for entry in path:
        if entry.id == latest.first_kept_entry_id:
            break
        message = getattr(entry, "message", None) if entry.type == "message" else None
        for block in getattr(message, "content", ()) or ():
            if getattr(block, "type", "") != "toolCall":
                continue
            target = (block.arguments or {}).get("path") if isinstance(block.arguments, dict) else None
            if isinstance(target, str) and target:
                (read if block.name == "read" else modified if block.name in ("write", "edit") else set()).add(target)
    return read - modified, modified


def _listed(summary: str, tag: str) -> set[str]:
    start, end = f"<{tag}>\n", f"\n</{tag}>"
    if start not in summary:
        return set()
    body = summary.split(start, 1)[1].split(end, 1)[0]
    return {line for line in body.splitlines() if line}


def f1(found: set[str], truth: set[str]) -> float | None:
    if not found and not truth:
        return None
    hit = len(found & truth)
    if not hit:
        return 0.0
    precision, recall = hit / len(found), hit / len(truth)
    return 2 * precision * recall / (precision + recall)


def _recall(text: str, facts: Sequence[dict]) -> float | None:
    return sum(f["value"] in text for f in facts) / len(facts) if facts else None


class Evaluator:
    """Runs the strategies on sessions with one compiled profile (a :class:`pipeline.Pipeline`,
    which compacts: the one driver) and one summary client."""

    def __init__(self, pipeline: Pipeline, client, *, window: int, strategies: Sequence[str] = STRATEGIES) -> None:
        self.pipeline, self.profile = pipeline, pipeline.profile
        self.client, self.window, self.strategies = client, window, tuple(strategies)
        self.texts = ContextTexts.from_profile(self.profile)

    def _compact(self, session: SessionFile, strategy: str, m: Measure, recorder: _Recording) -> None:
        _, before, _ = _context(session, self.texts)
        done = self.pipeline.compact(session, window=self.window, strategy=strategy, client=recorder)
        if done.result is not None:
            m.outcomes += [o.verdict for o in done.result.outcomes]
        _, after, _ = _context(SessionFile.open(session.path), self.texts)
        if done.did_anything and after:
            m.compression.append(before / after)
        m.tokens_sent += after

    def _files(self, session: SessionFile, m: Measure) -> None:
        latest = next((e for e in reversed(session.path_to()) if e.type == "compaction"), None)
        if latest is None:
            return
        read, modified = _file_truth(session)
        tags = self.profile.summary.tags
        m.f1_read = f1(_listed(latest.summary, tags.read_files), read)
        m.f1_modified = f1(_listed(latest.summary, tags.modified_files), modified)

    def generated(self, name: str, conversation: Generated, strategy: str, work: Path) -> Measure:
        """Append a segment, compact, measure; up to ``max(RECALL_AT)`` compactions."""
        m, recorder = Measure(name, strategy), _Recording(self.client)
        path = work / f"{name}-{strategy}.jsonl"
        conversation.write(path, 1)
        planted: list[dict] = []
        for k in range(1, len(conversation.segments) + 1):
            if k > 1:
                _append_segment(path, conversation.segments[k - 1])
            planted += [f.to_json() for f in conversation.facts if f.segment == k - 1]
            session = SessionFile.open(path)
            self._compact(session, strategy, m, recorder)
            if k in RECALL_AT:
                m.recall[k] = _recall(_context(SessionFile.open(path), self.texts)[0], planted)
        final = SessionFile.open(path)
        self._files(final, m)
        m.final_tokens = _context(final, self.texts)[1]
        full = work / f"{name}-full.jsonl"
        conversation.write(full)
        m.uncompacted_tokens = _context(SessionFile.open(full), self.texts)[1]
        m.tokens_sent += recorder.chars / self.profile.compaction.chars_per_token
        return m

    def own(self, source: Path, strategy: str, work: Path) -> Measure:
        """A team's session: one compaction of a copy; facts = the paths its tool calls name (or its facts file)."""
        m, recorder = Measure(source.name, strategy), _Recording(self.client)
        path = work / f"{source.stem}-{strategy}.jsonl"
        shutil.copyfile(source, path)
        original = SessionFile.open(path)
        text, m.uncompacted_tokens, _ = _context(original, self.texts)
        facts = _own_facts(source, original)
        self._compact(original, strategy, m, recorder)
        final = SessionFile.open(path)
        m.recall[1] = _recall(_context(final, self.texts)[0], facts)
        self._files(final, m)
        m.final_tokens = _context(final, self.texts)[1]
        m.tokens_sent += recorder.chars / self.profile.compaction.chars_per_token
        return m

    def run(self, generated: dict[str, Generated], own: Sequence[Path]) -> list[Measure]:
        out = []
        with tempfile.TemporaryDirectory(prefix="pipeline-eval-") as tmp:
            for strategy in self.strategies:
                out += [self.generated(name, conv, strategy, Path(tmp)) for name, conv in generated.items()]
                out += [self.own(path, strategy, Path(tmp)) for path in own]
        return out


def _append_segment(path: Path, lines: Sequence[str]) -> None:
    """Append a segment under the file's current leaf (its first entry re-parented there)."""
    leaf = SessionFile.open(path).leaf_id
    first = json.loads(lines[0])
    first["parentId"] = leaf
    with path.open("a", encoding="utf-8") as out:
        out.write("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]) + "\n")


def _own_facts(source: Path, session: SessionFile) -> list[dict]:
    planted = facts_path(source)
    if planted.is_file():
        return json.loads(planted.read_text(encoding="utf-8"))["facts"]
    paths = set()
    for entry in session.path_to():
        message = getattr(entry, "message", None) if entry.type == "message" else None
        for block in getattr(message, "content", ()) or ():
            args = getattr(block, "arguments", None)
            if getattr(block, "type", "") == "toolCall" and isinstance(args, dict) and isinstance(args.get("path"), str):
                paths.add(args["path"])
    return [{"kind": "path", "value": p} for p in sorted(paths)]


@dataclass(frozen=True)
class Row:
    """One strategy's means over the sessions."""

    strategy: str
    recall: dict[int, float | None]
    f1_read: float | None
    f1_modified: float | None
    validity: float | None
    compression: float | None
    tokens_sent: float | None
    saving: float | None

    def to_json(self) -> dict[str, object]:
        return {"strategy": self.strategy, "recall": {str(k): v for k, v in self.recall.items()},
                "f1ReadFiles": self.f1_read, "f1ModifiedFiles": self.f1_modified, "validity": self.validity,
                "compression": self.compression, "tokensSent": self.tokens_sent, "saving": self.saving}


def summarize_rows(measures: Sequence[Measure]) -> list[Row]:
    rows = []
    for strategy in dict.fromkeys(m.strategy for m in measures):
        mine = [m for m in measures if m.strategy == strategy]
        outcomes = [o for m in mine for o in m.outcomes]
        rows.append(Row(
            strategy, {k: _mean([m.recall.get(k) for m in mine]) for k in RECALL_AT},
            _mean([m.f1_read for m in mine]), _mean([m.f1_modified for m in mine]),
            (sum(o == "valid" for o in outcomes) / len(outcomes)) if outcomes else None,
            _mean([_mean(m.compression) for m in mine]), _mean([m.tokens_sent for m in mine]),
            _mean([m.saving for m in mine]),
        ))
    return rows
