"""Reading back what ``pipeline export TARGET`` wrote (the round trip, docs/export.md).

An export is recognised by its manifest, ``<project>/.<dir>/context-pipeline-export.json``
(``.pi``, ``.claude``, ``.codex``, ``.opencode``, ``.gemini``, ``.qwen``, ``.kilo``, ``.github``, ``.agents`` for AGENTS.md) whose ``target`` is the tool.
Then, per target, what the export wrote natively or through its extension comes back:

* **the prompt**: pi's compiled plan (``.pi/extensions/context-pipeline/profile.json``)
  section by section, with its layout, default tools and catalog; for the static targets
  the generated prompt file (``.claude/agents/context-pipeline.md`` without its
  frontmatter, ``.codex/context-pipeline/instructions.md``,
  ``.opencode/context-pipeline/prompt.md`` with its working-directory marker as
  ``${cwd}``, ``.gemini/system.md``) as one ``exported`` text section, every section of
  ``builtin:default`` removed;
* **the templates**: the target's project command folder as a template source in its
  dialect (pi: ``.pi/prompts``, which ``project`` names);
* **compaction**: the keys the target has natively (pi ``settings.json``
  ``compaction``/``branchSummary``/``retry``, the trigger from ``profile.json`` when the
  export let pi ask at every turn, and the summary settings and masking its extension
  applies; Codex ``model_auto_compact_token_limit`` and
  ``compact_prompt``; opencode ``compaction.*``, ``agent.compaction.prompt`` and the
  plugin's compaction prompt; Gemini ``model.compressionThreshold``; Qwen Code
  ``context.autoCompactThreshold`` and its PreCompact hook's instructions; Kilo CLI the same
  keys as opencode, in ``kilo.json``;
  Claude Code ``env.DISABLE_AUTO_COMPACT`` and the PreCompact instructions file).

What the export reported lost does not come back: the imported profile has the base's value.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Optional

from pipeline import files, jsontext
from pipeline.errors import Location, Problem, ProfileError
from pipeline.limits import toml_loads
from pipeline.model import pi_plan as plan_schema
from pipeline.model.pi_plan import Parts, PiPlan, Var
from pipeline.prompt.context import block_marks

from .build import Overlay, ProfileText
from .pi import parse_json
from .yamltext import profile_text

MANIFEST = "context-pipeline-export.json"
DIRS = {"pi": ".pi", "claude-code": ".claude", "codex": ".codex", "opencode": ".opencode", "gemini": ".gemini",
        "qwen-code": ".qwen", "kilo": ".kilo", "copilot": ".github",
        "agents-md": ".agents"}
NAMES = {"pi": "pi", "claude-code": "Claude Code", "codex": "Codex CLI", "opencode": "opencode", "gemini": "Gemini CLI",
         "qwen-code": "Qwen Code", "kilo": "Kilo CLI", "copilot": "Copilot CLI",
         "agents-md": "AGENTS.md"}
#: pi's reserveTokens the export writes for a trigger of the profile's own (pipeline.export.pi.ASK_EVERY_TURN)
ASK_EVERY_TURN = 1_000_000_000
#: Codex's limit the export writes when compaction is off (pipeline.export.codex.NEVER)
NEVER = 9_223_372_036_854_775_807
#: the provider kilo.json names for the profile's summarizer (pipeline.export.kilo.SUMMARIZER)
KILO_SUMMARIZER = "context-pipeline-summarizer"
PI_SETTINGS = (
    (("compaction", "enabled"), ("compaction", "enabled")),
    (("compaction", "reserveTokens"), ("compaction", "reserve_tokens")),
    (("compaction", "keepRecentTokens"), ("compaction", "keep_recent_tokens")),
    (("branchSummary", "reserveTokens"), ("compaction", "branch", "reserve_tokens")),
    (("retry", "enabled"), ("retry", "enabled")),
    (("retry", "maxRetries"), ("retry", "max_retries")),
    (("retry", "baseDelayMs"), ("retry", "base_delay_ms")),
    (("retry", "maxAgentDelayMs"), ("retry", "max_agent_delay_ms")),
)


def find_export(tool: str, project: Optional[Path]) -> Optional[Path]:
    """The manifest of ``pipeline export TOOL`` in ``project``, when there is one."""
    if project is None:
        return None
    manifest = project / DIRS[tool] / MANIFEST
    if files.missing(manifest):
        return None
    data = _json(manifest, "export manifest")
    if not isinstance(data, dict) or data.get("target") != tool:
        raise ProfileError(Problem(f"not a manifest of `pipeline export {tool}`", Location(str(manifest)),
                                   code="profile.import-settings"))
    return manifest


def exported_overlay(tool: str, project: Path, manifest: Path) -> tuple[Overlay, tuple[Problem, ...]]:
    """The overlay that renders what ``pipeline export TOOL`` wrote into ``project``."""
    data = _json(manifest, "export manifest")
    overlay = Overlay(f"{tool}-import", [f"Imported from the {NAMES[tool]} export in {project} (profile "
                                         f"{data.get('profile', '?')}) by `pipeline import {tool}`."])
    readers = {"pi": _pi, "claude-code": _claude, "codex": _codex, "opencode": _opencode, "gemini": _gemini,
               "qwen-code": _qwen, "kilo": _kilo, "copilot": _copilot,
               "agents-md": _agents_md}
    try:
        readers[tool](project, overlay)
    except (AttributeError, TypeError, KeyError, ValueError):  # a value of the wrong type in a damaged export
        raise ProfileError(Problem(f"the files of `pipeline export {tool}` are damaged: a value is not of the type "
                                   "the export writes", Location(str(manifest)), code="profile.import-settings",
                                   hint=f"export again (`pipeline export {tool}`), then import")) from None
    note = Problem(f"read back the export of `pipeline export {tool}`; what its loss report calls lost has "
                   "the base profile's value (`pipeline export " + tool + " --dry-run` lists it)",
                   Location(str(manifest)), severity="info", code="profile.import-settings")
    return overlay, (note,)


# --------------------------------------------------------------------------- reading files


def _json(path: Path, what: str) -> Any:
    return parse_json(files.read_text(path, "settings file"), path)


def _json_object(path: Path, what: str) -> dict:
    if files.missing(path):
        return {}
    data = _json(path, what)
    if not isinstance(data, dict):
        raise ProfileError(Problem(f"{what} must be a JSON object", Location(str(path), 1, 1),
                                   code="profile.import-settings"))
    return data


def _text_file(path: Path, what: str) -> Optional[str]:
    if files.missing(path):
        return None
    text = files.read_text(path, "settings file")
    return text[:-1] if text.endswith("\n") else text


def _get(data: Any, *key: str) -> Any:
    for part in key:
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def _static_prompt(overlay: Overlay, text: Optional[str], cwd_marker: Optional[str] = None) -> None:
    """A prompt file that replaced the agent's (``system_prompt.base: profile``): every base
    section removed, the file's text as the one ``exported`` section."""
    from pipeline.facade import compile_profile

    if text is None:
        return
    base = compile_profile("default").profile.system_prompt.sections
    overlay.sections += [(s.id, {"remove": True}) for s in base]
    overlay.prompt_keys["base"] = "profile"
    written = _written(text, cwd_marker)
    if written:
        overlay.sections.append(("exported", {"text": ProfileText(written)}))


def _team_prompt(overlay: Overlay, text: Optional[str], cwd_marker: Optional[str] = None) -> None:
    """The team's sections the agent reads beside its own prompt (``system_prompt.base: agent``):
    ``builtin:default``'s sections (pi's own prompt) stay, the text is one ``exported`` team section."""
    if text is None or overlay.prompt_keys.get("base") == "profile":
        return
    written = _written(text, cwd_marker)
    if written:
        overlay.sections.append(("exported", {"text": ProfileText(written)}))


def _written(text: str, cwd_marker: Optional[str]) -> str:
    if cwd_marker:
        return "${cwd}".join(profile_text(part) for part in text.split(cwd_marker))
    return profile_text(text)


def _block(path: Path) -> Optional[str]:
    """The text of the export's marked block of ``path`` (``GEMINI.md``), if it has one well-formed
    block (found by the renderer's rule, :func:`pipeline.prompt.context.block_marks`)."""
    text = _text_file(path, "context file")
    if text is None:
        return None
    lines = text.splitlines(keepends=True)
    marks = block_marks(lines)
    if not marks:
        return None
    inner = "".join(lines[marks[0] + 1:marks[1]])
    return inner[:-1] if inner.endswith("\n") else inner


def _summary_initial(overlay: Overlay, text: Optional[str]) -> None:
    if text is not None:
        overlay.values[("summary", "instructions", "initial")] = profile_text(text)


# --------------------------------------------------------------------------- the targets


def _pi(project: Path, overlay: Overlay) -> None:
    settings = _json_object(project / ".pi" / "settings.json", "settings file")
    compiled = project / ".pi" / "extensions" / "context-pipeline/profile.json"  # one literal: "profile.json" alone reads as a problem code
    plan = _read_plan(compiled)
    for theirs, ours in PI_SETTINGS:
        value = _get(settings, *theirs)
        if value is not None:
            overlay.values[ours] = value
    trigger = plan.trigger
    if overlay.values.get(("compaction", "reserve_tokens")) == ASK_EVERY_TURN and trigger is not None:
        overlay.values[("compaction", "reserve_tokens")] = trigger.reserve_tokens
        if trigger.trigger is not None:
            overlay.values[("compaction", "trigger")] = trigger.trigger.model_dump(mode="json")
        for model, rule in trigger.models.items():
            for key, value in (("trigger", rule.trigger and rule.trigger.model_dump(mode="json")),
                               ("reserve_tokens", rule.reserve_tokens)):
                if value is not None:
                    overlay.values[("compaction", "model_overrides", model, key)] = value
    for model, override in (_get(settings, "compaction", "modelOverrides") or {}).items():
        for theirs_key, ours_key in (("reserveTokens", "reserve_tokens"), ("keepRecentTokens", "keep_recent_tokens")):
            if isinstance(override, dict) and override.get(theirs_key) is not None:
                overlay.values[("compaction", "model_overrides", model, ours_key)] = override[theirs_key]
    summary = plan.summary
    for key, path in (("system_prompt", ("summary", "system_prompt")), ("initial", ("summary", "instructions", "initial")),
                      ("update", ("summary", "instructions", "update")),
                      ("turn_prefix", ("summary", "instructions", "turn_prefix"))):
        overlay.values[path] = profile_text(getattr(summary, key))
    _pi_summary_rules(overlay, summary)
    if plan.masking is not None:
        overlay.values[("compaction", "strategy")] = plan.masking.strategy
        overlay.values[("compaction", "masking", "placeholder")] = _parts(plan.masking.placeholder)
    _pi_prompt(overlay, plan.plan)


def _read_plan(path: Path) -> PiPlan:
    """``profile.json`` read through its schema; a value the export does not write is a
    located error naming its key."""
    from pydantic import ValidationError

    if files.missing(path):
        raise ProfileError(Problem("no compiled render plan (the export's profile.json is missing)",
                                   Location(str(path)), code="profile.import-settings",
                                   hint="export again (`pipeline export pi`), then import"))
    text = files.read_text(path, "settings file")
    try:
        root = jsontext.parse(text)
    except jsontext.JsonTextError as err:
        raise ProfileError(Problem(f"invalid JSON: {err.msg}", Location(str(path), err.lineno, err.colno),
                                   code="profile.import-settings")) from None
    try:
        return PiPlan.model_validate(root.value)
    except ValidationError as err:
        first = err.errors()[0]
        keys, at = _located(root, first["loc"])
        line = text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        raise ProfileError(Problem(f"not the plan `pipeline export pi` writes: {first['msg']}",
                                   Location(str(path), line, col), key=".".join(keys) or None,
                                   code="profile.import-settings",
                                   hint="export again (`pipeline export pi`), then import")) from None


def _located(root: jsontext.Node, loc: tuple) -> tuple[list[str], int]:
    """The keys of a validation error's ``loc`` that are in the file, and where the last one starts
    (a union's member names in ``loc`` are not keys of the file and are passed over)."""
    node, keys = root, []
    for part in loc:
        if node.kind == "object" and isinstance(part, str) and node.member(part) is not None:
            node = node.member(part).node  # type: ignore[union-attr]
        elif node.kind == "array" and isinstance(part, int) and 0 <= part < len(node.children):
            node = node.children[part].node
        else:
            continue
        keys.append(str(part))
    return keys, node.start


def _plain(text: Any) -> Optional[Parts]:
    """A compiled text in the form ``profile.json`` holds it (strings and ``{"var": name}``)."""
    return None if text is None else [p if isinstance(p, str) else Var(var=p.name) for p in text.parts if p != ""]


def _offline_fills(overlay: Overlay, base: Any) -> None:
    """The base's offline fills that name a heading of the schemas read back (the offline
    summarizer's words do not travel with a pi export; a fill of a heading the schemas lack
    would make the imported profile invalid)."""
    names: set[str] = set()
    for key, own in (("schema", base.schema_), ("branch_schema", base.branch_schema)):
        schema = overlay.values.get(("summary", key), [x.model_dump(mode="json") for x in own])
        names |= {section["heading"] for section in schema}
        names |= {f"{section['heading']}/{item['heading']}" for section in schema for item in section.get("items") or ()}
    if base.offline is not None and any(fill.heading not in names for fill in base.offline.fill):
        overlay.values[("summary", "offline", "fill")] = [fill.model_dump(mode="json") for fill in base.offline.fill
                                                          if fill.heading in names]


def _pi_summary_rules(overlay: Overlay, summary: plan_schema.Summary) -> None:
    """The summary settings the extension applies beyond its texts (schemas, checks, transcript
    words, budgets, the branch summary's), each written only where it differs from
    ``builtin:default``'s."""
    from pipeline.facade import compile_profile

    base = compile_profile("default").profile
    for path, value, default in _pi_values(summary, base):
        if value != default:
            overlay.values[path] = value
    if ("summary", "schema") in overlay.values or ("summary", "branch_schema") in overlay.values:
        _offline_fills(overlay, base.summary)
    for path, parts, default in _pi_part_texts(summary, base.summary):
        if parts != _plain(default):
            overlay.values[path] = _parts(parts)
    for path, value, default in _pi_rendered_texts(summary, base.summary):
        if value != default.render():
            overlay.values[path] = profile_text(value)
    # rendered, as the other instructions
    overlay.values[("summary", "instructions", "branch")] = profile_text(summary.branch.instructions)


Setting = tuple[tuple[str, ...], Any, Any]  # (profile key, value in profile.json, builtin:default's)


def _pi_values(summary: plan_schema.Summary, base: Any) -> list[Setting]:
    """Settings that profile.json holds as the profile's own JSON values."""
    s, comp, branch = base.summary, base.compaction, summary.branch
    dump = lambda sections: [x.model_dump(mode="json") for x in sections]  # noqa: E731
    return [
        (("summary", "on_schema_violation"), summary.on_schema_violation, s.on_schema_violation),
        (("summary", "serialize_thinking"), summary.serialize_thinking, s.serialize_thinking),
        (("compaction", "tool_result_max_chars"), summary.tool_result_max_chars, comp.tool_result_max_chars),
        (("summary", "validity", "reject"), list(summary.validity.reject), list(s.validity.reject)),
        (("summary", "validity", "retries"), summary.validity.retries, s.validity.retries),
        *((("summary", "tags", k), getattr(summary.tags, k), getattr(s.tags, k)) for k in type(s.tags).model_fields),
        *((("summary", "labels", k), getattr(summary.labels, k), getattr(s.labels, k))
          for k in type(s.labels).model_fields),
        *((("compaction", "summary_budget", k), getattr(summary.budget, k), getattr(comp.summary_budget, k))
          for k in ("history", "turn_prefix", "limit")),
        (("summary", "schema"), dump(summary.schema_sections), dump(s.schema_)),
        (("summary", "branch_schema"), dump(branch.schema_sections), dump(s.branch_schema)),
        *((("compaction", "branch", k), getattr(branch, k), getattr(comp.branch, k))
          for k in ("max_tokens", "default_context_window")),
        *((("summary", "schema_format", k), getattr(summary.schema_format, k), getattr(s.schema_format, k))
          for k in type(s.schema_format).model_fields),
    ]


def _pi_part_texts(summary: plan_schema.Summary, s: Any) -> list[Setting]:
    """Texts that profile.json holds as parts (their variables kept)."""
    return [(("summary", "validity", "retry_note"), summary.validity.retry_note, s.validity.retry_note),
            (("summary", "truncation_marker"), summary.truncation_marker, s.truncation_marker),
            (("summary", "turn_prefix_request"), summary.turn_prefix_request, s.turn_prefix_request),
            (("summary", "instructions", "schema_retry"), summary.schema_retry, s.instructions.schema_retry)]


def _pi_rendered_texts(summary: plan_schema.Summary, s: Any) -> list[Setting]:
    """Texts that profile.json holds rendered (they take no variable)."""
    branch = summary.branch
    return [(("summary", "instructions", "custom_label"), summary.custom_label, s.instructions.custom_label),
            (("summary", "split_turn_separator"), summary.split_turn_separator, s.split_turn_separator),
            (("summary", "no_history"), summary.no_history, s.no_history),
            (("summary", "branch_preamble"), branch.preamble, s.branch_preamble),
            (("summary", "branch_empty"), branch.empty, s.branch_empty)]


def _parts(parts: Optional[Parts]) -> Optional[str]:
    """Profile text from the plan's parts (strings and ``{"var": name}``)."""
    if parts is None:
        return None
    return "".join(profile_text(p) if isinstance(p, str) else "${" + p.var + "}" for p in parts)


_SECTION_DEFAULTS = {"separator": "\n\n", "item_separator": "\n", "escape": "none", "wrap": "none",
                     "snippets": "one_line", "replaced_by_custom_prompt": False, "kind": "text"}


def _when(when: Optional[plan_schema.When]) -> Optional[dict]:
    if when is None:
        return None
    return {k: v for k, v in when.model_dump().items() if v} or None


def _pi_section(s: plan_schema.Section) -> dict[str, Any]:
    """One section of the plan as the overlay's keys (those that differ from a section's defaults)."""
    keys: dict[str, Any] = {}
    for field in ("name", "kind", "replaced_by_custom_prompt", "separator", "item_separator", "escape", "wrap",
                  "snippets"):
        value = getattr(s, field)
        if value is not None and _SECTION_DEFAULTS.get(field) != value:
            keys[field] = value
    if _when(s.when):
        keys["when"] = _when(s.when)
    for field in ("open", "heading", "text", "item", "empty", "close"):
        text = _parts(getattr(s, field))
        if text is not None and not (field in ("open", "close") and text == ""):
            keys[field] = ProfileText(text) if field == "text" else text
    if s.rules:
        keys["rules"] = [{k: v for k, v in (("text", _parts(r.text)), ("from", r.from_), ("when", _when(r.when)))
                          if v is not None} for r in s.rules]
    return keys


def _pi_prompt(overlay: Overlay, plan: plan_schema.Plan) -> None:
    from pipeline.facade import compile_profile

    base = compile_profile("default").profile.system_prompt.sections
    overlay.sections += [(s.id, {"remove": True}) for s in base]
    overlay.sections += [(s.id, _pi_section(s)) for s in plan.sections]
    prompt: dict[str, Any] = {"join": plan.join, "default_tools": plan.default_tools}
    if plan.caller_sections is not None:
        prompt["caller_sections"] = plan.caller_sections.model_dump()
    tools = {}
    for name, entry in plan.catalog.items():
        tool: dict[str, Any] = {"guidelines": [profile_text(g) for g in entry.guidelines]}
        if entry.snippet is not None:
            tool["snippet"] = profile_text(entry.snippet)
        tools[name] = tool
    if tools:
        prompt["tools"] = tools
    overlay.prompt_keys = {k: v for k, v in prompt.items() if v is not None}


def _claude(project: Path, overlay: Overlay) -> None:
    agent = _text_file(project / ".claude" / "agents" / "context-pipeline.md", "agent file")
    if agent is not None and agent.startswith("---\n"):
        end = agent.find("\n---\n", 3)
        agent = agent[end + 5:] if end >= 0 else agent
    _static_prompt(overlay, agent)
    _team_prompt(overlay, _text_file(project / ".claude" / "rules" / "context-pipeline.md", "rules file"))
    overlay.sources = ["claude-code"]
    settings = _json_object(project / ".claude" / "settings.json", "settings file")
    if _get(settings, "env", "DISABLE_AUTO_COMPACT") not in (None, "", "0"):
        overlay.values[("compaction", "enabled")] = False
    _summary_initial(overlay, _text_file(project / ".claude" / "context-pipeline" / "compact-instructions.md",
                                         "compaction instructions"))


def _codex(project: Path, overlay: Overlay) -> None:
    _static_prompt(overlay, _text_file(project / ".codex" / "context-pipeline" / "instructions.md",
                                       "instructions file"))
    path = project / ".codex" / "config.toml"
    if files.missing(path):
        return
    try:
        config = toml_loads(files.read_text(path, "settings file"))  # bounded nesting, before tomllib recurses
    except ValueError as err:
        found = re.search(r" \(at line (\d+), column (\d+)\)$", str(err))
        line, col = (int(found.group(1)), int(found.group(2))) if found else (None, None)
        message = str(err)[:found.start()] if found else str(err)
        raise ProfileError(Problem(f"invalid TOML: {message}", Location(str(path), line, col),
                                   code="profile.import-settings")) from None
    limit = config.get("model_auto_compact_token_limit")
    if limit == NEVER:
        overlay.values[("compaction", "enabled")] = False
    elif isinstance(limit, int):
        overlay.values[("compaction", "trigger")] = {"tokens": limit}
    if isinstance(config.get("developer_instructions"), str):
        _team_prompt(overlay, config["developer_instructions"])
    if isinstance(config.get("compact_prompt"), str):
        _summary_initial(overlay, config["compact_prompt"])


def _opencode(project: Path, overlay: Overlay) -> None:
    data = _json_object(project / ".opencode" / "context-pipeline" / "plugin.json", "plugin data")
    _static_prompt(overlay, _text_file(project / ".opencode" / "context-pipeline" / "prompt.md", "prompt file"),
                   data.get("cwd_marker"))
    _team_prompt(overlay, _text_file(project / ".opencode" / "context-pipeline" / "instructions.md",
                                     "instructions file"), data.get("cwd_marker"))
    overlay.sources = ["opencode"]
    config = _json_object(project / "opencode.json", "opencode.json")
    _compaction_keys(overlay, config)
    _summary_texts(overlay, config, data)


def _summary_texts(overlay: Overlay, config: dict, data: dict) -> None:
    """opencode.json's (or kilo.json's) ``agent.compaction.prompt`` and the plugin's compaction prompt."""
    system = _get(config, "agent", "compaction", "prompt")
    if isinstance(system, str):
        overlay.values[("summary", "system_prompt")] = profile_text(system)
    if isinstance(data.get("compaction_prompt"), str):
        _summary_initial(overlay, data["compaction_prompt"])


def _compaction_keys(overlay: Overlay, config: dict) -> None:
    """opencode.json's (or kilo.json's) ``compaction.*`` keys."""
    for theirs, ours in (("auto", ("compaction", "enabled")), ("reserved", ("compaction", "reserve_tokens")),
                         ("preserve_recent_tokens", ("compaction", "keep_recent_tokens"))):
        value = _get(config, "compaction", theirs)
        if value is not None:
            overlay.values[ours] = value
    if _get(config, "compaction", "prune") is True:
        overlay.values[("compaction", "strategy")] = "mask_tool_results"


def _kilo(project: Path, overlay: Overlay) -> None:
    """Kilo CLI's files are opencode's under .kilo/ and kilo.json: its commands are read in the opencode dialect."""
    _static_prompt(overlay, _text_file(project / ".kilo" / "context-pipeline" / "prompt.md", "prompt file"))
    _team_prompt(overlay, _text_file(project / ".kilo" / "context-pipeline" / "instructions.md", "instructions file"))
    commands = project / ".kilo" / "command"
    overlay.sources = [("opencode", commands)] if commands.is_dir() else []
    config = _json_object(project / "kilo.json", "kilo.json")
    _compaction_keys(overlay, config)
    _summary_texts(overlay, config, _json_object(project / ".kilo" / "context-pipeline" / "plugin.json", "plugin data"))
    _kilo_summarizer(overlay, config)


def _kilo_summarizer(overlay: Overlay, config: dict) -> None:
    """kilo.json's ``agent.compaction.model`` when it names the export's summarizer provider."""
    ref = _get(config, "agent", "compaction", "model")
    entry = _get(config, "provider", KILO_SUMMARIZER)
    if not isinstance(ref, str) or not ref.startswith(KILO_SUMMARIZER + "/") or not isinstance(entry, dict):
        return
    provider = "anthropic" if entry.get("npm") == "@ai-sdk/anthropic" else "openai"
    base = _get(entry, "options", "baseURL")
    overlay.values[("summarizer", "provider")] = provider
    overlay.values[("summarizer", "model")] = ref.removeprefix(KILO_SUMMARIZER + "/")
    if isinstance(base, str):
        overlay.values[("summarizer", "base_url")] = base.removesuffix("/v1") if provider == "anthropic" else base
    if isinstance(entry.get("env"), list) and entry["env"]:
        overlay.values[("summarizer", "api_key_env")] = entry["env"][0]


def _copilot(project: Path, overlay: Overlay) -> None:
    """Copilot CLI: only the team's sections (its instructions file); no commands, no compaction keys."""
    _team_prompt(overlay, _text_file(project / ".github" / "instructions" / "context-pipeline.instructions.md",
                                     "instructions file"))


def _agents_md(project: Path, overlay: Overlay) -> None:
    """AGENTS.md: only the team's sections (the export's marked block), and the block of each
    sub-folder's AGENTS.md the manifest records, as a section with that ``folder``."""
    _team_prompt(overlay, _block(project / "AGENTS.md"))
    blocks = _json(project / DIRS["agents-md"] / MANIFEST, "export manifest").get("blocks") or {}
    for path in sorted(p for p in blocks if isinstance(p, str) and p.endswith("/AGENTS.md")):
        folder = path.removesuffix("/AGENTS.md")
        if any(part in ("", ".", "..") for part in folder.split("/")) or overlay.prompt_keys.get("base") == "profile":
            continue
        text = _block(project / path)
        if text:
            slug = re.sub(r"[^A-Za-z0-9_.-]", "_", folder)
            overlay.sections.append((f"exported.{slug}", {"text": ProfileText(_written(text, None)),
                                                          "folder": folder}))


def _gemini(project: Path, overlay: Overlay) -> None:
    _static_prompt(overlay, _text_file(project / ".gemini" / "system.md", "system prompt file"))
    _team_prompt(overlay, _block(project / "GEMINI.md"))
    overlay.sources = ["gemini"]
    settings = _json_object(project / ".gemini" / "settings.json", "settings file")
    threshold = _get(settings, "model", "compressionThreshold")
    if isinstance(threshold, (int, float)) and not isinstance(threshold, bool):
        overlay.values[("compaction", "trigger")] = {"percent_of_window": round(threshold * 100, 9)}


def _qwen(project: Path, overlay: Overlay) -> None:
    """Qwen Code's files are Gemini CLI's under .qwen/: its commands are read in the gemini dialect."""
    _static_prompt(overlay, _text_file(project / ".qwen" / "system.md", "system prompt file"))
    _team_prompt(overlay, _block(project / "QWEN.md"))
    commands = project / ".qwen" / "commands"
    overlay.sources = [("gemini", commands)] if commands.is_dir() else []
    settings = _json_object(project / ".qwen" / "settings.json", "settings file")
    threshold = _get(settings, "context", "autoCompactThreshold")
    if isinstance(threshold, (int, float)) and not isinstance(threshold, bool):
        overlay.values[("compaction", "trigger")] = {"percent_of_window": round(threshold * 100, 9)}
    hook = _json_object(project / ".qwen" / "context-pipeline" / "precompact.json", "PreCompact hook output")
    instructions = _get(hook, "hookSpecificOutput", "additionalContext")
    if isinstance(instructions, str):
        _summary_initial(overlay, instructions)


__all__ = ["DIRS", "exported_overlay", "find_export"]
