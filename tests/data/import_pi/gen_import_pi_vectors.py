"""Vectors for `pipeline import pi`: what pi 0.84.0 builds for a few agent setups.

    python tests/data/import_pi/gen_import_pi_vectors.py ORACLE [--check]

Each setup below is a pi agent directory and a project (files written under a fresh
root, with HOME pointing inside it so nothing of the machine is found). The oracle's
``agent_system_prompt`` runs pi's real AgentSession there (``piSettings``: the setup's
settings.json files merged as pi merges them) and we keep its data-driven parts: the
structured inputs pi passed to its prompt builder (custom prompt, appended text, context
files, skills, working directory), those parts in the order they occur in pi's prompt,
and the prompt templates pi loaded. pi's own sentences are not kept: the test compares
only these parts. Paths are stored with the root written ``<ROOT>``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "vectors.json"
SKILL = "---\nname: {name}\ndescription: {description}\n---\nSteps for {name}.\n"

SETUPS = [
    {
        "name": "full-agent-dir",
        "agent": {
            "settings.json": json.dumps({"compaction": {"enabled": True, "reserveTokens": 12000,
                                                        "keepRecentTokens": 15000},
                                         "branchSummary": {"reserveTokens": 9000},
                                         "retry": {"enabled": True, "maxRetries": 5, "baseDelayMs": 500},
                                         "prompts": ["team-prompts"], "theme": "dark"}),
            "SYSTEM.md": "You are the release bot for ACME.\nAlways answer in English.\n",
            "APPEND_SYSTEM.md": "Sign every answer with -- bot.\n",
            "AGENTS.md": "Global rule: run the tests.\n",
            "prompts/review.md": "---\ndescription: Review a file\n---\nReview $1 carefully.\n",
            "team-prompts/ship.md": "Ship version ${1:-next}.\n",
            "skills/pdf/SKILL.md": SKILL.format(name="pdf", description="Read <PDF> & forms"),
        },
        "project": {
            "AGENTS.md": "Project rule: use tabs.\n",
            ".pi/prompts/fix.md": "Fix $@ now.\n",
        },
    },
    {
        "name": "project-overrides",
        "agent": {
            "settings.json": json.dumps({"compaction": {"reserveTokens": 20000}}),
            "SYSTEM.md": "Agent-level system prompt (pi prefers the project's).\n",
            "APPEND_SYSTEM.md": "Agent-level append.\n",
        },
        "project": {
            ".pi/settings.json": json.dumps({"compaction": {"keepRecentTokens": 8000}, "retry": {"enabled": False}}),
            ".pi/SYSTEM.md": "Project prompt with ${placeholders}, $1 and $${escapes} kept as written.\n\n",
            ".pi/APPEND_SYSTEM.md": "  Indented append text\twith a tab.",
            "CLAUDE.md": "Claude-style project notes.\n",
            ".pi/skills/lint/SKILL.md": SKILL.format(name="lint", description="Lint the code"),
        },
    },
    {
        "name": "append-only-nested-cwd",
        "agent": {
            "APPEND_SYSTEM.md": "Extra: keep diffs small.\n",
            "settings.json": json.dumps({"branchSummary": {"reserveTokens": 4096, "skipPrompt": True}}),
        },
        "project": {
            "AGENTS.md": "Repository root instructions.\n",
            "pkg/AGENTS.md": "Package instructions.\n",
            "pkg/.pi/prompts/t.md": "Test ${@:2} in $1\n",
        },
        "cwd": "pkg",
    },
    {
        "name": "settings-only",
        "agent": {
            "settings.json": json.dumps({"compaction": {"enabled": False, "reserveTokens": 8000,
                                                        "keepRecentTokens": 4000},
                                         "retry": {"maxRetries": 1, "baseDelayMs": 100},
                                         "prompts": ["one.md", "~/shared-prompts"]}),
            "one.md": "One $1\n",
        },
        "home": {"shared-prompts/home.md": "From home: $ARGUMENTS\n"},
        "project": {},
    },
]


def merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def write_tree(root: Path, files: dict) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def layout(root: Path, setup: dict) -> dict:
    """Write one setup under root; returns its directories."""
    dirs = {"agent": root / "agent", "project": root / "project", "home": root / "home"}
    for key, directory in dirs.items():
        directory.mkdir(parents=True, exist_ok=True)
        write_tree(directory, setup.get(key, {}))
    dirs["cwd"] = dirs["project"] / setup.get("cwd", "")
    return dirs


def pieces(prompt: str, options: dict) -> list[str]:
    """The data parts of pi's prompt, in the order they occur in it."""
    wanted = [options.get("customPrompt"), options.get("appendSystemPrompt")]
    for f in options.get("contextFiles", []):
        wanted += [f["path"], f["content"]]
    for s in options.get("skills", []):
        wanted += [s["name"], s["description"], s["filePath"]]
    wanted.append(options["cwd"])
    found, at = [], 0
    for piece in wanted:
        if not piece:
            continue
        i = prompt.find(piece, at)
        if i == -1:  # escaped in the prompt (skills are XML-escaped): keep the order check honest
            raise SystemExit(f"piece not found in pi's prompt: {piece!r}")
        found.append(piece)
        at = i + len(piece)
    return found


def escape_xml(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;"))


def run(oracle: str, setup: dict) -> dict:
    root = Path(tempfile.mkdtemp(prefix="import-pi-"))
    try:
        dirs = layout(root, setup)
        settings = {}
        for rel in ("agent/settings.json", "project/.pi/settings.json"):
            if (root / rel).is_file():
                settings = merge(settings, json.loads((root / rel).read_text()))
        request = {"op": "agent_system_prompt", "cwd": str(dirs["cwd"]), "agentDir": str(dirs["agent"]),
                   "packageDir": "/opt/pi", "tools": ["read", "bash", "edit", "write"], "piSettings": settings}
        env = dict(os.environ, HOME=str(dirs["home"]))
        env.pop("PI_CODING_AGENT_DIR", None)
        proc = subprocess.run([oracle], input=json.dumps(request), capture_output=True, text=True, env=env)
        answer = json.loads(proc.stdout)
        if not answer.get("ok"):
            raise SystemExit(f"{setup['name']}: {answer.get('error')}")
        result = answer["result"]
        opts = result["systemPromptOptions"]
        options = {"cwd": opts["cwd"], "customPrompt": opts.get("customPrompt"),
                   "appendSystemPrompt": opts.get("appendSystemPrompt"),
                   "contextFiles": [{"path": f["path"], "content": f["content"]} for f in opts.get("contextFiles", [])],
                   "skills": [{"name": s["name"], "description": s["description"], "filePath": s["filePath"]}
                              for s in opts.get("skills", [])]}
        shown = dict(options, skills=[{k: escape_xml(v) for k, v in s.items()} for s in options["skills"]])
        expected = {
            "options": options,
            "pieces": pieces(result["systemPrompt"], shown),
            "prompts": [{"name": p["name"], "content": p["content"], "filePath": p["filePath"]}
                        for p in result["prompts"]],
            "settings": settings,
        }
        text = json.dumps(expected, ensure_ascii=False).replace(str(root), "<ROOT>")
        return dict(setup, expected=json.loads(text))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    data = {"pi": "0.84.0", "setups": [run(sys.argv[1], s) for s in SETUPS]}
    if "--check" in sys.argv:
        same = json.loads(OUT.read_text(encoding="utf-8")) == data
        print("same" if same else "different")
        return 0 if same else 1
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(SETUPS)} setups to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
