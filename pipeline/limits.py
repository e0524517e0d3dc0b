"""Every size limit on what the tool reads, in one place (documented in ``docs/limits.md``).

A file beyond its limit, YAML that expands beyond :data:`YAML_MAX_NODES` values or nests
deeper than :data:`YAML_MAX_DEPTH`, or a directory walk deeper than
:data:`WALK_MAX_DEPTH` ends in a located problem, never in a hang or a ``MemoryError``.
This module imports nothing of the project; :mod:`pipeline.files` applies the file limits.
"""

from __future__ import annotations

import re
import sys

MiB = 1 << 20

#: Largest file of each kind, in bytes.
FILE_LIMITS: dict[str, int] = {
    "profile": 1 * MiB,  # a profile or an `extends:` target
    "scenario": 16 * MiB,  # may hold whole context files
    "template": 1 * MiB,  # a prompt template (`.md`)
    "skill": 1 * MiB,  # a SKILL.md (or a loose skill `.md`)
    "ignore file": 1 * MiB,  # .gitignore / .ignore / .fdignore of a prompts directory
    "context file": 16 * MiB,  # AGENTS.md, CLAUDE.md, --context-file
    "prompt file": 16 * MiB,  # SYSTEM.md, APPEND_SYSTEM.md, --custom-prompt, --append
    "stdin": 16 * MiB,  # `pipeline expand -`
    "session file": 1024 * MiB,  # a pi session file; read as a stream, line by line
    "settings file": 1 * MiB,  # a settings.json `pipeline import` reads or `pipeline export` edits
    "exported file": 16 * MiB,  # a file `pipeline export` wrote, read back to compare (larger: edited)
    "pre-commit config": 1 * MiB,  # the .pre-commit-config.yaml `pipeline init` adds its hook to
    "tool file": 16 * MiB,  # a file the runtime's built-in tools read or edit (read, grep, edit)
    "pinned file": 1 * MiB,  # a file `compaction.pins.files` names; it goes into every summary
    "export manifest": 1 * MiB,  # context-pipeline-export.json, read back to recognise an export's copies
    "session file in an archive": 1024 * MiB,  # a member `pipeline replay` reads whole (a directory, tar or zip)
}
#: Longest single line of a session file (one entry), in bytes.
SESSION_MAX_LINE = 256 * MiB
#: Most values a YAML document (profile, scenario, frontmatter) may hold once aliases are
#: expanded (stops "billion laughs").
YAML_MAX_NODES = 100_000
#: Deepest nesting of YAML mappings and lists.
YAML_MAX_DEPTH = 64
#: Deepest nesting of JSON objects and lists in a file `pipeline export` edits or `pipeline
#: import` reads (settings files, the export's manifest and compiled profile.json).
JSON_MAX_DEPTH = 64
#: Deepest nesting of TOML arrays and inline tables in a file the tool reads (Codex's
#: config.toml, pyproject.toml, .context-pipeline.toml, a Gemini CLI command), checked on
#: the text before a parser recurses into it.
TOML_MAX_DEPTH = 64
#: Deepest directory level a skills walk descends to.
WALK_MAX_DEPTH = 64


def yaml_excess(value: object) -> str | None:
    """Why a loaded YAML value is beyond the limits (``None`` when it is within them).

    Counts values as they would be after expanding aliases (a value reached twice counts
    twice) without expanding anything: each distinct list or mapping is sized once. A
    value that contains itself (a recursive alias) is refused too.
    """
    sizes: dict[int, int] = {}
    active: set[int] = set()
    try:
        total = _size(value, 1, sizes, active)
    except _Excess as stop:
        return str(stop)
    if total > YAML_MAX_NODES:
        return f"too many values once aliases are expanded (more than {YAML_MAX_NODES})"
    return None


class _Excess(Exception):
    pass


def _size(value: object, depth: int, sizes: dict[int, int], active: set[int]) -> int:
    if not isinstance(value, (dict, list, tuple, set)):
        return 1
    if depth > YAML_MAX_DEPTH:
        raise _Excess(f"nested too deeply (more than {YAML_MAX_DEPTH} levels)")
    key = id(value)
    if key in sizes:
        return sizes[key]
    if key in active:
        raise _Excess("an alias refers to a value that contains it")
    active.add(key)
    children = [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)
    total = 1
    for child in children:
        total += _size(child, depth + 1, sizes, active)
        if total > YAML_MAX_NODES:
            raise _Excess(f"too many values once aliases are expanded (more than {YAML_MAX_NODES})")
    active.discard(key)
    sizes[key] = total
    return total


#: where scanning TOML text stops to look: a string's start, a comment, a bracket or brace
_TOML_TOKEN = re.compile("\"\"\"|'''|[\"'#\\[\\]{}]")
#: the rest of each kind of string or comment, up to its end
_TOML_REST = {
    '"""': re.compile(r'(?:[^"\\]|\\.|"(?!""))*""""{0,2}', re.S),
    "'''": re.compile(r"(?:.*?)''''{0,2}", re.S),
    '"': re.compile(r'(?:[^"\\\n]|\\.)*"'),
    "'": re.compile(r"[^'\n]*'"),
    "#": re.compile(r"[^\n]*"),
}


def toml_excess(text: str) -> tuple[str, int, int] | None:
    """Why TOML ``text`` nests arrays and inline tables deeper than :data:`TOML_MAX_DEPTH`,
    with the line and column where it does (``None`` when it does not). Read on the text,
    so a parser never recurses into it (Python's tomllib does, to a RecursionError)."""
    depth, pos = 0, 0
    while True:
        found = _TOML_TOKEN.search(text, pos)
        if found is None:
            return None
        token, pos = found.group(), found.end()
        if token in "[{":
            depth += 1
            if depth > TOML_MAX_DEPTH:
                start = found.start()
                return (f"nested too deeply (more than {TOML_MAX_DEPTH} levels, see docs/limits.md)",
                        text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start))
        elif token in "]}":
            depth = max(0, depth - 1)
        else:
            rest = _TOML_REST[token].match(text, pos)
            end = text.find("\n", pos) if rest is None and token in "\"'" else -1
            pos = rest.end() if rest is not None else (end if end >= 0 else len(text))


def toml_loads(text: str) -> dict:
    """``tomllib.loads(text)`` within :data:`TOML_MAX_DEPTH`: deeper nesting raises the
    ``ValueError`` tomllib raises for bad TOML, its place written as tomllib writes it
    (``... (at line L, column C)``), so every reader's handling of bad TOML applies."""
    excess = toml_excess(text)
    if excess is not None:
        message, line, col = excess
        raise ValueError(f"{message} (at line {line}, column {col})")
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found]
    return tomllib.loads(text)
