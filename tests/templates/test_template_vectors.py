"""pi 0.84.0's own answers (tests/data/template_vectors.json) against our implementation.

The vectors were produced by tests/data/gen_template_vectors.py through the oracle; these
tests only read the file. ``TEMPLATE_VECTORS=path`` points them at another vector file
(the generator's ``--check`` mode uses that for fresh random cases).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pipeline.js import js_json, yaml_string
from pipeline.templates.discovery import load_templates
from pipeline.templates.files import PromptTemplate
from pipeline.templates.frontmatter import FrontmatterError, parse_frontmatter
from pipeline.templates.invoke import expand_input, parse_args
from pipeline.templates.plan import substitute_args

DEFAULT = Path(__file__).resolve().parent.parent / "data" / "template_vectors.json"
VECTORS = json.loads(Path(os.environ.get("TEMPLATE_VECTORS", DEFAULT)).read_text(encoding="utf-8"))


def _ids(section: str):
    return [f"{section}-{i}" for i in range(len(VECTORS.get(section, [])))]


def test_vector_file_is_big_enough():
    counted = ("parse_args", "expand", "expand_input", "angle", "frontmatter", "load_templates")
    total = sum(len(VECTORS[k]) for k in counted)
    assert total >= (1 if "TEMPLATE_VECTORS" in os.environ else 2000)
    assert VECTORS["meta"]["pi"] == "0.84.0"


@pytest.mark.parametrize("case", VECTORS.get("parse_args", []), ids=_ids("parse_args"))
def test_parse_args(case):
    assert parse_args(case["args"]) == case["result"]


@pytest.mark.parametrize("case", VECTORS.get("expand", []), ids=_ids("expand"))
def test_substitute_args(case):
    args = case["args"] if "args" in case else parse_args(case["argsString"])
    assert substitute_args(case["content"], args) == case["result"]


@pytest.fixture(scope="module")
def invoke_templates():
    return [PromptTemplate(t["name"], "", t["content"]) for t in VECTORS.get("expand_input_templates", [])]


@pytest.mark.parametrize("case", VECTORS.get("expand_input", []), ids=_ids("expand_input"))
def test_expand_input(case, invoke_templates):
    assert expand_input(case["input"], invoke_templates) == case["result"]


@pytest.mark.parametrize("case", VECTORS.get("angle", []), ids=_ids("angle"))
def test_angle_forms_equal_their_braced_twin(case):
    """pi has no ``$<...>`` forms: the expected value is pi's result for the braced twin."""
    assert substitute_args(case["body"], case["args"]) == case["result"]
    assert substitute_args(case["twin"], case["args"]) == case["result"]


@pytest.mark.parametrize("case", VECTORS.get("frontmatter", []), ids=_ids("frontmatter"))
def test_frontmatter(case):
    if not case["ok"]:
        with pytest.raises(FrontmatterError):
            parse_frontmatter(case["content"])
        return
    fm = parse_frontmatter(case["content"])
    assert fm.body == case["result"]["body"]
    want = case["result"]["frontmatter"]
    if isinstance(want, dict):  # compared as JSON values (Infinity and NaN serialise as null)
        assert json.loads(js_json(dict(fm.data))) == want
    else:  # a YAML scalar or list: pi reads no keys from it
        assert fm.data == {}


def _materialise(root: Path, files: list[dict]) -> None:
    for f in files:
        path = root / f["name"]
        if "symlink" in f:
            os.symlink(f["symlink"], path)
        elif "dir" in f:
            path.mkdir()
        elif "hex" in f:
            path.write_bytes(bytes.fromhex(f["hex"]))
        else:
            path.write_bytes(f["content"].encode("utf-8", "surrogatepass"))


def _expected(item: dict) -> dict:
    out = dict(item)
    out["description"] = yaml_string(item["description"])  # pi may keep a YAML number here
    if "argumentHint" in item:
        out["argumentHint"] = yaml_string(item["argumentHint"])
    return out


@pytest.mark.parametrize("case", VECTORS.get("load_templates", []), ids=_ids("load_templates"))
def test_load_templates_from_explicit_directory(case, tmp_path):
    _materialise(tmp_path, case["files"])
    loaded = load_templates([tmp_path], include_defaults=False)
    got = []
    for t in loaded:
        item = {"name": t.name, "description": t.description, "content": t.body,
                "file": os.path.relpath(t.path, tmp_path)}
        if t.argument_hint is not None:
            item["argumentHint"] = t.argument_hint
        got.append(item)
    want = [_expected(i) for i in case["result"]["result"]]
    assert [sorted(g.items()) for g in got] == [sorted(w.items()) for w in want]


@pytest.mark.parametrize("case", VECTORS.get("discovery", []), ids=_ids("discovery"))
def test_default_directories_like_the_agent(case, tmp_path):
    dirs = {"project": tmp_path / "proj" / ".pi" / "prompts", "user": tmp_path / "agent" / "prompts"}
    for kind in ("project", "user"):
        dirs[kind].mkdir(parents=True)
        for name, content in case[kind].items():
            path = dirs[kind] / name  # content: None a directory, {"symlink": target} a link, else text
            if isinstance(content, dict):
                os.symlink(content["symlink"], path)
            else:
                path.mkdir() if content is None else path.write_text(content, encoding="utf-8")
    loaded = load_templates(cwd=tmp_path / "proj", agent=tmp_path / "agent")
    got = [{"name": t.name, "content": t.body, "file": os.path.relpath(t.path, tmp_path)} for t in loaded]
    assert got == case["result"]
