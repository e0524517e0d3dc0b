"""source stage: profile files -> one merged, positioned tree.

* :mod:`~pipeline.source.reader`: one file -> positioned tree (safe, located errors);
* :mod:`~pipeline.source.chain`: following ``extends:`` (paths, ``builtin:NAME``, cycles);
* :mod:`~pipeline.source.merge`: the overlay rules (deep merge, sections by id);
* :mod:`~pipeline.source.tree`: the tree, :func:`flatten` and the :class:`SourceMap`;
* :mod:`~pipeline.source.locate`: key paths by section id, ``${var}`` positions.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.lazy import lazy_attributes

#: Each name, by the module that defines it: imported on first use, so reading a compiled
#: profile back (its :class:`SourceMap`) imports neither the reader nor the chain.
_MODULES = {
    **dict.fromkeys(("BUILTIN", "builtin_names", "builtin_of", "read_chain", "shown_file", "shown_location"), "chain"),
    "merge_layers": "merge",
    "parse": "reader",
    **dict.fromkeys(("SourceEntry", "SourceMap", "Span", "flatten"), "tree"),
    "display_path": "pipeline.resources",
}


__getattr__ = lazy_attributes(__name__, globals(), _MODULES)


if TYPE_CHECKING:  # the names as the type checker and editors see them
    from pipeline.errors import Problem
    from pipeline.resources import display_path
    from pipeline.source.chain import BUILTIN, builtin_names, builtin_of, read_chain, shown_file, shown_location
    from pipeline.source.merge import merge_layers
    from pipeline.source.reader import parse
    from pipeline.source.tree import SourceEntry, SourceMap, Span, flatten


def load_merged(path: Path, label: str) -> tuple[object, SourceMap]:
    """The merged plain data of the profile at ``path`` and where each value was set.

    Raises :class:`~pipeline.errors.PipelineError` with every problem found in the
    chain's files (syntax, duplicate keys, bad ``extends:``, bad section placement).
    """
    data, source_map, _ = load_merged_with_warnings(path, label)
    return data, source_map


def load_merged_with_warnings(path: Path, label: str) -> tuple[object, SourceMap, list[Problem]]:
    """:func:`load_merged` and the merge's warnings (a new section id that looks like a typo)."""
    from pipeline.source.chain import read_chain
    from pipeline.source.merge import merge_layers
    from pipeline.source.tree import SourceMap, flatten

    layers = read_chain(path, label)
    merged = merge_layers(layers)
    data, source_map = flatten(merged.tree)
    files = tuple(layer.label for layer in layers)
    return data, SourceMap(source_map.entries, files, merged.dropped), merged.warnings


__all__ = [
    "BUILTIN",
    "SourceEntry",
    "SourceMap",
    "Span",
    "builtin_names",
    "builtin_of",
    "display_path",
    "flatten",
    "load_merged",
    "load_merged_with_warnings",
    "parse",
    "shown_file",
    "shown_location",
]
