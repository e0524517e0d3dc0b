"""One registry of problem codes: one naming style, every code documented, no free-form codes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pipeline.codes import CODES, DOMAINS
from pipeline.errors import (
    PipelineError,
    Problem,
    ProfileError,
    ProviderError,
    SessionError,
    TemplateError,
    UsageError,
)

ROOT = Path(__file__).resolve().parents[2]
STYLE = re.compile(r"^(%s)\.[a-z0-9]+(-[a-z0-9]+)*$" % "|".join(DOMAINS))
LOOKS_LIKE_CODE = re.compile(r"^(%s)\.[a-z0-9]+(-[a-z0-9]+)*$" % "|".join(DOMAINS))


def _documented() -> dict[str, str]:
    text = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    parts = re.split(r"^### `([^`]+)`\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def _code_literals() -> dict[str, list[str]]:
    """Every string constant in pipeline/ that is used as a code or has a code's shape."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        if path.name == "codes.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            values = []
            if isinstance(node, ast.keyword) and node.arg == "code" and isinstance(node.value, ast.Constant):
                values.append(node.value.value)
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "code" for t in node.targets):
                if isinstance(node.value, ast.Constant):
                    values.append(node.value.value)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and LOOKS_LIKE_CODE.match(node.value):
                values.append(node.value)
            for value in values:
                found.setdefault(value, []).append(str(path.relative_to(ROOT)))
    return found


def test_every_code_has_the_one_naming_style():
    bad = [code for code in CODES if not STYLE.match(code)]
    assert not bad and len(CODES) >= 80


def test_every_registered_code_is_documented_with_an_example_and_a_fix():
    documented = _documented()
    assert sorted(set(CODES) - set(documented)) == []
    assert sorted(set(documented) - set(CODES)) == []  # no page for a code that is gone
    for code, section in documented.items():
        assert "**Example:**" in section and "**Fix:**" in section, code


def test_every_code_in_the_code_base_is_registered():
    unregistered = {code: where for code, where in _code_literals().items() if code not in CODES}
    assert unregistered == {}


def test_every_registered_code_is_used():
    used = set(_code_literals())
    assert sorted(set(CODES) - used) == []


def test_a_free_form_code_is_refused_when_the_problem_is_made():
    with pytest.raises(ValueError, match="unregistered problem code 'made-up'"):
        Problem("x", code="made-up")
    assert Problem("x", code="profile.unknown-key").code == "profile.unknown-key"


@pytest.mark.parametrize(("cls", "exit_code"), [
    (PipelineError, 1), (ProfileError, 1), (TemplateError, 1), (SessionError, 1), (UsageError, 2), (ProviderError, 3),
])
def test_domain_errors_are_pipeline_errors_with_their_exit_code(cls, exit_code):
    err = cls(Problem("x"))
    assert isinstance(err, PipelineError) and err.exit_code == exit_code


def test_the_llm_errors_are_provider_errors():
    from pipeline.compaction.summarize import SummaryFailed
    from pipeline.llm.errors import LLMAuthError, LLMConfigError, LLMConnectionError, LLMStatusError

    assert issubclass(LLMConnectionError, ProviderError) and issubclass(SummaryFailed, ProviderError)
    assert LLMStatusError("openai", 500, "x").exit_code == 3
    # nothing was called yet: a setting to fix, exit 1
    assert LLMAuthError("openai", "K").exit_code == 1 and LLMConfigError("x").exit_code == 1


def test_the_readers_raise_their_domain_error(tmp_path):
    from pipeline import compile_profile
    from pipeline.session import SessionFile
    from pipeline.templates.files import read_template

    (tmp_path / "p.yaml").write_text("name: [\n", encoding="utf-8")
    with pytest.raises(ProfileError):
        compile_profile(str(tmp_path / "p.yaml"))
    (tmp_path / "s.jsonl").write_text("not json\n", encoding="utf-8")
    with pytest.raises(SessionError):
        SessionFile.open(tmp_path / "s.jsonl")
    with pytest.raises(TemplateError):
        read_template(tmp_path / "missing.md")


def test_every_problem_made_in_the_code_base_names_its_code():
    """Each `Problem(...)` call passes `code=`; the exceptions are writing a command's own
    output (no input domain to blame) and the generic string form in errors.py."""
    allowed = {("pipeline/errors.py", "problems"), ("pipeline/cli/schema.py", "cannot write: "),
               ("pipeline/report/output.py", "cannot write output: ")}
    without = set()
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Problem":
                if not any(k.arg == "code" for k in node.keywords):
                    first = node.args[0] if node.args else None
                    text = first.id if isinstance(first, ast.Name) else ast.unparse(first).strip("f'\"")
                    without.add((str(path.relative_to(ROOT)), text.split("{")[0]))
    assert without == allowed
