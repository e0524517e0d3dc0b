"""The pi 1.6 target: native files and keys, and a generated extension for the rest.

Native: ``settings.json`` keys (``compaction.enabled/reserveTokens/keepRecentTokens``,
``compaction.modelOverrides``, ``branchSummary.reserveTokens``, ``retry.*``) merged into
the user's file, and ``prompts/*.md`` for the profile's own pi-dialect templates. The
extension (``extensions/context-pipeline/index.js``) renders the system prompt from the
render plan compiled to ``profile.json`` beside it, in ``before_agent_start``, and writes
compaction summaries from the summary texts compiled there, in ``session_before_compact``,
and branch summaries in ``session_before_tree``;
it needs Node only, which pi brings (docs/export.md says why it is not a call to
``pipeline``).

In a project the files go under ``.pi/``; with ``--user-dir`` the root is laid out as
pi's agent directory (``~/.pi/agent``): ``settings.json``, ``prompts/``, ``extensions/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from pipeline.export.base import Carried, Export, FolderTarget, Key, OwnedFile, Place, SharedJson
from pipeline.export.static_prompt import command_files, folder_lost
from pipeline.model.pi_plan import (
    PLAN_VERSION,
    Branch,
    Budget,
    CallerSections,
    CatalogEntry,
    Labels,
    Masking,
    ModelRule,
    Parts,
    PiPlan,
    Plan,
    Rule,
    SchemaFormat,
    SchemaSection,
    Section,
    Summary,
    Tags,
    TriggerRule,
    Validity,
    Var,
    When,
)
from pipeline.model.render_plan import Condition, RenderPlan, SectionPlan
from pipeline.model.text import Text

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

EXTENSION_DIR = "extensions/context-pipeline"
#: reserveTokens written when the profile's trigger is not pi's rule: pi then asks at every
#: turn (contextTokens > window - this), and the extension answers by the profile's trigger
ASK_EVERY_TURN = 1_000_000_000

#: profile key -> pi settings key (the numbers pi reads natively)
SETTINGS = (
    (("compaction", "enabled"), ("compaction", "enabled")),
    (("compaction", "reserve_tokens"), ("compaction", "reserveTokens")),
    (("compaction", "keep_recent_tokens"), ("compaction", "keepRecentTokens")),
    (("compaction", "branch", "reserve_tokens"), ("branchSummary", "reserveTokens")),
    (("retry", "enabled"), ("retry", "enabled")),
    (("retry", "max_retries"), ("retry", "maxRetries")),
    (("retry", "base_delay_ms"), ("retry", "baseDelayMs")),
    (("retry", "max_agent_delay_ms"), ("retry", "maxAgentDelayMs")),
)


class PiTarget(FolderTarget):
    def build(self, pipeline: "Pipeline", place: Place, pre: str) -> Export:
        report: list[Carried] = []
        keys = self._settings(pipeline, pre, report)
        files = [
            OwnedFile(f"{pre}{EXTENSION_DIR}/index.js", extension_source()),
            OwnedFile(f"{pre}{EXTENSION_DIR}/profile.json", plan_json(pipeline)),
        ]
        report.append(Carried("system_prompt", "extension", f"{pre}{EXTENSION_DIR}/ (before_agent_start)"))
        report += [folder_lost(section.id, "pi") for section in pipeline.profile.system_prompt.sections
                   if section.folder is not None]
        files += self._templates(pipeline, place, pre, report)
        report += _compaction_losses(pipeline, pre)
        return Export(self.name, tuple(files), (SharedJson(f"{pre}settings.json", tuple(keys)),), tuple(report))

    def _settings(self, pipeline: "Pipeline", pre: str, report: list[Carried]) -> list[tuple[Key, Any]]:
        profile = pipeline.profile
        keys: list[tuple[Key, Any]] = []
        ours_trigger = own_trigger(pipeline)
        ext = f"{pre}{EXTENSION_DIR}/ (session_before_compact)"
        for ours, theirs in SETTINGS:
            value: Any = profile
            for part in ours:
                value = getattr(value, part)
            if value is None:
                continue
            if ours_trigger and ours == ("compaction", "reserve_tokens"):
                keys.append((theirs, ASK_EVERY_TURN))
                report.append(Carried("compaction.reserve_tokens", "extension", ext))
                continue
            keys.append((theirs, value))
            report.append(Carried(".".join(ours), "native", f"{pre}settings.json {'.'.join(theirs)}"))
        if ours_trigger:
            report.append(Carried("compaction.trigger", "extension", f"{ext}; settings.json compaction.reserveTokens "
                                                                     f"{ASK_EVERY_TURN} lets pi ask at every turn"))
        for model, override in profile.compaction.model_overrides.items():
            for field, key in (("reserve_tokens", "reserveTokens"), ("keep_recent_tokens", "keepRecentTokens")):
                value = getattr(override, field)
                if value is None:
                    continue
                name = f"compaction.model_overrides.{model}.{field}"
                if ours_trigger and field == "reserve_tokens":
                    report.append(Carried(name, "extension", ext))
                    continue
                keys.append((("compaction", "modelOverrides", model, key), value))
                report.append(Carried(name, "native", f"{pre}settings.json compaction.modelOverrides"))
            if override.trigger is not None:
                report.append(Carried(f"compaction.model_overrides.{model}.trigger", "extension", ext))
            if override.strategy is not None:
                report.append(Carried(f"compaction.model_overrides.{model}.strategy", "lost",
                                      why="the extension follows the profile's strategy for every model"))
        return keys

    def _templates(self, pipeline: "Pipeline", place: Place, pre: str, report: list[Carried]) -> list[OwnedFile]:
        """Every template the profile sees: those of pi's own folders stay where pi reads them,
        the profile's other pi templates are copied to ``prompts/`` (see
        :func:`~pipeline.export.static_prompt.command_files`)."""
        files, carried = command_files(pipeline, place, f"{pre}prompts", _copy, "pi")
        report += carried
        return files


TARGET = PiTarget("pi", "pi 1.6.0", ".pi/")


def _copy(template) -> tuple:
    """A pi template as pi reads it: the file, byte for byte."""
    if template.dialect != "pi":
        return None, None, (f"a {template.dialect} command; pi reads pi templates only",), ()
    return f"{template.name}.md", Path(template.path).read_text(encoding="utf-8"), (), ()


def _compaction_losses(pipeline: "Pipeline", pre: str) -> list[Carried]:
    """How pi 1.6 receives the compaction policy beyond its numbers."""
    profile = pipeline.profile
    comp = profile.compaction
    where = f"{pre}{EXTENSION_DIR}/ (session_before_compact)"
    out = [Carried(key, "extension", where) for key in (
        "summary.system_prompt", "summary.instructions.initial", "summary.instructions.update",
        "summary.instructions.turn_prefix", "summary.schema", "summary.on_schema_violation", "summary.validity",
        "summary.labels", "summary.tags")]
    branch = f"{pre}{EXTENSION_DIR}/ (session_before_tree)"
    out += [Carried(key, "extension", branch) for key in (
        "summary.instructions.branch", "summary.branch_schema", "summary.branch_preamble", "summary.branch_empty",
        "compaction.branch.max_tokens", "compaction.branch.default_context_window")]
    if comp.branch.summary_share_limit != PI_SUMMARY_SHARE:
        out.append(Carried("compaction.branch.summary_share_limit", "lost",
                           why=f"pi chooses the branch's messages (prepareBranchEntries: {PI_SUMMARY_SHARE})"))
    if comp.strategy == "mask_tool_results":
        out.append(Carried("compaction.strategy", "extension", f"{pre}{EXTENSION_DIR}/ (session_before_compact "
                                                               "cancels, the context event masks)"))
        out.append(Carried("compaction.masking.placeholder", "extension", f"{pre}{EXTENSION_DIR}/ (context)"))
        summarized = [c for c in out if c.key.startswith("summary.") and c.where == where]
        out = [c for c in out if c not in summarized]  # this strategy never summarizes (branch summaries stay)
    elif comp.strategy == "hybrid":
        out.append(Carried("compaction.strategy", "extension", f"{pre}{EXTENSION_DIR}/ (session_before_compact "
                                                               "masks, then summarizes when still over the trigger)"))
        out.append(Carried("compaction.masking.placeholder", "extension", f"{pre}{EXTENSION_DIR}/ (context)"))
    if comp.pins.first_request or comp.pins.messages or comp.pins.files:
        out.append(Carried("compaction.pins", "lost", why="pi has no pinned messages"))
    if profile.summarizer.provider != "offline":
        out.append(Carried("summarizer", "lost", why="the extension summarizes with the session's model"))
    return out


def own_trigger(pipeline: "Pipeline") -> bool:
    """Whether a trigger of the profile (or of one of its models) is not pi's reserve rule."""
    comp = pipeline.profile.compaction
    triggers = [comp.trigger, *(o.trigger for o in comp.model_overrides.values())]
    return any(t is not None and not hasattr(t, "reserve_tokens") for t in triggers)


def _triggers(pipeline: "Pipeline") -> Optional[TriggerRule]:
    """The profile's trigger rule for the extension (``Compaction.threshold``), when it is not pi's."""
    return _rule(pipeline) if own_trigger(pipeline) else None


def _rule(pipeline: "Pipeline") -> TriggerRule:
    """The profile's trigger rule, per model too, as the extension's ``threshold`` reads it."""
    comp = pipeline.profile.compaction
    return TriggerRule(trigger=comp.trigger, reserve_tokens=comp.reserve_tokens,
                       models={name: ModelRule(trigger=o.trigger, reserve_tokens=o.reserve_tokens)
                               for name, o in comp.model_overrides.items()})


def extension_source() -> str:
    return (Path(__file__).with_name("pi_extension.js")).read_text(encoding="utf-8")


# --------------------------------------------------------------------------- the plan as JSON


def plan_json(pipeline: "Pipeline") -> str:
    """The compiled render plan the extension reads (:class:`~pipeline.model.pi_plan.PiPlan`)."""
    return build_plan(pipeline).to_json()


def build_plan(pipeline: "Pipeline") -> PiPlan:
    """``profile.json`` for ``pipeline``: its render plan, summary texts, trigger and masking."""
    plan: RenderPlan = pipeline.render_plan
    comp = pipeline.profile.compaction
    caller = plan.caller_sections
    masks = comp.strategy != "summarize" and comp.masking.placeholder is not None
    return PiPlan(
        version=PLAN_VERSION, profile=pipeline.profile.name, fingerprint=pipeline.fingerprint,
        plan=Plan(
            sections=[_section(s) for s in plan.sections], join=plan.join,
            caller_sections=None if caller is None else CallerSections(
                pattern=caller.pattern, reserved=list(caller.reserved), wrap=caller.wrap),  # type: ignore[arg-type]
            default_tools=list(plan.default_tools),
            catalog={e.name: CatalogEntry(snippet=None if e.snippet is None else e.snippet.render({}),
                                          guidelines=[g.render({}) for g in e.guidelines]) for e in plan.catalog}),
        summary=_summary(pipeline),
        trigger=_triggers(pipeline),
        # hybrid: `rule` is the trigger the masked context is tested against (Compaction.threshold)
        masking=Masking(strategy=comp.strategy, placeholder=_parts(comp.masking.placeholder),  # type: ignore[arg-type]
                        rule=_rule(pipeline) if comp.strategy == "hybrid" else None) if masks else None,
    )


#: the share of the budget below which pi's prepareBranchEntries still takes a summary
PI_SUMMARY_SHARE = 0.9


def _schema_sections(sections: Any) -> list[SchemaSection]:
    """The schema as the profile wrote it (its texts' source), for ``pipeline import pi``."""
    return [SchemaSection.model_validate(x.model_dump(mode="json")) for x in sections]


def _branch(pipeline: "Pipeline") -> Branch:
    """What ``session_before_tree`` needs: the branch request's texts, schema and budgets."""
    from pipeline.compaction.summary_schema import heading_line, render_schema

    s, comp = pipeline.profile.summary, pipeline.profile.compaction
    sections = s.branch_schema or s.schema_
    schema = render_schema(sections, s.schema_format)
    return Branch(
        instructions=s.instructions.branch.render(schema=schema), schema=schema,
        required_headings=[heading_line(x, s.schema_format) for x in sections if x.required],
        preamble=s.branch_preamble.render(), empty=s.branch_empty.render(),
        max_tokens=comp.branch.max_tokens, reserve_tokens=comp.branch.reserve_tokens,
        default_context_window=comp.branch.default_context_window,
        schema_sections=_schema_sections(s.branch_schema),
    )


def _summary(pipeline: "Pipeline") -> Summary:
    """What ``session_before_compact`` needs: texts rendered where they take only the schema."""
    from pipeline.compaction.summary_schema import heading_line, render_schema

    s, comp = pipeline.profile.summary, pipeline.profile.compaction
    schema = render_schema(s.schema_, s.schema_format)
    texts = s.instructions
    return Summary(
        system_prompt=s.system_prompt.render(), schema=schema,
        initial=texts.initial.render(schema=schema), update=texts.update.render(schema=schema),
        turn_prefix=texts.turn_prefix.render(), turn_prefix_request=_text(s.turn_prefix_request),
        custom_label=texts.custom_label.render(), schema_retry=_text(texts.schema_retry),
        required_headings=[heading_line(x, s.schema_format) for x in s.schema_ if x.required],
        schema_sections=_schema_sections(s.schema_),
        schema_format=SchemaFormat.model_validate(s.schema_format.model_dump(mode="json")),
        on_schema_violation=s.on_schema_violation,
        validity=Validity(reject=list(s.validity.reject), retries=s.validity.retries,
                          retry_note=_text(s.validity.retry_note)),
        tags=Tags.model_validate(s.tags.model_dump(mode="json")),
        labels=Labels.model_validate(s.labels.model_dump(mode="json")),
        serialize_thinking=s.serialize_thinking, truncation_marker=_parts(s.truncation_marker),
        tool_result_max_chars=comp.tool_result_max_chars,
        split_turn_separator=s.split_turn_separator.render(), no_history=s.no_history.render(),
        budget=Budget(history=comp.summary_budget.history, turn_prefix=comp.summary_budget.turn_prefix,
                      limit=comp.summary_budget.limit, reserve_tokens=comp.reserve_tokens),
        branch=_branch(pipeline),
    )


def _parts(text: Text) -> Parts:
    return [p if isinstance(p, str) else Var(var=p.name) for p in text.parts if p != ""]


def _text(text: Optional[Text]) -> Optional[Parts]:
    return None if text is None else _parts(text)


def _when(when: Optional[Condition]) -> Optional[When]:
    if when is None:
        return None
    return When(**{k: list(getattr(when, k)) for k in ("tools_include", "tools_exclude", "present", "absent",
                                                        "selected_any")})


def _section(s: SectionPlan) -> Section:
    return Section(
        id=s.id, name=s.name, kind=s.kind, when=_when(s.when),  # type: ignore[arg-type]
        replaced_by_custom_prompt=s.replaced_by_custom_prompt, separator=s.separator,
        open=_parts(s.open), heading=_text(s.heading), text=_text(s.text), item=_text(s.item),
        item_separator=s.item_separator, empty=_text(s.empty), close=_parts(s.close),
        rules=[Rule.model_validate({"text": _text(r.text), "from": r.from_, "when": _when(r.when)}) for r in s.rules],
        escape=s.escape, wrap=s.wrap, snippets=s.snippets,  # type: ignore[arg-type]
    )
