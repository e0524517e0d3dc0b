"""The words the context projection adds around session content.

None of them is written in Python: they come from a profile (``summary.projection`` and
``context.bash_execution``) via :meth:`ContextTexts.from_profile` (a run reads them from its
:class:`~pipeline.model.run_plan.RunPlan`, where the class is defined), or, in tests, are
given directly. Strings are parsed into :class:`~pipeline.model.text.Text` (``${var}``).
"""

from __future__ import annotations

from pipeline.model.run_plan import ContextTexts

__all__ = ["ContextTexts"]
