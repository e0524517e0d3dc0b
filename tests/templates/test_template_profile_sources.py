"""Templates come from the profile: ``templates.sources`` in order, on real directories.

``load_profile_templates`` (and ``Pipeline.load_templates``) walk the profile's sources:
``project`` → ``<cwd>/<project_dir>``, ``global`` → ``global_dir`` (the default follows
``$PI_CODING_AGENT_DIR``), other entries are paths relative to the profile file. The
built-in profiles list ``[project, global]``, pi's agent order (checked against the
oracle's discovery vectors); ``pipeline expand``/``templates`` take ``--profile`` and
``--untrusted``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.cli import main
from pipeline.model.templates import Templates
from pipeline.templates.discovery import global_template_dir, load_profile_templates, profile_sources

DATA = Path(__file__).resolve().parents[1] / "data"
DISCOVERY = json.loads((DATA / "template_vectors.json").read_text(encoding="utf-8"))["discovery"]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _profile(tmp_path: Path, templates: str, name: str = "p.yaml") -> Path:
    return _write(tmp_path / name, f"extends: builtin:default\nname: t\ntemplates:\n{templates}")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A project and a user directory that both define /hi; the environment points nowhere else."""
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    _write(tmp_path / "proj" / ".pi" / "prompts" / "hi.md", "project [$1]")
    _write(tmp_path / "agent" / "prompts" / "hi.md", "user [$1]")
    _write(tmp_path / "agent" / "prompts" / "bye.md", "user bye $@")
    return tmp_path


# --------------------------------------------------------------------------- the built-in order is pi's


@pytest.mark.parametrize("case", DISCOVERY, ids=[f"discovery-{i}" for i in range(len(DISCOVERY))])
def test_default_profile_loads_like_pis_agent(case, tmp_path):
    dirs = {"project": tmp_path / "proj" / ".pi" / "prompts", "user": tmp_path / "agent" / "prompts"}
    for kind, directory in dirs.items():
        directory.mkdir(parents=True)
        for name, content in case[kind].items():
            path = directory / name
            if isinstance(content, dict):
                os.symlink(content["symlink"], path)
            else:
                path.mkdir() if content is None else path.write_text(content, encoding="utf-8")
    loaded = compile_profile("default").load_templates(tmp_path / "proj", agent=tmp_path / "agent")
    got = [{"name": t.name, "content": t.body, "file": os.path.relpath(t.path, tmp_path)} for t in loaded]
    assert got == case["result"]


@pytest.mark.parametrize("name", ["default", "minimal"])
def test_builtin_profiles_list_project_before_global(name):
    assert compile_profile(name).template_sources == ("project", "global")
    assert Templates().sources == ("project", "global")


# --------------------------------------------------------------------------- order, trust, directories


def test_order_is_precedence(tree):
    reverse = compile_profile(_profile(tree, "  sources: [global, project]\n"))
    loaded = reverse.load_templates(tree / "proj", agent=tree / "agent")
    assert [(t.name, t.body, t.source) for t in loaded] == [
        ("bye", "user bye $@", "user"), ("hi", "user [$1]", "user")]
    [collision] = loaded.problems
    assert collision.code == "template.name-collision" and str(tree / "proj") in collision.location.file


def test_untrusted_skips_only_the_project(tree):
    _write(tree / "extra" / "hi.md", "explicit [$1]")
    pipeline = compile_profile(_profile(tree, "  sources: [project, extra, global]\n"))
    trusted = pipeline.load_templates(tree / "proj", agent=tree / "agent")
    untrusted = pipeline.load_templates(tree / "proj", agent=tree / "agent", trusted=False)
    assert trusted.get("hi").source == "project"
    assert untrusted.get("hi").source == "path" and untrusted.get("hi").body == "explicit [$1]"


def test_global_follows_the_agent_dir_variable(tree, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tree / "agent"))
    loaded = compile_profile("default").load_templates(tree / "elsewhere")
    assert [(t.name, t.source) for t in loaded] == [("bye", "user"), ("hi", "user")]


def test_agent_dir_variable_and_home_expand_tilde(tree, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/agent")
    assert global_template_dir("~/.pi/agent/prompts", home=tree) == tree / "agent" / "prompts"
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    assert global_template_dir("~/.pi/agent/prompts", home=tree) == tree / ".pi" / "agent" / "prompts"
    assert global_template_dir("~/.pi/agent/prompts", agent=tree / "a") == tree / "a" / "prompts"


def test_a_custom_global_dir_is_used_as_written(tree, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tree / "agent"))  # not used: global_dir is not the default
    _write(tree / "home" / "team-prompts" / "hi.md", "team [$1]")
    pipeline = compile_profile(_profile(tree, "  sources: [global]\n  global_dir: ~/team-prompts\n"))
    loaded = pipeline.load_templates(tree / "proj", home=tree / "home")
    assert [(t.name, t.body) for t in loaded] == [("hi", "team [$1]")]


def test_project_dir_is_relative_to_the_cwd(tree):
    _write(tree / "proj" / "prompts" / "only.md", "custom dir $1")
    _write(tree / "proj" / "prompts" / ".hidden.md", "filtered like pi's project directory")
    pipeline = compile_profile(_profile(tree, "  sources: [project]\n  project_dir: prompts\n"))
    loaded = pipeline.load_templates(tree / "proj", agent=tree / "agent")
    assert [(t.name, t.source) for t in loaded] == [("only", "project")]


def test_explicit_paths_are_relative_to_the_profile_and_unfiltered(tree):
    _write(tree / "profiles" / "shared" / ".dot.md", "dot $1")
    _write(tree / "profiles" / "one.md", "one $1")
    pipeline = compile_profile(_profile(tree / "profiles", "  sources: [shared, one.md]\n"))
    loaded = pipeline.load_templates(tree / "proj")
    assert [(t.name, t.source, t.path) for t in loaded] == [
        (".dot", "path", tree / "profiles" / "shared" / ".dot.md"),
        ("one", "path", tree / "profiles" / "one.md"),
    ]


def test_profile_sources_without_a_pipeline(tree):
    sources = profile_sources(["global", "project", Path("/abs/x.md"), "rel"], Templates(), tree / "proj",
                              agent=tree / "agent", trusted=False)
    assert [(s.path, s.kind, s.filtered) for s in sources] == [
        (tree / "agent" / "prompts", "user", True),
        (Path("/abs/x.md"), "path", False),
        (tree / "proj" / "rel", "path", False),
    ]


def test_missing_default_directories_are_not_problems(tmp_path, monkeypatch):
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    pipe = compile_profile("default")
    loaded = load_profile_templates(pipe.profile.templates, pipe.template_sources, tmp_path, home=tmp_path)
    assert (len(loaded), loaded.problems) == (0, ())


# --------------------------------------------------------------------------- the commands


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def in_project(tree, monkeypatch):
    monkeypatch.chdir(tree / "proj")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tree / "agent"))
    return tree


def test_expand_reads_the_default_profile(in_project, capsys):
    code, out, err = run(capsys, "expand", "/hi x")
    assert (code, out) == (0, "project [x]\n") and "collision" in err
    assert run(capsys, "expand", "/hi x", "--untrusted") == (0, "user [x]\n", "")


def test_expand_and_templates_take_a_profile(in_project, capsys):
    profile = _profile(in_project, "  sources: [global, project]\n")
    code, out, err = run(capsys, "expand", "/hi x", "--profile", str(profile))
    assert (code, out) == (0, "user [x]\n")
    # inside the working directory: named relative to it (as validate does); outside: absolute
    assert err.startswith(f".pi/prompts/hi.md: warning: name \"/hi\" collision: {in_project / 'agent' / 'prompts' / 'hi.md'} wins")
    code, out, _ = run(capsys, "templates", "--profile", str(profile), "--format", "json")
    assert [(i["name"], i["source"]) for i in json.loads(out)] == [("bye", "user"), ("hi", "user")]


def test_templates_dir_replaces_the_profile_sources(in_project, capsys):
    _write(in_project / "other" / "hi.md", "other [$1]")
    assert run(capsys, "expand", "/hi x", "--templates-dir", str(in_project / "other")) == (0, "other [x]\n", "")
    code, out, _ = run(capsys, "templates", "--templates-dir", str(in_project / "other"), "--format", "json")
    assert [i["file"] for i in json.loads(out)] == [str(in_project / "other" / "hi.md")]


def test_a_bad_profile_is_an_error(in_project, capsys):
    bad = _write(in_project / "bad.yaml", "extends: builtin:default\nname: t\ntemplates: {sourcez: []}\n")
    for args in (["expand", "/hi"], ["templates"], ["expand", "/hi", "--templates-dir", "."]):
        code, out, err = run(capsys, *args, "--profile", str(bad))
        assert (code, out) == (1, "")
        assert err.startswith(f"{bad}:3:13: templates.sourcez: unknown key") and "Traceback" not in err


def test_templates_labels_infos(in_project, capsys):
    _write(in_project / "proj" / ".pi" / "prompts" / "far.md", "x $99 ${@:0} $0")
    code, _, err = run(capsys, "templates")
    far = ".pi/prompts/far.md"  # relative to the working directory
    assert code == 0
    assert [line.split(": ")[1] for line in err.splitlines() if line.startswith(far)] == ["info", "info", "warning"]


@pytest.mark.parametrize("command", ["expand", "templates"])
def test_help_names_the_flags_and_the_warning_format(command):
    done = subprocess.run([sys.executable, "-m", "pipeline", command, "--help"],
                          capture_output=True, text=True, timeout=60)
    text = " ".join(done.stdout.split())
    assert done.returncode == 0
    for fragment in ("--profile P", "--untrusted", "--templates-dir", "`path[:line:col]: warning: message (hint)`",
                     "[project, global]"):
        assert fragment in text, fragment
    assert "`path: reason`" not in text
