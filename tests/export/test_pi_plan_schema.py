"""profile.json, the plan pi's extension reads, against its one schema (pipeline.model.pi_plan).

The shipped JSON Schema (pipeline/export/pi_plan.schema.json) is the models' own; every
plan the export writes for the built-in and example profiles reads back through the models
to the same bytes; the extension's JavaScript reads no field the schema lacks; a damaged
plan is a located error naming its key.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.export.pi import plan_json
from pipeline.model import pi_plan
from pipeline.model.pi_plan import PiPlan, plan_schema_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.stem for p in (ROOT / "configs" / "examples").glob("*.yaml"))
PROFILES = ["builtin:default", "builtin:pi-1", "builtin:minimal", *(f"builtin:examples/{n}" for n in EXAMPLES)]
PLAN = ".pi/extensions/context-pipeline/profile.json"


def test_the_shipped_schema_is_the_models_schema():
    shipped = resources.files("pipeline.export").joinpath("pi_plan.schema.json").read_text(encoding="utf-8")
    assert shipped == plan_schema_json(), "regenerate: python -c 'from pipeline.model.pi_plan import " \
                                          "plan_schema_json; print(plan_schema_json(), end=\"\")' > " \
                                          "pipeline/export/pi_plan.schema.json"
    schema = json.loads(shipped)
    assert schema["additionalProperties"] is False and set(schema["required"]) == set(PiPlan.model_fields)


def test_the_examples_are_all_checked():
    assert {"team", "compaction-policy"} <= set(EXAMPLES)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_written_plan_reads_back_through_the_schema_to_the_same_bytes(profile):
    text = plan_json(compile_profile(profile))
    plan = PiPlan.model_validate_json(text)
    assert plan.to_json() == text
    assert plan.profile == compile_profile(profile).profile.name


def test_a_field_outside_the_schema_is_refused():
    data = json.loads(plan_json(compile_profile("builtin:default")))
    data["summary"]["labels"]["narrator"] = "[Narrator]: "
    with pytest.raises(ValueError, match="narrator"):
        PiPlan.model_validate(data)


def _fields(*models) -> set[str]:
    return {f.alias or name for model in models for name, f in model.model_fields.items()}


#: the extension's names for the plan's objects -> the model each holds
READERS = {"compiled": pi_plan.PiPlan, "plan": pi_plan.Plan, "summary": pi_plan.Summary, "branch": pi_plan.Branch,
           "masking": pi_plan.Masking, "v": pi_plan.Validity, "L": pi_plan.Labels, "section": pi_plan.Section,
           "rule": (pi_plan.CallerSections, pi_plan.Rule, pi_plan.TriggerRule)}  # three objects the JS calls `rule`


#: properties of JavaScript's own strings and arrays (`v` is a value in xmlEscape too)
JS_METHODS = {"length", "includes", "some", "map", "replace", "trim", "split", "join", "filter", "slice"}


def test_the_extension_reads_only_fields_of_the_schema():
    text = resources.files("pipeline.export").joinpath("pi_extension.js").read_text(encoding="utf-8")
    source = re.sub(r"(?m)^\s*//.*$", "", text)  # comments name Python modules (branch.py)
    for name, models in READERS.items():
        model = models if isinstance(models, tuple) else (models,)
        read = set(re.findall(rf"(?<![\w.]){name}\.([a-z_]+)\b", source)) - JS_METHODS
        assert read, name
        assert read <= _fields(*model), (name, read - _fields(*model))
    nested = {"budget": pi_plan.Budget, "tags": pi_plan.Tags}
    for name, model in nested.items():
        assert set(re.findall(rf"summary\.{name}\.([a-z_]+)", source)) <= _fields(model), name


def test_a_damaged_plan_is_located_at_the_wrong_value(tmp_path):
    from pipeline.cli import main

    assert main(["export", "pi", "--project", str(tmp_path)]) == 0
    path = tmp_path / PLAN
    data = json.loads(path.read_text())
    data["summary"]["budget"]["reserve_tokens"] = "many"
    path.write_text(json.dumps(data, indent=1))
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if '"many"' in l)
    done = subprocess.run([sys.executable, "-m", "pipeline", "import", "pi", "--project", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{path}:{line}:" in done.stderr and "summary.budget.reserve_tokens" in done.stderr, done.stderr
    assert "export again" in done.stderr


def test_a_missing_plan_is_a_located_error(tmp_path):
    from pipeline.cli import main

    assert main(["export", "pi", "--project", str(tmp_path)]) == 0
    (tmp_path / PLAN).unlink()
    done = subprocess.run([sys.executable, "-m", "pipeline", "import", "pi", "--project", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr and str(tmp_path / PLAN) in done.stderr
