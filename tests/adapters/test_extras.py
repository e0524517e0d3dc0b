"""Each adapter extra installs what its documented example imports.

For each framework section of docs/integrations.md: the extra its table row names
(`pip install 'context-pipeline[EXTRA]'`), resolved through the installed distributions'
metadata (with the extras each requirement asks for) to the distributions `pip install`
would bring; then the example's imports run in a fresh interpreter in which every module
of a distribution outside that set is missing. A module imported only when present
(``try: import rich``) does not matter; one the example needs fails the test.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "integrations.md"
SECTIONS = ("pydantic-ai", "OpenAI Agents SDK", "LangChain v1")

# run in the child: modules of distributions outside ALLOWED are not found
GUARD = """
import importlib.abc, importlib.metadata as md, sys
ALLOWED = set(sys.argv[1].split(","))
OWNERS = {name: {d.lower().replace("_", "-").replace(".", "-") for d in dists}
          for name, dists in md.packages_distributions().items()}
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top not in sys.stdlib_module_names and OWNERS.get(top) and not OWNERS[top] & ALLOWED:
            raise ModuleNotFoundError(f"No module named {name!r} (its distribution is not installed)", name=name)
sys.meta_path.insert(0, Missing())
for statement in sys.argv[2:]:
    exec(statement)
"""


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def installed_by(requirements: list[str]) -> set[str]:
    """The distributions installing ``requirements`` brings (by the installed metadata)."""
    seen: dict[str, set[str]] = {}
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen and set(req.extras) <= seen[name]:
            continue
        seen[name] = seen.get(name, set()) | set(req.extras)
        try:
            requires = md.distribution(req.name).requires or []
        except md.PackageNotFoundError:
            continue
        for spec in requires:
            dep = Requirement(spec)
            if dep.marker is None or any(dep.marker.evaluate({"extra": e}) for e in seen[name] | {""}):
                todo.append(dep)
    return set(seen)


def example(title: str) -> tuple[str, list[str]]:
    """The extra a section's table row names, and the import statements of its example."""
    text = DOC.read_text(encoding="utf-8")
    [extra] = re.findall(rf"^\| {re.escape(title)} \| `pip install 'context-pipeline\[([\w-]+)\]'`", text, re.M)
    section = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    imports = [ast.unparse(node) for node in ast.parse(block).body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return extra, imports


@pytest.mark.parametrize("title", SECTIONS)
def test_the_extra_installs_what_the_example_imports(title):
    extra, imports = example(title)
    project = pyproject()["project"]
    assert extra in project["optional-dependencies"], extra
    allowed = installed_by(project["dependencies"] + project["optional-dependencies"][extra]) | {"context-pipeline"}
    run = subprocess.run([sys.executable, "-c", GUARD, ",".join(sorted(allowed)), *imports],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"[{extra}] does not install what {imports} needs:\n{run.stderr[-600:]}"


def test_the_guard_finds_a_missing_distribution():
    """The check above can fail: without the framework's distribution the import is refused."""
    project = pyproject()["project"]
    allowed = installed_by(project["dependencies"]) | {"context-pipeline"}
    run = subprocess.run([sys.executable, "-c", GUARD, ",".join(sorted(allowed)), "import langchain_openai"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "its distribution is not installed" in run.stderr
