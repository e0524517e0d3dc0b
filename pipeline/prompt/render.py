"""System prompt assembly: a profile's sections applied to a :class:`RenderContext`.

Pure: no clock, no environment, no file system. Layout follows
:class:`pipeline.model.prompt.Section`: ``separator + open + (heading + "\\n") + body + close``;
the first rendered section drops its separator; a list section without items renders
``empty`` or is left out. What each kind inserts and which inputs it reads mirrors pi
0.84.0's ``buildSystemPrompt`` (see ``docs/rendering.md``).

The renderer reads a :class:`~pipeline.model.render_plan.RenderPlan` (plain data, no
pydantic): a :class:`~pipeline.model.profile.Profile` given instead is planned first, so a plan
loaded from the compiled-profile cache and a profile render through the same code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Mapping, Optional

from pipeline.errors import PipelineError, Problem, ProfileError
from pipeline.js import JS_WS_RE, js_trim
from pipeline.model.render_plan import Condition, RenderPlan, RulePlan, SectionPlan
from pipeline.model.text import Text
from pipeline.prompt.context import ContextFile, RenderContext, Skill, profile_context_files

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.model.profile import Profile

_LINE_BREAKS = re.compile(r"[\r\n]+")
_JS_SPACES = re.compile(JS_WS_RE + "+")


@dataclass(frozen=True)
class RenderedSection:
    """One section as it appears in the prompt: ``prompt == "".join(separator + text)``."""

    id: str
    kind: str
    index: int  # position in the profile's ``system_prompt.sections``
    separator: str
    text: str
    items: Optional[int] = None  # number of items, for list sections
    name: str = ""  # the name in the record of named sections (the id unless the profile names it)


@dataclass(frozen=True)
class _State:
    """Derived, immutable facts about one render."""

    tools: tuple[str, ...]  # declared: selected minus hidden
    selected: tuple[str, ...]
    cwd: str
    custom: Optional[str]
    append: Optional[str]
    tool_guidelines: tuple[str, ...]
    caller_guidelines: tuple[str, ...]
    context: RenderContext
    visible_skills: tuple[Skill, ...]
    context_files: tuple[ContextFile, ...]  # without the export's blocks (profile_context_files)

    def present(self, name: str) -> bool:
        return {
            "custom_prompt": self.custom is not None,
            "append_prompt": self.append is not None,
            "context_files": bool(self.context_files),
            "skills": bool(self.visible_skills),
            "tool_guidelines": bool(self.tool_guidelines),
            "caller_guidelines": bool(self.caller_guidelines),
        }[name]


# --------------------------------------------------------------------------- public API


def render_system_prompt(profile: "Profile | RenderPlan", context: RenderContext) -> str:
    """The system prompt for ``context``: the rendered sections joined with their separators
    (``context.forced_prompt`` instead, when it is set)."""
    if context.forced_prompt is not None:
        return context.forced_prompt
    return "".join(s.separator + s.text for s in render_sections(profile, context))


def render_sections(profile: "Profile | RenderPlan", context: RenderContext) -> tuple[RenderedSection, ...]:
    """The sections of ``profile`` that appear in the prompt for exactly ``context``
    (no tool catalog added: see :func:`pipeline.prompt.with_catalog`), in output order;
    none for a forced prompt. Sections sharing a name are alternatives (the first that
    renders counts); the caller's named sections replace or follow them."""
    plan = plan_of(profile)
    _check_caller_names(plan, context)
    if context.forced_prompt is not None:
        return ()
    state = _derive(plan, context)
    drop_empty = plan.join is not None
    out: list[RenderedSection] = []
    for index, section in enumerate(plan.sections):
        name = section.record_name
        if any(s.name == name for s in out):
            continue
        rendered = _render_one(section, state)
        if rendered is not None and not (drop_empty and rendered[0] == ""):
            out.append(RenderedSection(section.id, section.kind, index, section.separator, *rendered, name=name))
    return _separated(_with_caller_sections(out, plan, context), plan.join)


def plan_of(source: "Profile | RenderPlan") -> RenderPlan:
    """``source`` itself when it is a plan, else the plan of a :class:`~pipeline.model.profile.Profile`."""
    if isinstance(source, RenderPlan):
        return source
    from pipeline.model.profile import Profile  # defined already when one is given

    if not isinstance(source, Profile):
        raise TypeError(f"render_sections takes a Profile or a RenderPlan (a Pipeline renders with .render_sections), got {type(source).__name__}")
    return RenderPlan.of(source.system_prompt)


def _separated(sections: list[RenderedSection], join: Optional[str]) -> tuple[RenderedSection, ...]:
    """Separators as laid out: the join text (or each section's own); none before the first."""
    return tuple(
        replace(s, separator="" if i == 0 else (s.separator if join is None else join)) for i, s in enumerate(sections)
    )


def _check_caller_names(plan: RenderPlan, context: RenderContext) -> None:
    """Every caller section name follows the profile's rule, checked before anything renders."""
    if not context.sections:
        return
    rule = plan.caller_sections
    problems = []
    for name in context.sections:
        why = "cannot be used: this profile takes no caller sections" if rule is None else rule.refusal(name)
        if why:
            hint = None if rule is None else f"names match {rule.pattern} as a whole" + (
                f" and are none of {', '.join(rule.reserved)}" if rule.reserved else "")
            problems.append(Problem(f"section name {name!r} {why}", key=f"sections.{name}", hint=hint,
                                    code="profile.bad-section-name"))
    if problems:
        raise ProfileError(problems)


def _with_caller_sections(out: list[RenderedSection], plan: RenderPlan, context: RenderContext) -> list[RenderedSection]:
    """The caller's named sections: in place of a rendered one of the same name, else appended."""
    rule = plan.caller_sections
    for name, body in context.sections.items():
        if body == "":
            continue
        text = wrap_section(name, body, rule.wrap)
        at = next((i for i, s in enumerate(out) if s.name == name), None)
        if at is None:
            out.append(RenderedSection(name, "caller", -1, "\n\n", text, name=name))
        else:
            out[at] = replace(out[at], kind="caller", text=text, items=None)
    return out


def wrap_section(name: str, text: str, wrap: str) -> str:
    """``text`` as a section with ``wrap`` (``tag``: between ``<name>`` and ``</name>`` lines)."""
    return f"<{name}>\n{text}\n</{name}>" if wrap == "tag" else text


def normalize_snippet(text: Optional[str]) -> Optional[str]:
    """A tool snippet as one line (line breaks and space runs become one space, trimmed); None if blank."""
    if not text:
        return None
    one_line = js_trim(_JS_SPACES.sub(" ", _LINE_BREAKS.sub(" ", text)))
    return one_line or None


def normalize_guidelines(guidelines: Iterable[str]) -> tuple[str, ...]:
    """One tool's guidelines: trimmed, empties dropped, duplicates removed (first kept)."""
    return tuple(dict.fromkeys(g for g in (js_trim(x) for x in guidelines) if g))


def xml_escape(value: str) -> str:
    """``&`` first, then ``<`` ``>`` ``"`` ``'``."""
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


# --------------------------------------------------------------------------- derived state


def _derive(plan: RenderPlan, ctx: RenderContext) -> _State:
    selected = ctx.tools if ctx.tools is not None else plan.default_tools
    tools = tuple(t for t in selected if t not in ctx.hidden_tools)
    append = "\n\n".join(ctx.append_prompts)
    return _State(
        tools=tools,
        selected=selected,
        cwd=ctx.cwd.replace("\\", "/"),
        custom=ctx.custom_prompt or None,
        append=append or None,
        tool_guidelines=_tool_guidelines(ctx, tools),
        caller_guidelines=tuple(g for g in (js_trim(x) for x in ctx.guidelines) if g),
        context=ctx,
        visible_skills=tuple(s for s in ctx.skills if not s.disable_model_invocation),
        context_files=profile_context_files(ctx.context_files),
    )


def _snippets(ctx: RenderContext, mode: str) -> dict[str, str]:
    if mode == "as_given":
        return {name: raw for name, raw in ctx.tool_snippets.items() if raw}
    out = {}
    for name, raw in ctx.tool_snippets.items():
        line = normalize_snippet(raw)
        if line is not None:
            out[name] = line
    return out


def _tool_guidelines(ctx: RenderContext, tools: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for name in tools:
        out.extend(normalize_guidelines(ctx.tool_guidelines.get(name, ())))
    return tuple(out)


def _holds(when: Optional[Condition], state: _State) -> bool:
    if when is None:
        return True
    selected = set(state.tools)
    return (
        all(t in selected for t in when.tools_include)
        and not any(t in selected for t in when.tools_exclude)
        and all(state.present(n) for n in when.present)
        and not any(state.present(n) for n in when.absent)
        and (not when.selected_any or any(t in state.selected for t in when.selected_any))
    )


# --------------------------------------------------------------------------- sections


def _render_one(section: SectionPlan, state: _State) -> Optional[tuple[str, Optional[int]]]:
    if section.replaced_by_custom_prompt and state.custom is not None:
        return None
    if not _holds(section.when, state):
        return None
    esc = xml_escape if section.escape == "xml" else _same  # applies to item values only
    env = {"cwd": state.cwd}
    body, count = _BODIES[section.kind](section, state, env, esc)
    if body is None:
        return None
    where = _key(section)
    head = _fill(section.heading, env, where, "heading") + "\n" if section.heading else ""
    text = _fill(section.open, env, where, "open") + head + body + _fill(section.close, env, where, "close")
    return wrap_section(section.record_name, text, section.wrap), count


def _same(value: str) -> str:
    return value


def _fill(text: Optional[Text], env: Mapping[str, str], where: str, key: str) -> str:
    if text is None:
        return ""
    try:
        return text.render(env)
    except KeyError as err:
        raise PipelineError(
            Problem(f"unknown variable ${{{err.args[0]}}}", key=f"{where}.{key}", hint=f"available: {', '.join(sorted(env))}", code="profile.unknown-variable")
        ) from None


Body = tuple[Optional[str], Optional[int]]


def _text_body(section: SectionPlan, state: _State, env: dict, esc: Callable[[str], str]) -> Body:
    return _fill(section.text, env, _key(section), "text"), None


def _custom_body(section: SectionPlan, state: _State, env: dict, esc: Callable[[str], str]) -> Body:
    return state.custom, None


def _append_body(section: SectionPlan, state: _State, env: dict, esc: Callable[[str], str]) -> Body:
    return state.append, None


def _key(section: SectionPlan) -> str:
    return f"system_prompt.sections.{section.id}"


def _list_body(items: list[dict[str, str]], section: SectionPlan, env: dict, esc: Callable[[str], str]) -> Body:
    where = _key(section)
    if not items:
        if section.empty is None:
            return None, 0
        return _fill(section.empty, env, where, "empty"), 0
    parts = [_fill(section.item, {**env, **{k: esc(v) for k, v in item.items()}}, where, "item") for item in items]
    return section.item_separator.join(parts), len(items)


def _tool_list_body(section: SectionPlan, state: _State, env: dict, esc: Callable[[str], str]) -> Body:
    snippets = _snippets(state.context, section.snippets)
    items = [{"name": n, "snippet": snippets[n]} for n in state.tools if n in snippets]
    return _list_body(items, section, env, esc)


def _rules_body(section: SectionPlan, state: _State, env: dict, esc: Callable[[str], str]) -> Body:
    rules = _collect_rules(section.rules, state, env, _key(section))
    return _list_body([{"rule": r} for r in rules], section, env, esc)


def _collect_rules(rules: tuple[RulePlan, ...], state: _State, env: dict, key: str) -> list[str]:
    """Rule texts in order: trimmed, empties dropped, de-duplicated by exact text (first kept)."""
    seen: dict[str, None] = {}
    for i, rule in enumerate(rules):
        if not _holds(rule.when, state):
            continue
        for text in _rule_texts(rule, state, env, f"{key}.rules[{i}]"):
            trimmed = js_trim(text)
            if trimmed:
                seen.setdefault(trimmed)
    return list(seen)


def _rule_texts(rule: RulePlan, state: _State, env: dict, where: str) -> tuple[str, ...]:
    if rule.from_ == "tool_guidelines":
        return state.tool_guidelines
    if rule.from_ == "caller_guidelines":
        return state.caller_guidelines
    return (_fill(rule.text, env, where, "text"),)


def _context_files_body(section: SectionPlan, state: _State, env: dict, esc: Callable[[str], str]) -> Body:
    items = [{"path": f.path, "content": f.content} for f in state.context_files]
    return _list_body(items, section, env, esc)


def _skills_body(section: SectionPlan, state: _State, env: dict, esc: Callable[[str], str]) -> Body:
    items = [
        {"name": s.name, "description": s.description, "location": s.file_path, "base_dir": s.base_dir}
        for s in state.visible_skills
    ]
    return _list_body(items, section, env, esc)


_BODIES: dict[str, Callable[[SectionPlan, _State, dict, Callable[[str], str]], Body]] = {
    "text": _text_body,
    "custom_prompt": _custom_body,
    "append_prompt": _append_body,
    "tool_list": _tool_list_body,
    "rules": _rules_body,
    "context_files": _context_files_body,
    "skills": _skills_body,
}
