"""Real processes against one session file: concurrent `pipeline compact` runs, and runs killed
with SIGKILL at random moments.

* Two or four `pipeline compact SESSION` (the built-in offline summarizer) started together
  on one file: exactly one compaction entry is written, the other runs re-plan under the
  file's lock and find nothing to do; no two compaction entries share a parent, every line
  is one complete entry and the file reads without problems.
* A run whose branch changes while it summarizes (another writer appends) plans again and
  compacts the new leaf (in process, with a client that writes while it "summarizes").
* SIGKILL at random moments of a run: the file is byte for byte the old one, or the old
  bytes plus one complete compaction entry, and it reads without problems. While this was
  written, killed files of each kind were also opened with pi 0.84.0's own
  ``SessionManager.open`` (the oracle's ``session_open``): pi read every one, with the
  compaction entry as its leaf when one was written. CI has no Node, so the test checks
  them with our reader only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from pipeline.compaction.engine import Compacted, compact_session
from pipeline.compaction.offline import OfflineClient
from pipeline.session import SessionFile

from .conftest import REAL, default_profile

SESSION = REAL / "long-coding.jsonl"

# A child that has imported everything, says it is ready, waits for the go file, then runs
# the real command line: the runs overlap as closely as processes can.
CONCURRENT_CHILD = textwrap.dedent(
    """
    import os, sys, time
    from pipeline.cli import main
    import pipeline.compaction, pipeline.compaction.offline, pipeline.session, pipeline.compiler
    session, ready, go = sys.argv[1:4]
    open(ready, "w").close()
    deadline = time.monotonic() + 30
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.0005)
    sys.exit(main(["compact", session]))
    """
)


def _run_together(path: Path, runs: int, tmp: Path) -> list[subprocess.CompletedProcess]:
    go = tmp / "go"
    go.unlink(missing_ok=True)
    procs, readies = [], []
    for i in range(runs):
        ready = tmp / f"ready-{i}"
        ready.unlink(missing_ok=True)
        readies.append(ready)
        procs.append(subprocess.Popen([sys.executable, "-c", CONCURRENT_CHILD, str(path), str(ready), str(go)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in readies) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


def _lines(path: Path) -> list[dict]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode("utf-8").split("\n")[:-1]]


@pytest.mark.parametrize("runs,trials", [(2, 3), (4, 2)])
def test_concurrent_compactions_write_one_entry(tmp_path, runs, trials):
    old = SESSION.read_bytes()
    for _ in range(trials):
        path = tmp_path / "s.jsonl"
        path.write_bytes(old)
        results = _run_together(path, runs, tmp_path)
        assert [r.returncode for r in results] == [0] * runs, [r.stderr for r in results]
        data = path.read_bytes()
        assert data.startswith(old)
        added = _lines(path)[len(_lines_of(old)):]
        assert [e["type"] for e in added] == ["compaction"]  # one run compacted, the others re-planned
        compactions = [e for e in _lines(path) if e["type"] == "compaction"]
        assert max(Counter(e["parentId"] for e in compactions).values()) == 1
        nothing = [r for r in results if r.stdout.startswith("nothing to compact")]
        assert len(nothing) == runs - 1, [r.stdout[:80] for r in results]
        assert all("already ends with a compaction" in r.stdout for r in nothing)
        session = SessionFile.open(path)
        assert session.problems == [] and session.leaf_id == added[0]["id"]


def _lines_of(data: bytes) -> list[str]:
    return data.decode("utf-8").split("\n")[:-1]


class _WritesWhileSummarizing:
    """The offline summarizer, with another writer appending to the file during its first call."""

    provider = "offline"

    def __init__(self, path: Path) -> None:
        self.inner = OfflineClient(default_profile().summary)
        self.path, self.calls = path, 0

    def build_body(self, request):
        return self.inner.build_body(request)

    def complete(self, request):
        self.calls += 1
        if self.calls == 1:
            other = SessionFile.open(self.path)
            other.append_message({"role": "user", "content": [{"type": "text", "text": "one more thing"}],
                                  "timestamp": 1})
        return self.inner.complete(request)


def test_a_branch_that_changed_while_summarizing_is_planned_again(tmp_path):
    path = tmp_path / "s.jsonl"
    shutil.copyfile(SESSION, path)
    session = SessionFile.open(path)
    old_leaf = session.leaf_id
    client = _WritesWhileSummarizing(path)
    done = compact_session(session, default_profile(), client)
    assert isinstance(done, Compacted)
    entries = _lines(path)
    written, compaction = entries[-2], entries[-1]
    assert written["type"] == "message" and written["parentId"] == old_leaf
    assert compaction["type"] == "compaction" and compaction["parentId"] == written["id"]
    assert client.calls > 2  # the first plan's calls (history + turn prefix), then the new plan's
    assert SessionFile.open(path).problems == []


def test_a_branch_compacted_meanwhile_is_left_alone(tmp_path):
    path = tmp_path / "s.jsonl"
    shutil.copyfile(SESSION, path)
    first, second = SessionFile.open(path), SessionFile.open(path)
    assert isinstance(compact_session(first, default_profile(), OfflineClient(default_profile().summary)), Compacted)
    size = path.stat().st_size
    again = compact_session(second, default_profile(), OfflineClient(default_profile().summary))
    assert getattr(again, "reason", None) == "already_compacted"
    assert path.stat().st_size == size


# --------------------------------------------------------------------------- SIGKILL loop

# One process imports and warms everything once, then forks one child per trial that runs
# `pipeline compact` on its own copy; the parent kills it after a random delay.
KILLER = textwrap.dedent(
    """
    import contextlib, io, json, os, random, shutil, signal, sys, time
    from pipeline.cli import main
    source, workdir, trials, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    quiet = lambda: (contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()))
    warm = os.path.join(workdir, "warm.jsonl")
    for _ in range(2):  # the second run is timed: caches are warm, as in the forked children
        shutil.copyfile(source, warm)
        out, err = quiet()
        start = time.monotonic()
        with out, err:
            assert main(["compact", warm]) == 0
    span = max(time.monotonic() - start, 0.02) * 2  # kill anywhere in a run (a forked child is a bit slower)
    rng = random.Random(seed)
    for i in range(trials):
        path = os.path.join(workdir, f"t{i}.jsonl")
        shutil.copyfile(source, path)
        delay = rng.uniform(0, span)
        pid = os.fork()
        if pid == 0:
            out, err = quiet()
            with out, err:
                code = main(["compact", path])
            os._exit(code)
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"path": path, "delay": delay, "span": span, "killed": os.WIFSIGNALED(status)}), flush=True)
    """
)


def test_sigkill_at_random_moments_leaves_old_bytes_or_one_more_entry(tmp_path):
    trials = 30
    proc = subprocess.run([sys.executable, "-c", KILLER, str(SESSION), str(tmp_path), str(trials), "1010"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == trials
    old = SESSION.read_bytes()
    outcomes = Counter()
    for result in results:
        data = Path(result["path"]).read_bytes()
        if data == old:
            outcomes["unchanged"] += 1
        else:
            assert data.startswith(old), result
            added = data[len(old):]
            assert added.endswith(b"\n") and added.count(b"\n") == 1, result  # one complete line
            assert json.loads(added)["type"] == "compaction"
            outcomes["one entry more"] += 1
        session = SessionFile.open(result["path"])
        assert session.problems == [], result
    assert sum(outcomes.values()) == trials
    print(dict(outcomes))
