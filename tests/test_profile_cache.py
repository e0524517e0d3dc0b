"""The compiled-profile cache: used for built-in profiles, invalidated by any change of
what the result depends on, ignored when corrupt, stale or foreign; and the cold start
of `pipeline render` that it serves reads only the render plan and imports neither
pydantic nor ruamel.yaml, lark or httpx."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the `tomli` dependency
    import tomli as tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

import pipeline
from pipeline import PipelineError, compile_profile, profile_cache
from pipeline import compiler


def compile_fresh(name: str):
    """Compiled from the YAML, the cache not asked."""
    path, label = compiler.resolve(name)
    return compiler._compile_file(path, label, compiler._Layer())


def same(a, b) -> bool:
    return (a.profile, a.fingerprint, a.origin, a.warnings) == (b.profile, b.fingerprint, b.origin, b.warnings)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "context-pipeline" / "profiles"


def _files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.pickle")) if directory.is_dir() else []


def _records(path: Path) -> tuple[tuple, object]:
    """A cache file's two pickles: the head ``(format, label, key, (plan, warnings))`` and the compiled profile."""
    with open(path, "rb") as handle:
        return pickle.load(handle), pickle.load(handle)


def _store(path: Path, head: tuple, compiled: object) -> None:
    path.write_bytes(pickle.dumps(head) + pickle.dumps(compiled))


def test_cache_lives_under_xdg_cache_home_or_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert profile_cache.cache_dir() == tmp_path / "context-pipeline"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # not absolute: ignored, as the XDG spec says
    assert profile_cache.cache_dir() == Path.home() / ".cache" / "context-pipeline"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert profile_cache.cache_dir() == Path.home() / ".cache" / "context-pipeline"
    assert not profile_cache.cache_dir().is_relative_to(Path(pipeline.__file__).parent)


def test_a_builtin_is_stored_once_and_loaded_equal(cache_home):
    first = compile_profile("default")
    [stored] = _files(cache_home)
    second = compile_profile("default")
    assert _files(cache_home) == [stored]
    assert same(second, first) and same(second, compile_fresh("default"))
    assert second.source_map.files == first.source_map.files
    # what was loaded renders like a fresh compile, texts included (their parts are pickled)
    text = second.profile.summary.projection.compaction.open
    assert text.parts == type(text)(text.raw).parts


def test_files_are_not_cached(cache_home, tmp_path):
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\n")
    compile_profile(str(profile))
    assert _files(cache_home) == []


def test_overrides_are_laid_over_the_cached_builtin_as_over_the_file(cache_home):
    """`pipeline run --model m` compiles with overrides: the built-in comes from the cache (the
    base and the result with these overrides are stored), and the result equals compiling the
    YAML with the same layer, a problem located at the flag included."""
    overrides, origin = {"compaction.reserve_tokens": 9000}, {"compaction.reserve_tokens": "--reserve"}
    fast = compile_profile("default", overrides, origin)
    [stored] = [p for p in _files(cache_home) if not p.name.startswith("v-")]
    _, base = _records(stored)
    assert same(base, compile_fresh("default"))
    path, label = compiler.resolve("default")
    slow = compiler._compile_file(path, label, compiler._Layer.of(overrides, origin))
    assert same(fast, slow) and fast.profile.compaction.reserve_tokens == 9000
    with pytest.raises(PipelineError) as err:
        compile_profile("default", {"compaction.reserve_tokens": -1}, origin)
    with pytest.raises(PipelineError) as fresh_err:
        compiler._compile_file(path, label, compiler._Layer.of({"compaction.reserve_tokens": -1}, origin))
    assert [str(p) for p in err.value.problems] == [str(p) for p in fresh_err.value.problems]
    assert str(err.value.problems[0]).startswith("--reserve"), err.value.problems[0]


def test_a_corrupt_file_is_ignored_and_written_again(cache_home):
    compile_profile("minimal")
    [stored] = _files(cache_home)
    stored.write_bytes(b"not a pickle at all")
    again = compile_profile("minimal")
    assert same(again, compile_fresh("minimal"))
    head, compiled = _records(stored)
    assert same(compiled, again) and head[3] == (again.render_plan, again.warnings, again.run_plan)


def test_a_stale_key_is_ignored_and_written_again(cache_home):
    compile_profile("minimal")
    [stored] = _files(cache_home)
    (fmt, label, key, _), compiled = _records(stored)
    stale = compile_fresh("default")  # another profile under an old key: must never come back
    _store(stored, (fmt, label, "0" * 64, (stale.render_plan, stale.warnings, stale.run_plan)), stale)
    assert profile_cache.cached_plan("minimal") is None
    assert same(compile_profile("minimal"), compiled) and not same(compiled, stale)
    assert _records(stored)[0][2] == key


def test_the_key_changes_with_any_input(tmp_path):
    yaml, module = tmp_path / "a.yaml", tmp_path / "m.py"
    yaml.write_text("a: 1\n")
    module.write_text("x = 1\n")
    key = profile_cache.fingerprint([yaml], [module])
    assert profile_cache.fingerprint([yaml], [module]) == key
    yaml.write_text("a: 2\n")
    changed_yaml = profile_cache.fingerprint([yaml], [module])
    module.write_text("x = 22\n")
    os.utime(module, ns=(1, 1))
    changed_module = profile_cache.fingerprint([yaml], [module])
    assert len({key, changed_yaml, changed_module}) == 3


def test_an_unwritable_cache_is_not_used(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file: the cache dir cannot be made
    assert same(compile_profile("default"), compile_fresh("default"))


def test_the_version_is_the_distributions():
    assert pipeline.__version__ == version("context-pipeline")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert pipeline.__version__ == project["version"]


def test_render_cold_start_imports_no_yaml_grammar_http_library_or_pydantic(tmp_path):
    """Run twice in fresh interpreters: the first fills the cache, the second is what a
    user's every later start is: it renders from the cached render plan, so not even
    pydantic is imported. ``-X importtime`` lists every module imported."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    code = "import sys; from pipeline.cli import main; sys.exit(main(['render']))"
    runs = []
    for run in (1, 2):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        runs.append(proc)
    first, second = runs
    assert second.stdout == first.stdout and "You are" in second.stdout  # the same prompt, from the plan
    imported = {line.rsplit("|", 1)[-1].strip() for line in second.stderr.splitlines() if "|" in line}
    assert {"pipeline.model.render_plan", "pipeline.prompt.render"} <= imported  # the listing is real
    heavy = sorted(m for m in imported if m.split(".")[0] in ("ruamel", "lark", "httpx", "jinja2", "pydantic", "pydantic_core"))
    assert heavy == []
    assert not any(m in imported for m in ("pipeline.model.profile", "pipeline.model.prompt", "pipeline.compiler"))
    filled = {line.rsplit("|", 1)[-1].strip() for line in first.stderr.splitlines() if "|" in line}
    assert "pydantic" in filled  # the first run compiled the profile: the check above can fail


def test_the_plan_alone_is_read_for_a_cached_builtin(cache_home):
    compiled = compile_profile("default")
    plan, warnings, run = profile_cache.cached_plan("default")
    assert (plan, warnings, run) == (compiled.render_plan, compiled.warnings, compiled.run_plan)
    assert profile_cache.cached_plan("builtin:default") == (plan, warnings, run)
    assert profile_cache.cached_plan("minimal") is None  # not compiled yet: nothing stored
    assert profile_cache.cached_plan("no-such-profile") is None  # the compiler will say what is wrong


def test_the_template_scanner_is_generated_once_and_read_back_without_lark(tmp_path):
    """A template is parsed through the scanner generated from the grammar; the generated
    scanner is kept in the cache, so the next process parses without importing Lark."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    code = ("import sys; from pipeline.templates.plan import Template; "
            "print(Template('$1 ${2:-b} $<@:2>').substitute(['x', 'y', 'z']), 'lark' in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert runs == ["x y y z True\n", "x y y z False\n"]  # the first generates it (with Lark), the second reads it
    from pipeline.templates.scanner import ATOMIC_GROUPS, generate, scanner

    assert scanner().source == generate(True, ATOMIC_GROUPS).source  # what is read back is what the grammar gives


def test_the_same_overrides_are_compiled_once(cache_home, monkeypatch):
    """A script's repeated `pipeline run --model M --base-url U` reads its compiled profile back."""
    overrides, origin = {"summarizer.model": "m", "compaction.reserve_tokens": 9000}, {"summarizer.model": "--model"}
    first = compile_profile("default", overrides, origin)
    variants = [p for p in _files(cache_home) if p.name.startswith("v-")]
    assert len(variants) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(compiler, "_compile_built", refuse)
    again = compile_profile("default", overrides, origin)
    assert same(again, first) and again.profile.summarizer.model == "m"
    with pytest.raises(AssertionError, match="compiled again"):  # other overrides, or other flag names: compiled
        compile_profile("default", overrides, {"summarizer.model": "-o"})
    with pytest.raises(AssertionError, match="compiled again"):  # a value JSON cannot hold is never cached
        compile_profile("default", {"compaction.reserve_tokens": float("nan")})


def test_at_most_max_variants_are_kept(cache_home, monkeypatch):
    monkeypatch.setattr(profile_cache, "MAX_VARIANTS", 3)
    for n in range(5):
        compile_profile("minimal", {"compaction.reserve_tokens": 1000 + n})
    assert len([p for p in _files(cache_home) if p.name.startswith("v-")]) == 3
    assert compile_profile("minimal", {"compaction.reserve_tokens": 1004}).profile.compaction.reserve_tokens == 1004


def test_importing_the_stages_builds_no_pydantic_schema(tmp_path):
    """The profile models defer their schemas (``defer_build``); a default model made at import
    (``Compaction()``) would build one, with pydantic's plugin machinery, on every start."""
    code = ("import sys, pipeline.runtime, pipeline.compaction, pipeline.cli.run, pipeline.cli.chat; "
            "print(sorted(m for m in sys.modules if m == 'pydantic.plugin._loader' or m == 'lark'))")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"


def test_a_cached_profile_is_read_without_the_checks(tmp_path):
    """A start that reads its compiled profile back (with overrides too) imports no checks,
    no profile reader and no ``extends:`` chain: they run when a profile is compiled."""
    code = ("import sys; from pipeline import compile_profile; "
            "p = compile_profile('default', {'summarizer.model': 'm'}); p.template_sources; "
            "print(p.profile.summarizer.model, any(m in sys.modules for m in "
            "('pipeline.checks', 'pipeline.source.reader', 'pipeline.source.chain')))")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    runs = [subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert runs == ["m True\n", "m False\n"]
