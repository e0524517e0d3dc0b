"""A syrupy extension that stores each snapshot as one readable UTF-8 text file.

``__snapshots__/<test file>/<test name>[<case>].txt`` holds the exact text, byte for
byte: newlines are never translated (a prompt may contain ``\\r``), nothing is quoted
or indented. Needs syrupy (``pip install context-pipeline[test]``).
"""

from __future__ import annotations

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class TextSnapshotExtension(SingleFileSnapshotExtension):
    """One ``.txt`` file per snapshot, text mode, UTF-8, newlines untouched."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"  # syrupy >= 4.7
    _file_extension = "txt"  # older syrupy

    def read_snapshot_data_from_location(self, *, snapshot_location: str, snapshot_name: str, session_id: str):
        try:
            with open(snapshot_location, "r", encoding="utf-8", newline="") as handle:
                return handle.read()
        except FileNotFoundError:
            return None

    @classmethod
    def write_snapshot_collection(cls, *, snapshot_collection, name_order=None) -> None:
        data = next(iter(snapshot_collection)).data
        if not isinstance(data, str):
            raise TypeError(f"text snapshots hold str, got {type(data).__name__}")
        with open(snapshot_collection.location, "w", encoding="utf-8", newline="") as handle:
            handle.write(data)
