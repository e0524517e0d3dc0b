"""Build a directory tree from a JSON-able spec (shared by the discovery tests and their generator).

Spec keys (all optional; paths are relative to the root, ``/``-separated):

* ``files``: ``{path: text}`` written as UTF-8 bytes, newlines untouched;
* ``bytes``: ``{path: hex}`` raw bytes;
* ``dirs``: ``[path]`` (empty) directories;
* ``symlinks``: ``{path: target}``, target relative to the root (made absolute) or
  ``"!missing"`` for a broken link.
"""

from __future__ import annotations

import os
from pathlib import Path


def build_tree(root: Path, spec: dict) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rel in spec.get("dirs", ()):
        (root / rel).mkdir(parents=True, exist_ok=True)
    for rel, text in spec.get("files", {}).items():
        _write(root / rel, text.encode("utf-8"))
    for rel, hexdata in spec.get("bytes", {}).items():
        _write(root / rel, bytes.fromhex(hexdata))
    for rel, target in spec.get("symlinks", {}).items():
        link = root / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        dest = root / "__missing__" if target == "!missing" else root / target
        os.symlink(dest, link)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def relativize(value, root: str):
    """Replace the absolute ``root`` prefix in every string of a JSON value by ``{root}``."""
    if isinstance(value, str):
        return value.replace(root, "{root}")
    if isinstance(value, list):
        return [relativize(v, root) for v in value]
    if isinstance(value, dict):
        return {k: relativize(v, root) for k, v in value.items()}
    return value
