"""The JSON Schema for editors: snapshot, committed copy in sync, accepts what validates."""

from __future__ import annotations

import json
import os

import pytest
from ruamel.yaml import YAML

from conftest import ROOT, run_process
from mini_schema import errors
from pipeline.model.schema import editor_schema, schema_json

COMMITTED = ROOT / "docs" / "profile.schema.json"


def _yaml(text: str):
    return YAML(typ="safe", pure=True).load(text)


def test_schema_snapshot(snapshot):
    assert editor_schema() == snapshot


def test_committed_schema_is_up_to_date():
    """Fails when docs/profile.schema.json differs from `pipeline schema`; run
    `pipeline schema -o docs/profile.schema.json` after changing the models."""
    assert COMMITTED.read_text(encoding="utf-8") == schema_json()


def test_schema_command_prints_and_checks(tmp_path):
    run = run_process("schema")
    assert run.code == 0 and run.out == schema_json()
    assert run_process("schema", "--check", str(COMMITTED)).code == 0
    stale = tmp_path / "old.json"
    stale.write_text("{}\n", encoding="utf-8")
    run = run_process("schema", "--check", str(stale))
    assert run.code == 1 and "out of date" in run.err and "Traceback" not in run.err


def test_schema_check_refuses_what_is_not_a_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # reading it would wait for a writer forever
    for target in (tmp_path, fifo):
        run = run_process("schema", "--check", str(target))
        assert run.code == 1 and run.err.strip() == f"{target}: cannot read: not a regular file"  # 1: a bad file


@pytest.mark.parametrize("name", ["default.yaml", "minimal.yaml", "examples/team.yaml"])
def test_shipped_profiles_match_the_schema(name):
    data = _yaml((ROOT / "configs" / name).read_text(encoding="utf-8"))
    assert errors(editor_schema(), data) == []


OVERLAYS = {
    "partial-section": "extends: base.yaml\nsystem_prompt:\n  sections:\n    - id: rules\n      heading: Rules\n",
    "directives": (
        "extends: builtin:default\nsystem_prompt:\n  sections:\n"
        "    - {id: a, remove: true}\n    - {id: b, replace: true, kind: text, text: x}\n"
        "    - {id: c, before: b, text: y}\n    - {id: d, after: c, text: z}\n"
    ),
    "threshold-only": "extends: builtin:default\ncompaction: {reserve_tokens: 1000}\n",
}


@pytest.mark.parametrize("text", OVERLAYS.values(), ids=OVERLAYS.keys())
def test_overlays_are_accepted(text):
    assert errors(editor_schema(), _yaml(text)) == []


REJECTED = {
    "typo-in-key": ("extends: builtin:default\ncompaction: {reserv_tokens: 1}\n", ".compaction.reserv_tokens"),
    "enum-typo": ("extends: x.yaml\nsystem_prompt: {sections: [{id: a, kind: tool-list}]}\n", ".kind"),
    "section-without-id": ("extends: x.yaml\nsystem_prompt: {sections: [{text: a}]}\n", ".id: required"),
    "standalone-missing-keys": ("name: a\n", ".summary: required"),
    "budget-out-of-range": ("extends: x.yaml\ncompaction: {summary_budget: {history: 2}}\n", ".history"),
}


@pytest.mark.parametrize("text,fragment", REJECTED.values(), ids=REJECTED.keys())
def test_mistakes_are_rejected(text, fragment):
    found = errors(editor_schema(), _yaml(text))
    assert any(fragment in e for e in found), found


def test_schema_is_valid_json_with_a_dialect():
    data = json.loads(COMMITTED.read_text(encoding="utf-8"))
    assert data["$schema"].startswith("https://json-schema.org/")
    assert "extends" in data["properties"]


def test_the_schema_is_made_in_a_process_that_validated_no_profile():
    """The models defer their schemas and hold defaults made unvalidated: the editor schema
    builds them first (`pipeline init` writes it before compiling anything)."""
    import subprocess
    import sys

    code = "from pipeline.model.schema import schema_json; import json; print(len(json.loads(schema_json())['$defs']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 10
