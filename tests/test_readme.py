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


def test_the_from_python_prose_names_the_files_its_code_uses():
    """Issue 34, item 6: the prose under README's "From Python" block names the files the
    block really reads, and each exists in the repository."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    code, prose = section.split("```python", 1)[1].split("```", 1)
    named = re.findall(r"`([\w./-]+\.(?:jsonl|yaml))`", prose)
    assert named, "the prose names the files the block reads"
    for name in named:
        assert name in code, f"{name} is named in the prose but not used by the code"
        assert (ROOT / name).is_file(), name
