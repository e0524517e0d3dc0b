"""The words the context projection adds around session content.

None of them is written in Python: they come from a profile (``summary.projection`` and
``context.bash_execution``) via :meth:`ContextTexts.from_profile`, or, in tests, are
given directly. Strings are parsed into :class:`~pipeline.model.text.Text` (``${var}``).

Variables: ``bash_ran`` → ``command``; ``bash_output`` → ``output``; ``bash_exit_code``
→ ``code``; ``bash_truncated`` → ``path``; the others take none.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from pipeline.model.text import Text


@dataclass(frozen=True)
class ContextTexts:
    """Summary wrappers and the rendering of a user's shell command, as one value."""

    compaction_open: Text
    compaction_close: Text
    branch_open: Text
    branch_close: Text
    bash_ran: Text
    bash_output: Text
    bash_no_output: Text
    bash_cancelled: Text
    bash_exit_code: Text
    bash_truncated: Text

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, Text):
                object.__setattr__(self, f.name, Text(value))

    @classmethod
    def from_profile(cls, profile: Any) -> "ContextTexts":
        """The texts of a compiled profile (:class:`pipeline.model.profile.Profile`)."""
        projection, bash = profile.summary.projection, profile.context.bash_execution
        return cls(
            compaction_open=projection.compaction.open,
            compaction_close=projection.compaction.close,
            branch_open=projection.branch.open,
            branch_close=projection.branch.close,
            bash_ran=bash.ran,
            bash_output=bash.output,
            bash_no_output=bash.no_output,
            bash_cancelled=bash.cancelled,
            bash_exit_code=bash.exit_code,
            bash_truncated=bash.truncated,
        )
