"""Near misses among names (section ids), found in time linear in the number of names.

Two questions, both asked by the overlay merge:

* :meth:`NearMiss.hint`: the "did you mean" for a name that does not exist. Up to
  :data:`SCAN_LIMIT` names this is :func:`pipeline.errors.did_you_mean` (difflib's
  similarity, which also finds looser matches); beyond it only names one edit away
  are offered, looked up in an index, so a profile with thousands of sections does
  not cost thousands of comparisons per problem.
* :meth:`NearMiss.typo_of`: the existing name one edit away from a new one
  (``identiy`` for ``identity``): a letter added, dropped or changed, or two
  neighbours swapped. Edits that touch only digits (``step1``/``step2``) and names
  shorter than :data:`MIN_LENGTH` are not near misses: they are usually meant.

The index maps every name with one character deleted to the names it came from
(the "symmetric delete" method): two names are one edit apart exactly when they
share such a key or one is a key of the other.
"""

from __future__ import annotations

from typing import Iterable

from pipeline.errors import did_you_mean

#: Up to this many names, hints compare the word with every name (difflib).
SCAN_LIMIT = 500
#: Shorter names are never reported as near misses of each other.
MIN_LENGTH = 4
#: Longer names are not looked for near misses (the index holds every deletion).
MAX_LENGTH = 80


class NearMiss:
    """The names to compare with, and an index of them with one character deleted."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = list(dict.fromkeys(names))
        self._known = set(self.names)
        self._short = [name for name in self.names if len(name) <= MAX_LENGTH]
        self._deletes: dict[str, list[str]] | None = None

    def hint(self, word: str) -> str | None:
        """A "did you mean `x`?" for ``word``, or None."""
        if len(self.names) <= SCAN_LIMIT:
            return did_you_mean(word, self.names)
        close = self._one_edit(word)
        return f"did you mean `{close[0]}`?" if close else None

    def typo_of(self, word: str) -> str | None:
        """The existing name ``word`` is one edit away from (a likely typo), or None."""
        if word in self._known or not MIN_LENGTH <= len(word) <= MAX_LENGTH:
            return None
        for name in self._one_edit(word):
            if len(name) >= MIN_LENGTH and not _digits_only_edit(word, name):
                return name
        return None

    def _one_edit(self, word: str) -> list[str]:
        if len(word) > MAX_LENGTH:
            return []
        index = self._index()
        found: dict[str, None] = {}
        if word in index:  # a name is `word` plus one character
            found.update(dict.fromkeys(index[word]))
        for key in _deletions(word):
            if key in self._known:  # a name is `word` minus one character
                found[key] = None
            found.update(dict.fromkeys(index.get(key, ())))  # one changed or swapped character
        found.pop(word, None)
        return [name for name in found if _one_edit_apart(word, name)]

    def _index(self) -> dict[str, list[str]]:
        if self._deletes is None:
            self._deletes = {}
            for name in self._short:
                for key in _deletions(name):
                    self._deletes.setdefault(key, []).append(name)
        return self._deletes


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _one_edit_apart(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours turns ``a`` into ``b``."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) != len(b):
        short, long = sorted((a, b), key=len)
        return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    if len(diff) == 1:
        return True
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def _digits_only_edit(a: str, b: str) -> bool:
    """Whether the characters that differ between ``a`` and ``b`` are all digits."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    changed = a[start:end_a] + b[start:end_b]
    return bool(changed) and changed.isdigit()
