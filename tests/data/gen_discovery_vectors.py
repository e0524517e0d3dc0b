"""Generate tests/data/discovery_vectors.json from pi 0.84.0's own discovery code.

Needs the oracle (``/tmp/oracle``); the tests do not. Each case is a directory tree
(see tests/prompt/prompt_fstree.py) built under a fresh temp root, then pi is asked:

* ``context_files``: ``loadProjectContextFiles`` (op ``context_files``);
* ``skills_dir``: ``loadSkillsFromDir`` (op ``load_skills`` with ``dir``);
* ``skill_paths``: ``loadSkills`` with explicit paths only (first name wins, one real file once);
* ``agent``: the whole agent start-up (op ``agent_system_prompt``): context files, skills,
  SYSTEM.md / APPEND_SYSTEM.md.

Paths in the results are stored with the root replaced by ``{root}``; results outside the
root (a stray ``AGENTS.md`` above the temp dir) are dropped.

    python tests/data/gen_discovery_vectors.py
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "prompt"))

from prompt_fstree import build_tree, relativize  # noqa: E402


def skill(name: str | None, description: str | None, extra: str = "") -> str:
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    if extra:
        lines.append(extra)
    return "\n".join(lines) + "\n---\nBody of the skill.\n"


NESTED = {
    "files": {
        "a/AGENTS.override.md": "override a\n",
        "a/AGENTS.md": "agents a\n",
        "a/CLAUDE.md": "claude a\n",
        "a/b/AGENTS.MD": "upper b",
        "a/b/CLAUDE.md": "claude b\n",
        "a/b/c/CLAUDE.MD": "claude c upper\r\nwith CRLF\r\n",
        "agent/CLAUDE.md": "global\n\n",
    },
    "dirs": ["a/b/c/AGENTS.md"],
}

CONTEXT_CASES = [
    {"name": "spec-nested", "tree": NESTED, "cwd": "a/b/c", "agent_dir": "agent"},
    {"name": "empty", "tree": {"dirs": ["p/q", "agent"]}, "cwd": "p/q", "agent_dir": "agent"},
    {"name": "agent-is-cwd", "tree": {"files": {"w/AGENTS.md": "same"}}, "cwd": "w", "agent_dir": "w"},
    {"name": "agent-is-ancestor", "tree": {"files": {"AGENTS.md": "top", "x/y/CLAUDE.md": "deep"}}, "cwd": "x/y", "agent_dir": "."},
    {"name": "missing-agent-dir", "tree": {"files": {"r/AGENTS.md": "r"}}, "cwd": "r", "agent_dir": "nope"},
    {
        "name": "symlinks",
        "tree": {
            "files": {"real/notes.md": "linked text\n", "s/t/CLAUDE.md": "fallback"},
            "symlinks": {"s/AGENTS.md": "real/notes.md", "s/t/AGENTS.md": "!missing"},
        },
        "cwd": "s/t",
        "agent_dir": "agent",
    },
    {
        "name": "odd-content",
        "tree": {
            "files": {"o/AGENTS.md": "\ufeffBOM first\n\n\n", "o/p/CLAUDE.md": "", "o/p/q/AGENTS.override.md": "ünï 😀 <x> & \"y\"\n"},
            "bytes": {"o/p/q/r/AGENTS.md": "6f6b20ff0a"},
        },
        "cwd": "o/p/q/r",
        "agent_dir": "agent",
    },
    {"name": "lowercase-ignored", "tree": {"files": {"l/agents.md": "no", "l/claude.md": "no", "l/CLAUDE.MD": "yes"}}, "cwd": "l", "agent_dir": "agent"},
]

SKILL_TREE = {
    "files": {
        "skills/pdf/SKILL.md": skill("pdf", "Pull text and tables out of <PDF> & scans"),
        "skills/pdf/nested/SKILL.md": skill("nested", "never scanned: the parent is a skill"),
        "skills/group/git/SKILL.md": skill("git-o'clock", '"Quoted" description'),
        "skills/group/deep/er/SKILL.md": skill(None, "name comes from the directory"),
        "skills/group/notes.md": skill("loose-in-subdir", "not a skill: not in the root"),
        "skills/loose.md": skill("loose", "a loose file in the root"),
        "skills/loose-noname.md": skill(None, "named after the root directory"),
        "skills/readme.txt": "not markdown",
        "skills/.hidden/SKILL.md": skill("hidden-dir", "dot directories are skipped"),
        "skills/node_modules/dep/SKILL.md": skill("dep", "node_modules is skipped"),
        "skills/nodesc/SKILL.md": skill("nodesc", None),
        "skills/blankdesc/SKILL.md": skill("blankdesc", "'   '"),
        "skills/numdesc/SKILL.md": skill("numdesc", "42"),
        "skills/datedesc/SKILL.md": skill("datedesc", "2024-01-01"),
        "skills/yesdesc/SKILL.md": skill("yesdesc", "yes"),
        "skills/numname/SKILL.md": skill("123", "a number as the name"),
        "skills/listname/SKILL.md": skill("[a, b]", "a list as the name"),
        "skills/emptyname/SKILL.md": skill("''", "an empty name falls back"),
        "skills/off/SKILL.md": skill("off", "model may not invoke", "disable-model-invocation: true"),
        "skills/offstr/SKILL.md": skill("offstr", "a string is not true", "disable-model-invocation: 'true'"),
        "skills/offyes/SKILL.md": skill("offyes", "yes is not true", "disable-model-invocation: yes"),
        "skills/Bad_Name/SKILL.md": skill("Bad_Name", "invalid names only warn"),
        "skills/scalar/SKILL.md": "---\njust a string\n---\nbody\n",
        "skills/badyaml/SKILL.md": "---\nname: [unclosed\ndescription: x\n---\n",
        "skills/crlf/SKILL.md": "---\r\nname: crlf\r\ndescription: CRLF frontmatter\r\n---\r\nbody\r\n",
        "skills/bom/SKILL.md": "\ufeff---\nname: bom\ndescription: BOM hides the frontmatter\n---\n",
        "skills/nofm/SKILL.md": "# No frontmatter\n",
        "skills/multi/SKILL.md": skill("multi", "|\n  two\n  lines"),
        "skills/ünï/SKILL.md": skill(None, "ünïcode 😀 directory"),
        "skills/dup/SKILL.md": skill("pdf", "same name as another skill"),
        "target/linked/SKILL.md": skill("linked", "reached through a symlinked directory"),
    },
    "symlinks": {"skills/link": "target/linked", "skills/broken": "!missing"},
}

SKILLS_DIR_CASES = [
    {"name": "mixed", "tree": SKILL_TREE, "dir": "skills"},
    {"name": "root-is-skill", "tree": {"files": {"one/SKILL.md": skill("one", "the root itself"), "one/x/SKILL.md": skill("x", "below")}}, "dir": "one"},
    {"name": "missing-dir", "tree": {"dirs": ["d"]}, "dir": "nope"},
]

SKILL_PATH_CASES = [
    {
        "name": "first-wins",
        "tree": {
            "files": {
                "one/pdf/SKILL.md": skill("pdf", "first pdf"),
                "two/pdf/SKILL.md": skill("pdf", "second pdf"),
                "two/git/SKILL.md": skill("git", "git tools"),
                "file.md": skill("single", "a path naming one file"),
                "plain.txt": "not markdown",
            },
            "symlinks": {"three/again": "one/pdf"},
        },
        "paths": ["one", "two", "three", "file.md", "plain.txt", "missing"],
        "cwd": ".",
    },
]

AGENT_CASES = [
    {
        "name": "full-project",
        "tree": {
            "dirs": ["repo/.git"],
            "files": {
                "repo/AGENTS.md": "repo rules\n",
                "repo/pkg/CLAUDE.md": "package rules",
                "repo/pkg/.pi/SYSTEM.md": "project system prompt\n",
                "repo/pkg/.pi/APPEND_SYSTEM.md": "project append",
                "repo/pkg/.pi/skills/lint/SKILL.md": skill("lint", "project lint skill"),
                "repo/pkg/.pi/skills/quick.md": skill("quick", "a loose project skill"),
                "repo/.agents/skills/shared/SKILL.md": skill("shared", "from .agents at the git root"),
                "repo/.agents/skills/loose.md": skill("agents-loose", "loose files do not count under .agents"),
                "repo/pkg/.agents/skills/lint/SKILL.md": skill("lint", "loses to the .pi one"),
                "agent/SYSTEM.md": "global system prompt",
                "agent/APPEND_SYSTEM.md": "global append",
                "agent/AGENTS.md": "global rules\n",
                "agent/skills/user/SKILL.md": skill("user", "a user skill"),
                "agent/skills/hidden/SKILL.md": skill("hidden", "hidden from the model", "disable-model-invocation: true"),
                ".agents/skills/above/SKILL.md": skill("above", "above the git root: not searched"),
            },
        },
        "cwd": "repo/pkg",
        "agent_dir": "agent",
    },
    {
        "name": "global-prompts-only",
        "tree": {
            "dirs": ["w/.git"],
            "files": {"agent/SYSTEM.md": "", "agent/APPEND_SYSTEM.md": "global append only\n", "w/AGENTS.md": "w"},
        },
        "cwd": "w",
        "agent_dir": "agent",
    },
    {
        "name": "untrusted",
        "trusted": False,
        "tree": {
            "dirs": ["u/.git"],
            "files": {
                "u/.pi/SYSTEM.md": "ignored when untrusted",
                "u/.pi/skills/p/SKILL.md": skill("p", "ignored when untrusted"),
                "u/.agents/skills/a/SKILL.md": skill("a", "ignored when untrusted"),
                "u/AGENTS.md": "context files load regardless",
                "agent/APPEND_SYSTEM.md": "global append",
                "agent/skills/g/SKILL.md": skill("g", "global skill"),
            },
        },
        "cwd": "u",
        "agent_dir": "agent",
    },
    {"name": "bare", "tree": {"dirs": ["b/.git", "agent"]}, "cwd": "b", "agent_dir": "agent"},
]


def _skill_view(s: dict) -> dict:
    return {k: s[k] for k in ("name", "description", "filePath", "baseDir", "disableModelInvocation")}


def _under(root: str, items: list[dict], key: str) -> list[dict]:
    return [i for i in items if i[key].startswith(root + "/")]


class Runner:
    def __init__(self, oracle: Path) -> None:
        self.oracle = oracle

    def ask(self, request: dict):
        done = subprocess.run([str(self.oracle / "oracle")], input=json.dumps(request).encode(), capture_output=True)
        reply = json.loads(done.stdout)
        if not reply.get("ok"):
            raise SystemExit(f"oracle failed on {request['op']}: {reply.get('error')}")
        return reply["result"]

    def case(self, kind: str, case: dict) -> dict:
        base = Path(tempfile.mkdtemp(prefix="pi-discovery-"))
        root = str(base / "case")
        try:
            build_tree(Path(root), case["tree"])
            result = getattr(self, kind)(root, case)
        finally:
            shutil.rmtree(base)
        return relativize(result, root)

    def context_files(self, root: str, case: dict):
        files = self.ask({"op": "context_files", "cwd": f"{root}/{case['cwd']}", "agentDir": f"{root}/{case['agent_dir']}"})
        return _under(root, files, "path")

    def skills_dir(self, root: str, case: dict):
        out = self.ask({"op": "load_skills", "dir": f"{root}/{case['dir']}", "source": "path"})
        return [_skill_view(s) for s in out["skills"]]

    def skill_paths(self, root: str, case: dict):
        Path(root, "agent").mkdir(exist_ok=True)
        out = self.ask({
            "op": "load_skills", "cwd": f"{root}/{case['cwd']}", "agentDir": f"{root}/agent",
            "skillPaths": [f"{root}/{p}" for p in case["paths"]], "includeDefaults": False,
        })
        return [_skill_view(s) for s in out["skills"]]

    def agent(self, root: str, case: dict):
        out = self.ask({
            "op": "agent_system_prompt", "cwd": f"{root}/{case['cwd']}", "agentDir": f"{root}/{case['agent_dir']}",
            "projectTrusted": case.get("trusted", True), "packageDir": "/opt/pi", "noPromptTemplates": True,
        })
        options = out["systemPromptOptions"]
        return {
            "context_files": _under(root, out["contextFiles"], "path"),
            "skills": [_skill_view(s) for s in out["skills"]],
            "custom_prompt": options.get("customPrompt"),
            "append_prompt": options.get("appendSystemPrompt"),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--oracle", type=Path, default=Path("/tmp/oracle"))
    parser.add_argument("--out", type=Path, default=HERE / "discovery_vectors.json")
    args = parser.parse_args(argv)
    runner = Runner(args.oracle)
    groups = {
        "context_files": CONTEXT_CASES,
        "skills_dir": SKILLS_DIR_CASES,
        "skill_paths": SKILL_PATH_CASES,
        "agent": AGENT_CASES,
    }
    doc: dict = {"pi_version": "0.84.0", "generator": "tests/data/gen_discovery_vectors.py"}
    for kind, cases in groups.items():
        doc[kind] = [{**case, "expected": runner.case(kind, case)} for case in cases]
    args.out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {sum(len(c) for c in groups.values())} discovery cases to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
