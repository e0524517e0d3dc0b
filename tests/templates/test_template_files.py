"""Loading template files from real directories: order, filtering, links and problems."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.templates.discovery import LoadedTemplates, load_templates, scan_directory
from pipeline.templates.files import PromptTemplate, read_template
from pipeline.agentdir import agent_dir
from pipeline.templates.ignorefile import IgnoreRules


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def names(loaded: LoadedTemplates) -> list[str]:
    return [t.name for t in loaded]


def codes(loaded: LoadedTemplates) -> list[str]:
    return [p.code for p in loaded.problems]


def test_directory_order_is_by_bytes(tmp_path):
    for name in ["b.md", "B.md", "a.md", "é.md", "😀.md", "～.md", "_.md", "10.md", "9.md"]:
        write(tmp_path / name, name)
    files, problems = scan_directory(tmp_path)
    assert [f.name for f in files] == sorted([f.name for f in files], key=os.fsencode)
    assert [f.name for f in files][:4] == ["10.md", "9.md", "B.md", "_.md"]
    assert [f.name for f in files][-2:] == ["～.md", "😀.md"]  # UTF-8 order, not UTF-16
    assert problems == []


def test_broken_link_unreadable_file_and_bad_frontmatter_are_reported_the_rest_loads(tmp_path):
    write(tmp_path / "good.md", "---\ndescription: fine\n---\nGood $1\n")
    write(tmp_path / "bad.md", "---\ndescription: [oops\n---\nbody\n")
    os.symlink(tmp_path / "missing.md", tmp_path / "broken.md")
    os.symlink("/proc/self/mem", tmp_path / "unreadable.md")  # a regular file whose read fails
    loaded = load_templates([tmp_path], include_defaults=False)
    assert names(loaded) == ["good"]
    by_code = {p.code: p for p in loaded.problems}
    assert set(by_code) == {"template.broken-link", "template.frontmatter", "template.unreadable"}
    assert by_code["template.broken-link"].location.file == str(tmp_path / "broken.md")
    assert by_code["template.unreadable"].location.file == str(tmp_path / "unreadable.md")
    bad = by_code["template.frontmatter"]
    assert (bad.location.file, bad.location.line, bad.location.col) == (str(tmp_path / "bad.md"), 2, 19)  # the end of the line, as pi
    assert all(p.severity == "warning" for p in loaded.problems)


def test_symlinks_to_files_count_links_to_directories_do_not(tmp_path):
    write(tmp_path / "real.txt", "linked $1")
    (tmp_path / "sub").mkdir()
    os.symlink("real.txt", tmp_path / "link.md")
    os.symlink("sub", tmp_path / "dirlink.md")
    loaded = load_templates([tmp_path], include_defaults=False)
    assert names(loaded) == ["link"]
    assert loaded.get("link").expand(["x"]) == "linked x"


def test_explicit_directory_is_not_filtered_and_not_recursive(tmp_path):
    write(tmp_path / ".hidden.md", "hidden")
    write(tmp_path / "sub" / "deep.md", "deep")
    write(tmp_path / "node_modules" / "x.md", "x")
    write(tmp_path / "notes.txt", "notes")
    assert names(load_templates([tmp_path], include_defaults=False)) == [".hidden"]


def test_explicit_file_and_missing_path(tmp_path):
    f = write(tmp_path / "one.md", "One")
    loaded = load_templates([f, tmp_path / "nope", write(tmp_path / "x.txt", "x")], include_defaults=False)
    assert names(loaded) == ["one"]
    assert codes(loaded) == ["template.bad-path", "template.bad-path"]


def test_default_directories_project_first_filtered(tmp_path):
    project = tmp_path / "proj" / ".pi" / "prompts"
    user = tmp_path / "agent" / "prompts"
    write(project / "dup.md", "project")
    write(project / ".hidden.md", "hidden")
    write(project / "node_modules" / "n.md", "n")
    write(user / "dup.md", "user")
    write(user / "only.md", "only")
    write(user / "skipped.md", "skipped")
    write(user / ".gitignore", "skipped.md\n")
    loaded = load_templates(cwd=tmp_path / "proj", agent=tmp_path / "agent")
    assert [(t.name, t.body, t.source) for t in loaded] == [
        ("dup", "project", "project"), ("only", "only", "user")]
    [collision] = loaded.problems
    assert collision.code == "template.name-collision" and collision.location.file == str(user / "dup.md")


def test_explicit_paths_come_after_the_defaults_and_relative_to_cwd(tmp_path):
    write(tmp_path / "proj" / ".pi" / "prompts" / "a.md", "project a")
    write(tmp_path / "proj" / "extra" / "a.md", "extra a")
    write(tmp_path / "proj" / "extra" / "b.md", "extra b")
    loaded = load_templates(["  extra  "], cwd=tmp_path / "proj", agent=tmp_path / "agent")
    assert [(t.name, t.body) for t in loaded] == [("a", "project a"), ("b", "extra b")]


def test_loading_does_not_parse_bodies_until_used(tmp_path):
    write(tmp_path / "a.md", "A $1")
    write(tmp_path / "b.md", "B ${@:2}")
    loaded = load_templates([tmp_path], include_defaults=False)
    assert all("template" not in vars(t) for t in loaded)  # an unused (maybe huge) body costs nothing
    assert loaded.get("a").expand(["x"]) == "A x"
    assert "template" in vars(loaded.get("a")) and "template" not in vars(loaded.get("b"))


def test_same_file_twice_is_not_a_collision(tmp_path):
    write(tmp_path / "a.md", "a")
    loaded = load_templates([tmp_path, tmp_path / "a.md"], include_defaults=False)
    assert names(loaded) == ["a"] and loaded.problems == ()


def test_agent_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "custom"))
    assert agent_dir() == tmp_path / "custom"
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert agent_dir() == tmp_path / ".pi" / "agent"


def test_invalid_utf8_is_replaced_not_fatal(tmp_path):
    (tmp_path / "latin.md").write_bytes(b"caf\xe9 $1\n")
    t = read_template(tmp_path / "latin.md")
    assert t.body == "caf\ufffd $1\n" and t.expand(["x"]) == "caf\ufffd x\n"


@pytest.mark.parametrize(("lines", "name", "ignored"), [
    (["*.md", "!keep.md"], "keep.md", False),
    (["*.md", "!keep.md"], "drop.md", True),
    (["# comment", "", "/x.md"], "x.md", True),
    (["\\#hash.md"], "#hash.md", True),
    (["sub/x.md"], "x.md", False),
    (["**/x.md"], "x.md", True),
    (["x.md/"], "x.md", False),
    (["[ab].md"], "b.md", True),
    (["[!ab].md"], "b.md", False),
    (["X.MD"], "x.md", True),
    (["x?.md  "], "xy.md", True),
])
def test_ignore_rules(lines, name, ignored):
    assert IgnoreRules.from_lines(lines).ignores(name) is ignored


def test_prompt_template_model_is_frozen_and_parsed():
    t = PromptTemplate.from_text("t", "---\nargument-hint: <a>\n---\n[$1]")
    assert (t.name, t.description, t.argument_hint, t.body) == ("t", "[$1]", "<a>", "[$1]")
    assert t.template.nodes[1].index == 1
    with pytest.raises(AttributeError):
        t.name = "u"
