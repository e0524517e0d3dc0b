"""The table of malformed profiles and the exact lines `pipeline validate` must print.

Each case is a set of files written to an empty directory (the working directory of
the run); ``p.yaml`` is validated. Expected lines are ``FILE:LINE:COL: key: message
(hint)``; positions were worked out by hand from the file texts below.
"""

from __future__ import annotations

from dataclasses import dataclass, field

HEAD = "extends: builtin:default\nname: t\n"

#: A small valid standalone profile (every required key, test wording).
STANDALONE = """\
name: s
system_prompt:
  sections:
    - id: hello
      text: Hello.
summary:
  system_prompt: Summarize.
  schema:
    - heading: Goal
  instructions:
    initial: "Use: ${schema}"
    update: "Update: ${schema}"
    turn_prefix: Prefix.
    branch: "Branch: ${schema}"
    custom_label: Focus
  truncation_marker: "[${count} cut]"
  split_turn_separator: "---"
  no_history: None.
  branch_empty: Empty.
  branch_preamble: "Branch:"
  offline:
    empty: "-"
  projection:
    compaction: {open: "<summary>", close: "</summary>"}
    branch: {open: "<summary>", close: "</summary>"}
context:
  bash_execution:
    ran: "$ ${command}"
    output: "${output}"
    no_output: none
    cancelled: cancelled
    exit_code: "code ${code}"
    truncated: "see ${path}"
"""


def _bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Case:
    id: str
    files: dict = field(default_factory=dict)
    expected: tuple[str, ...] = ()
    main: str = "p.yaml"


def overlay(body: str) -> dict:
    return {"p.yaml": HEAD + body}


def sections(body: str) -> dict:
    return overlay("system_prompt:\n  sections:\n" + body)


def standalone(old: str, new: str) -> dict:
    assert old in STANDALONE
    return {"p.yaml": STANDALONE.replace(old, new, 1)}


CASES = [
    # ---------------------------------------------------------------- unknown keys
    Case(
        "unknown-key-reserv_tokens",
        overlay("compaction:\n  reserv_tokens: 1000\n"),
        ("p.yaml:4:3: compaction.reserv_tokens: unknown key (did you mean `reserve_tokens`?)",),
    ),
    Case(
        "unknown-key-top-level",
        overlay("compacton:\n  enabled: true\n"),
        ("p.yaml:3:1: compacton: unknown key (did you mean `compaction`?)",),
    ),
    Case(
        "unknown-key-in-section",
        sections("    - id: identity\n      txt: Hi.\n"),
        ("p.yaml:6:7: system_prompt.sections.identity.txt: unknown key (did you mean `text`?)",),
    ),
    Case(
        "unknown-key-no-close-match",
        overlay("summary:\n  zzz: 1\n"),
        ("p.yaml:4:3: summary.zzz: unknown key",),
    ),
    Case(
        "python-field-name-instead-of-key",
        sections("    - id: rules\n      rules:\n        - from_: tool_guidelines\n"),
        ("p.yaml:6:7: warning: system_prompt.sections.rules.rules: this list replaces the inherited `rules` and drops "
         "its `from: tool_guidelines`, `from: caller_guidelines` entries (write `rules+:` to add to the inherited list; to drop them on purpose, "
         "replace the section (`replace: true`))",
         "p.yaml:7:11: system_prompt.sections.rules.rules.0.from_: unknown key (did you mean `from`?)"),
    ),
    Case(
        "unknown-key-in-tool-catalog",
        overlay("system_prompt:\n  tools:\n    read:\n      snipet: Read a file.\n"),
        ("p.yaml:6:7: system_prompt.tools.read.snipet: unknown key (did you mean `snippet`?)",),
    ),
    # ---------------------------------------------------------------- wrong types
    Case(
        "quoted-number",
        overlay('compaction:\n  reserve_tokens: "1000"\n'),
        ('p.yaml:4:19: compaction.reserve_tokens: expected a whole number, got the text \"1000\" (write 1000 without quotes)',),
    ),
    Case(
        "float-for-int",
        overlay("compaction:\n  keep_recent_tokens: 1.5\n"),
        ("p.yaml:4:23: compaction.keep_recent_tokens: expected a whole number, got the number 1.5",),
    ),
    Case(
        "yes-is-not-a-boolean",
        overlay("compaction:\n  enabled: yes\n"),
        ('p.yaml:4:12: compaction.enabled: expected true or false, got the text "yes"',),
    ),
    Case(
        "list-for-text",
        overlay("description: [a, b]\n"),
        ("p.yaml:3:14: description: expected text, got a list",),
    ),
    Case(
        "text-for-list",
        overlay("system_prompt:\n  default_tools: read\n"),
        ('p.yaml:4:18: system_prompt.default_tools: expected a list, got the text "read"',),
    ),
    Case(
        "number-for-mapping",
        overlay("compaction: 5\n"),
        ("p.yaml:3:13: compaction: expected a mapping, got the number 5",),
    ),
    Case(
        "number-for-prompt-text",
        overlay("summary:\n  no_history: 5\n"),
        ("p.yaml:4:15: summary.no_history: expected text, got the number 5",),
    ),
    Case(
        "null-for-required-text",
        overlay("summary:\n  no_history:\n"),
        ("p.yaml:4:3: summary.no_history: expected text, got nothing (null)",),
    ),
    Case(
        "wrong-types-everywhere",
        overlay(
            "compaction:\n  enabled: 1\n  reserve_tokens: true\n"
            "summary:\n  tags: []\n  labels:\n    user: 7\n"
            "summarizer:\n  timeout_s: fast\n"
        ),
        (
            "p.yaml:4:12: compaction.enabled: expected true or false, got the number 1",
            "p.yaml:5:19: compaction.reserve_tokens: expected a whole number, got `true`",
            "p.yaml:7:9: summary.tags: expected a mapping, got a list",
            "p.yaml:9:11: summary.labels.user: expected text, got the number 7",
            'p.yaml:11:14: summarizer.timeout_s: expected a number, got the text "fast"',
        ),
    ),
    # ---------------------------------------------------------------- enums
    Case(
        "kind-typo",
        sections("    - id: tools\n      kind: tool-list\n"),
        ("p.yaml:6:13: system_prompt.sections.tools.kind: invalid value `tool-list` (did you mean `tool_list`?)",),
    ),
    Case(
        "escape-typo",
        sections("    - id: skills\n      escape: xlm\n"),
        ("p.yaml:6:15: system_prompt.sections.skills.escape: invalid value `xlm` (did you mean `xml`?)",),
    ),
    Case(
        "enum-without-close-match",
        overlay("summary:\n  on_schema_violation: explode\n"),
        (
            "p.yaml:4:24: summary.on_schema_violation: invalid value `explode` "
            "(expected one of `retry`, `warn`, `fail`)",
        ),
    ),
    Case(
        "provider-typo",
        overlay("summarizer:\n  provider: openia\n"),
        ("p.yaml:4:13: summarizer.provider: invalid value `openia` (did you mean `openai`?)",),
    ),
    Case(
        "condition-input-typo",
        sections("    - id: skills\n      when: {present: [skils]}\n"),
        ("p.yaml:6:24: system_prompt.sections.skills.when.present.0: invalid value `skils` (did you mean `skills`?)",),
    ),
    Case(
        "version-2",
        overlay("version: 2\n"),
        ("p.yaml:3:10: version: invalid value `2` (expected `1`)",),
    ),
    # ---------------------------------------------------------------- ranges
    Case(
        "budget-over-one",
        overlay("compaction:\n  summary_budget: {history: 1.5}\n"),
        ("p.yaml:4:29: compaction.summary_budget.history: must be at most 1, got 1.5",),
    ),
    Case(
        "budget-zero",
        overlay("compaction:\n  summary_budget:\n    turn_prefix: 0\n"),
        ("p.yaml:5:18: compaction.summary_budget.turn_prefix: must be greater than 0, got 0",),
    ),
    Case(
        "share-limit-negative",
        overlay("compaction:\n  branch:\n    summary_share_limit: -0.5\n"),
        ("p.yaml:5:26: compaction.branch.summary_share_limit: must be greater than 0, got -0.5",),
    ),
    Case(
        "negative-reserve",
        overlay("compaction:\n  reserve_tokens: -1\n"),
        ("p.yaml:4:19: compaction.reserve_tokens: must be at least 0, got -1",),
    ),
    Case(
        "empty-name",
        {"p.yaml": 'extends: builtin:default\nname: ""\n'},
        ("p.yaml:2:7: name: must not be empty",),
    ),
    Case(
        "bad-section-id",
        sections("    - id: 1st\n      text: x\n"),
        (
            "p.yaml:5:11: system_prompt.sections.1st.id: invalid section id `1st` "
            "(an id starts with a letter or `_` and holds only letters, digits, `_`, `.` and `-`)",
        ),
    ),
    Case(
        "rule-with-text-and-from",
        sections("    - id: rules\n      rules:\n        - text: a\n          from: tool_guidelines\n"),
        ("p.yaml:6:7: warning: system_prompt.sections.rules.rules: this list replaces the inherited `rules` and drops "
         "its `from: caller_guidelines` entry (write `rules+:` to add to the inherited list; to drop them on purpose, "
         "replace the section (`replace: true`))",
         "p.yaml:7:11: system_prompt.sections.rules.rules.0: a rule has exactly one of `text` or `from`"),
    ),
    # ---------------------------------------------------------------- missing keys
    Case(
        "standalone-missing-top-level-keys",
        {"p.yaml": "name: a\n"},
        (
            "p.yaml:1:1: system_prompt: missing required key",
            "p.yaml:1:1: summary: missing required key",
            "p.yaml:1:1: context: missing required key",
        ),
    ),
    Case(
        "standalone-missing-nested-key",
        standalone('    branch: "Branch: ${schema}"\n', ""),
        ("p.yaml:10:3: summary.instructions.branch: missing required key",),
    ),
    # ---------------------------------------------------------------- YAML structure
    Case(
        "duplicate-key",
        overlay("compaction:\n  enabled: true\n  enabled: false\n"),
        ("p.yaml:5:3: compaction.enabled: duplicate key (first set at line 4)",),
    ),
    Case(
        "duplicate-key-top-level",
        {"p.yaml": "name: a\nname: b\n"},
        ("p.yaml:2:1: name: duplicate key (first set at line 1)",),
    ),
    Case(
        "tab-indentation",
        {"p.yaml": "name: a\ncompaction:\n\tenabled: true\n"},
        ("p.yaml:3:1: tab character where YAML expects spaces (indent with spaces)",),
    ),
    Case(
        "top-level-list",
        {"p.yaml": "- name: a\n- name: b\n"},
        (
            "p.yaml:1:1: the top level must be a mapping of keys, not a list "
            "(a profile looks like `name: my-profile` followed by more `key: value` lines)",
        ),
    ),
    Case(
        "top-level-scalar",
        {"p.yaml": "just some text\n"},
        (
            "p.yaml:1:1: the top level must be a mapping of keys, not a single value "
            "(a profile looks like `name: my-profile` followed by more `key: value` lines)",
        ),
    ),
    Case(
        "empty-file",
        {"p.yaml": ""},
        ("p.yaml:1:1: empty profile (a profile is a YAML mapping; start with `name: my-profile`)",),
    ),
    Case(
        "comments-only",
        {"p.yaml": "# nothing here\n\n"},
        ("p.yaml:1:1: empty profile (a profile is a YAML mapping; start with `name: my-profile`)",),
    ),
    Case(
        "binary-file",
        {"p.yaml": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"},
        ("p.yaml:3:1: binary file (contains a NUL byte)",),
    ),
    Case(
        "not-utf8",
        {"p.yaml": b"name: caf\xe9\n"},
        ("p.yaml:1:10: not UTF-8 text: invalid byte 0xe9 at byte offset 9 (save the profile as UTF-8)",),
    ),
    Case(
        "control-character",
        {"p.yaml": "name: a\x07b\n"},
        ("p.yaml:1:8: control character U+0007 is not allowed in YAML (remove it or write it as an escape in double quotes)",),
    ),
    Case(
        "ten-megabytes",
        {"p.yaml": "# " + "x" * (10 * 1024 * 1024 - 3) + "\n"},
        ("p.yaml: file too large: 10485760 bytes (the limit for a profile is 1048576 bytes) (see docs/limits.md)",),
    ),
    Case(
        "billion-laughs",
        {"p.yaml": _bomb()},
        ("p.yaml:6:1: too many values once aliases are expanded (more than 100000) (this looks like an alias bomb)",),
    ),
    Case(
        "recursive-alias",
        {"p.yaml": "name: a\nloop: &x\n  again: *x\n"},
        ("p.yaml:2:7: an alias refers to a value that contains it",),
    ),
    Case(
        "nested-too-deeply",
        {"p.yaml": "a: " + "[" * 70 + "]" * 70 + "\n"},
        ("p.yaml:1:68: nested too deeply (more than 64 levels)",),
    ),
    Case(
        "lone-surrogate-escape",
        {"p.yaml": 'extends: builtin:default\nname: "caf\\udce9"\n'},
        (
            "p.yaml:2:7: name: escape for half a character (U+DCE9) "
            "(write the character itself, or escape the whole character (`\\U0001F600`))",
        ),
    ),
    Case(
        "python-object-tag",
        {"p.yaml": "extends: builtin:default\nname: !!python/object/apply:os.system [echo]\n"},
        (
            "p.yaml:2:7: name: YAML tag `!!python/object/apply:os.system` is not allowed "
            "(profiles use plain YAML: text, numbers, true/false, null, lists and mappings)",
        ),
    ),
    Case(
        "custom-tag",
        overlay("description: !secret vault\n"),
        (
            "p.yaml:3:14: description: YAML tag `!secret` is not allowed "
            "(profiles use plain YAML: text, numbers, true/false, null, lists and mappings)",
        ),
    ),
    Case(
        "colon-in-plain-text",
        {"p.yaml": "name: a\ndescription: Note: this breaks\n"},
        ("p.yaml:2:18: unexpected `:` (put text that contains `: ` in quotes, or fix the indentation)",),
    ),
    Case(
        "unclosed-bracket",
        {"p.yaml": "name: a\ndefault_tools: [read, bash\n"},
        ("p.yaml:2:16: unclosed bracket (close every `[` and `{`)",),  # where it opens
    ),
    Case(
        "unclosed-quote",
        {"p.yaml": 'name: a\ndescription: "never closed\ncompaction:\n  reserve_tokens: 1\n'},
        ("p.yaml:2:14: unclosed quote (close the quoted text)",),  # the opening quote, not the end of the file
    ),
    Case(
        "two-documents",
        {"p.yaml": "name: a\n---\nname: b\n"},
        ("p.yaml:2:1: more than one YAML document (a profile is one document; remove the extra `---`)",),
    ),
    # ---------------------------------------------------------------- variables
    Case(
        "unknown-variable-plain",
        sections("    - id: cwd\n      text: Working in ${cdw} now\n"),
        ("p.yaml:6:24: system_prompt.sections.cwd.text: unknown variable `${cdw}` (did you mean `${cwd}`?)",),
    ),
    Case(
        "unknown-variable-double-quoted-item",
        sections('    - id: tools\n      item: "- ${nam}: ${snippet}"\n'),
        ("p.yaml:6:16: system_prompt.sections.tools.item: unknown variable `${nam}` (did you mean `${name}`?)",),
    ),
    Case(
        "unknown-variable-literal-block",
        overlay("summary:\n  instructions:\n    initial: |-\n      First line.\n        ${schema} and ${shema}\n"),
        ("p.yaml:7:23: summary.instructions.initial: unknown variable `${shema}` (did you mean `${schema}`?)",),
    ),
    Case(
        "unknown-variable-folded-block",
        overlay("context:\n  bash_execution:\n    ran: >-\n      Ran\n      ${comand} here\n"),
        ("p.yaml:7:7: context.bash_execution.ran: unknown variable `${comand}` (did you mean `${command}`?)",),
    ),
    Case(
        "unknown-variable-single-quoted",
        overlay("summary:\n  truncation_marker: '[''${n}'' cut]'\n"),
        ("p.yaml:4:26: summary.truncation_marker: unknown variable `${n}` (this field offers `${count}`)",),
    ),
    Case(
        "variable-in-field-without-variables",
        overlay("summary:\n  no_history: Nothing before ${cwd}.\n"),
        (
            "p.yaml:4:30: summary.no_history: unknown variable `${cwd}` "
            "(this field offers no variables; write `$${` for a literal `${`)",
        ),
    ),
    Case(
        "variable-of-another-kind",
        sections("    - id: skills\n      item: '${name} ${path}'\n"),
        (
            "p.yaml:6:22: system_prompt.sections.skills.item: unknown variable `${path}` "
            "(this field offers `${name}`, `${description}`, `${location}`, `${base_dir}`)",
        ),
    ),
    Case(
        "variables-and-types-reported-together",
        overlay(
            "compaction:\n  reserve_tokens: lots\n"
            "summary:\n  branch_preamble: 'From ${branch}:'\n"
            "  instructions:\n    turn_prefix: ${schema}\n"
        ),
        (
            'p.yaml:4:19: compaction.reserve_tokens: expected a whole number, got the text "lots"',
            "p.yaml:6:26: summary.branch_preamble: unknown variable `${branch}` "
            "(this field offers no variables; write `$${` for a literal `${`)",
            "p.yaml:8:18: summary.instructions.turn_prefix: unknown variable `${schema}` "
            "(this field offers no variables; write `$${` for a literal `${`)",
        ),
    ),
    # ---------------------------------------------------------------- extends
    Case(
        "unknown-builtin",
        {"p.yaml": "extends: builtin:defualt\nname: t\n"},
        ("p.yaml:1:10: extends: unknown built-in profile `builtin:defualt` (did you mean `builtin:default`?)",),
    ),
    Case(
        "missing-extends-file",
        {"p.yaml": "extends: base.yaml\nname: t\n"},
        ("p.yaml:1:10: extends: `extends` target base.yaml does not exist",),
    ),
    Case(
        "extends-name-without-builtin-prefix",
        {"p.yaml": "extends: default\nname: t\n"},
        ("p.yaml:1:10: extends: `extends` target default does not exist (did you mean `builtin:default`?)",),
    ),
    Case(
        "extends-cycle",
        {"p.yaml": "extends: q.yaml\nname: p\n", "q.yaml": "extends: p.yaml\nname: q\n"},
        ("q.yaml:1:10: extends: `extends` cycle: p.yaml -> q.yaml -> p.yaml",),
    ),
    Case(
        "extends-itself",
        {"p.yaml": "extends: ./p.yaml\nname: p\n"},
        ("p.yaml:1:10: extends: `extends` cycle: p.yaml -> p.yaml",),
    ),
    Case(
        "extends-not-text",
        {"p.yaml": "extends: [a.yaml]\nname: p\n"},
        (
            "p.yaml:1:10: extends: `extends` must be a path or `builtin:NAME` "
            "(for example `extends: builtin:default` or `extends: ../base.yaml`)",
        ),
    ),
    Case(
        "error-in-extended-file",
        {"p.yaml": "extends: base/b.yaml\nname: p\n", "base/b.yaml": "extends: builtin:default\ncompaction: {reserve: 1}\n"},
        ("base/b.yaml:2:14: compaction.reserve: unknown key (did you mean `reserve_tokens`?)",),
    ),
    # ---------------------------------------------------------------- overlay sections
    Case(
        "before-unknown-id",
        sections("    - id: mine\n      text: Mine.\n      before: rulez\n"),
        ("p.yaml:7:15: system_prompt.sections.mine.before: unknown section id `rulez` (did you mean `rules`?)",),
    ),
    Case(
        "after-unknown-id",
        sections("    - id: rules\n      after: tool\n"),
        ("p.yaml:6:14: system_prompt.sections.rules.after: unknown section id `tool` (did you mean `tools`?)",),
    ),
    Case(
        "remove-unknown-id",
        sections("    - id: identty\n      remove: true\n"),
        ("p.yaml:5:11: system_prompt.sections.identty: no section `identty` to remove (did you mean `identity`?)",),
    ),
    Case(
        "replace-unknown-id",
        sections("    - id: skill\n      replace: true\n      text: x\n"),
        ("p.yaml:5:11: system_prompt.sections.skill: no section `skill` to replace (did you mean `skills`?)",),
    ),
    Case(
        "before-and-after",
        sections("    - id: mine\n      text: x\n      before: rules\n      after: tools\n"),
        ("p.yaml:8:14: system_prompt.sections.mine.after: use `before` or `after`, not both",),
    ),
    Case(
        "remove-with-other-keys",
        sections("    - id: rules\n      remove: true\n      heading: x\n"),
        ("p.yaml:7:7: system_prompt.sections.rules.heading: a removed section takes no other keys (found `heading`)",),
    ),
    Case(
        "remove-not-boolean",
        sections("    - id: rules\n      remove: yes\n"),
        ("p.yaml:6:15: system_prompt.sections.rules.remove: `remove` must be true or false",),
    ),
    Case(
        "placed-relative-to-itself",
        sections("    - id: rules\n      before: rules\n"),
        ("p.yaml:6:15: system_prompt.sections.rules.before: a section cannot be placed relative to itself",),
    ),
    Case(
        "duplicate-section-ids",
        {"p.yaml": STANDALONE.replace("      text: Hello.\n", "      text: Hello.\n    - id: hello\n      text: Again.\n")},
        ("p.yaml:6:11: system_prompt.sections.hello.id: duplicate section id `hello` (first used at line 4)",),
    ),
    # ---------------------------------------------------------------- cross-field
    Case(
        "list-section-without-item",
        sections("    - {id: tools, replace: true, kind: tool_list}\n"),
        ("p.yaml:5:7: system_prompt.sections.tools: a `tool_list` section needs `item` (`item` is the text of one entry)",),
    ),
    Case(
        "text-section-without-text",
        sections("    - id: added\n      heading: Alone\n"),
        ("p.yaml:5:7: system_prompt.sections.added: a `text` section needs `text`",),
    ),
    Case(
        "rules-on-text-section",
        sections("    - id: identity\n      rules:\n        - text: x\n"),
        ("p.yaml:6:7: system_prompt.sections.identity.rules: `rules` is only used by sections of kind `rules`, not `text`",),
    ),
    Case(
        "item-on-text-section",
        sections("    - id: identity\n      item: '- x'\n"),
        (
            "p.yaml:6:7: system_prompt.sections.identity.item: `item` is only used by list sections "
            "(tool_list, rules, context_files, skills)",
        ),
    ),
    Case(
        "reserve-not-below-window",
        overlay("compaction:\n  reserve_tokens: 16000\n  branch: {reserve_tokens: 1000}\nsummarizer:\n  context_window: 16000\n"),
        (
            "p.yaml:4:3: compaction.reserve_tokens: reserve_tokens (16000) must be below summarizer.context_window "
            "(16000) (otherwise the compaction threshold is not positive and every turn compacts)",
        ),
    ),
    Case(
        "branch-reserve-not-below-default-window",
        overlay("compaction:\n  branch:\n    reserve_tokens: 200000\n"),
        (
            "p.yaml:5:5: compaction.branch.reserve_tokens: reserve_tokens (200000) must be below "
            "default_context_window (128000) (otherwise nothing of a branch fits into its summary request)",
        ),
    ),
    Case(
        "keep-not-below-threshold",
        overlay("summarizer:\n  context_window: 40000\ncompaction:\n  keep_recent_tokens: 30000\n"),
        (
            "p.yaml:6:3: compaction.keep_recent_tokens: keep_recent_tokens (30000) must be below the compaction "
            "threshold context_window - reserve_tokens = 23616 (what compaction keeps would already be over "
            "the threshold: every turn would decide to compact, and every compaction would find nothing to "
            "summarize)",
        ),
    ),
    Case(
        "summary-budget-rounds-to-zero",
        overlay("compaction:\n  reserve_tokens: 1\n"),
        (
            "p.yaml:4:3: compaction.reserve_tokens: leaves no room for a summary: 0.8 x 1 is less than one token "
            "(raise reserve_tokens or summary_budget.history)",
            "p.yaml:4:3: compaction.reserve_tokens: leaves no room for a summary: 0.5 x 1 is less than one token "
            "(raise reserve_tokens or summary_budget.turn_prefix)",
        ),
    ),
    Case(
        "api-key-instead-of-variable-name",
        overlay("summarizer:\n  api_key_env: sk-abc123\n"),
        (
            "p.yaml:4:3: summarizer.api_key_env: `api_key_env` looks like an API key, not the name of an environment "
            "variable (give the name of the environment variable that holds the key, like `OPENAI_API_KEY`)",
        ),
    ),
    Case(
        "offline-fill-unknown-heading",
        overlay("summary:\n  offline:\n    fill:\n      - {heading: Progress/Dnoe, sources: [tool_calls]}\n"),
        (
            "p.yaml:6:19: summary.offline.fill.0.heading: `Progress/Dnoe` is not a heading of summary.schema or "
            "summary.branch_schema (did you mean `Progress/Done`?)",
        ),
    ),
]
