"""The layers of docs/architecture.md hold: the import-linter contracts of pyproject.toml.

CLI > review tooling (testing, report, scenario) > the ``Pipeline`` facade > the stages
(runtime > compaction > llm > session | prompt > templates) > the profile front end
(compiler > checks > source > model) > shared ground (agentdir | resources | js >
gcpause | files > errors | limits). Every import counts, also those inside functions and under TYPE_CHECKING, so a
lazy import cannot hide an arrow that runs back.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

importlinter = pytest.importorskip("importlinter", reason="import-linter is part of the `test` extra")
from importlinter.application.use_cases import lint_imports, read_user_options  # noqa: E402
from importlinter.configuration import configure  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

configure()


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> str:
    """One import-graph cache for the module's runs (grimp parses each file once)."""
    return str(tmp_path_factory.mktemp("import-linter-cache"))


def _lint(config: Path, capsys, cache: str) -> tuple[bool, str]:
    kept = lint_imports(config_filename=str(config), cache_dir=cache, no_logo=True)
    return kept, capsys.readouterr().out


def _config(tmp_path: Path, contract: str) -> Path:
    path = tmp_path / "contracts.toml"
    path.write_text('[tool.importlinter]\nroot_package = "pipeline"\n\n[[tool.importlinter.contracts]]\n' + contract)
    return path


def test_the_layer_contracts_in_pyproject_are_kept(capsys, cache_dir):
    options = read_user_options(str(ROOT / "pyproject.toml"))
    types = sorted(c["type"] for c in options.contracts_options)
    assert types == ["acyclic_siblings", "forbidden", "forbidden", "forbidden", "layers"]
    kept, out = _lint(ROOT / "pyproject.toml", capsys, cache_dir)
    assert kept, out
    assert "Contracts: 5 kept, 0 broken." in out


def test_every_package_and_top_level_module_is_in_a_layer():
    """A new package must be placed in the contract (or it would be unchecked)."""
    options = read_user_options(str(ROOT / "pyproject.toml"))
    [layers] = [c for c in options.contracts_options if c["type"] == "layers"]
    listed = {name.strip() for layer in layers["layers"] for name in layer.replace(":", "|").split("|")}
    package = ROOT / "pipeline"
    present = {f"pipeline.{p.name}" for p in package.iterdir() if (p / "__init__.py").exists()}
    present |= {f"pipeline.{p.stem}" for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")}
    assert present - listed == set()


def test_an_arrow_that_runs_back_breaks_the_contract(tmp_path, capsys, cache_dir):
    """The check can fail: put the shared ground above the model, which imports it, and it breaks."""
    config = _config(tmp_path, 'name = "reversed"\ntype = "layers"\nlayers = ["pipeline.errors", "pipeline.model"]\n')
    kept, out = _lint(config, capsys, cache_dir)
    assert not kept and "pipeline.model.diagnostics -> pipeline.errors" in out


def test_an_indirect_import_breaks_a_forbidden_contract(tmp_path, capsys, cache_dir):
    """Forbidden contracts follow chains: the CLI reaches the compiler through the facade."""
    config = _config(tmp_path, 'name = "indirect"\ntype = "forbidden"\nsource_modules = ["pipeline.cli.render"]\n'
                               'forbidden_modules = ["pipeline.compiler"]\n')
    kept, out = _lint(config, capsys, cache_dir)
    assert not kept and "pipeline.facade" in out


def _cli_contract() -> dict:
    options = read_user_options(str(ROOT / "pyproject.toml"))
    [contract] = [c for c in options.contracts_options if c["type"] == "forbidden" and c["source_modules"] == ["pipeline.cli"]]
    return contract


def test_the_cli_reaches_no_stage_but_through_its_listed_exceptions(tmp_path, capsys, cache_dir):
    """The CLI calls the facade: the contract forbids every stage and the compiler, and without
    its listed exceptions it breaks at exactly those imports (none of them hidden by a wildcard
    that lets through a command not listed)."""
    import json

    contract = _cli_contract()
    assert set(contract["forbidden_modules"]) == {f"pipeline.{s}" for s in (
        "compiler", "templates", "prompt", "session", "compaction", "llm", "runtime")}
    ignored = contract["ignore_imports"]
    importers = {line.split(" -> ")[0] for line in ignored}
    assert importers <= {f"pipeline.cli.{m}" for m in ("session", "chat", "context", "expand", "templates", "render")}
    bare = (f'name = "bare"\ntype = "forbidden"\nsource_modules = ["pipeline.cli"]\n'
            f'forbidden_modules = {json.dumps(contract["forbidden_modules"])}\nallow_indirect_imports = true\n')
    kept, out = _lint(_config(tmp_path, bare), capsys, cache_dir)
    assert not kept
    broken = set(re.findall(r"^-\s+(pipeline\.cli\S*) -> (pipeline\.\S+)", out, re.M))
    assert broken and {importer for importer, _ in broken} == importers, out


#: The names the root package loads on first use (``pipeline/__init__.py``'s ``_LAZY``).
_ROOT_LAZY = set(__import__("pipeline")._LAZY)
_BELOW_THE_FACADE = ("templates", "prompt", "session", "compaction", "llm", "runtime", "compiler", "checks",
                     "source", "model", "agentdir", "resources", "js", "secrets", "gcpause", "errors", "codes")


def _root_imports(path: Path) -> list[str]:
    """Names a module takes from the root package: ``from pipeline import X`` and ``pipeline.X``
    after ``import pipeline`` (import-linter sees only an import of ``pipeline`` itself)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "pipeline" and not n.level
             for a in n.names]
    if any(isinstance(n, ast.Import) and any(a.name == "pipeline" for a in n.names) for n in ast.walk(tree)):
        names += [n.attr for n in ast.walk(tree)
                  if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "pipeline"]
    return names


def test_no_layer_below_the_facade_reaches_it_through_the_root_package():
    """``from pipeline import compile_profile`` in a stage would be an arrow back to the facade
    that the contracts cannot see (the root package loads it lazily)."""
    found = {}
    for name in _BELOW_THE_FACADE:
        base = ROOT / "pipeline" / name
        for path in ([*base.rglob("*.py")] if base.is_dir() else [base.with_suffix(".py")]):
            used = _ROOT_LAZY.intersection(_root_imports(path))
            if used:
                found[str(path.relative_to(ROOT))] = sorted(used)
    assert found == {}


def test_the_root_package_check_can_fail(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from pipeline import compile_profile\n    import pipeline\n    return pipeline.Pipeline\n")
    assert sorted(_ROOT_LAZY.intersection(_root_imports(module))) == ["Pipeline", "compile_profile"]


#: What writes a compaction below the driver (:mod:`pipeline.compaction.driver`): only the
#: compaction stage itself calls these; every host (the runtime's conversation, the adapters,
#: the CLI, ``pipeline eval`` and ``replay``, the facade) compacts through ``compact``.
_BELOW_THE_DRIVER = {"compact_session", "summarize_plan", "mask_plan", "run_call", "plan_calls", "summarize_branch",
                     "engine", "summarize", "strategies"}  # and the modules that hold them


def _compaction_names(path: Path) -> set[str]:
    """Names taken from the compaction stage: ``from pipeline.compaction[.m] import x`` gives x,
    ``import pipeline.compaction.m`` gives m."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    taken = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level
             and (n.module or "").startswith("pipeline.compaction") for a in n.names}
    return taken | {a.name.split(".")[2] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
                    if a.name.startswith("pipeline.compaction.")}


def test_every_host_compacts_through_the_one_driver():
    stage = ROOT / "pipeline" / "compaction"
    found = {str(p.relative_to(ROOT)): sorted(_BELOW_THE_DRIVER & _compaction_names(p))
             for p in (ROOT / "pipeline").rglob("*.py") if stage not in p.parents}
    assert {k: v for k, v in found.items() if v} == {}
    hosts = {"pipeline/runtime/driver.py", "pipeline/evaluation/replay.py", "pipeline/facade.py"}
    assert all("compact" in _compaction_names(ROOT / h) for h in hosts)  # they do reach the driver


def test_every_host_holds_the_one_session_driver():
    """The conversation and the adapters' bridge hold :class:`pipeline.runtime.driver.SessionDriver`:
    neither runs the compaction check or compacts on its own, nor opens a session its own way."""
    import ast

    own = {"check_compaction", "latest_compaction_time", "RecoveryCycle", "compact", "edited_tokens"}
    for host in ("pipeline/runtime/conversation.py", "pipeline/adapters/_bridge.py"):
        tree = ast.parse((ROOT / host).read_text(encoding="utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert "SessionDriver" in imported and not own & imported, host
        calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
        assert not {"create", "append_model_change", "append_thinking_level_change"} & calls, host


def test_the_one_driver_check_can_fail(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from pipeline.compaction.engine import compact_session\nfrom pipeline.compaction import compact\n"
                      "import pipeline.compaction.strategies as masks\n")
    assert _BELOW_THE_DRIVER & _compaction_names(module) == {"compact_session", "strategies"}


#: Stage packages whose ``__init__`` is a map in prose: every name is imported from the module
#: that defines it, so importing one module never loads its siblings (docs/architecture.md).
_NAMELESS_PACKAGES = ("model", "llm", "runtime", "compaction", "templates", "source", "report")


def _init_statements(package: Path) -> list[str]:
    """What ``package/__init__.py`` does besides its docstring, one entry per statement."""
    import ast

    tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    return [ast.dump(n)[:80] for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]


def test_stage_packages_re_export_nothing():
    found = {name: _init_statements(ROOT / "pipeline" / name) for name in _NAMELESS_PACKAGES}
    assert {k: v for k, v in found.items() if v} == {}


def test_only_the_root_package_imports_names_on_first_use():
    """No package below the root defines a PEP 562 ``__getattr__`` (``pipeline.testing`` keeps
    one for syrupy, a test dependency the base install lacks)."""
    import ast

    lazy = set()
    for init in (ROOT / "pipeline").rglob("__init__.py"):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        if "__getattr__" in names:
            lazy.add(str(init.parent.relative_to(ROOT)))
    assert lazy == {"pipeline", "pipeline/testing"}


def test_the_nameless_package_check_can_fail(tmp_path):
    (tmp_path / "__init__.py").write_text('"""A map."""\nfrom x import y\n')
    assert len(_init_statements(tmp_path)) == 1
