"""The extension's JavaScript renderer against the Python one, input by input (pinned Node 22).

The real-pi tests (test_export_pi.py) hold the prompt pi sends equal to `pipeline render`
for the inputs a project gives; this one drives the extension's `renderPrompt(contextOf(opts))`
directly with pi's systemPromptOptions shapes that a project does not easily produce
(hidden tools, tools outside the catalog, guidelines, skills hidden from the model,
caller sections, XML-escaped values, backslashes in the cwd) and compares every prompt with
`Pipeline.render_system_prompt` for the same inputs. No skip: a missing npm fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.cli import main
from pipeline.prompt import RenderContext
from pipeline.prompt.context import ContextFile, Skill

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, node_bin  # noqa: E402

BEGIN, END = "<!-- context-pipeline: begin -->", "<!-- context-pipeline: end -->"
BLOCK = f"{BEGIN}\nPrefer short functions.\n{END}\n"

OPTIONS = [
    {"cwd": "/work/app", "selectedTools": ["read", "bash", "edit", "write"]},
    {"cwd": "C:\\\\src\\\\app", "selectedTools": ["read", "grep", "find", "ls"], "hiddenTools": ["find"]},
    {"cwd": "/w", "selectedTools": ["read", "todo"], "toolSnippets": {"todo": "Keep a  list\\nof tasks"},
     "toolGuidelines": {"todo": ["Update the list often.", " ", "Update the list often."]},
     "promptGuidelines": ["Ask before deleting files.", ""]},
    {"cwd": "/w", "selectedTools": ["read"], "customPrompt": "You write release notes.",
     "appendSystemPrompt": "Be brief.", "contextFiles": [{"path": "/w/AGENTS.md", "content": "Use <make> & test."}],
     "skills": [{"name": "a&b", "description": "Does <x>", "filePath": "/w/s/SKILL.md", "baseDir": "/w/s",
                 "disableModelInvocation": False},
                {"name": "quiet", "description": "Hidden", "filePath": "/w/q/SKILL.md", "baseDir": "/w/q",
                 "disableModelInvocation": True}]},
    {"cwd": "/w", "selectedTools": ["bash"], "customPrompt": "   ", "sections": {"team_notes": "Ship on Fridays."}},
    # the export's marked block is dropped from a context file (docs/export.md#exports-side-by-side):
    # well-formed (LF, CRLF, no final break, after a U+2028), broken or doubled (kept), alone (file left out)
    {"cwd": "/w", "selectedTools": ["read"], "contextFiles": [
        {"path": "/w/AGENTS.md", "content": f"Use tabs.\n\n{BLOCK}"},
        {"path": "/w/a/AGENTS.md", "content": f"a\r\n{BLOCK}".replace("\n", "\r\n") + "b"},
        {"path": "/w/a/b/AGENTS.md", "content": f"x\n{BEGIN}\nteam\n{END}"},
        {"path": "/w/c/AGENTS.md", "content": f"y\u2028{BLOCK}z\u2029{BEGIN}\u2028"},
        {"path": "/w/d/AGENTS.md", "content": BLOCK + BLOCK},
        {"path": "/w/e/AGENTS.md", "content": f"{END}\nq\n{BEGIN}\n"},
        {"path": "/w/f/AGENTS.md", "content": f" \n{BLOCK}\t\n"},
        {"path": "/w/g/AGENTS.md", "content": ""}]},
    {"cwd": "/w", "selectedTools": ["read"], "contextFiles": [{"path": "/w/AGENTS.md", "content": BLOCK}]},
]

PROFILES = ["builtin:default", "builtin:pi-1", "builtin:examples/team", "builtin:minimal"]


def _context(pipeline, opts: dict) -> RenderContext:
    """The Python render inputs for pi's options, with the extension's catalog rule."""
    catalog = {e.name for e in pipeline.render_plan.catalog}
    ours = lambda table: {k: v for k, v in (table or {}).items() if k not in catalog}  # noqa: E731
    sections = opts.get("sections") or {}
    return RenderContext(
        cwd=opts["cwd"], tools=tuple(opts["selectedTools"]), hidden_tools=tuple(opts.get("hiddenTools", ())),
        tool_snippets=ours(opts.get("toolSnippets")), tool_guidelines=ours(opts.get("toolGuidelines")),
        guidelines=tuple(opts.get("promptGuidelines", ())), custom_prompt=opts.get("customPrompt"),
        append_prompts=(opts["appendSystemPrompt"],) if opts.get("appendSystemPrompt") else (),
        context_files=tuple(ContextFile(**f) for f in opts.get("contextFiles", ())),
        skills=tuple(Skill(s["name"], s["description"], s["filePath"], s["baseDir"], s["disableModelInvocation"])
                     for s in opts.get("skills", ())),
        sections=sections if pipeline.render_plan.caller_sections is not None else {},
    )


@pytest.fixture(scope="module")
def node() -> str:
    try:
        return str(node_bin() / "node")
    except AgentInstallError as err:
        pytest.fail(f"the pinned Node 22 could not be installed: {err}")


@pytest.mark.parametrize("profile", PROFILES)
def test_the_extension_renders_what_python_renders(tmp_path, node, profile):
    assert main(["export", "pi", profile, "--project", str(tmp_path)]) == 0
    ext = tmp_path / ".pi/extensions/context-pipeline/index.js"
    script = tmp_path / "drive.mjs"
    script.write_text(
        f"import {{ renderPrompt, contextOf }} from {json.dumps(ext.as_uri())};\n"
        "const opts = JSON.parse(process.argv[2]);\n"
        "process.stdout.write(JSON.stringify(opts.map((o) => renderPrompt(contextOf(o)))));\n")
    done = subprocess.run([node, str(script), json.dumps(OPTIONS)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rendered = json.loads(done.stdout)
    pipeline = compile_profile(profile)
    for opts, got in zip(OPTIONS, rendered, strict=True):
        assert got == pipeline.render_system_prompt(_context(pipeline, opts)), opts
