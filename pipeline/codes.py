"""The one registry of problem codes.

Every :class:`~pipeline.errors.Problem` that carries a code uses one of these; each is
``domain.kebab-name`` and has its own section in ``docs/errors.md`` (what it means, an
example, how to fix it). A code not listed here is refused when the problem is made, and
a test keeps this table, the code base and the page in step.

The domain says where the problem comes from: ``profile`` (a profile or scenario file:
YAML, keys, values, cross-field rules), ``template`` (prompt-template files and bodies),
``session`` (pi session files), ``provider`` (summary calls to an LLM provider), ``proxy``
(``pipeline proxy``'s own set-up).
"""

from __future__ import annotations

DOMAINS = ("profile", "template", "session", "provider", "proxy")

CODES: dict[str, str] = {
    # ---- profile: reading the file
    "profile.unreadable": "a profile (or scenario) file is missing or cannot be read",
    "profile.file-too-large": "the file is larger than a profile may be",
    "profile.binary-file": "the file holds a NUL byte",
    "profile.not-utf8": "the file is not valid UTF-8",
    "profile.empty-file": "the file holds no YAML document",
    "profile.not-a-mapping": "the top level is not a mapping",
    "profile.too-deep": "values are nested too deeply",
    "profile.yaml-syntax": "the text is not valid YAML",
    "profile.yaml-tag": "a tag that is not allowed, or a value its tag does not fit",
    "profile.recursive-alias": "an alias refers to a value that contains it",
    "profile.too-many-values": "the file holds too many values",
    "profile.alias-bomb": "aliases expand to too many values",
    "profile.bad-key": "a key that is not plain text",
    "profile.duplicate-key": "a key written twice in one mapping",
    "profile.bad-escape": "an escape for half a character (a lone surrogate)",
    "profile.bad-merge": "a `<<` merge key that does not refer to mappings",
    # ---- profile: extends and overlays
    "profile.bad-extends": "an `extends:` that cannot be followed",
    "profile.extends-cycle": "`extends:` files that extend each other in a loop",
    "profile.unknown-builtin": "a `builtin:NAME` that names no shipped profile",
    "profile.bad-overlay": "an overlay section entry of the wrong shape",
    "profile.unknown-section": "an overlay names a section that does not exist",
    "profile.bad-placement": "an overlay section's `before:`/`after:` cannot be applied",
    "profile.duplicate-section": "two sections share an id",
    "profile.near-miss-section": "a new section id one edit away from an existing one (likely a typo)",
    "profile.list-drops-from": "an overlay list replaces an inherited one and drops its `from:` entries",
    # ---- profile: keys and values
    "profile.unknown-key": "a key the profile language does not have",
    "profile.missing-key": "a required key is missing",
    "profile.wrong-type": "a value of the wrong type",
    "profile.invalid-choice": "a value that is not one of the allowed choices",
    "profile.out-of-range": "a number outside its bounds",
    "profile.empty-value": "a text that must not be empty is empty",
    "profile.invalid-id": "a section id of the wrong form",
    "profile.bad-form": "a text that does not have the required form",
    "profile.invalid-value": "a value the field rejects",
    "profile.unknown-variable": "a `${name}` the field does not offer",
    "profile.unclosed-variable": "a `${` with no `}` on its line: rendered as written",
    # ---- profile: cross-field rules
    "profile.never-renders": "a section or rule that can never apply",
    "profile.sections-rule": "a rule about sections is broken",
    "profile.compaction-rule": "compaction budgets that do not fit together",
    "profile.summary-rule": "a rule about the summary settings is broken",
    "profile.summarizer-rule": "a rule about the summarizer settings is broken",
    "profile.templates-rule": "a rule about template sources is broken",
    "profile.template-source-missing": "a template path listed in templates.sources does not exist",
    # ---- profile: the repository's profile setting
    "profile.repo-setting": "the repository's profile setting (.context-pipeline.toml, pyproject.toml) is malformed",
    # ---- profile: pipeline import
    "profile.import-settings": "another agent's settings file cannot be read",
    "profile.not-imported": "a setting of another agent that a profile has no place for",
    # ---- profile: pipeline export
    "profile.export-conflict": "a file or key the export would change was not written by it, or was edited since",
    "profile.export-file": "a file the export reads (its manifest, a shared settings file) is not what it expects",
    "profile.export-path": "a path the export would use (a manifest entry, a template's file name) is not a safe path inside its root",
    "profile.export-write": "the export's files could not be written; everything it had changed was put back (exit 4)",
    "profile.export-place": "the directory to export into does not exist",
    "profile.export-other-profile": "`pipeline export` without PROFILE (no repository profile set) would write "
                                    "`default` over an export of another profile",
    "profile.export-folder": "a section's `folder` (the sub-folder whose AGENTS.md holds it) is not an existing "
                             "folder inside the project",
    "profile.export-verify-agent": "the agent CLI `pipeline export --verify` runs is not installed (or --agent-bin "
                                   "names no executable)",
    "profile.export-verify-usage": "`--verify` is combined with a flag it cannot work with",
    "profile.override": "a command-line override of a profile value is invalid",
    "profile.internal-error": "a check could not run because of a bug",
    # ---- profile: what renders with it
    "profile.bad-agent-dir": "`$PI_CODING_AGENT_DIR` is a path the system cannot take",
    "profile.unreadable-input": "an input file for rendering (custom prompt, append, context, skills) cannot be used",
    "profile.skipped-skill": "a discovered skill that is skipped (no description, a name collision...)",
    "profile.bad-scenario": "a scenario file of the wrong shape",
    "profile.bad-section-name": "a named section a caller brings that the profile's name rule refuses",
    "profile.schema-out-of-date": "the committed JSON schema differs from the profile models",
    # ---- template
    "template.zero-index": "`$0` or `${0:-x}`: arguments are numbered from 1",
    "template.large-index": "a position beyond any realistic argument count",
    "template.zero-slice": "`${@:0}` behaves like `${@:1}`",
    "template.empty-slice": "a slice of length zero, always empty",
    "template.default-not-slice": "`${@:-x}` is all arguments with a default, not a slice",
    "template.placeholder-in-default": "a `$1` inside a default is inserted as written",
    "template.bare-brace": "`${1}` is left as literal text",
    "template.bash-operator": "a bash operator other than `:-`, left as literal text",
    "template.blank-in-form": "blanks inside `${...}`, left as literal text",
    "template.malformed-slice": "`${@:...}` that is not a slice, left as literal text",
    "template.unclosed-form": "a `${` or `$<` that is never closed",
    "template.missing-brace": "`$2:-x}` or `$@:2}`: a braced form whose `{` is missing",
    "template.negative-index": "a negative position, left as literal text",
    "template.argument-name": "`$NAME` or `${NAME}`, left as literal text",
    "template.non-ascii-digit": "a position written with non-ASCII digits",
    "template.frontmatter": "a template's frontmatter is not valid",
    "template.unreadable": "a template file cannot be read",
    "template.file-too-large": "a template file (or the typed input on stdin) is larger than its limit",
    "template.not-utf8": "the typed input on stdin is not valid UTF-8",
    "template.bad-path": "a template source that is not a directory or a .md file",
    "template.unreadable-dir": "a template directory cannot be read",
    "template.broken-link": "a template path is a broken symbolic link",
    "template.name-collision": "two templates with one name",
    "template.unknown": "`/name` names no template",
    "template.missing-argument": "a template was called with fewer arguments than it reads",
    "template.indexed-arguments": "Claude Code's `$ARGUMENTS[N]` in a pi template",
    "template.dollar-amount": "an amount such as `$0.50` whose `$N` is replaced by an argument",
    "template.argument-hint-list": "an `argument-hint` that YAML reads as a list",
    "template.argument-hint-unquoted": "an unquoted bracketed `argument-hint`, read as text by a dialect",
    "template.toml": "a Gemini CLI command file that is not usable TOML",
    "template.dialect-shell": "a shell command the dialect runs before sending; not run here",
    "template.dialect-shell-args": "arguments inside a Gemini CLI shell block",
    "template.dialect-file": "a file the dialect includes; not read here",
    "template.dialect-key": "a dialect's frontmatter key that has no effect here",
    # ---- session
    "session.unreadable": "the session file is missing or cannot be read",
    "session.file-too-large": "the session file is larger than a session may be",
    "session.line-too-long": "a session line longer than a line may be",
    "session.summary-not-printed": "an entry was appended, but its summary could not be printed",
    "session.unwritable": "the session file cannot be opened, created or written",
    "session.replaced": "the session file was replaced by another file while open",
    "session.not-a-session": "the file is not a pi session",
    "session.migrated": "an old-format session, migrated in memory",
    "session.bad-entry": "an entry with a missing or wrong field",
    "session.unknown-type": "an entry type this version does not know",
    "session.not-json": "a line that is not JSON",
    "session.not-object": "a JSON line that is not an object",
    "session.blank-line": "an empty line",
    "session.extra-header": "a second session header",
    "session.torn-line": "the last line was cut off mid-write",
    "session.repaired-torn-line": "a torn line that was completed later",
    "session.no-newline": "the last line has no line break",
    "session.too-deep": "a line nested too deeply to read",
    "session.duplicate-id": "two entries share an id",
    "session.dangling-parent": "an entry's parent does not exist",
    "session.cycle": "entries whose parents form a loop",
    "session.no-entry": "an entry id that is not in the session",
    "session.bad-context-edit": "a context edit pi would refuse (no editable target, or no string or list content)",
    "session.read-only": "the session cannot be appended to",
    "session.shrank": "the file became shorter while it was open",
    "session.same-file": "source and destination are the same file",
    "session.exists": "the destination already exists",
    "session.busy": "the session kept changing while it was being compacted",
    # ---- provider
    "provider.error": "a summary call failed",
    "provider.config": "the provider client is set up wrongly",
    "provider.auth": "no API key in the named environment variable",
    "provider.http-status": "the provider answered with an HTTP error status",
    "provider.timeout": "the provider did not answer in time",
    "provider.connection": "the connection failed or broke",
    "provider.bad-response": "a response that cannot be used",
    "provider.empty-completion": "the model returned no text",
    "provider.retries-exhausted": "every retry failed",
    "provider.retry-delay": "the server asked to wait longer than allowed",
    "provider.deadline": "no complete answer before the call's or the compaction's deadline",
    "provider.response-too-large": "a response body larger than summarizer.max_response_bytes",
    "provider.summary-too-long": "a summary far longer than its token budget allows",
    "provider.summary-schema": "a summary lacks sections the schema requires",
    "session.pin-unreadable": "a file compaction.pins names cannot be read",
    "provider.summary-length": "a summary answer stopped at the output limit",
    "provider.summary-tool-call": "a summary answer calls a tool",
    "provider.summary-empty": "a summary answer is empty",
    # ---- proxy
    "proxy.listen": "the proxy cannot listen where --listen says",
    "proxy.store": "the proxy's store cannot be opened, or is not a proxy store",
    "proxy.token": "the proxy listens beyond loopback without a token, or the token's variable is unset",
    "proxy.usage": "a `pipeline proxy` flag's value is not one it takes",
}


def check_code(code: str | None) -> None:
    """Refuse a code that is not registered (a programming error, caught by the tests)."""
    if code is not None and code not in CODES:
        raise ValueError(f"unregistered problem code {code!r}: add it to pipeline/codes.py and docs/errors.md")
