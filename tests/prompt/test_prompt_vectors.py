"""The pi-shaped test profile reproduces pi 0.84.0's buildSystemPrompt byte for byte.

``tests/data/system_prompt_vectors.json`` holds pi's own outputs (with its fixed sentences
masked) for generated render contexts; ``tests/prompt/pi_shaped.yaml`` has pi's layout with
the same masks. Regenerate with ``tests/data/gen_system_prompt_vectors.py`` (needs the oracle).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.prompt import RenderContext, render_sections, render_system_prompt

HERE = Path(__file__).parent
DOC = json.loads((HERE.parent / "data" / "system_prompt_vectors.json").read_text(encoding="utf-8"))
VECTORS = DOC["vectors"]


@pytest.fixture(scope="module")
def pi_shaped():
    return compile_profile(HERE / "pi_shaped.yaml").profile


def test_vector_file_is_big_and_varied() -> None:
    contexts = [v["context"] for v in VECTORS]
    assert len(VECTORS) >= 300
    assert any(c["tools"] is None for c in contexts) and any(c["tools"] == [] for c in contexts)
    assert any(c["custom_prompt"] and not c["custom_prompt"].strip() for c in contexts)
    assert any("\\" in c["cwd"] for c in contexts)
    assert any(s["disable_model_invocation"] for c in contexts for s in c["skills"])
    assert sum("<available_skills>" in v["expected"] for v in VECTORS) >= 30


@pytest.mark.parametrize("index", range(len(VECTORS)))
def test_render_matches_pi(pi_shaped, index: int) -> None:
    vector = VECTORS[index]
    context = RenderContext.from_json(vector["context"])
    assert render_system_prompt(pi_shaped, context) == vector["expected"]


def test_sections_join_to_the_prompt(pi_shaped) -> None:
    for vector in VECTORS[:60]:
        sections = render_sections(pi_shaped, RenderContext.from_json(vector["context"]))
        assert "".join(s.separator + s.text for s in sections) == vector["expected"]
        assert sections[0].separator == ""
