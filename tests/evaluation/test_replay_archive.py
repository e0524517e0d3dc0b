"""``pipeline replay``: 1,000 generated sessions from a tar, in parallel, with a progress bar and a table."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.cli import main
from pipeline.evaluation.generate import generate, write_corpus
from pipeline.evaluation.replay import Refused, archive_members, replay_messages
from pipeline.session import SessionFile
from pipeline.session.projection import build_session_context

SMALL = "extends: builtin:default\nname: small\ncompaction: {reserve_tokens: 2000, keep_recent_tokens: 1000}\n"
LEAN = ("extends: builtin:default\nname: lean\ncompaction: {reserve_tokens: 2000, keep_recent_tokens: 1000,"
        " strategy: hybrid, trigger: {percent_of_window: 50}}\n")


@pytest.fixture
def profiles(tmp_path):
    (tmp_path / "p.yaml").write_text(SMALL, encoding="utf-8")
    (tmp_path / "q.yaml").write_text(LEAN, encoding="utf-8")
    return tmp_path / "p.yaml", tmp_path / "q.yaml"


def _tar(folder: Path, count: int, out: Path) -> Path:
    """A tar.gz of ``count`` tiny generated sessions, written member by member."""
    with tarfile.open(out, "w:gz") as tf:
        for i in range(count):
            g = generate(i, segments=1, turns=4, result_chars=3000)
            data = ("\n".join([g.header, *g.segments[0]]) + "\n").encode()
            info = tarfile.TarInfo(f"archive/s{i:04d}.jsonl")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("archive/broken.jsonl")
        info.size = 5
        tf.addfile(info, io.BytesIO(b"nope\n"))
    return out


def test_replay_of_1000_sessions_with_progress_and_table(tmp_path, profiles, capsys):
    archive = _tar(tmp_path, 1000, tmp_path / "sessions.tar.gz")
    code = main(["replay", str(archive), "--profile", str(profiles[0]), "--vs", str(profiles[1]),
                 "--window", "4000", "--progress"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "replaying 1001 sessions" in err and err.endswith("\n")  # a tar stream is not counted ahead
    rows = {line[:25].strip(): line[25:].split() for line in out.splitlines()[2:]}
    assert rows["sessions"] == ["1001", "1001", "+0"]
    assert rows["unreadable files"] == ["1", "1", "+0"]
    small, lean = int(rows["compactions"][0]), int(rows["compactions"][1])
    assert small >= 1000 and 0 < lean < small  # masking first leaves fewer compactions
    assert rows["compactions"][2] == str(lean - small)
    assert rows["summary budget (mean)"][0] == "1600"


def test_replay_json_matches_one_session_replayed_directly(tmp_path, profiles, capsys):
    folder = tmp_path / "dir"
    paths = write_corpus(folder, 3, segments=2, turns=6, result_chars=3000)
    assert main(["replay", str(folder), "--profile", str(profiles[0]), "--window", "8000", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["profiles"][str(profiles[0])]
    profile = compile_profile(profiles[0]).profile
    direct = [replay_messages(p.name, list(build_session_context(SessionFile.open(p)).messages), profile, 8000, None)
              for p in paths]
    assert data["compactions"] == sum(r.compactions for r in direct) > 0
    assert data["meanTokensBefore"] == pytest.approx(sum(sum(r.before) for r in direct) / data["compactions"])
    assert data["sessionsOverflowing"] == 0


def test_overflow_is_counted(tmp_path, profiles, capsys):
    folder = tmp_path / "dir"
    write_corpus(folder, 2, segments=1, turns=3, result_chars=3000)
    assert main(["replay", str(folder), "--profile", str(profiles[0]), "--window", "500", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["profiles"][str(profiles[0])]
    assert data["sessionsOverflowing"] == 2 and len(data["overflowingSessions"]) == 2


def test_zip_members_are_read(tmp_path):
    folder = tmp_path / "dir"
    write_corpus(folder, 2, segments=1, turns=1, result_chars=10)
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for p in sorted(folder.glob("*.jsonl")):
            zf.write(p, p.name)
        zf.writestr("notes.txt", "ignored")
    assert [name for name, _ in archive_members(archive)] == ["gen-0000.jsonl", "gen-0001.jsonl"]


def test_members_that_are_not_sessions_are_refused_unread(tmp_path, profiles, capsys, monkeypatch):
    """A FIFO named like a session would block a plain read; a member beyond the session-file
    limit is never read whole: both are unreadable sessions, named with why, and the rest is replayed."""
    import os

    from pipeline.limits import FILE_LIMITS

    folder = tmp_path / "dir"
    write_corpus(folder, 2, segments=1, turns=1, result_chars=10)
    os.mkfifo(folder / "pipe.jsonl")
    sizes = sorted(p.stat().st_size for p in folder.glob("gen-*.jsonl"))
    (folder / "big.jsonl").write_bytes(b"x" * (sizes[-1] + 1))
    monkeypatch.setitem(FILE_LIMITS, "session file in an archive", sizes[-1])
    members = dict(archive_members(folder))
    assert isinstance(members["pipe.jsonl"], Refused) and "FIFO" in members["pipe.jsonl"].message
    assert isinstance(members["big.jsonl"], Refused) and "too large" in members["big.jsonl"].message
    assert all(isinstance(members[f"gen-000{i}.jsonl"], bytes) for i in (0, 1))
    assert main(["replay", str(folder), "--profile", str(profiles[0]), "--window", "8000", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["profiles"][str(profiles[0])]
    assert (data["sessions"], data["unreadable"]) == (4, 2)
    assert sorted(s["name"] for s in data["unreadableSessions"]) == ["big.jsonl", "pipe.jsonl"]


def test_zip_and_tar_members_beyond_the_limit_are_refused(tmp_path, monkeypatch):
    from pipeline.limits import FILE_LIMITS

    monkeypatch.setitem(FILE_LIMITS, "session file in an archive", 10)
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("small.jsonl", "0123456789")
        zf.writestr("large.jsonl", "0123456789A")
    got = dict(archive_members(archive))
    assert got["small.jsonl"] == b"0123456789" and isinstance(got["large.jsonl"], Refused)
    tar = tmp_path / "a.tar"
    with tarfile.open(tar, "w") as tf:
        for name, data in (("small.jsonl", b"0123456789"), ("large.jsonl", b"0123456789A")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    got = dict(archive_members(tar))
    assert got["small.jsonl"] == b"0123456789" and isinstance(got["large.jsonl"], Refused)


def test_replay_refuses_a_missing_archive(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope")]) == 1
    assert "no such directory or archive" in capsys.readouterr().err


# --------------------------------------------------------------------------- through the driver


def test_replay_compacts_through_the_driver(tmp_path, profiles, monkeypatch):
    """Every compaction of a replay is one call of the compaction driver on the scratch session."""
    from pipeline.compaction import driver
    from pipeline.evaluation import replay

    calls = []
    real = driver.compact

    def counting(session, profile, client, **kw):
        done = real(session, profile, client, **kw)
        calls.append((kw["window"], done.strategy, done.did_anything, done.tokens_after))
        return done

    monkeypatch.setattr(replay, "compact", counting)
    path = write_corpus(tmp_path / "dir", 1, segments=2, turns=6, result_chars=3000)[0]
    profile = compile_profile(profiles[1]).profile  # hybrid
    result = replay_messages(path.name, list(build_session_context(SessionFile.open(path)).messages), profile, 8000,
                             None)
    assert result.compactions == sum(1 for c in calls if c[2]) > 0
    assert result.after == [c[3] for c in calls if c[2]]
    assert {c[0] for c in calls} == {8000} and {c[1] for c in calls} == {"hybrid"}


def test_the_budget_summary_holds_every_heading_and_fits_the_request():
    from pipeline.compaction.summary_schema import missing_sections
    from pipeline.evaluation.replay import BudgetSummarizer
    from pipeline.llm.types import SummaryRequest

    profile = compile_profile("builtin:default").profile
    client = BudgetSummarizer(profile.summary, 4)
    tag = profile.summary.tags.conversation
    request = SummaryRequest(system_prompt="s", user_text=f"<{tag}>\n{'word ' * 4000}\n</{tag}>\n", max_tokens=300)
    text = client.complete(request).text
    assert missing_sections(text, profile.summary.schema_, profile.summary.schema_format) == ()
    assert len(text) == 300 * 4 and client.budgets == [300]
    small = SummaryRequest(system_prompt="s", user_text=f"<{tag}>\nshort talk\n</{tag}>\n", max_tokens=300)
    short = client.complete(small).text  # smaller than its headings: the headings alone
    assert short.splitlines() == [f"## {s.heading}" for s in profile.summary.schema_] and client.budgets == [300, 300]


def test_a_second_hybrid_compaction_counts_the_masks_already_applied(tmp_path, profiles):
    """Without usage, the context after a first mask is estimated with its placeholders: the
    second hybrid compaction masks again and does not summarize a context under the trigger."""
    path = write_corpus(tmp_path / "dir", 1, segments=2, turns=6, result_chars=3000)[0]
    profile = compile_profile(profiles[1]).profile
    result = replay_messages(path.name, list(build_session_context(SessionFile.open(path)).messages), profile, 8000,
                             None)
    assert result.compactions >= 2
    assert result.budgets == []  # every compaction was a mask: none fired the trigger after masking
    assert all(b <= 8000 * 0.5 * 1.5 for b in result.before[1:])


def test_a_host_with_other_threads_replays_through_a_fork_server(tmp_path, profiles):
    """A fork copies the locks another thread holds, so workers are forked only from a process
    running one thread; with a second thread alive they come from a fork server, with the same
    figures."""
    import threading

    from pipeline.evaluation import replay

    archive = _tar(tmp_path, 12, tmp_path / "a.tar.gz")
    loaded = {str(p): compile_profile(p).profile for p in profiles}

    def figures() -> list:
        out = [{k: (r.name, r.compactions, r.before, r.after, r.error) for k, r in result.items()}
               for result in replay.replay_archive(archive, loaded, 4000, workers=2)]
        return sorted(out, key=lambda d: sorted(d.values()))

    alone = threading.active_count() == 1
    quiet = figures()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert replay._context().get_start_method() == "forkserver"
        assert figures() == quiet
    finally:
        stop.set()
        other.join()
    assert replay._context().get_start_method() == ("fork" if alone else "forkserver")
    assert any(r[1] for d in quiet for r in d.values())  # something was compacted
