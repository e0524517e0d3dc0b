"""`pipeline session migrate SRC DEST`: a version-3 copy of an old session, SRC never written."""

from __future__ import annotations

import json

from pipeline.cli import main
from pipeline.js import js_json
from pipeline.session import SessionFile, build_context

from .conftest import mask_texts, vectors


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _without_ids(raw: dict) -> str:
    return js_json({k: v for k, v in raw.items() if k not in ("id", "parentId", "firstKeptEntryId")})


def test_v1_copy_is_version_3_and_appendable(capsys, copy_session, tmp_path):
    source = copy_session("edge/v1.jsonl")
    original = source.read_bytes()
    dest = tmp_path / "v3.jsonl"
    code, out, err = _run(capsys, "session", "migrate", str(source), str(dest))
    assert code == 0 and source.read_bytes() == original
    copy = SessionFile.open(dest)
    assert out.strip() == f"wrote {dest}: {len(copy.entries)} entries, leaf {copy.leaf_id} (migrated from version 1)"
    assert "migrated to 3 in memory" not in err  # migrate writes the copy: no "in memory" notice
    assert copy.migrated_from is None and json.loads(dest.read_text().splitlines()[0])["version"] == 3
    expected = vectors("open")["edge/v1.jsonl"]["migratedEntries"]  # pi's own migration (ids drawn at random)
    assert [_without_ids(e.raw) for e in copy.entries] == [_without_ids(e) for e in expected]
    assert all(b.parent_id == a.id for a, b in zip(copy.entries, copy.entries[1:]))  # the ids stay put now
    copy.append_message({"role": "user", "content": "continued", "timestamp": 1})
    assert SessionFile.open(dest).entries[-1].message.content == "continued"


def test_v2_copy_projects_what_pi_projects_for_the_original(capsys, copy_session, tmp_path):
    source = copy_session("edge/v2.jsonl")
    dest = tmp_path / "v3.jsonl"
    assert _run(capsys, "session", "migrate", str(source), str(dest))[0] == 0
    [case] = [c for c in vectors("context")["cases"] if c["file"] == "edge/v2.jsonl" and "leafId" not in c]
    table = vectors("context")["messages"]
    got = build_context(SessionFile.open(dest), mask_texts()).to_json()
    assert got["agentMessages"] == [table[i] for i in case["agentMessages"]]
    assert [e.id for e in SessionFile.open(dest).entries] == [e.id for e in SessionFile.open(source).entries]


def test_an_existing_destination_needs_force(capsys, copy_session, tmp_path):
    source = copy_session("edge/v2.jsonl")
    dest = tmp_path / "taken.jsonl"
    dest.write_text("keep me\n")
    code, out, err = _run(capsys, "session", "migrate", str(source), str(dest))
    assert (code, out) == (1, "") and dest.read_text() == "keep me\n"
    assert err.splitlines()[-1] == f"{dest}: file already exists (--force replaces it)"
    code, out, _ = _run(capsys, "session", "migrate", str(source), str(dest), "--force")
    assert code == 0 and SessionFile.open(dest).header.version == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken.jsonl", "v2.jsonl"]  # no temporary file left


def test_the_source_is_never_the_destination(capsys, copy_session, tmp_path):
    source = copy_session("edge/v2.jsonl")
    original = source.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    for dest in (source, link):
        code, _, err = _run(capsys, "session", "migrate", str(source), str(dest), "--force")
        assert code == 1 and "the copy cannot replace the file it is copied from" in err
    assert source.read_bytes() == original and link.is_symlink()


def test_damaged_lines_are_reported_and_not_copied(capsys, copy_session, tmp_path):
    source = copy_session("edge/lines.jsonl")
    dest = tmp_path / "copy.jsonl"
    code, out, err = _run(capsys, "session", "migrate", str(source), str(dest))
    copy = SessionFile.open(dest)
    assert code == 0 and "(already version 3)" in out and copy.problems == []
    assert f"{source}:11: warning: torn last line" in err and f"6 line(s) of {source} were not copied" in err
    assert [e.raw for e in copy.entries] == [e.raw for e in SessionFile.open(source).entries]


def test_unwritable_destination_is_one_line(capsys, copy_session, tmp_path):
    source = copy_session("edge/v2.jsonl")
    code, out, err = _run(capsys, "session", "migrate", str(source), str(tmp_path / "no" / "dir.jsonl"))
    assert (code, out) == (1, "") and err.splitlines()[-1].endswith("cannot create: No such file or directory")


def test_old_files_point_at_migrate(capsys, copy_session):
    """Appending to (or compacting) a v1/v2 file is refused with the way out."""
    source = copy_session("edge/v2.jsonl")
    original = source.read_bytes()
    code, _, err = _run(capsys, "compact", str(source), "--keep-recent", "0")
    assert code == 1 and source.read_bytes() == original
    assert err.splitlines()[-1] == (
        f"{source}: cannot add entries to a version-2 session file "
        "(write a version-3 copy with `pipeline session migrate FILE COPY` and compact that)")
