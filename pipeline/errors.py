"""One error type for everything a user can get wrong, with a location.

A :class:`Problem` says where (``file:line:col``), which key, what is wrong and, when
one is obvious, a hint; its ``code`` is one of :data:`pipeline.codes.CODES` (each
documented in ``docs/errors.md``). A :class:`PipelineError` carries one or more problems,
so a whole file's mistakes are reported in one run. Its subclasses name the domain
(:class:`ProfileError`, :class:`TemplateError`, :class:`SessionError`,
:class:`ProviderError`, :class:`UsageError`) and the exit code the CLI returns
(:data:`EXIT_CODES`); nothing a user can cause ends in a traceback.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Literal

from pipeline.codes import check_code

#: The exit-code table every command keeps to (``pipeline diff`` uses 1 for "different").
EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_PROVIDER, EXIT_OUTPUT = 0, 1, 2, 3, 4
EXIT_CODES = {
    EXIT_OK: "ok",
    EXIT_INVALID: "invalid input (a bad or missing file included)",
    EXIT_USAGE: "usage (unknown or conflicting flags)",
    EXIT_PROVIDER: "provider or network failure (an LLM call failed; a compaction writes nothing, a run keeps what it wrote before the failure)",
    EXIT_OUTPUT: "the output could not be written (a full disk; a closed pipe ends quietly with 141)",
}

#: ``error`` makes input invalid; ``warning`` is suspicious (fails only ``validate --strict``);
#: ``info`` is a remark that never fails anything (``validate`` shows it with ``--verbose``).
Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Location:
    """A place in a file; ``line`` and ``col`` are 1-based, either may be unknown."""

    file: str | None = None
    line: int | None = None
    col: int | None = None

    def __str__(self) -> str:
        parts = [self.file or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or suspicious) in user input."""

    message: str
    location: Location | None = None
    key: str | None = None
    hint: str | None = None
    severity: Severity = "error"
    code: str | None = None

    def __post_init__(self) -> None:
        check_code(self.code)

    def __str__(self) -> str:
        head = f"{self.location}: " if self.location else ""
        key = f"{self.key}: " if self.key else ""
        tail = f" ({self.hint})" if self.hint else ""
        label = "" if self.severity == "error" else f"{self.severity}: "
        return f"{head}{label}{key}{self.message}{tail}"

    def at(self, location: Location) -> "Problem":
        return replace(self, location=location)

    def to_json(self) -> dict[str, Any]:
        loc = self.location or Location()
        return {
            "severity": self.severity,
            "file": loc.file,
            "line": loc.line,
            "col": loc.col,
            "key": self.key,
            "message": self.message,
            "hint": self.hint,
            "code": self.code,
        }


@dataclass
class PipelineError(Exception):
    """Raised for input a user can fix; carries every problem found."""

    #: what the CLI exits with when this error ends a command
    exit_code = EXIT_INVALID
    problems: tuple[Problem, ...] = field(default_factory=tuple)

    def __init__(self, problems: Problem | str | Iterable[Problem], **kwargs: Any) -> None:
        if isinstance(problems, str):
            problems = (Problem(problems, **kwargs),)
        elif isinstance(problems, Problem):
            problems = (problems,)
        self.problems = tuple(problems)
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)

    def __hash__(self) -> int:  # exceptions must stay hashable for tracebacks
        return id(self)


class UsageError(PipelineError):
    """The command line itself is wrong (exit code 2)."""

    exit_code = EXIT_USAGE


class ProfileError(PipelineError):
    """A profile (or scenario) file cannot be read, merged, validated or compiled."""


class TemplateError(PipelineError):
    """A prompt template cannot be read or used."""


class SessionError(PipelineError):
    """A session file cannot be read, or cannot take the requested change."""


class ProviderError(PipelineError):
    """A call to an LLM provider failed (network, HTTP status, unusable answer): exit 3."""

    exit_code = EXIT_PROVIDER


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """A "did you mean `x`?" hint for the closest choice, or None."""
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean `{match[0]}`?" if match else None
