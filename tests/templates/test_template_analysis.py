"""Static analysis: usage summary, arity hints and findings with their positions."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.templates.analysis import Finding, analyze
from pipeline.templates.files import PromptTemplate


def only(body: str) -> Finding:
    [finding] = analyze(body).findings
    return finding


@pytest.mark.parametrize(("body", "code", "hint_part"), [
    ("$0", "template.zero-index", "`$1`"),
    ("${0:-x}", "template.zero-index", "numbered from 1"),
    ("${@:0}", "template.zero-slice", "`${@:1}`"),
    ("${@:00:2}", "template.zero-slice", "`${@:1:2}`"),
    ("${@:1:0}", "template.empty-slice", "at least 1"),
    ("${1}", "template.bare-brace", "`$1`"),
    ("${@}", "template.bare-brace", "`$@`"),
    ("${ARGUMENTS}", "template.bare-brace", "`$ARGUMENTS`"),
    ("$<3>", "template.bare-brace", "`$<3:-default>`"),
    ("${1-x}", "template.bash-operator", "`${1:-x}`"),
    ("${2:=none}", "template.bash-operator", "`${2:-none}`"),
    ("$<1-x>", "template.bash-operator", "`$<1:-x>`"),
    ("${ 1:-x}", "template.blank-in-form", "`${1:-x}`"),
    ("${@: 2}", "template.malformed-slice", "`${@:N}`"),
    ("${@:2:}", "template.malformed-slice", "`${@:N:L}`"),
    ("$<@:2", "template.unclosed-form", "`>`"),
    ("${1:-no end", "template.unclosed-form", "`}`"),
    ("${-1:-d}", "template.negative-index", "numbered from 1"),
    ("$ARGS", "template.argument-name", "`$ARGUMENTS`"),
    ("$arguments", "template.argument-name", "`$ARGUMENTS`"),
    ("${@:-2}", "template.default-not-slice", "`${@:2}`"),
    ("${1:-$2}", "template.placeholder-in-default", "cannot refer"),
    ("$٣", "template.non-ascii-digit", "`$3`"),
    ("$99999999999999999999", "template.large-index", "check"),
    ("$2:-correctness}", "template.missing-brace", "did you mean `${2:-correctness}`?"),
    ("$@:2}", "template.missing-brace", "did you mean `${@:2}`?"),
    ("$ARGUMENTS:-all}", "template.missing-brace", "did you mean `${ARGUMENTS:-all}`?"),
])
def test_each_suspicious_form_has_a_finding_with_a_hint(body, code, hint_part):
    finding = only(body)
    assert finding.code == code
    assert hint_part in finding.hint
    assert (finding.line, finding.col) == (1, 1)


def test_finding_positions_are_line_and_column():
    body = "Intro line\n  then ${1} here\n\tand $ARGS"
    first, second = analyze(body).findings
    assert (first.code, first.line, first.col) == ("template.bare-brace", 2, 8)
    assert (second.code, second.line, second.col) == ("template.argument-name", 3, 6)


def test_clean_templates_have_no_findings():
    for body in ["Review $1 focusing on ${@:2}. All: $@", "${1:-main} ${ARGUMENTS:-all}", "$$5 costs", ""]:
        assert analyze(body).findings == ()


def test_severity_is_info_for_forms_that_work_but_read_oddly():
    assert only("${@:0}").severity == "info"
    assert only("${@:-1}").severity == "info"
    assert only("${1}").severity == "warning"


@pytest.mark.parametrize(("body", "hint"), [
    ("Review $1 focusing on ${@:2}", "<1> [rest...]"),
    ("$1 $2 $@", "<1> <2> [rest...]"),
    ("$@", "[args...]"),
    ("${ARGUMENTS:-all}", "[args...]"),
    ("$1 $3", "<1> [2] <3>"),
    ("${2:-x} $1", "<1> [2]"),
    ("${@:2:2}", "[1] [2] [3]"),
    ("${@:3}", "[1] [2] [rest...]"),
    ("plain", ""),
    ("$0 $99999999999999999999", ""),
])
def test_arity_hint(body, hint):
    assert analyze(body).argument_hint == hint


def test_usage_summary():
    a = analyze("$2 ${5:-x} ${@:3:1}")
    assert (a.highest_positional, a.uses_all_args, a.uses_slices, a.has_defaults) == (5, False, True, True)
    assert (a.arity.required, a.arity.optional, a.arity.variadic_from) == ((2,), (3, 5), None)
    b = analyze("${@:-none}")
    assert (b.highest_positional, b.uses_all_args, b.uses_slices, b.has_defaults) == (0, True, False, True)


def test_analysis_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        analyze("$1").highest_positional = 3


def test_template_file_findings_are_located_in_the_file(tmp_path):
    text = "---\ndescription: d\n---\n\n  Use ${1} and\n$0 here\n"
    t = PromptTemplate.from_text("x", text, path=tmp_path / "x.md")
    first, second = t.problems()
    assert (first.location.file, first.location.line, first.location.col) == (str(tmp_path / "x.md"), 5, 7)
    assert (second.location.line, second.location.col, second.code) == (6, 1, "template.zero-index")
    assert second.severity == "warning"
    assert str(first).startswith(f"{tmp_path / 'x.md'}:5:7: warning: `${{1}}`")


def test_a_missing_brace_is_a_lint_and_expansion_stays_pis():
    """Issue 34, item 4: `$2:-correctness}` is `$2` and then text, in pi and here; only a
    finding says so. Tails that make no form (`$1:2}`) or never close are not flagged."""
    from pipeline.templates.plan import substitute_args

    body = "Review $1 for $2:-correctness}."
    [finding] = analyze(body).findings
    assert (finding.code, finding.line, finding.col) == ("template.missing-brace", 1, 15)
    assert substitute_args(body, ["a.py"]) == "Review a.py for :-correctness}."
    assert substitute_args(body, ["a.py", "speed"]) == "Review a.py for speed:-correctness}."
    for clean in ("$1:2}", "$2:-x", "$2:-a$3}", "$2:-x\n}"):
        assert analyze(clean).findings == (), clean
