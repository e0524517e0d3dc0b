"""Which ``${name}`` context variables each text field of a profile offers.

This table is the one place that says it: the compiler rejects any other variable
(with its position), renderers may rely on it, and ``docs/profile.md`` embeds
:func:`markdown_table` (a test keeps the two identical). A field not listed offers no
variables. ``*`` in a field path stands for any list entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Union


@dataclass(frozen=True)
class Variable:
    name: str
    meaning: str


@dataclass(frozen=True)
class FieldVariables:
    """The variables of one field; ``kind`` limits a row to sections of that kind."""

    field: str
    variables: tuple[Variable, ...]
    kind: Optional[str] = None


CWD = Variable("cwd", "the working directory, with `\\` written as `/`")
_SECTION_TEXTS = ("open", "heading", "text", "empty", "close")
_OFFLINE_TEXT = Variable("text", "one value the offline summarizer collected")

VARIABLE_TABLE: tuple[FieldVariables, ...] = (
    *(FieldVariables(f"system_prompt.sections.*.{name}", (CWD,)) for name in _SECTION_TEXTS),
    FieldVariables("system_prompt.sections.*.rules.*.text", (CWD,)),
    FieldVariables(
        "system_prompt.sections.*.item",
        (Variable("name", "the tool's name"), Variable("snippet", "the tool's one-line prompt snippet"), CWD),
        kind="tool_list",
    ),
    FieldVariables(
        "system_prompt.sections.*.item",
        (Variable("rule", "one rule, trimmed (empty and repeated rules are dropped)"),),
        kind="rules",
    ),
    FieldVariables(
        "system_prompt.sections.*.item",
        (Variable("path", "the context file's path, as discovered"), Variable("content", "the file's text, unchanged but for the export's marked block (removed)")),
        kind="context_files",
    ),
    FieldVariables(
        "system_prompt.sections.*.item",
        (
            Variable("name", "the skill's name"),
            Variable("description", "the skill's description"),
            Variable("location", "the path of the skill's file"),
            Variable("base_dir", "the skill's directory"),
        ),
        kind="skills",
    ),
    *(
        FieldVariables(f"system_prompt.patch.{name}", (Variable("name", "the section's name"),))
        for name in ("changed", "removed")
    ),
    *(
        FieldVariables(
            f"summary.instructions.{name}",
            (
                Variable(
                    "schema", "the required summary structure (`summary.schema`, laid out by `summary.schema_format`)"
                ),
            ),
        )
        for name in ("initial", "update")
    ),
    FieldVariables(
        "summary.instructions.branch",
        (Variable("schema", "the branch summary structure (`summary.branch_schema`, or `summary.schema` when empty)"),),
    ),
    FieldVariables(
        "summary.instructions.schema_retry",
        (
            Variable("missing", "the required headings the answer lacked, joined by `, `"),
            Variable("schema", "the required summary structure, as in `initial`"),
        ),
    ),
    *(
        FieldVariables(f"summary.offline.{name}.*.item", (_OFFLINE_TEXT,))
        for name in ("fill", "turn_prefix")
    ),
    FieldVariables(
        "summary.turn_prefix_request",
        (
            Variable("conversation", "the serialized first part of the split turn"),
            Variable("instructions", "`instructions.turn_prefix`, with the custom instructions when given"),
        ),
    ),
    FieldVariables("summary.truncation_marker", (Variable("count", "how many characters were cut"),)),
    FieldVariables(
        "compaction.masking.placeholder",
        (Variable("tool", "the name of the tool whose result is masked"), Variable("chars", "the result's length")),
    ),
    FieldVariables(
        "compaction.pins.item",
        (Variable("text", "the pinned text, verbatim"), Variable("source", "where it came from (a rule or a path)")),
    ),
    FieldVariables("compaction.pins.note", (Variable("pinned", "the pinned texts, as they stand in the summary"),)),
    FieldVariables("summary.validity.retry_note", (Variable("problem", "what was wrong with the answer"),)),
    FieldVariables("context.bash_execution.ran", (Variable("command", "the command the user ran"),)),
    FieldVariables("context.bash_execution.output", (Variable("output", "the command's output"),)),
    FieldVariables("context.bash_execution.exit_code", (Variable("code", "the non-zero exit code"),)),
    FieldVariables("context.bash_execution.truncated", (Variable("path", "the file holding the full output"),)),
    FieldVariables("runtime.skill.open", (
        Variable("name", "the skill's name"), Variable("location", "the path of the skill's file"),
        Variable("base_dir", "the skill's directory"),
    )),
    FieldVariables("runtime.skill.args", (Variable("args", "the text after `/skill:name `"),)),
    FieldVariables("runtime.tool_errors.unknown", (Variable("name", "the tool the model called"),)),
    FieldVariables("runtime.tool_errors.invalid_arguments", (
        Variable("name", "the tool"), Variable("problems", "one line per problem"),
        Variable("arguments", "the arguments received, as JSON"),
    )),
    FieldVariables("runtime.tool_errors.failed", (Variable("name", "the tool"), Variable("error", "the error's text"))),
    *(FieldVariables(f"runtime.tool_output.{name}", (Variable("path", "the path as the model gave it"),))
      for name in ("not_found", "not_a_file", "not_a_directory", "outside")),
    FieldVariables("runtime.tool_output.not_regular", (Variable("path", "the path as the model gave it"),)),
    FieldVariables("runtime.tool_output.too_large", (
        Variable("path", "the path as the model gave it"), Variable("size", "the file's size in bytes"),
        Variable("limit", "the largest file the tools read, in bytes"),
    )),
    FieldVariables("runtime.tool_output.unreadable", (
        Variable("path", "the path as the model gave it"), Variable("reason", "why the system refused it"),
    )),
    FieldVariables("runtime.tool_output.invalid_pattern", (Variable("error", "what is wrong with the pattern"),)),
    FieldVariables("runtime.tool_output.truncated", (
        Variable("shown", "how many lines are shown"), Variable("total", "how many there were"),
    )),
)


def _matches(pattern: str, path: Sequence[Union[str, int]]) -> bool:
    parts = pattern.split(".")
    if len(parts) != len(path):
        return False
    return all((p == "*" and isinstance(k, int)) or p == k for p, k in zip(parts, path))


def variables_for(path: Sequence[Union[str, int]], kind: Optional[str] = None) -> tuple[str, ...]:
    """Names of the variables the field at ``path`` offers (``kind``: its section's kind)."""
    for row in VARIABLE_TABLE:
        if _matches(row.field, path) and (row.kind is None or row.kind == kind):
            return tuple(v.name for v in row.variables)
    return ()


def markdown_table() -> str:
    """The table as Markdown, as ``docs/profile.md`` shows it."""
    lines = ["| field | section kind | variables |", "| --- | --- | --- |"]
    for row in VARIABLE_TABLE:
        names = "<br>".join(f"`${{{v.name}}}`: {v.meaning}" for v in row.variables)
        lines.append(f"| `{row.field}` | {row.kind or 'any'} | {names} |")
    lines.append("| every other text field | | none |")
    return "\n".join(lines)
