"""The argument languages of other tools' command files, as those tools expand them.

pi's language is :mod:`pipeline.templates.grammar` (``grammar/template_args.lark``);
these are the others, each one regular expression and one pass, as the tools do it:

* **Claude Code** (observed on Claude Code 2.1.328, ``tests/agents/test_claude_code_arguments.py``):
  ``$ARGUMENTS`` is the argument string as typed; ``$ARGUMENTS[N]`` and ``$N`` are the
  N-th argument counted from **0** (split shell-style, quotes removed); ``$N`` followed by a
  letter, digit or ``_`` (``$1x``) is not a placeholder. A placeholder whose argument is
  not given **stays as written** (``$2`` with two arguments is ``$2``). When no
  placeholder was replaced and arguments are given, ``\\n\\nARGUMENTS: <arguments>`` is
  appended.
* **opencode**: ``$N`` counts from 1, and the highest ``$N`` of the body takes every
  argument from N on; ``$ARGUMENTS`` is the string as typed (replaced after the
  positions). With neither and arguments given, they are appended after a blank line.
* **Codex**: ``$1``..``$9`` (one digit) count from 1, ``$ARGUMENTS`` joins the arguments,
  ``$$`` is one ``$``, ``$NAME`` takes the value of a ``NAME=value`` argument (left as
  written when none is given).
* **Gemini CLI**: ``{{args}}`` is the argument string as typed; without it, arguments
  given are appended after a blank line as the whole typed command (``/name args``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..invoke import parse_args

if TYPE_CHECKING:  # analysis (and the language's scanner) is imported when an arity is asked for
    from ..analysis import Arity


@dataclass(frozen=True)
class Language:
    """One dialect's placeholders: how a body is expanded and which positions it reads."""

    name: str
    expand: Callable[[str, str, str], str]  # (body, args_text, typed command) -> text
    arity: Callable[[str], Arity]
    #: (body, position counted from 1 as in :class:`Arity`) -> the placeholder as the body writes it
    placeholder: Callable[[str, int], str] = lambda body, position: f"${position}"
    missing: str = "a missing argument expands to nothing"  # what a placeholder without its argument becomes


# --- Claude Code -------------------------------------------------------------------------

_CLAUDE = re.compile(r"\$ARGUMENTS\[([0-9]+)\]|\$([0-9]+)(?![A-Za-z0-9_])|\$ARGUMENTS")


def _claude_expand(body: str, args_text: str, typed: str) -> str:
    args = parse_args(args_text)
    used = False

    def one(m: re.Match) -> str:
        nonlocal used
        if m.group(0) == "$ARGUMENTS":
            used = True
            return args_text
        i = int(m.group(1) or m.group(2))
        if i >= len(args):
            return m.group(0)  # not given: Claude Code leaves the placeholder as written
        used = True
        return args[i]

    out = _CLAUDE.sub(one, body)
    return out + "\n\nARGUMENTS: " + args_text if not used and args_text else out


def _claude_arity(body: str) -> Arity:
    from ..analysis import Arity

    found = list(_CLAUDE.finditer(body))
    positions = sorted({int(m.group(1) or m.group(2)) + 1 for m in found if m.group(0) != "$ARGUMENTS"})
    rest = any(m.group(0) == "$ARGUMENTS" for m in found)
    return Arity(tuple(p for p in positions if p <= 64), (), 1 if rest else None)


def _claude_placeholder(body: str, position: int) -> str:
    """How the body writes the argument at ``position`` (counted from 1): ``$1`` or ``$ARGUMENTS[1]`` for the second."""
    for m in _CLAUDE.finditer(body):
        if m.group(0) != "$ARGUMENTS" and int(m.group(1) or m.group(2)) + 1 == position:
            return m.group(0)
    return f"${position - 1}"


# --- opencode ----------------------------------------------------------------------------

_OPENCODE_ARG = re.compile(r"""\[Image\s+\d+\]|"[^"]*"|'[^']*'|[^\s"']+""")
_OPENCODE_POS = re.compile(r"\$(\d+)")


def opencode_args(text: str) -> list[str]:
    """opencode's argument split: quoted runs or words, one quote trimmed at each end."""
    return [re.sub(r"^[\"']|[\"']$", "", m) for m in _OPENCODE_ARG.findall(text)]


def _opencode_expand(body: str, args_text: str, typed: str) -> str:
    args = opencode_args(args_text)
    numbers = [int(n) for n in _OPENCODE_POS.findall(body)]
    last = max(numbers, default=0)

    def one(m: re.Match) -> str:
        position = int(m.group(1))
        i = position - 1
        if i >= len(args) or i < 0:
            return ""
        return " ".join(args[i:]) if position == last else args[i]

    out = _OPENCODE_POS.sub(one, body)
    uses_all = "$ARGUMENTS" in body
    out = out.replace("$ARGUMENTS", args_text)
    if not numbers and not uses_all and args_text.strip():
        out += "\n\n" + args_text
    return out


def _opencode_arity(body: str) -> Arity:
    from ..analysis import Arity

    numbers = sorted({int(n) for n in _OPENCODE_POS.findall(body) if 0 < int(n) <= 64})
    last = numbers[-1] if numbers else None
    rest = "$ARGUMENTS" in body
    return Arity(tuple(numbers), (), last if last is not None else (1 if rest else None))


# --- Codex -------------------------------------------------------------------------------

_CODEX = re.compile(r"\$\$|\$([1-9])|\$ARGUMENTS|\$([A-Z][A-Z0-9_]*)")
_NAMED_ARG = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)


def _codex_expand(body: str, args_text: str, typed: str) -> str:
    args = parse_args(args_text)
    named = {m.group(1).upper(): m.group(2) for m in map(_NAMED_ARG.fullmatch, args) if m}
    positional = [a for a in args if not _NAMED_ARG.fullmatch(a)]

    def one(m: re.Match) -> str:
        text = m.group(0)
        if text == "$$":
            return "$"
        if text == "$ARGUMENTS":
            return " ".join(positional)
        if m.group(1):
            i = int(m.group(1)) - 1
            return positional[i] if i < len(positional) else ""
        return named.get(m.group(2), text)

    return _CODEX.sub(one, body)


def _codex_arity(body: str) -> Arity:
    from ..analysis import Arity

    found = list(_CODEX.finditer(body))
    positions = sorted({int(m.group(1)) for m in found if m.group(1)})
    rest = any(m.group(0) == "$ARGUMENTS" for m in found)
    return Arity(tuple(positions), (), 1 if rest else None)


# --- Gemini CLI --------------------------------------------------------------------------

GEMINI_ARGS = "{{args}}"


def _gemini_expand(body: str, args_text: str, typed: str) -> str:
    if GEMINI_ARGS in body:
        return body.replace(GEMINI_ARGS, args_text)
    return body + "\n\n" + typed if args_text else body


def _gemini_arity(body: str) -> Arity:
    from ..analysis import Arity

    return Arity((), (), 1 if GEMINI_ARGS in body else None)


CLAUDE = Language("claude-code", _claude_expand, _claude_arity, _claude_placeholder,
                  "Claude Code counts arguments from $0 and leaves a placeholder whose argument is not given as written")
OPENCODE = Language("opencode", _opencode_expand, _opencode_arity)
CODEX = Language("codex", _codex_expand, _codex_arity)
GEMINI = Language("gemini", _gemini_expand, _gemini_arity)
