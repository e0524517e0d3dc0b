"""Hypothesis properties of the profile reader and of profile texts.

* Arbitrary YAML-ish text (profile keys, values, indentation, anchors, tags, quotes,
  brackets, tabs, huge numbers, NUL bytes, invalid UTF-8) compiles to a profile or
  raises :class:`~pipeline.errors.PipelineError` whose every problem is located in a
  file; never any other exception.
* A profile text (``grammar/profile_text.lark``) reads like an independent regular
  expression: ``${name}`` is a variable, ``$${`` a literal ``${``, every other ``$``
  literal; each variable's offset, line and column point at its ``${`` in the raw text.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import compile_profile
from pipeline.errors import PipelineError
from pipeline.model.text import Text

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = ["name", "extends", "version", "description", "system_prompt", "sections", "id", "kind", "text", "item",
        "heading", "when", "tools_include", "rules", "from", "compaction", "reserve_tokens", "keep_recent_tokens",
        "summary_budget", "history", "summary", "schema", "offline", "fill", "templates", "sources", "summarizer",
        "context_window", "provider", "api_key_env", "base_url", "remove", "replace", "before", "after", "retry",
        "max_retries", "identiy", "reserv_tokens", "<<", "$schema"]
SCALARS = ["1", "0", "-1", "16384", "0.5", "1e400", ".inf", ".nan", "99999999999999999999999999999999", "true",
           "yes", "null", "~", "''", '""', "builtin:default", "builtin:nope", "../x.yaml", "/dev/null", "identity",
           "rules", "text", "tool_list", "${cwd}", "${cdw}", "$${", "'${cwd} a'", '"\\x24{cwd}"', '"\\ud800"',
           "'unclosed", '"unclosed', "!!python/object:os.system", "!!binary aGk=", "!custom x", "&a", "*a",
           "*b", "[", "]", "{", "}", "[1, 2]", "{a: 1}", "- x", "|", ">-", "sk-abcdefghijklmnop", "OPENAI_API_KEY",
           "http://u:p@h", "😀", "\t", ": :", "#", "%YAML 1.2", "---", "..."]
INDENTS = ["", "  ", "    ", "      ", "- ", "  - ", "    - ", "\t"]


@st.composite
def yamlish(draw) -> bytes:
    lines = []
    if draw(st.booleans()):
        lines.append("extends: builtin:default\nname: t")
    for _ in range(draw(st.integers(0, 14))):
        indent = draw(st.sampled_from(INDENTS))
        key = draw(st.sampled_from(KEYS))
        value = draw(st.one_of(st.sampled_from(SCALARS), st.just(""), st.text(max_size=12)))
        sep = draw(st.sampled_from([": ", ":", " ", ": &a ", ": *a ", ": !!str "]))
        lines.append(f"{indent}{key}{sep}{value}")
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))
    data = text.encode("utf-8", "surrogatepass")
    mangle = draw(st.sampled_from([None, b"\x00", b"\xff\xfe", b"\xef\xbb\xbf"]))
    if mangle is not None:
        at = draw(st.integers(0, len(data)))
        data = (mangle + data) if mangle == b"\xef\xbb\xbf" else data[:at] + mangle + data[at:]
    return data


_DIR = Path(tempfile.mkdtemp(prefix="reader-properties-"))


@SETTINGS
@given(yamlish())
def test_any_text_compiles_or_fails_with_located_problems(data):
    path = _DIR / "p.yaml"
    path.write_bytes(data)
    try:
        compiled = compile_profile(path)
    except PipelineError as err:
        assert err.problems
        for problem in err.problems:
            loc = problem.location
            assert loc is not None and loc.file, problem
            assert loc.line is None or loc.line >= 1, problem
            assert loc.col is None or loc.col >= 1, problem
            assert problem.message and "Traceback" not in problem.message
        return
    assert compiled.profile.name
    assert all(w.location is not None for w in compiled.warnings)


# --------------------------------------------------------------------------- texts

_READING = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

text_pieces = st.lists(st.sampled_from(["$", "{", "}", "$$", "${", "$${", "cwd", "x_1", "1a", "_", "\n", " ", "é",
                                        "😀", "${cwd}", "${a}", "$${b}", "\\"]), max_size=25).map("".join)


@SETTINGS
@given(st.one_of(text_pieces, st.text(max_size=40)))
def test_texts_read_like_the_documented_rule(raw):
    text = Text(raw)
    values = {v.name: f"<{v.name}>" for v in text.variables}
    expected = _READING.sub(lambda m: "${" if m.group(1) is None else f"<{m.group(1)}>", raw)
    assert text.render(values) == expected
    assert [v.name for v in text.variables] == [m.group(1) for m in _READING.finditer(raw) if m.group(1)]


@SETTINGS
@given(st.one_of(text_pieces, st.text(max_size=40)))
def test_variable_positions_point_at_their_dollar(raw):
    for var in Text(raw).variables:
        assert raw[var.offset : var.offset + len(var.name) + 3] == "${" + var.name + "}"
        assert var.line == raw.count("\n", 0, var.offset) + 1
        assert var.col == var.offset - (raw.rfind("\n", 0, var.offset) + 1) + 1


@SETTINGS
@given(st.text(alphabet=st.characters(blacklist_characters="$"), max_size=40))
def test_text_without_dollar_is_one_literal(raw):
    text = Text(raw)
    assert text.render() == raw and text.variables == ()
