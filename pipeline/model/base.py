"""What every profile model shares: the strict, frozen base class, a frozen mapping, and
the upper bounds of numbers (docs/profile.md, "Numbers")."""

from __future__ import annotations

from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict

#: Upper bounds of numbers (docs/profile.md, "Numbers"): far above any real model, low
#: enough that a stray digit is caught and every value stays exact in JSON (pi reads
#: numbers as JavaScript doubles).
MAX_TOKENS = 100_000_000  # token counts and windows
MAX_CHARS = 1_000_000_000  # character counts
MAX_COUNT = 10_000  # retries, items
MAX_CHARS_PER_TOKEN = 1_000
MAX_DELAY_MS = 3_600_000  # one hour
MAX_TIMEOUT_S = 86_400.0  # one day

#: Keys an overlay's section may carry that never reach the merged profile (docs/profile.md).
SECTION_DIRECTIVES = ("remove", "replace", "before", "after")
#: The suffix of an overlay key that adds to the inherited list (``rules+``) instead of replacing it.
APPEND = "+"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class FrozenDict(dict):
    """A dict that refuses changes: the one mapping a frozen profile holds stays frozen.

    It is still a ``dict`` (pydantic serializes it as one); copies and pickles rebuild it.
    """

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("this mapping belongs to a frozen profile and cannot be changed")

    __setitem__ = __delitem__ = __ior__ = _refuse  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> "FrozenDict":
        return self

    def __deepcopy__(self, memo: dict) -> "FrozenDict":
        from copy import deepcopy

        return FrozenDict({key: deepcopy(value, memo) for key, value in self.items()})
