"""``pipeline export TARGET --verify``: what the installed agent really sends, against the profile.

The agent's CLI (found on PATH by its usual name, or ``--agent-bin``) runs headless in the
project against a loopback capture server of its wire format (:mod:`.agents`): no network,
no key, a throwaway home so the user's own settings are not read. What is checked is
driven by the export's own report, not by the layout of its files:

* every section the report calls ``native`` or ``extension``
  (``system_prompt.sections.ID``) must be in the first request, as the profile renders it
  for the static file's inputs (the working directory the project's); the item says where
  the request holds it (``system[2].text``, ``messages[0].content[1].text``). pi's
  extension renders the whole prompt from pi's inputs, so for pi the request's system
  message must equal ``pipeline render --discover --cwd PROJECT --tools read,bash,edit,write``;
* every template the report calls native is typed as ``/name args`` (as many arguments as
  it reads) and the text the agent sends must equal ``pipeline expand`` of the same input;
* compaction and summary settings are not in one prompt's request: each is named with the
  file and key that carries it (``not_observable``), except where the CLI prints the
  settings it read (opencode and Kilo CLI: ``debug config``), which are compared;
* what shadows the export in the real environment (:mod:`.shadows`) is listed, found by
  looking at files, never by running the agent with the user's home.

Exit codes (:class:`~.result.Verification`): 0 all sent as the profile says, 1 a mismatch,
3 a run of the agent failed (it exited with an error, timed out, or sent no request);
a CLI that is not installed is a usage error (2) raised before any run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from pipeline.errors import Location, Problem, UsageError
from pipeline.export.base import Carried, Export
from pipeline.export.verify.agents import (
    PI_TOOLS,
    RECIPES,
    Finished,
    Invocation,
    Recipe,
    string_leaves,
    system_message,
)
from pipeline.export.verify.result import Item, Verification, nearest_diff, text_diff
from pipeline.export.verify.shadows import find_shadows

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

__all__ = ["Item", "Verification", "find_agent", "verify_export"]

#: seconds one run of an agent CLI may take (they take seconds; a first opencode run installs its provider)
RUN_TIMEOUT = 300.0
Progress = Callable[[str], None]


def find_agent(target: str, agent: str, agent_bin: str | None, environ: Mapping[str, str]) -> str:
    """The agent CLI's path: ``agent_bin``, else its usual name on ``environ``'s PATH; a usage
    error (exit 2) that says how to install or name it when there is none."""
    recipe = RECIPES[target]()
    if agent_bin:
        path = Path(agent_bin).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return str(path.absolute())
        raise UsageError(Problem(f"{agent_bin} is not an executable file", Location("--agent-bin"),
                                 key="--agent-bin", hint=f"name the {agent} CLI's executable",
                                 code="profile.export-verify-agent"))
    found = shutil.which(recipe.binary, path=environ.get("PATH", ""))
    if found is None:
        raise UsageError(Problem(f"`{recipe.binary}` ({agent}, the CLI --verify runs) is not installed: it is not "
                                 "on PATH", Location("--verify"), key="--verify",
                                 hint=f"install {agent}, or name its executable with --agent-bin PATH",
                                 code="profile.export-verify-agent"))
    return found


def verify_export(target: str, agent: str, pipeline: "Pipeline", export: Export, root: Path, *,
                  agent_bin: str | None = None, environ: Mapping[str, str] | None = None,
                  progress: Progress = lambda line: None, timeout: float = RUN_TIMEOUT) -> Verification:
    """Run the installed agent against the files in ``root`` and compare with ``export``'s report."""
    env = dict(os.environ if environ is None else environ)
    binary = find_agent(target, agent, agent_bin, env)
    recipe = RECIPES[target]()
    root = root.absolute()
    with tempfile.TemporaryDirectory(prefix="pipeline-verify-") as scratch:
        work = Path(scratch)
        version = _version(binary, work / "version-home", env)
        commands = _commands(pipeline, export, root, work / "empty")
        invocations = [Invocation("Say ok."), *(c[0] for c in commands)]
        groups = [invocations] if recipe.batches else [[i] for i in invocations]
        runs: list[Finished] = []
        for n, group in enumerate(groups, 1):
            labels = ", ".join("the system prompt" if i.command is None else f"/{i.command}" for i in group)
            progress(f"verify: running {recipe.binary} ({n}/{len(groups)}): {labels}")
            runs.append(recipe.run(binary, root, work / f"home-{n}", group, timeout, env))
        items = _prompt_items(recipe, pipeline, export, root, runs[0], work / "empty")
        if target == "agents-md":
            items = _nested_items(recipe, binary, pipeline, export, root, items, work, (timeout, env), progress)
        items += _command_items(recipe, commands, runs, groups)
        settings, read = _compaction_items(recipe, binary, export, root, work / "home-config", env, timeout)
    shadows = find_shadows(target, agent, root, Path(env.get("HOME") or Path.home()), env,
                           [block.path for block in export.blocks])
    return Verification(target, agent, binary, version, len(groups) + read, tuple(items + settings), tuple(shadows))


def _version(binary: str, home: Path, env: Mapping[str, str]) -> str:
    home.mkdir(parents=True)
    try:
        done = subprocess.run([binary, "--version"], env={"PATH": env.get("PATH", ""), "HOME": str(home)},
                              capture_output=True, text=True, errors="replace", timeout=60,
                              stdin=subprocess.DEVNULL, cwd=home)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"--version failed: {err}"
    lines = (done.stdout or done.stderr).strip().splitlines()
    numbered = [line for line in lines if any(c.isdigit() for c in line)]  # Copilot adds a line of advice
    return (numbered or lines)[-1].strip() if lines else "unknown version"


def _failure(run: Finished) -> str | None:
    if run.returncode is None:
        return f"{run.argv[0]} did not finish within the time limit"
    if run.returncode != 0:
        tail = (run.stderr.strip() or run.stdout.strip())[-600:]
        return f"{run.argv[0]} exited with status {run.returncode}: {tail}"
    if not run.bodies:
        return f"{run.argv[0]} sent no request to the capture server"
    return None


# --------------------------------------------------------------------------- the prompt


def _carried(export: Export, prefix: str) -> list[Carried]:
    return [c for c in export.report if c.key.startswith(prefix) and c.how in ("native", "extension")]


def _prompt_items(recipe: Recipe, pipeline: "Pipeline", export: Export, root: Path, run: Finished,
                  empty: Path) -> list[Item]:
    failed = _failure(run)
    sections = _carried(export, "system_prompt.sections.")
    whole = [c for c in export.report if c.key == "system_prompt" and c.how == "extension"]
    keys = [c.key for c in sections] or [c.key for c in whole] or ["system_prompt"]
    if failed:
        return [Item(k, "failed", failed) for k in keys]
    if recipe.target == "pi":
        return [_whole_prompt(pipeline, root, run, empty)]
    leaves = [(p, t) for p, t in string_leaves(run.bodies[0]) if len(t) >= 20]
    own = _own_prompt_item(pipeline, export, root, leaves)
    if not sections:
        return [own or Item("system_prompt", "not_observable", "the export's report carries no section to look for")]
    rendered = _static_sections(pipeline, root, False if recipe.target == "agents-md" else None)
    items = [_section_item(c, rendered.get(c.key.removeprefix("system_prompt.sections.")), leaves) for c in sections]
    return ([own] if own else []) + items


def _own_prompt_item(pipeline: "Pipeline", export: Export, root: Path, leaves: list[tuple[str, str]]) -> Item | None:
    """Where the report says the agent keeps its own prompt (``system_prompt``: own), that none of
    the profile's sections it stands in for (pi's identity, tool list and tool rules, reported
    ``own``) reached the request, as a file replacing the prompt would hold them."""
    head = next((c for c in export.report if c.key == "system_prompt"), None)
    if head is None or head.how != "own":
        return None
    ids = [c.key.removeprefix("system_prompt.sections.") for c in export.report
           if c.key.startswith("system_prompt.sections.") and c.how == "own"]
    rendered = _static_sections(pipeline, root, True)
    texts = {i: rendered[i].strip() for i in ids if i in rendered and len(rendered[i].strip()) >= 20
             and str(root) not in rendered[i]}  # the working directory: every agent states it in its own words
    sent = [(i, p) for i, t in texts.items() for p, leaf in leaves if t in leaf]
    if sent:
        where = ", ".join(f"{i} in {p}" for i, p in sent)
        return Item("system_prompt", "mismatch", f"the profile's sections the agent's own prompt stands in for were "
                                                 f"sent: {where} ({head.where})")
    return Item("system_prompt", "ok", f"{head.where}: none of the profile's {len(texts)} section(s) it stands in for "
                                       f"({', '.join(texts) or 'none rendered'}) is in the request")


def _nested_items(recipe: Recipe, binary: str, pipeline: "Pipeline", export: Export, root: Path, items: list[Item],
                  work: Path, limits: tuple[float, Mapping[str, str]], progress: Progress) -> list[Item]:
    """An AGENTS.md export's sections of a sub-folder (``folder``) checked in a run of the agent in that
    folder (the run in the root has only the root's block): the items of those sections replaced."""
    from pipeline.export.agents_md import section_folders

    folders = section_folders(pipeline, root)
    out = {i.key: i for i in items}
    for n, folder in enumerate(sorted(set(folders.values())), 1):
        keys = {f"system_prompt.sections.{k}" for k, f in folders.items() if f == folder}
        progress(f"verify: running {recipe.binary} in {folder}: its AGENTS.md")
        run = recipe.run(binary, root / folder, work / f"home-folder-{n}", [Invocation("Say ok.")], *limits)
        nested = _prompt_items(recipe, pipeline, export, root / folder, run, work / "empty")
        out.update({i.key: i for i in nested if i.key in keys and i.key in out})
    return list(out.values())


def _section_item(carried: Carried, expected: str | None, leaves: list[tuple[str, str]]) -> Item:
    if expected is None or not expected.strip():
        return Item(carried.key, "ok", "renders nothing for the export's inputs, and nothing is expected")
    needle = expected.strip()
    for path, text in leaves:
        if needle in text:
            return Item(carried.key, "ok", f"sent in {path} ({carried.how}: {carried.where})")
    path, diff = nearest_diff(needle, leaves)
    where = f"; the nearest text is in {path}" if path else ""
    return Item(carried.key, "mismatch", f"not in the request ({carried.how}: {carried.where}){where}", diff)


def _static_sections(pipeline: "Pipeline", root: Path, replaces: bool | None) -> dict[str, str]:
    """The sections as a static file holds them, in ``root``: with the tool catalog when the file
    replaces the agent's prompt, else without (a rule that needs a tool is not there); an
    AGENTS.md export never replaces it (``replaces`` False)."""
    from pipeline.export.static_prompt import rendered_for

    return {k: s.text for k, s in rendered_for(pipeline, str(root), replaces).items()}


def _whole_prompt(pipeline: "Pipeline", root: Path, run: Finished, empty: Path) -> Item:
    from pipeline.prompt.inputs import RenderRequest

    empty.mkdir(exist_ok=True)
    gathered = pipeline.gather(RenderRequest(cwd=str(root), tools=PI_TOOLS, discover=True, agent_dir=str(empty)))
    expected = pipeline.render_system_prompt(gathered.context)
    sent = system_message(run.bodies[0])
    how = f"equal to pipeline render --discover --cwd {root} --tools {','.join(PI_TOOLS)}"
    if sent == expected:
        return Item("system_prompt", "ok", f"the system message is {how}")
    if sent is None:
        return Item("system_prompt", "mismatch", "the request has no system message", text_diff(expected, ""))
    return Item("system_prompt", "mismatch", f"the system message is not {how}", text_diff(expected, sent))


# --------------------------------------------------------------------------- commands


Command = tuple[Invocation, str, Carried]  # what is typed, what pipeline expand gives, the report's line


def _commands(pipeline: "Pipeline", export: Export, root: Path, empty: Path) -> list[Command]:
    """One ``/name args`` per template the report carries, with ``pipeline expand``'s text."""
    from pipeline.templates.analysis import analyze

    carried = _carried(export, "templates.")
    if not carried:
        return []
    empty.mkdir(exist_ok=True)
    loaded = pipeline.load_templates(root, agent=empty, home=empty)
    by_name: dict[str, Any] = {}
    for template in loaded.templates:
        by_name.setdefault(template.name, template)
    out: list[Command] = []
    for c in carried:
        name = c.key.removeprefix("templates.")
        found_template = by_name.get(name)
        if found_template is None:
            continue
        found = analyze(found_template.body)
        count = found.highest_positional or (2 if found.uses_all_args else 0)
        args = tuple(f"verify-arg-{i}" for i in range(1, count + 1))
        typed = " ".join((f"/{name}", *args))
        out.append((Invocation(typed, name, args), pipeline.expand(typed, loaded.templates), c))
    return out


def _command_items(recipe: Recipe, commands: list[Command], runs: list[Finished],
                   groups: Sequence[Sequence[Invocation]]) -> list[Item]:
    items: list[Item] = []
    for invocation, expected, carried in commands:
        n, run = next((n, r) for n, (g, r) in enumerate(zip(groups, runs)) if invocation in g)
        index = list(groups[n]).index(invocation)
        failed = _failure(run)
        if failed:
            items.append(Item(carried.key, "failed", failed))
            continue
        sent = recipe.command_text(run.bodies, index, invocation)
        detail = f"{invocation.text!r} sent as pipeline expand gives it ({carried.where})"
        if sent is not None and sent.rstrip("\n") == expected.rstrip("\n"):
            items.append(Item(carried.key, "ok", detail))
        else:
            items.append(Item(carried.key, "mismatch", f"{invocation.text!r}: the agent sent other text than "
                                                       f"pipeline expand ({carried.where})",
                              text_diff(expected.rstrip("\n"), (sent or "").rstrip("\n"))))
    return items


# --------------------------------------------------------------------------- compaction


_SETTINGS = ("compaction", "summary", "retry", "summarizer")


def _compaction_items(recipe: Recipe, binary: str, export: Export, root: Path, home: Path,
                      env: Mapping[str, str], timeout: float) -> tuple[list[Item], int]:
    """The items of the compaction and summary settings, and how many CLI runs reading them took."""
    carried = [c for c in export.report if c.key.split(".")[0] in _SETTINGS and c.how in ("native", "extension")]
    observed = _opencode_config(recipe, binary, export, root, home, env, timeout) if recipe.target in (
        "opencode", "kilo") and carried else None
    items = []
    for c in carried:
        match = next(((k, v) for k, v in (observed or {}).items() if f" {k}" in f" {c.where} "), None)
        if match is None:
            items.append(Item(c.key, "not_observable", f"a prompt's request does not show it; {c.how}: {c.where}"))
        else:
            key, (wrote, read) = match
            items.append(Item(c.key, "ok" if wrote == read else "mismatch", f"{recipe.binary} read {key} = {json.dumps(read)} "
                                             f"(the export wrote {json.dumps(wrote)}; {c.where})"))
    return items, 0 if observed is None else 1


def _opencode_config(recipe: Recipe, binary: str, export: Export, root: Path, home: Path,
                     env: Mapping[str, str], timeout: float) -> dict[str, tuple[Any, Any]]:
    """opencode's resolved settings (``opencode debug config``; Kilo CLI's ``kilo debug config``)
    for each compaction key the export writes into ``opencode.json`` (``kilo.json``), and the
    compaction agent's model (Kilo's summary model): dotted key -> (written, read)."""
    from pipeline.export.verify.agents import KEPT_ENV, run_process
    from pipeline.loopback.chat import LoopbackServer

    written = [(k, v) for s in export.shared if s.path.endswith(f"{recipe.target}.json") for k, v in s.keys
               if k and (k[0] == "compaction" or k == ("agent", "compaction", "model"))]
    if not written:
        return {}
    home.mkdir(parents=True, exist_ok=True)
    with LoopbackServer(["ok"]) as server:
        run_env = {k: v for k, v in env.items() if k in KEPT_ENV}
        run_env.update(HOME=str(home), **recipe.configure(home, server, root))
        code, out, _ = run_process([binary, "debug", "config"], root, run_env, timeout)
    try:
        config = json.loads(out) if code == 0 else {}
    except ValueError:
        config = {}
    result = {}
    for key, value in written:
        read: Any = config
        for part in key:
            read = read.get(part) if isinstance(read, dict) else None
        result[".".join(key)] = (value, read)
    return result
