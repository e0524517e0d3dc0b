"""A profile's chain of files, read, merged and flattened: the source stage end to end."""

from __future__ import annotations

from pathlib import Path

from pipeline.errors import Problem
from pipeline.source.chain import read_chain
from pipeline.source.merge import merge_layers
from pipeline.source.tree import SourceMap, flatten


def load_merged(path: Path, label: str) -> tuple[object, SourceMap]:
    """The merged plain data of the profile at ``path`` and where each value was set.

    Raises :class:`~pipeline.errors.PipelineError` with every problem found in the
    chain's files (syntax, duplicate keys, bad ``extends:``, bad section placement).
    """
    data, source_map, _ = load_merged_with_warnings(path, label)
    return data, source_map


def load_merged_with_warnings(path: Path, label: str) -> tuple[object, SourceMap, list[Problem]]:
    """:func:`load_merged` and the merge's warnings (a new section id that looks like a typo)."""
    layers = read_chain(path, label)
    merged = merge_layers(layers)
    data, source_map = flatten(merged.tree)
    files = tuple(layer.label for layer in layers)
    return data, SourceMap(source_map.entries, files, merged.dropped), merged.warnings
