"""One file-lists type and one usage type, each with its JSON form, used by every stage."""

from __future__ import annotations

import ast
from pathlib import Path

import pipeline
from pipeline.compaction.fileops import FileOps, file_lists
from pipeline.llm.types import Completion
from pipeline.session import Cost, FileLists, Usage

PI_USAGE = {"input": 12, "output": 3, "cacheRead": 40, "cacheWrite": 5, "totalTokens": 60,
            "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0.01, "cacheWrite": 0.02, "total": 0.33}}


def test_usage_reads_and_writes_pis_json():
    usage = Usage.from_json(PI_USAGE)
    assert usage == Usage(12, 3, 40, 5, 60, Cost(0.1, 0.2, 0.01, 0.02, 0.33))
    assert usage.to_json() == PI_USAGE and list(usage.to_json()) == list(PI_USAGE)
    assert Usage.from_json("not an object") is None
    assert Usage.from_json({"input": "9", "output": True}) == Usage()  # lenient, as pi reads it


def test_usage_without_cost_writes_zero_cost_and_sums():
    assert Usage.of(1, 2, 3, 4).to_json()["cost"] == Cost().to_json()
    total = Usage.from_json(PI_USAGE) + Usage.of(1, 1)
    assert (total.total_tokens, total.cost) == (62, Cost(0.1, 0.2, 0.01, 0.02, 0.33))
    assert (Usage.of(1, 1) + Usage.of(2, 2)).cost is None


def test_file_lists_read_and_write_pis_details():
    lists = FileLists.from_json({"readFiles": ["a", 3], "modifiedFiles": ["b"]})
    assert lists == FileLists(("a",), ("b",))
    assert lists.to_json() == {"readFiles": ["a"], "modifiedFiles": ["b"]}
    assert lists.to_json("offline") == {"readFiles": ["a"], "modifiedFiles": ["b"], "producedBy": "offline"}
    assert FileLists.from_json({"readFiles": []}) is None
    ops = FileOps(read={"a": None, "b": None}, edited={"b": None})
    assert type(file_lists(ops)) is FileLists and file_lists(ops) == FileLists(("a",), ("b",))


def test_one_class_of_each_name_in_the_package():
    assert Completion.__annotations__["usage"] in ("Usage", Usage)
    root = Path(pipeline.__file__).resolve().parent
    found = [
        (path.relative_to(root).as_posix(), node.name)
        for path in root.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and node.name in ("Usage", "FileLists", "Cost")
    ]
    assert sorted(found) == [("session/entries.py", "FileLists"), ("session/messages.py", "Cost"),
                             ("session/messages.py", "Usage")]
