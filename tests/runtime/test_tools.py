"""The built-in Python tools: pi's parameters, the profile's texts, paths kept inside the working directory."""

from __future__ import annotations

import pytest

from pipeline import compile_profile
from pipeline.model.run_plan import RunPlan
from pipeline.runtime.host import ToolOutput
from pipeline.runtime.tools import builtin_tools

PROFILE = compile_profile("default").profile
OUT = PROFILE.runtime.tool_output


@pytest.fixture
def tools(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    (tmp_path / "README.md").write_text("# demo\n")
    (tmp_path / "empty").mkdir()
    (tmp_path.parent / "secret.txt").write_text("no")
    return {t.name: t for t in builtin_tools(["read", "ls", "find", "grep", "bash", "edit", "write"], tmp_path, RunPlan.of(PROFILE))}


def _text(result):
    return result if isinstance(result, str) else result.blocks()[0]["text"]


def test_read_shows_the_file_and_pages(tools):
    assert tools["read"].function({"path": "src/app.py"}) == "def greet(name):\n    return 'hello ' + name\n"
    paged = tools["read"].function({"path": "src/app.py", "offset": 2, "limit": 1})
    assert paged == "    return 'hello ' + name" + OUT.truncated.render(shown="1", total="2")


def test_ls_sorts_like_pi_and_marks_directories(tools):
    assert tools["ls"].function({}) == "empty/\nREADME.md\nsrc/"
    assert tools["ls"].function({"path": "empty"}) == OUT.empty_directory.render()


def test_find_and_grep(tools):
    assert tools["find"].function({"pattern": "*.py"}) == "src/app.py"
    assert tools["grep"].function({"pattern": "hello"}) == "src/app.py:2:    return 'hello ' + name"
    assert tools["grep"].function({"pattern": "absent"}) == OUT.no_matches.render()
    bad = tools["grep"].function({"pattern": "("})
    assert isinstance(bad, ToolOutput) and bad.is_error and _text(bad).startswith(OUT.invalid_pattern.render(error="")[:10])


@pytest.mark.parametrize("name, args, text", [
    ("read", {"path": "nope.txt"}, OUT.not_found.render(path="nope.txt")),
    ("read", {"path": "../secret.txt"}, OUT.outside.render(path="../secret.txt")),
    ("read", {"path": "src"}, OUT.not_a_file.render(path="src")),
    ("ls", {"path": "README.md"}, OUT.not_a_directory.render(path="README.md")),
    ("write", {"path": "../x.txt", "content": "x"}, OUT.outside.render(path="../x.txt")),
])
def test_errors_are_results_in_the_profiles_words(tools, name, args, text):
    result = tools[name].function(args)
    assert isinstance(result, ToolOutput) and result.is_error and _text(result) == text


def test_the_opt_in_tools_write_and_run(tools, tmp_path):
    assert not tools["write"].function({"path": "out/new.txt", "content": "fresh\n"}).is_error
    assert (tmp_path / "out" / "new.txt").read_text() == "fresh\n"
    assert not tools["edit"].function({"path": "out/new.txt", "edits": [{"oldText": "fresh", "newText": "old"}]}).is_error
    assert (tmp_path / "out" / "new.txt").read_text() == "old\n"
    ran = tools["bash"].function({"command": "echo hi; exit 3"})
    assert ran.is_error and _text(ran).startswith("hi") and ran.details == {"exitCode": 3}


def test_parameters_are_pis():
    names = {t.name: t.parameters for t in builtin_tools(["read", "ls"], ".", RunPlan.of(PROFILE))}
    assert names["read"]["required"] == ["path"] and set(names["read"]["properties"]) == {"path", "offset", "limit"}
    assert "required" not in names["ls"]


def test_an_unknown_tool_is_refused():
    with pytest.raises(ValueError, match="unknown tool 'rm'"):
        builtin_tools(["read", "rm"], ".", RunPlan.of(PROFILE))
