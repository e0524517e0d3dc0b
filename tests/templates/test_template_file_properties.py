"""Hypothesis properties of whole template files (frontmatter + body), as read from disk.

* Reading any file gives a template or one :class:`~pipeline.errors.PipelineError`
  located in that file; parsing its text gives a template or a ``FrontmatterError``
  whose line and column lie inside the text; nothing else is ever raised.
* Every finding of a template read from a file points at a place inside the file: a
  line that exists and a column at most one past its end, on a ``$`` (lines counted
  after CRLF and a lone CR become LF, as the reader and pi do).
* Expanding ``/name args`` of a template read from a file equals substituting the
  arguments into its body (the frontmatter never leaks into the expansion).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.errors import PipelineError
from pipeline.templates.files import PromptTemplate
from pipeline.templates.invoke import expand_input, parse_args
from pipeline.templates.plan import substitute_args
from pipeline.templates.files import read_template
from pipeline.templates.frontmatter import FrontmatterError

SETTINGS = settings(max_examples=150, deadline=None)

FRONT = ["---", "description: Review", "description: [unclosed", "argument-hint: <file>", "argument-hint: 'x",
         "a: &x 1", "b: *x", "c: *nope", "!!python/object:os.system x", "key: !!binary aGk=", "\t- x", "{", "- [",
         "description: \"\\ud800\"", "<<: *x", "%TAG ! x", "...", "", "  indented: 1", "x: ${1}"]
BODY = ["$1", "$@", "${1:-d}", "${@:2}", "${@:1:2}", "$<1:-x>", "${1}", "$0", "$ARGS", "${", "$<", "}", ">", " ",
        "\n", "text", "😀", "\r\n", "\u2028", "$$", "${@:", "${1:-${2:-x}}"]


@st.composite
def template_files(draw) -> str:
    parts = []
    if draw(st.booleans()):
        parts.append("---\n" + "\n".join(draw(st.lists(st.sampled_from(FRONT), max_size=5))))
        parts.append("\n---\n" if draw(st.booleans()) else "\n")
    parts.append("".join(draw(st.lists(st.one_of(st.sampled_from(BODY), st.text(max_size=5)), max_size=20))))
    return "".join(parts)


_DIR = Path(tempfile.mkdtemp(prefix="template-properties-"))


def _inside(text: str, line: int | None, col: int | None) -> bool:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if line is None:
        return col is None
    return 1 <= line <= len(lines) and (col is None or 1 <= col <= len(lines[line - 1]) + 1)


@SETTINGS
@given(template_files())
def test_parsing_a_file_text_fails_only_with_a_located_frontmatter_error(text):
    try:
        PromptTemplate.from_text("t", text)
    except FrontmatterError as err:
        assert err.reason and _inside(text, err.line, err.col), (err.reason, err.line, err.col)


@SETTINGS
@given(template_files())
def test_reading_a_file_gives_a_template_or_one_problem_in_that_file(text):
    path = _DIR / "t.md"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        template = read_template(path)
    except PipelineError as err:
        [problem] = err.problems
        assert problem.location is not None and problem.location.file == str(path)
        return
    # lines as the reader counts them: CRLF and a lone CR are line breaks (as pi normalizes them)
    on_disk = path.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    for problem in template.problems():
        loc = problem.location
        assert loc.file == str(path) and _inside(on_disk, loc.line, loc.col), (problem, loc)
        assert on_disk.split("\n")[loc.line - 1][loc.col - 1 : loc.col] == "$", problem


@SETTINGS
@given(template_files(), st.lists(st.text(alphabet="ab $1@\"'", max_size=5), max_size=4))
def test_expanding_a_file_template_substitutes_into_its_body(text, words):
    try:
        template = PromptTemplate.from_text("t", text)
    except FrontmatterError:
        return
    line = " ".join(words)
    assert expand_input("/t " + line, [template]) == substitute_args(template.body, parse_args(line))
