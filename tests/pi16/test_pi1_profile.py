"""``builtin:pi-1`` against pi 1.6.0's own answers (``tests/data/pi16/``), with pi's sentences masked.

Every option set of ``sections.json`` is unmasked into a render context, rendered through the
facade (``Pipeline.system_sections`` / ``render_system_prompt``, no catalog: the vectors name
every snippet pi received), masked back and compared with pi's record, order and joined prompt;
the name rule on ``section_names``; patches, update framing and replays on every pair of
``patches.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.errors import PipelineError
from pipeline.model.run_plan import RunPlan
from pi1_masks import Masks

DATA = Path(__file__).resolve().parent.parent / "data" / "pi16"
SECTIONS = json.loads((DATA / "sections.json").read_text(encoding="utf-8"))
PATCHES = json.loads((DATA / "patches.json").read_text(encoding="utf-8"))
MASKS = Masks()
PIPE = MASKS.pipeline


def test_pi1_compiles_without_findings() -> None:
    assert PIPE.profile.name == "pi-1"
    assert PIPE.warnings == ()


@pytest.mark.parametrize("vector", SECTIONS["vectors"], ids=lambda v: v["id"])
def test_render_equals_pi16(vector: dict) -> None:
    context = MASKS.context(vector["options"])
    record = MASKS.mask_record(PIPE.system_sections(context, catalog=False))
    assert record == vector["sections"]
    assert list(record or {}) == vector["order"]
    assert MASKS.mask(PIPE.render_system_prompt(context, catalog=False)) == vector["prompt"]


def test_every_sections_vector_was_compared() -> None:
    assert len(SECTIONS["vectors"]) == 362


@pytest.mark.parametrize("case", SECTIONS["section_names"], ids=lambda c: repr(c["name"]))
def test_name_rule_agrees_with_pi16(case: dict) -> None:
    context = MASKS.context({"cwd": "/w", "sections": {case["name"]: "text"}})
    if case["accepted"]:
        assert f"<{case['name']}>\ntext\n</{case['name']}>" in PIPE.render_system_prompt(context)
    else:
        with pytest.raises(PipelineError) as err:
            PIPE.render_system_prompt(context)
        assert err.value.problems[0].code == "profile.bad-section-name"


def test_name_rule_is_checked_before_rendering_even_for_empty_text() -> None:
    with pytest.raises(PipelineError):
        PIPE.system_sections(MASKS.context({"cwd": "/w", "sections": {"ok": "x", "Bad": ""}}))


def test_default_profile_takes_no_caller_sections() -> None:
    from pipeline import compile_profile

    with pytest.raises(PipelineError) as err:
        compile_profile("default").render_system_prompt(MASKS.context({"cwd": "/w", "sections": {"x": "y"}}))
    assert "takes no caller sections" in str(err.value)


@pytest.mark.parametrize("vector", PATCHES["vectors"], ids=lambda v: v["id"])
def test_patch_equals_pi16(vector: dict) -> None:
    previous = PIPE.system_sections(MASKS.context(vector["previous"]), catalog=False)
    current = PIPE.system_sections(MASKS.context(vector["current"]), catalog=False)
    assert MASKS.mask_record(previous) == vector["previous_sections"]
    assert MASKS.mask_record(current) == vector["current_sections"]
    patch = PIPE.patches.section_patch(previous, current)
    assert MASKS.mask_record(patch) == vector["patch"]
    assert list(patch or {}) == vector["patch_order"]
    assert MASKS.mask(PIPE.patches.frame_patch(patch) if patch else None) == vector["update"]
    assert MASKS.mask(PIPE.patches.replay_prompt(previous, [patch])) == vector["replayed_prompt"]
    fresh = PIPE.render_system_prompt(MASKS.context(vector["current"]), catalog=False)
    assert MASKS.mask(fresh) == vector["fresh_prompt"]


def test_patch_from_two_contexts_through_the_facade() -> None:
    before, after = MASKS.context({"cwd": "/a"}), MASKS.context({"cwd": "/b", "sections": {"note": "N"}})
    assert PIPE.patches.section_patch(before, after) == {"cwd": "<cwd>\n/b\n</cwd>", "note": "<note>\nN\n</note>"}
    assert PIPE.patches.section_patch(after, before) == {"cwd": "<cwd>\n/a\n</cwd>", "note": None}
    assert PIPE.patches.section_patch(before, before) is None


def test_pi1_sets_every_block_the_default_sets() -> None:
    from pipeline import compile_profile

    default = compile_profile("default").profile
    assert default.model_fields_set <= PIPE.profile.model_fields_set
    assert set(default.system_prompt.tools) == set(PIPE.profile.system_prompt.tools)


def test_the_runtime_splits_arguments_as_the_profile_declares(tmp_path) -> None:
    from pipeline import compile_profile
    from pipeline.runtime.conversation import Conversation
    from pipeline.runtime.host import ModelInfo
    from pipeline.session import SessionFile
    from pipeline.templates.files import PromptTemplate

    model = ModelInfo(id="m", provider="local", context_window=100000, max_tokens=4000)
    template = [PromptTemplate("say", "", "[$1][$2]")]
    got = {}
    for name in ("default", "builtin:pi-1"):
        session = SessionFile.create(tmp_path / f"{name.replace(':', '_')}.jsonl", cwd=str(tmp_path))
        conv = Conversation(RunPlan.of(compile_profile(name).profile), session, model=model, tools=[], cwd=str(tmp_path),
                            templates=template)
        got[name] = conv.expand("/say doesn't '' x")
    assert got == {"default": "[doesnt  x][]", "builtin:pi-1": "[doesn't][]"}
