"""Profiles the target tests export: the default keeps the agent's own prompt (`system_prompt.base:
agent`), `replacing` puts the profile's whole prompt in its place, `TEAM` adds team sections."""

from __future__ import annotations

from pathlib import Path

#: builtin:default with the profile's prompt in place of the agent's own
REPLACE = "extends: builtin:default\nname: replace\nsystem_prompt:\n  base: profile\n"
#: builtin:default with two team sections (one holding the working directory)
TEAM = ("extends: builtin:default\nname: team\nsystem_prompt:\n  sections:\n"
        "    - {id: house, after: rules, text: Prefer short functions.}\n"
        "    - {id: where, after: house, text: \"Build in ${cwd}.\"}\n")


def replacing(tmp: Path) -> str:
    path = tmp / "replace.yaml"
    path.write_text(REPLACE)
    return str(path)


def run_export(target: str, project: Path, *args: str) -> int:
    """``pipeline export TARGET ARGS --project PROJECT`` in-process; its exit code."""
    from pipeline.cli import main

    return main(["export", target, *args, "--project", str(project)])


def dry_report(target: str, project: Path, capsys, *args: str) -> dict:
    """The report of a ``--dry-run --format json`` export, by key."""
    import json

    capsys.readouterr()
    assert run_export(target, project, *args, "--dry-run", "--format", "json") == 0
    return {c["key"]: c for c in json.loads(capsys.readouterr().out)["report"]}
