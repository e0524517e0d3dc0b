"""README's "From Python" block runs as written, and its prompt lists the catalog's tools."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SESSION = ROOT / "tests" / "data" / "sessions" / "real" / "long-coding.jsonl"


def _from_python_block() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## From Python", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README has no python block under 'From Python'"
    return match.group(1)


def test_readme_from_python_block_runs_as_written(tmp_path, monkeypatch, capsys):
    """In a directory holding the files it names (the team profile, a session `chat.jsonl`)."""
    (tmp_path / "configs" / "examples").mkdir(parents=True)
    shutil.copyfile(ROOT / "configs" / "examples" / "team.yaml", tmp_path / "configs" / "examples" / "team.yaml")
    shutil.copyfile(SESSION, tmp_path / "chat.jsonl")
    before = (tmp_path / "chat.jsonl").read_bytes()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))  # no templates of the machine's own
    namespace: dict = {}
    exec(compile(_from_python_block(), "README.md", "exec"), namespace)
    prompt = namespace["prompt"]
    assert "\n- read: " in prompt and "\n- bash: " in prompt and "(none)" not in prompt
    assert capsys.readouterr().out == prompt + "\n"
    assert namespace["text"] == "/review a.py 'be strict'"  # no /review template in this directory
    assert namespace["plan"].settings.keep_recent_tokens == 8000
    assert (tmp_path / "chat.jsonl").read_bytes() == before


def test_every_shipped_profile_is_addressable_by_its_path_under_configs():
    from pipeline import PipelineError, compile_profile

    for path in sorted((ROOT / "configs").rglob("*.yaml")):
        name = path.relative_to(ROOT / "configs").with_suffix("").as_posix()
        for spelling in (name, f"builtin:{name}"):
            assert Path(compile_profile(spelling).origin).read_bytes() == path.read_bytes()  # installed or not
    for wrong in ("builtin:team", "team"):
        with pytest.raises(PipelineError, match=r"did you mean `builtin:examples/team`\?"):
            compile_profile(wrong)
