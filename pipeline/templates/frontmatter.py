"""YAML frontmatter of Markdown files, read as pi's ``parseFrontmatter`` reads it.

1. CRLF, then lone CR, become LF.
2. Frontmatter exists only when the text starts with ``---`` and ``\\n---`` occurs later
   (searched from index 3). The YAML is the text from index 4 (in UTF-16 units, as in
   JavaScript) up to that ``\\n---``; the body is everything after those four
   characters, trimmed with JavaScript's whitespace set. Without frontmatter the body is
   the whole (normalised) text, untrimmed.
3. The YAML is parsed as pi's parser reads it (see :mod:`pipeline.js.yaml`). A document that is
   not a mapping gives no keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from pipeline.js import js_key, js_trim, load_yaml, u16slice


class FrontmatterError(ValueError):
    """The frontmatter is not valid YAML; ``line``/``col`` are 1-based, in the file."""

    def __init__(self, reason: str, line: int | None = None, col: int | None = None) -> None:
        super().__init__(reason)
        self.reason, self.line, self.col = reason, line, col


@dataclass(frozen=True)
class Frontmatter:
    """A file split into its YAML mapping (``data``; empty when absent) and its body."""

    data: Mapping[str, object] = field(default_factory=dict)
    body: str = ""
    yaml_text: str | None = None
    #: where the body starts in the (newline-normalised) file, 1-based
    body_line: int = 1
    body_col: int = 1

    def get(self, key: str) -> object:
        """The value of a frontmatter key (None when absent)."""
        return self.data.get(key)


def normalize_newlines(text: str) -> str:
    """CRLF, then lone CR, to LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(YAML text or None, body) exactly as pi's ``extractFrontmatter``."""
    normalized = normalize_newlines(text)
    if not normalized.startswith("---"):
        return None, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return None, normalized
    head = normalized[:end]
    # JavaScript slices UTF-16 units: an astral character at index 3 is cut in half.
    yaml_text = u16slice(head, 4) if not head.isascii() else head[4:]
    return yaml_text, js_trim(normalized[end + 4 :])


def parse_frontmatter(text: str) -> Frontmatter:
    """Split and parse; raises :class:`FrontmatterError` for invalid YAML."""
    yaml_text, body = split_frontmatter(text)
    line, col = _body_start(text, body, yaml_text is not None)
    if not yaml_text:
        return Frontmatter({}, body, yaml_text, line, col)
    value = _load_yaml(yaml_text, _yaml_start(text))
    data = {js_key(k): v for k, v in value.items()} if isinstance(value, dict) else {}
    return Frontmatter(data, body, yaml_text, line, col)


def _body_start(text: str, body: str, has_frontmatter: bool) -> tuple[int, int]:
    """(line, col) of the first body character in the file, for locating findings."""
    if not has_frontmatter or not body:
        return 1, 1
    normalized = normalize_newlines(text)
    rest = normalized[normalized.find("\n---", 3) + 4 :]
    start = len(normalized) - len(rest) + rest.find(body[0])  # body = rest, JS-trimmed
    prefix = normalized[:start]
    return prefix.count("\n") + 1, start - (prefix.rfind("\n") + 1) + 1


def _yaml_start(text: str) -> tuple[int, int]:
    """(line, col) in the file, 1-based, where the YAML text begins (index 4)."""
    prefix = normalize_newlines(text)[:4]
    line = prefix.count("\n") + 1
    return line, len(prefix) - (prefix.rfind("\n") + 1) + 1


def _load_yaml(yaml_text: str, start: tuple[int, int]) -> object:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return load_yaml(yaml_text)
    except MarkedYAMLError as err:
        raise _located(err, start, len(yaml_text)) from None
    except (YAMLError, ValueError, TypeError, RecursionError) as err:
        raise FrontmatterError(f"invalid YAML frontmatter: {err}", *start) from None


def _located(err, start: tuple[int, int], size: int) -> FrontmatterError:
    mark = err.problem_mark or err.context_mark
    if err.context_mark is not None and (mark is None or mark.index >= size):
        mark = err.context_mark  # "got end of stream": point at what was left open
    what = " ".join(s for s in (err.context, err.problem) if s) or "invalid YAML"
    if mark is None:
        return FrontmatterError(f"invalid YAML frontmatter: {what}", *start)
    line = start[0] + mark.line
    col = mark.column + (start[1] if mark.line == 0 else 1)
    return FrontmatterError(f"invalid YAML frontmatter: {what}", line, col)
