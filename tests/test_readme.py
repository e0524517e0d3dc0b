"""README: the shipped profiles it names are addressable (its Python block runs in tests/test_doc_blocks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_every_shipped_profile_is_addressable_by_its_path_under_configs():
    from pipeline import PipelineError, compile_profile

    for path in sorted((ROOT / "configs").rglob("*.yaml")):
        name = path.relative_to(ROOT / "configs").with_suffix("").as_posix()
        for spelling in (name, f"builtin:{name}"):
            assert Path(compile_profile(spelling).origin).read_bytes() == path.read_bytes()  # installed or not
    for wrong in ("builtin:team", "team"):
        with pytest.raises(PipelineError, match=r"did you mean `builtin:examples/team`\?"):
            compile_profile(wrong)
