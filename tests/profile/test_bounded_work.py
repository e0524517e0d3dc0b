"""Profile checks stay linear in the number of sections, and every number has an upper bound.

A profile with thousands of sections used to make `validate`, `render` and `explain`
run past a minute: the overlay merge looked every section up by a scan of the list
(quadratic), and naming a key by its section id read all section ids again for every
key (quadratic in `explain` and in the checks). The tests count the work instead of
timing it (speed is measured in ``benchmarks/bench_profile_sections.py``): doubling
the sections must about double the lookups, not quadruple them.
"""

from __future__ import annotations

import json

import pytest

from conftest import HEAD, write_files
from pipeline import compile_profile, load_profile
from pipeline.errors import PipelineError
from pipeline.model.base import MAX_COUNT, MAX_TOKENS
from pipeline.source import locate, merge
from pipeline.source.explain import effective_values


def _overlay(n: int, *, placed: bool = False) -> str:
    """An overlay adding ``n`` sections to the default (each placed before the previous, if asked)."""
    lines = [HEAD, "system_prompt:\n  sections:\n"]
    for i in range(n):
        where = f", before: s{i - 1}" if placed and i else ""
        lines.append(f"    - {{id: s{i}, text: Section {i}.{where}}}\n")
    return "".join(lines)


def _count(monkeypatch, module, name: str) -> list[int]:
    calls = [0]
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.parametrize("placed", [False, True])
def test_merge_looks_each_section_up_in_constant_time(tmp_path, monkeypatch, placed):
    calls = _count(monkeypatch, merge, "section_id")
    counts = []
    for n in (300, 600):
        write_files(tmp_path, {f"p{n}.yaml": _overlay(n, placed=placed)})
        calls[0] = 0
        load_profile(tmp_path / f"p{n}.yaml")
        counts.append(calls[0])
    assert counts[1] < 2.3 * counts[0], counts  # a scan per lookup made this 4x


def test_key_names_read_the_section_ids_once_per_profile(tmp_path, monkeypatch):
    write_files(tmp_path, {"p.yaml": _overlay(400)})
    loaded = load_profile(tmp_path / "p.yaml")
    data = loaded.profile.model_dump(mode="json", by_alias=True)
    calls = _count(monkeypatch, locate, "section_ids")
    values = effective_values(data, loaded.source_map)
    assert calls[0] == 1
    assert sum(v.key.startswith("system_prompt.sections.s399.") for v in values) > 0


def test_a_thousand_sections_validate_render_and_explain(tmp_path, cli):
    write_files(tmp_path, {"p.yaml": _overlay(1000, placed=True)})
    assert cli("validate", "p.yaml").code == 0
    run = cli("explain", "p.yaml", "system_prompt.sections.s999.text")
    assert run.code == 0 and run.out.startswith("p.yaml:1004:")
    prompt = cli("render", "p.yaml").out
    # each section was placed before the previous one: the last comes first
    assert prompt.index("Section 999.") < prompt.index("Section 500.") < prompt.index("Section 0.")


def test_many_unknown_ids_keep_their_hints_bounded(tmp_path):
    body = HEAD + "system_prompt:\n  sections:\n" + "".join(f"    - {{id: x{i}, remove: true}}\n" for i in range(300))
    write_files(tmp_path, {"p.yaml": body})
    with pytest.raises(PipelineError) as err:
        compile_profile(tmp_path / "p.yaml")
    problems = err.value.problems
    assert len(problems) == 300 and all(p.code == "profile.unknown-section" for p in problems)
    assert problems[0].hint is not None and problems[-1].hint is None  # the first ones only
    assert len(problems[0].hint) < 400


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    "body,key,limit",
    [
        ("compaction:\n  reserve_tokens: 99999999999999999999999999999999999999\n", "compaction.reserve_tokens",
         MAX_TOKENS),
        ("compaction:\n  keep_recent_tokens: 100000001\n", "compaction.keep_recent_tokens", MAX_TOKENS),
        ("summarizer:\n  context_window: 1000000000\n", "summarizer.context_window", MAX_TOKENS),
        ("retry:\n  max_retries: 10001\n", "retry.max_retries", MAX_COUNT),
        ("summarizer:\n  timeout_s: .inf\n", "summarizer.timeout_s", 86400),
    ],
)
def test_numbers_have_an_upper_bound(tmp_path, body, key, limit):
    write_files(tmp_path, {"p.yaml": HEAD + body})
    with pytest.raises(PipelineError) as err:
        compile_profile(tmp_path / "p.yaml")
    [problem] = err.value.problems
    assert problem.key == key and f"must be at most {limit}" in problem.message
    assert problem.location.file.endswith("p.yaml") and problem.location.line == 4


def test_the_bound_itself_is_accepted(tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + f"compaction:\n  keep_recent_tokens: {MAX_TOKENS}\n"})
    assert compile_profile(tmp_path / "p.yaml").profile.compaction.keep_recent_tokens == MAX_TOKENS


def test_a_number_too_long_to_show_is_named_by_its_length(tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + "compaction:\n  reserve_tokens: " + "9" * 3000 + "\n"})
    with pytest.raises(PipelineError) as err:
        compile_profile(tmp_path / "p.yaml")
    [problem] = err.value.problems
    assert problem.message == "must be at most 100000000, got a number of 3000 digits"


def test_an_override_past_the_bound_is_located_at_its_flag():
    with pytest.raises(PipelineError) as err:
        compile_profile("default", {"compaction.reserve_tokens": 10**30}, {"compaction.reserve_tokens": "--reserve"})
    assert str(err.value) == "--reserve: compaction.reserve_tokens: must be at most 100000000, got " + str(10**30)


def test_the_schema_carries_the_bounds():
    from pipeline.model.schema import schema_json

    schema = json.loads(schema_json())
    text = json.dumps(schema)
    assert f'"maximum": {MAX_TOKENS}' in text and f'"maximum": {MAX_COUNT}' in text


def test_many_unknown_variables_in_one_text_are_located_in_one_pass(tmp_path, monkeypatch):
    """Each unknown `${x}` used to re-read every variable of its scalar (quadratic)."""
    calls = _count(monkeypatch, locate, "Text")
    counts = []
    for n in (200, 400):
        write_files(tmp_path, {"p.yaml": HEAD + "system_prompt:\n  sections:\n    - id: x\n      text: \"" +
                               "${bad} " * n + "${cdw}\"\n"})
        calls[0] = 0
        with pytest.raises(PipelineError) as err:
            compile_profile(tmp_path / "p.yaml")
        counts.append(calls[0])
        problems = err.value.problems
        assert len(problems) == n + 1 and problems[-1].hint == "did you mean `${cwd}`?"
        assert (problems[-1].location.line, problems[-1].location.col) == (6, 14 + 7 * n)
    assert counts[0] == counts[1] == 2  # the value and its source text, once each
