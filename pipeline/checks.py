"""Every rule beyond one field's type: unknown ``${variables}`` and the cross-field checks.

:func:`variable_problems` runs on the merged data before the models validate it (so an
unknown variable is reported together with type errors); :func:`check_profile` runs on
the validated :class:`~pipeline.model.profile.Profile` and returns errors and warnings, located
through the source map when there is one. ``docs/profile.md`` ("Checks") lists every
rule. :func:`budgets` and :func:`template_source_path` are the derived values the rules
look at; :mod:`pipeline.compiler` re-exports them.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import Problem, did_you_mean
from pipeline.model.profile import Profile
from pipeline.model.prompt import When
from pipeline.model.templates import TEMPLATE_KEYWORDS, DialectSource, source_path  # noqa: F401
from pipeline.model.text import Text
from pipeline.model.envname import ENV_NAME_HINT, SECRET_KEYS, env_name_problem, url_secret_problem  # noqa: F401
from pipeline.model.variables import variables_for
from pipeline.errors import Location
from pipeline.source.chain import builtin_of
from pipeline.source.tree import SourceMap
from pipeline.source.locate import SECTIONS, KeyNames, template_source_path, var_locations  # noqa: F401

LIST_KINDS = ("tool_list", "rules", "context_files", "skills")
#: The values the window rules weigh together (a problem from a built-in is located at the user's one).
WINDOW_VALUES = (("compaction", "reserve_tokens"), ("compaction", "keep_recent_tokens"),
                 ("compaction", "trigger"), ("summarizer", "context_window"))
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class Budgets:
    """Token budgets that follow from the compaction settings.

    The summarizer still caps the summary budgets at the model's own output limit.
    """

    reserve_tokens: int
    history_tokens: int  # floor(summary_budget.history * reserve_tokens)
    turn_prefix_tokens: int  # floor(summary_budget.turn_prefix * reserve_tokens)

    def threshold(self, context_window: int) -> int:
        """Compaction starts when the context holds more tokens than this."""
        return context_window - self.reserve_tokens



def budgets(profile: Profile) -> Budgets:
    """The token budgets that follow from a profile's compaction settings."""
    c = profile.compaction
    return Budgets(
        reserve_tokens=c.reserve_tokens,
        history_tokens=math.floor(c.summary_budget.history * c.reserve_tokens),
        turn_prefix_tokens=math.floor(c.summary_budget.turn_prefix * c.reserve_tokens),
    )


def check_profile(profile: Profile, source_map: SourceMap) -> list[Problem]:
    """The errors and warnings of every cross-field rule, in rule order."""
    checker = Checker(profile, source_map)
    checker.run()
    return checker.problems


def window_problems(profile: Profile, source_map: SourceMap, window: int, name: str) -> list[Problem]:
    """The compaction rules checked against the window of a model the profile does not
    name (``validate --model-window N``, or a runtime that knows its model): ``name`` says
    where the window came from and appears in each message; problems stand at the keys."""
    checker = Checker(profile, source_map)
    checker.group = "profile.compaction-rule"
    checker.window_origin = Location(name) if name.startswith("-") else None
    checker.window(window, name)
    return checker.problems


# --------------------------------------------------------------------------- variables


def _section_kinds(data: Any) -> dict[int, Any]:
    try:
        sections = data["system_prompt"]["sections"]
        return {i: (s.get("kind", "text") if isinstance(s, dict) else None) for i, s in enumerate(sections)}
    except (KeyError, TypeError):
        return {}


def variable_problems(data: Any, source_map: SourceMap) -> list[Problem]:
    """Every ``${name}`` a field does not offer, located inside its YAML scalar."""
    from pipeline.model.introspect import texts

    kinds = _section_kinds(data)
    name_key = KeyNames(data)
    problems: list[Problem] = []
    for path, raw in texts(Profile, data):
        kind = kinds.get(path[2]) if tuple(path[:2]) == SECTIONS and len(path) > 3 else None
        if path[-1] in ("item", "empty") and len(path) == 4 and kind not in LIST_KINDS:
            continue  # a kind typo or a misplaced `item` is reported on its own
        entry = source_map.get(path)
        problems.extend(_unclosed_problem(path, entry.value if entry else None, i, offset, name_key)
                        for i, offset in enumerate(unclosed_variables(raw)))
        allowed = variables_for(path, kind)
        unknown = [(i, v.name) for i, v in enumerate(Text(raw).variables) if v.name not in allowed]
        if not unknown:
            continue
        where = var_locations(entry.value, raw) if entry else None
        for index, name in unknown:
            location = where[index] if where is not None else None
            problems.append(_unknown_variable(path, location, name, allowed, name_key))
    return problems


_UNCLOSED = re.compile(r"\$\$\{|\$\{[A-Za-z_][A-Za-z0-9_]*\}|(\$\{)[^}\n]*(?=\n|$)")


def unclosed_variables(raw: str) -> list[int]:
    """Offsets of every ``${`` with no ``}`` before the end of its line (``$${`` is a literal)."""
    return [m.start(1) for m in _UNCLOSED.finditer(raw) if m.group(1)]


def _unclosed_problem(path, span, index: int, offset: int, name_key: KeyNames) -> Problem:
    """A warning (failing ``validate --strict``): the text renders the ``${`` as written."""
    return Problem(
        "unclosed `${`: this text renders it as written", _unclosed_location(span, index, offset),
        key=name_key(path), hint="close it (`${name}`) or write `$${` for a literal `${`", severity="warning",
        code="profile.unclosed-variable",
    )


def _unclosed_location(span, index: int, offset: int) -> Location | None:
    """Where the ``index``-th unclosed ``${`` of a value (at ``offset`` in it) is in its YAML
    scalar: found in the scalar's source text, else estimated from the value."""
    if span is None:
        return None
    if span.line is None or span.col is None:  # set by a flag or an override
        return span.location
    written = unclosed_variables(span.source) if span.source is not None else []
    text, at, opening = (span.source, written[index], 0) if index < len(written) else (
        "", offset, 1 if span.style in ("'", '"') else 0)
    text = text or ""
    line = text.count("\n", 0, at) + 1 if text else 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1 if text else at + 1
    if line == 1:
        return Location(span.file, span.line, span.col + opening + col - 1)
    return Location(span.file, span.line + line - 1, col)


def _unknown_variable(path, location, name, allowed, name_key: KeyNames) -> Problem:
    close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    if close:
        hint = f"did you mean `${{{close[0]}}}`?"
    elif allowed:
        hint = "this field offers " + ", ".join(f"`${{{a}}}`" for a in allowed)
    else:
        hint = "this field offers no variables; write `$${` for a literal `${`"
    return Problem(
        f"unknown variable `${{{name}}}`", location, key=name_key(path), hint=hint, code="profile.unknown-variable"
    )


# --------------------------------------------------------------------------- cross-field checks


class Checker:
    """The rules no single field can check; collects errors and warnings."""

    def __init__(self, profile: Profile, source_map: SourceMap) -> None:
        self.profile = profile
        self.source_map = source_map
        self.problems: list[Problem] = []
        self.group: str | None = None
        self.key_name = KeyNames(profile)
        #: where a window given from outside the profile came from (``--model-window``)
        self.window_origin: Location | None = None

    def add(
        self,
        path: tuple,
        message: str,
        hint: str | None = None,
        *,
        warning: bool = False,
        at_key: bool = True,
        code: str | None = None,
        related: tuple = (),
    ) -> None:
        locate = self.source_map.key_location if at_key else self.source_map.value_location
        where = locate(path) if self.source_map.entries else None
        if related:
            where, message = self.user_side(where, message, related)
        self.problems.append(
            Problem(
                message,
                where,
                key=self.key_name(path),
                hint=hint,
                severity="warning" if warning else "error",
                code=code or self.group,
            )
        )

    def user_side(self, where: Location | None, message: str, related: tuple) -> tuple[Location | None, str]:
        """A rule that weighs several values (``related``: the other key paths) and whose key
        comes from a built-in profile is located where the user's part came from: the first
        related value set in a file of theirs or by a flag, else the flag or name the window
        came from; the message says the value is the built-in's (no installed path shown)."""
        builtin = builtin_of(where.file) if where is not None and where.file else None
        if builtin is None:
            return where, message
        for path in related:
            found = self.source_map.key_location(path) if self.source_map.get(path) is not None else None
            if found is not None and found.file and builtin_of(found.file) is None:
                return found, f"{message}; this value comes from {builtin}"
        return self.window_origin, f"{message}; this value comes from {builtin}"

    def run(self) -> None:
        for check in (self.sections, self.compaction, self.compaction_policy, self.summary, self.summarizer,
                      self.templates):
            self.group = _RULE_CODES[check.__name__]
            check()

    # ------------------------------------------------------------------ sections

    def sections(self) -> None:
        runtime = self.profile.runtime
        if runtime is not None and runtime.record_system_prompt and self.profile.system_prompt.patch is None:
            self.add(("runtime", "record_system_prompt"),
                     "a recorded system prompt needs `system_prompt.patch`: the words a changed or removed "
                     "section is sent with", hint="add system_prompt.patch with `changed` and `removed`",
                     code="profile.missing-key")
        sections = self.profile.system_prompt.sections
        if not sections:
            self.add(SECTIONS, "the system prompt has no sections", warning=True)
        seen: dict[str, int] = {}
        for i, section in enumerate(sections):
            path = SECTIONS + (i,)
            if section.id in seen:
                self.add(path + ("id",), f"duplicate section id `{section.id}`", at_key=False, code="profile.duplicate-section")
            seen.setdefault(section.id, i)
            self.section_fields(path, section)
            self.section_renders(path, section)
            for j, rule in enumerate(section.rules):
                if rule.when is not None and _contradiction(rule.when):
                    reason = "this rule never applies: " + str(_contradiction(rule.when))
                    self.add(path + ("rules", j, "when"), reason, warning=True, code="profile.never-renders")

    def section_fields(self, path: tuple, section) -> None:
        kind = section.kind
        if kind in LIST_KINDS and section.item is None:
            self.add(path, f"a `{kind}` section needs `item`", "`item` is the text of one entry", at_key=False)
        if kind == "text" and section.text is None:
            self.add(path, "a `text` section needs `text`", at_key=False)
        if kind != "text" and section.text is not None:
            message = f"`text` is only used by sections of kind `text`, not `{kind}`"
            self.add(path + ("text",), message, _kind_hint(kind))
        if kind != "rules" and section.rules:
            self.add(path + ("rules",), f"`rules` is only used by sections of kind `rules`, not `{kind}`")
        if kind not in LIST_KINDS:
            for name in ("item", "item_separator", "empty", "escape"):
                if name in section.model_fields_set:
                    self.add(path + (name,), f"`{name}` is only used by list sections ({', '.join(LIST_KINDS)})")

    def section_renders(self, path: tuple, section) -> None:
        reason = _never_renders(section)
        if reason:
            where = path + ("when",) if section.when is not None and _contradiction(section.when) else path
            message = f"this section can never render: {reason}"
            self.add(where, message, warning=True, at_key=where != path, code="profile.never-renders")

    # ------------------------------------------------------------------ compaction

    def compaction(self) -> None:
        c = self.profile.compaction
        b = budgets(self.profile)
        at = ("compaction", "reserve_tokens")
        for name, tokens, share in (
            ("history", b.history_tokens, c.summary_budget.history),
            ("turn_prefix", b.turn_prefix_tokens, c.summary_budget.turn_prefix),
        ):
            if tokens < 1:
                self.add(
                    at,
                    f"leaves no room for a summary: {share} x {c.reserve_tokens} is less than one token",
                    f"raise reserve_tokens or summary_budget.{name}",
                )
        window = self.profile.summarizer.context_window
        if window is not None:
            self.window(window)
        self.branch(window)

    def window(self, window: int, name: str = "summarizer.context_window") -> None:
        """The rules that need the model's window: ``name`` says where ``window`` came from."""
        c = self.profile.compaction
        own = name == "summarizer.context_window"
        if c.trigger is not None:  # a declared trigger has its own threshold
            self.model_window(("compaction", "trigger"), c, window, name)
            return
        threshold = window - c.reserve_tokens
        model = f"a {window}-token model window ({name})"
        if threshold <= 0:
            self.add(
                ("compaction", "reserve_tokens"),
                f"reserve_tokens ({c.reserve_tokens}) must be below "
                + (f"summarizer.context_window ({window})" if own else model),
                "otherwise the compaction threshold is not positive and every turn compacts",
                related=WINDOW_VALUES,
            )
            return
        if c.keep_recent_tokens >= threshold:
            self.add(
                ("compaction", "keep_recent_tokens"),
                f"keep_recent_tokens ({c.keep_recent_tokens}) must be below the compaction threshold "
                + (f"context_window - reserve_tokens = {threshold}" if own
                   else f"of {model}: {window} - reserve_tokens {c.reserve_tokens} = {threshold}"),
                "what compaction keeps would already be over the threshold: every turn would decide to "
                "compact, and every compaction would find nothing to summarize",
                related=WINDOW_VALUES,
            )
        elif c.keep_recent_tokens + budgets(self.profile).history_tokens >= threshold:
            self.add(
                ("compaction", "keep_recent_tokens"),
                f"keep_recent_tokens plus the summary budget ({budgets(self.profile).history_tokens}) reach the "
                f"compaction threshold ({threshold})" + ("" if own else f" of {model}"),
                "after compacting, the context may still be over the threshold",
                warning=True,
                related=WINDOW_VALUES,
            )
        max_tokens = self.profile.summarizer.max_tokens
        if max_tokens is not None and max_tokens >= window and name == "summarizer.context_window":
            self.add(
                ("summarizer", "max_tokens"),
                f"max_tokens ({max_tokens}) must be below context_window ({window})",
            )

    def branch(self, window: int | None) -> None:
        br = self.profile.compaction.branch
        budget_window = window if window is not None else br.default_context_window
        source = "summarizer.context_window" if window is not None else "default_context_window"
        if br.reserve_tokens >= budget_window:
            self.add(
                ("compaction", "branch", "reserve_tokens"),
                f"reserve_tokens ({br.reserve_tokens}) must be below {source} ({budget_window})",
                "otherwise nothing of a branch fits into its summary request",
            )
        if br.max_tokens > br.reserve_tokens:
            self.add(
                ("compaction", "branch", "max_tokens"),
                f"max_tokens ({br.max_tokens}) is larger than reserve_tokens ({br.reserve_tokens})",
                "a branch summary request may then exceed the context window",
                warning=True,
            )

    def compaction_policy(self) -> None:
        """Triggers, strategies, pins and per-model overrides, each model against its window."""
        c = self.profile.compaction
        strategies = {c.strategy} | {o.strategy for o in c.model_overrides.values() if o.strategy}
        if strategies & {"mask_tool_results", "hybrid"} and c.masking.placeholder is None:
            self.add(("compaction", "masking"), "a masking strategy needs `masking.placeholder`",
                     "the text a masked tool result shows instead (`${tool}`, `${chars}`)")
        pins = c.pins
        if (pins.first_request or pins.messages or pins.files) and pins.item is None:
            self.add(("compaction", "pins"), "something is pinned but `pins.item` is not set",
                     "`item` lays out one pinned text (`${text}`, `${source}`)")
        for i, rule in enumerate(pins.messages):
            try:
                re.compile(rule.pattern)
            except re.error as err:
                self.add(("compaction", "pins", "messages", i, "pattern"), f"not a regular expression: {err}",
                         at_key=False)
        for key, override in c.model_overrides.items():
            path = ("compaction", "model_overrides", key)
            if "/" not in key.strip("/"):
                self.add(path, f"`{key}` is not `provider/model`", "write the provider, a slash, the model id")
            if override.context_window is not None:
                self.model_window(path, c.for_model(*key.split("/", 1)), override.context_window)

    def model_window(self, path: tuple, settings, window: int, name: str | None = None) -> None:
        """One model's settings against its window: a positive threshold above what is kept."""
        threshold = settings.threshold(window)
        where = f"a window of {window}" + (f" ({name})" if name else "")
        if threshold <= 0:
            self.add(path, f"compaction would fire on every turn: the threshold for {where} is "
                     f"{threshold:g} tokens", "lower reserve_tokens or raise percent_of_window",
                     related=(path, *WINDOW_VALUES))
        elif threshold > window:
            self.add(path, f"compaction never fires in {where}: the threshold is {threshold:g} tokens",
                     "the context overflows first; lower the trigger", warning=True,
                     related=(path, *WINDOW_VALUES))
        elif settings.keep_recent_tokens >= threshold:
            self.add(path, f"keep_recent_tokens ({settings.keep_recent_tokens}) must be below the threshold "
                     f"({threshold:g}) in {where}",
                     "what compaction keeps would already be over the threshold, so every turn would compact again",
                     related=(path, *WINDOW_VALUES))

    # ------------------------------------------------------------------ summary, summarizer

    def summary(self) -> None:
        s = self.profile.summary
        for name, schema in (("schema", s.schema_), ("branch_schema", s.branch_schema)):
            headings = [section.heading for section in schema]
            for i, heading in enumerate(headings):
                if heading in headings[:i]:
                    self.add(("summary", name, i, "heading"), f"heading `{heading}` appears twice", warning=True)
        for name, tag in s.tags.model_dump().items():
            if not _NAME_RE.match(tag):
                hint = "use letters, digits, `_`, `.` or `-`"
                self.add(("summary", "tags", name), f"`{tag}` is not a usable tag name", hint)
        texts = (s.instructions.initial, s.instructions.update)
        uses_schema = any("schema" in {v.name for v in t.variables} for t in texts)
        if not s.schema_ and uses_schema:
            self.add(("summary", "schema"), "the summary schema is empty, so `${schema}` renders nothing", warning=True)
        self.offline()

    def offline(self) -> None:
        s = self.profile.summary
        if s.offline is None:
            if self.profile.summarizer.provider == "offline":
                self.add(
                    ("summarizer", "provider"),
                    "the offline summarizer is selected but the profile has no `summary.offline` texts",
                    "add `summary.offline`, or pick another provider here or on the command line",
                    warning=True,
                )
            return
        headings = _fill_targets(s.schema_) | _fill_targets(s.branch_schema)
        for i, fill in enumerate(s.offline.fill):
            if fill.heading not in headings:
                self.fill_heading(i, fill.heading, headings)

    def fill_heading(self, i: int, heading: str, headings: set[str]) -> None:
        """An offline fill heading no schema has; located where the mismatch was made.

        When a later file of the chain (the user's overlay) replaced the schema while
        the fill entry comes from a base (often the installed default), the problem is
        reported at the overlay's schema key: that is the file the user can change."""
        path = ("summary", "offline", "fill", i, "heading")
        schema = self.newest(("summary", "schema"), ("summary", "branch_schema"))
        if schema is not None and self.rank(schema) < self.rank(path):
            where = self.source_map.value_location(path)
            self.add(
                schema,
                f"has no heading `{heading}`, which summary.offline.fill.{i} (set at {where}) fills",
                f"add a `{heading}` section here, or write summary.offline.fill in this file too: "
                "a list is replaced as a whole",
            )
            return
        hint = did_you_mean(heading, sorted(headings)) or "write a schema heading, or `Section/Item`"
        self.add(
            path,
            f"`{heading}` is not a heading of summary.schema or summary.branch_schema",
            hint,
            at_key=False,
        )

    def rank(self, path: tuple) -> int:
        """How far down the ``extends:`` chain ``path`` was set (0: the file asked for)."""
        where = self.source_map.value_location(path)
        files = self.source_map.files
        return files.index(where.file) if where is not None and where.file in files else len(files)

    def newest(self, *paths: tuple) -> tuple | None:
        """Of ``paths`` that a file sets, the one set nearest the file asked for."""
        written = [p for p in paths if self.source_map.get(p) is not None]
        return min(written, key=self.rank) if written else None

    def summarizer(self) -> None:
        z = self.profile.summarizer
        wrong = env_name_problem(z.api_key_env) if z.api_key_env is not None else None
        if wrong:
            self.add(("summarizer", "api_key_env"), f"`api_key_env` {wrong}", ENV_NAME_HINT)
        if z.base_url is not None and not z.base_url.startswith(("http://", "https://")):
            self.add(("summarizer", "base_url"), "`base_url` must start with http:// or https://")
        elif z.base_url is not None and url_secret_problem(z.base_url):
            self.add(("summarizer", "base_url"), f"`base_url` {url_secret_problem(z.base_url)}")

    # ------------------------------------------------------------------ templates

    def templates(self) -> None:
        sources = self.profile.templates.sources
        for i, source in enumerate(sources):
            path = ("templates", "sources", i)
            if source in sources[:i]:
                self.add(path, f"template source `{_shown(source)}` is listed twice", warning=True, at_key=False)
                continue
            if source_path(source) is None:
                continue
            resolved = template_source_path(self.profile, self.source_map, i)
            if not resolved.exists():
                # A relative path is resolved against the profile file, so it exists or not
                # wherever the agent runs: missing, it is a mistake (an error). An absolute or
                # `~` path depends on the machine: a warning (an error under `validate --strict`).
                relative = not Path(source_path(source)).expanduser().is_absolute()
                hint = did_you_mean(source, TEMPLATE_KEYWORDS) if isinstance(source, str) else None
                if relative and hint is None:
                    hint = "a relative path is read from the directory of the profile file that lists it"
                self.add(path, f"template source {resolved} does not exist", hint, warning=not relative,
                         at_key=False, code="profile.template-source-missing")


#: the registered code of each group of cross-field rules
_RULE_CODES = {
    "compaction_policy": "profile.compaction-rule",
    "sections": "profile.sections-rule",
    "compaction": "profile.compaction-rule",
    "summary": "profile.summary-rule",
    "summarizer": "profile.summarizer-rule",
    "templates": "profile.templates-rule",
}


def _shown(source: object) -> str:
    if isinstance(source, DialectSource):
        return f"{{dialect: {source.dialect}" + (f", path: {source.path}}}" if source.path else "}")
    return str(source)


def _fill_targets(schema) -> set[str]:
    """What an offline fill may name: a schema heading, or `Section/Item`."""
    out = set()
    for section in schema:
        out.add(section.heading)
        out.update(f"{section.heading}/{item.heading}" for item in section.items)
    return out


def _contradiction(when: When) -> str | None:
    both = sorted(set(when.tools_include) & set(when.tools_exclude))
    if both:
        return f"`{both[0]}` is both in tools_include and tools_exclude"
    both = sorted(set(when.present) & set(when.absent))
    if both:
        return f"`{both[0]}` is both in present and absent"
    return None


def _never_renders(section) -> str | None:
    when = section.when or When()
    reason = _contradiction(when)
    if reason:
        return reason
    if section.kind == "custom_prompt" and section.replaced_by_custom_prompt:
        return "it shows the custom prompt but is left out whenever there is one"
    if section.replaced_by_custom_prompt and "custom_prompt" in when.present:
        return "it needs a custom prompt but is left out whenever there is one"
    input_name = section.kind if section.kind in ("custom_prompt", "append_prompt", "context_files", "skills") else None
    if input_name and input_name in when.absent and section.empty is None:
        return f"it shows `{input_name}` but only when there is none"
    if section.kind == "rules" and not section.rules and section.empty is None:
        return "it has no rules and no `empty` text"
    return None


def _kind_hint(kind: str) -> str | None:
    if kind in LIST_KINDS:
        return "list sections write their entries with `item`"
    return None
