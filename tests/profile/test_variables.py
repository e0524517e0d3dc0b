"""${variables}: the one table, its copy in the docs, positions in every scalar style."""

from __future__ import annotations

import pytest

from cases import HEAD
from conftest import ROOT, write_files
from pipeline import PipelineError, compile_profile
from pipeline.model.variables import VARIABLE_TABLE, markdown_table, variables_for


def test_docs_embed_the_table():
    docs = (ROOT / "docs" / "profile.md").read_text(encoding="utf-8")
    start = docs.index("<!-- variables-table:start -->\n") + len("<!-- variables-table:start -->\n")
    end = docs.index("<!-- variables-table:end -->")
    assert docs[start:end].strip() == markdown_table()


@pytest.mark.parametrize(
    "path,kind,expected",
    [
        (("system_prompt", "sections", 0, "text"), "text", ("cwd",)),
        (("system_prompt", "sections", 3, "item"), "tool_list", ("name", "snippet", "cwd")),
        (("system_prompt", "sections", 3, "item"), "rules", ("rule",)),
        (("system_prompt", "sections", 3, "item"), "context_files", ("path", "content")),
        (("system_prompt", "sections", 3, "item"), "skills", ("name", "description", "location", "base_dir")),
        (("system_prompt", "sections", 2, "rules", 0, "text"), "rules", ("cwd",)),
        (("summary", "instructions", "initial"), None, ("schema",)),
        (("summary", "instructions", "turn_prefix"), None, ()),
        (("summary", "truncation_marker"), None, ("count",)),
        (("context", "bash_execution", "exit_code"), None, ("code",)),
        (("context", "bash_execution", "no_output"), None, ()),
        (("summary", "projection", "compaction", "open"), None, ()),
    ],
)
def test_variables_for(path, kind, expected):
    assert variables_for(path, kind) == expected


def test_every_table_row_names_a_text_field():
    from pipeline.model.profile import Profile
    from pipeline.model.introspect import annotation_at, is_text

    for row in VARIABLE_TABLE:
        path = tuple(0 if part == "*" else part for part in row.field.split("."))
        assert is_text(annotation_at(Profile, path)), row.field


STYLES = """\
system_prompt:
  sections:
    - id: a
      text: plain ${p1} text
    - id: b
      text: 'single ${q1} ''x'' ${q2}'
    - id: c
      text: "double \\t ${d1} \\"x\\" ${d2}"
    - id: d
      text: |
        literal line one
          ${l1} and ${l2}
    - id: e
      text: >-
        folded line one
        and ${f1}

        ${f2}
    - id: f
      text: plain multi
        line ${m1}
    - {id: g, text: "flow ${g1}"}
    - id: h
      text: "dq multi
        line ${h1}"
    - id: i
      text: "esc \\x24{cwd} ${i1} $${x} ${cwd}"
"""


def test_positions_in_every_scalar_style(tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + STYLES})
    with pytest.raises(PipelineError) as err:
        compile_profile(tmp_path / "p.yaml")
    got = [(p.message.split("`")[1], p.location.line, p.location.col) for p in err.value.problems]
    lines = (HEAD + STYLES).splitlines()
    for name, line, col in got:
        assert lines[line - 1][col - 1 :].startswith(name), (name, line, col)
    assert [g[0] for g in got] == [
        "${p1}", "${q1}", "${q2}", "${d1}", "${d2}", "${l1}", "${l2}", "${f1}", "${f2}", "${m1}", "${g1}", "${h1}", "${i1}",
    ]


def test_escaped_dollar_brace_is_not_a_variable(tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + "summary:\n  no_history: 'Literal $${cwd} here'\n"})
    pipeline = compile_profile(tmp_path / "p.yaml")
    assert pipeline.profile.summary.no_history.render() == "Literal ${cwd} here"
