"""The layers of docs/architecture.md hold: the import-linter contracts of pyproject.toml.

CLI > review tooling (testing, report, scenario) > the ``Pipeline`` facade > the stages
(runtime > compaction > llm > session | prompt > templates) > the profile front end
(compiler > checks > source > model) > shared ground (agentdir | resources | js >
gcpause | files > errors | limits). Every import counts, also those inside functions and under TYPE_CHECKING, so a
lazy import cannot hide an arrow that runs back.
"""

from __future__ import annotations

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
    assert types == ["acyclic_siblings", "forbidden", "layers"]
    kept, out = _lint(ROOT / "pyproject.toml", capsys, cache_dir)
    assert kept, out
    assert "Contracts: 3 kept, 0 broken." in out


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
