"""Our loader and projection against pi 0.84.0 (vectors from ``tests/data/sessions/gen_vectors.py``).

Every file under ``tests/data/sessions`` — pi's own agent sessions, sessions pi's
``SessionManager`` built, hand-made damaged/odd/old-format files and files our store
wrote — was loaded by pi; we must see the same entries, leaf, branch and name, and
project the same context for every recorded leaf (pi's sentences masked).
"""

from __future__ import annotations

import json

import pytest

from pipeline.js import js_json
from pipeline.session import (
    LAST,
    SessionFile,
    build_context,
    build_context_entries,
    convert_to_llm,
    parse_message,
)

from .conftest import DATA, mask_texts, session_files, vectors


def _case_id(case: dict) -> str:
    leaf = case.get("leafId", "default") if "leafId" in case else "default"
    return f"{case['file']}@{leaf}"


CONTEXT_CASES = vectors("context")["cases"]


@pytest.fixture(scope="module")
def opened() -> dict[str, SessionFile]:
    return {name: SessionFile.open(DATA / name) for name in session_files()}


@pytest.mark.parametrize("case", CONTEXT_CASES, ids=[_case_id(c) for c in CONTEXT_CASES])
def test_context_equals_pi(case: dict, opened: dict[str, SessionFile]) -> None:
    table = vectors("context")["messages"]
    session = opened[case["file"]]
    leaf = case["leafId"] if "leafId" in case else LAST
    got = build_context(session, mask_texts(), leaf).to_json()
    assert [js_json(m) for m in got["messages"]] == [js_json(table[i]) for i in case["messages"]]
    assert [js_json(m) for m in got["agentMessages"]] == [js_json(table[i]) for i in case["agentMessages"]]
    assert got.get("thinkingLevel") == case.get("thinkingLevel")
    assert got.get("model") == case.get("model")


@pytest.mark.parametrize(
    "case", [c for c in CONTEXT_CASES if c["contextEntryIds"] is not None],
    ids=[_case_id(c) for c in CONTEXT_CASES if c["contextEntryIds"] is not None],
)
def test_context_entries_equal_pi(case: dict, opened: dict[str, SessionFile]) -> None:
    leaf = case["leafId"] if "leafId" in case else LAST
    assert [e.id for e in build_context_entries(opened[case["file"]].tree, leaf)] == case["contextEntryIds"]


@pytest.mark.parametrize("name", session_files())
def test_open_equals_pi(name: str, opened: dict[str, SessionFile]) -> None:
    expected, session = vectors("open")[name], opened[name]
    assert session.header.raw == expected["header"]
    assert [e.raw.get("type") for e in session.entries] == expected["entryTypes"]
    assert _structure(session) == expected["structure"]
    assert len(session.path_to(session.leaf_id)) == expected["branchLength"]
    assert session.name == expected["name"]
    if expected["entryIds"] is not None:
        assert [e.id for e in session.entries] == expected["entryIds"]
        assert session.leaf_id == expected["leafId"]
        assert [e.id for e in session.path_to(session.leaf_id)] == expected["branch"]


@pytest.mark.parametrize("version", ["2", " 2 ", [2], "0x2"])
def test_header_version_is_read_as_javascript_reads_a_number(version, tmp_path):
    """pi compares the header's version with numbers, so these are all a version-2 file
    (checked with the oracle: pi's context for each equals its context for ``2``)."""
    lines = (DATA / "edge" / "v2.jsonl").read_text(encoding="utf-8").splitlines()
    header = {**json.loads(lines[0]), "version": version}
    path = tmp_path / "v2-variant.jsonl"
    path.write_text("\n".join([js_json(header), *lines[1:]]) + "\n", encoding="utf-8")
    [case] = [c for c in CONTEXT_CASES if c["file"] == "edge/v2.jsonl" and "leafId" not in c]
    table = vectors("context")["messages"]
    session = SessionFile.open(path)
    got = build_context(session, mask_texts()).to_json()
    assert session.migrated_from == version
    assert [js_json(m) for m in got["agentMessages"]] == [js_json(table[i]) for i in case["agentMessages"]]


def _structure(session: SessionFile) -> list[list]:
    index = {e.id: i for i, e in enumerate(session.entries)}
    return [[index.get(e.raw.get("parentId")), index.get(e.raw.get("firstKeptEntryId"))] for e in session.entries]


def _current_format(name: str) -> bool:
    return SessionFile.open(DATA / name).migrated_from is None


@pytest.mark.parametrize("name", [n for n in session_files() if _current_format(n)])
def test_entries_round_trip_byte_exact(name: str, opened: dict[str, SessionFile]) -> None:
    """Each entry written back with js_json is the line pi wrote (or we wrote), byte for byte."""
    lines = (DATA / name).read_text(encoding="utf-8").split("\n")
    for entry in opened[name].entries:
        assert js_json(entry.raw) == lines[entry.line - 1]


def test_v1_migration_matches_pi(opened: dict[str, SessionFile]) -> None:
    """pi's migrated entries (with random ids) equal ours once ids are replaced by positions."""
    expected = vectors("open")["edge/v1.jsonl"]["migratedEntries"]
    session = opened["edge/v1.jsonl"]
    assert session.migrated_from == 1
    assert [_without_ids(e.raw) for e in session.entries] == [_without_ids(e) for e in expected]
    assert [e.raw.get("type") for e in session.entries] == [e["type"] for e in expected]
    assert session.header.version == 3


def _without_ids(raw: dict) -> str:
    return js_json({k: v for k, v in raw.items() if k not in ("id", "parentId", "firstKeptEntryId")})


CONVERT_CASES = vectors("convert")["cases"]


@pytest.mark.parametrize("case", CONVERT_CASES, ids=[str(i) for i in range(len(CONVERT_CASES))])
def test_convert_to_llm_equals_pi(case: dict) -> None:
    messages = [parse_message(m) for m in case["messages"]]
    got = convert_to_llm(messages, mask_texts())
    assert [js_json(m.raw) for m in got] == [js_json(m) for m in case["expected"]]
