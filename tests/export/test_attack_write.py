"""The write phase under attack: write errors roll back (exit 4), kills leave files old-or-new, exports queue."""

from __future__ import annotations

import hashlib
import os
import json
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.cli import main

# each profile's templates have names of their own: the pi export's copies in .pi/prompts are pi's
# `project` source, which shadows a profile template of the same name (issue 29, point 5)
PROFILE = "extends: builtin:default\nname: {name}\ntemplates:\n  sources: [project, global, prompts]\n"


def make_profile(folder: Path, name: str, count: int, words: str) -> Path:
    prompts = folder / "prompts"
    prompts.mkdir(parents=True)
    for i in range(count):
        (prompts / f"{name}{i}.md").write_text(f"{words} {i} $1\n" * 50)
    (folder / "p.yaml").write_text(PROFILE.format(name=name))
    return folder / "p.yaml"


def files(project: Path) -> dict[str, bytes]:
    return {str(p.relative_to(project)): p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}


def cli(project: Path, profile: Path) -> list[str]:
    return [sys.executable, "-m", "pipeline", "export", "pi", str(profile), "--project", str(project)]


def _small_files() -> None:
    """In the child: files of at most 2,000 bytes (a write past it fails, as on a full disk)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))


def _export_on_a_full_disk(tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess, Path, dict, dict]:
    """An export over an earlier one that fails to write: the run, the project, its files before and after."""
    old = make_profile(tmp_path / "a", "a", 5, "old")
    new = make_profile(tmp_path / "b", "b", 8, "new")
    project = tmp_path / "proj"
    project.mkdir()
    assert main(["export", "pi", str(old), "--project", str(project)]) == 0
    before = files(project)
    done = subprocess.run([*cli(project, new), *extra], capture_output=True, text=True, preexec_fn=_small_files,
                          timeout=300)
    return done, project, before, files(project)


def test_a_disk_error_exits_4_and_changes_nothing(tmp_path):
    done, project, before, after = _export_on_a_full_disk(tmp_path)
    assert done.returncode == 4, done.stderr
    assert "nothing was changed" in done.stderr and str(project) in done.stderr
    assert after == before
    listed = done.stdout.split("what the agent receives:")[0]
    changes = [line.strip() for line in listed.splitlines() if line.startswith("  ")]
    assert changes and all(line.startswith("would ") for line in changes), done.stdout  # never reported as done


def test_a_disk_error_in_json_says_nothing_was_written(tmp_path):
    done, project, before, after = _export_on_a_full_disk(tmp_path, "--format", "json")
    assert done.returncode == 4 and after == before, done.stderr
    document = json.loads(done.stdout)
    assert document["written"] is False and document["changes"]
    again = subprocess.run([*done.args[:-2], "--format", "json"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and json.loads(again.stdout)["written"] is True


def test_a_failure_half_way_through_the_renames_puts_everything_back(tmp_path, capsys):
    old = make_profile(tmp_path / "a", "a", 5, "old")
    new = make_profile(tmp_path / "b", "b", 5, "new")
    project = tmp_path / "proj"
    project.mkdir()
    assert main(["export", "pi", str(old), "--project", str(project)]) == 0
    before = files(project)
    (project / ".pi/prompts/.a3.md.context-pipeline-old").mkdir()  # the 4th rename cannot keep its old copy
    assert main(["export", "pi", str(new), "--project", str(project)]) == 4
    assert "nothing was changed" in capsys.readouterr().err
    assert files(project) == before


def test_kills_during_the_write_leave_files_whole_and_the_next_export_plain(tmp_path):
    old = make_profile(tmp_path / "a", "a", 40, "old")
    new = make_profile(tmp_path / "b", "b", 60, "new")
    versions: dict[str, set[bytes]] = {}
    for name, profile in (("A", old), ("B", new)):
        (tmp_path / name).mkdir()
        assert main(["export", "pi", str(profile), "--project", str(tmp_path / name)]) == 0
        for path, data in files(tmp_path / name).items():
            versions.setdefault(path, set()).add(data)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("untouched\n")
    rng = random.Random(29)
    for round_ in range(8):
        project = tmp_path / f"proj{round_}"
        shutil.copytree(tmp_path / "A", project)
        proc = subprocess.Popen(cli(project, new), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pending = project / ".pi/context-pipeline-export.json.pending"
        while proc.poll() is None and not pending.exists():
            time.sleep(0.001)
        time.sleep(rng.random() * 0.02 * (round_ % 4))
        proc.send_signal(signal.SIGKILL if round_ % 2 else signal.SIGINT)
        proc.wait(timeout=300)
        for path, data in files(project).items():
            if ".context-pipeline-" in path:
                continue
            assert data in versions.get(path, set()) or path.endswith(".pending"), path
        assert main(["export", "pi", str(new), "--project", str(project)]) == 0
        assert {p: d for p, d in files(project).items()} == files(tmp_path / "B")
        assert files(outside) == {"keep.txt": b"untouched\n"}


def test_concurrent_exports_queue_and_the_manifest_lists_the_files_on_disk(tmp_path):
    profiles = [make_profile(tmp_path / f"p{i}", f"p{i}", 10 + 5 * i, f"v{i}") for i in range(4)]
    project = tmp_path / "proj"
    project.mkdir()
    procs = [subprocess.Popen(cli(project, p) + ["--force"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for p in profiles]
    for proc in procs:
        proc.wait(timeout=600)
        assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    manifest = json.loads((project / ".pi/context-pipeline-export.json").read_text())
    on_disk = {p for p in files(project) if p not in (".pi/settings.json", ".pi/context-pipeline-export.json")}
    assert set(manifest["files"]) == on_disk
    for path, sha in manifest["files"].items():
        assert hashlib.sha256((project / path).read_bytes()).hexdigest() == sha


def test_an_export_killed_half_way_through_its_renames_is_finished_by_the_next(tmp_path):
    """The state a kill leaves after some renames (the old manifest, the journal of the new one, some new
    files in place): the export's copies named in the journal are not read back as the project's own
    templates, and the next plain export ends exactly where an uninterrupted one does."""
    old = make_profile(tmp_path / "a", "a", 6, "old")
    new = make_profile(tmp_path / "b", "b", 9, "new")
    for name, profile in (("A", old), ("B", new)):
        (tmp_path / name).mkdir()
        assert main(["export", "pi", str(profile), "--project", str(tmp_path / name)]) == 0
    project = tmp_path / "proj"
    shutil.copytree(tmp_path / "A", project)
    manifest = ".pi/context-pipeline-export.json"
    shutil.copy(tmp_path / "B" / manifest, project / (manifest + ".pending"))
    for i in range(5):  # the first renames happened
        shutil.copy(tmp_path / "B" / ".pi/prompts" / f"b{i}.md", project / ".pi/prompts" / f"b{i}.md")
    assert main(["export", "pi", str(new), "--project", str(project)]) == 0
    assert files(project) == files(tmp_path / "B")


def test_copies_left_by_an_export_killed_after_its_manifest_are_removed_by_the_next(tmp_path):
    """Killed after it recorded its manifest, before it removed the `-old` copies of the files it
    deleted: those files are named by no manifest any more; the next export still removes the copies.
    A copy behind a link out of the project is never touched."""
    old = make_profile(tmp_path / "a", "a", 4, "old")
    new = make_profile(tmp_path / "b", "b", 4, "new")
    project = tmp_path / "proj"
    project.mkdir()
    assert main(["export", "pi", str(old), "--project", str(project)]) == 0
    prompts = project / ".pi" / "prompts"
    kept = {p.name: p.read_bytes() for p in prompts.iterdir()}
    assert main(["export", "pi", str(new), "--project", str(project)]) == 0
    for name, data in kept.items():  # what the kill left: the deleted files' copies
        (prompts / f".{name}.context-pipeline-old").write_bytes(data)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".x.md.context-pipeline-old").write_text("not the export's\n")
    (project / ".pi" / "linked").symlink_to(outside)
    assert main(["export", "pi", str(new), "--project", str(project)]) == 0
    assert not [p for p in prompts.iterdir() if p.name.endswith(".context-pipeline-old")]
    assert (outside / ".x.md.context-pipeline-old").read_text() == "not the export's\n"


def test_an_interrupt_beside_any_rename_leaves_the_old_export_or_the_new_one(tmp_path, monkeypatch):
    """Ctrl-C lands between any two bytecodes: just before or just after each rename, link and
    removal of the write phase. Each leaves the project wholly as the old export or wholly as
    the new one (no file of either outside its manifest, where it would be read back as the
    project's own template), and the next plain export ends as an uninterrupted one does."""
    old = make_profile(tmp_path / "a", "a", 3, "old")
    new = make_profile(tmp_path / "b", "b", 4, "new")
    for name, profile in (("A", old), ("B", new)):
        (tmp_path / name).mkdir()
        assert main(["export", "pi", str(profile), "--project", str(tmp_path / name)]) == 0
    whole = {"A": files(tmp_path / "A"), "B": files(tmp_path / "B")}
    real = {name: getattr(os, name) for name in ("replace", "link", "unlink")}
    ends = set()
    for after in (False, True):
        for n in range(1, 200):
            project = tmp_path / f"p{int(after)}-{n}"
            shutil.copytree(tmp_path / "A", project)
            calls = [0]

            def interrupting(name):
                def call(*args, **kwargs):
                    calls[0] += 1
                    if calls[0] == n and not after:
                        raise KeyboardInterrupt
                    result = real[name](*args, **kwargs)
                    if calls[0] == n:
                        raise KeyboardInterrupt
                    return result
                return call

            for name in real:
                monkeypatch.setattr(os, name, interrupting(name))
            status = main(["export", "pi", str(new), "--project", str(project)])
            monkeypatch.undo()
            left = {p: d for p, d in files(project).items() if not p.endswith((".context-pipeline-old", ".context-pipeline-new"))}
            assert left in (whole["A"], whole["B"]), (after, n)
            ends.add("A" if left == whole["A"] else "B")
            assert main(["export", "pi", str(new), "--project", str(project)]) == 0
            assert files(project) == whole["B"], (after, n)
            if status == 0:
                break
        else:
            raise AssertionError("the export was interrupted at every one of 200 calls")
    assert ends == {"A", "B"}



def read_only(folder: Path, on: bool) -> None:
    """``folder`` made read-only (or writable again): by its mode, or for root, whom modes do not
    stop, by the immutable attribute (chattr, as root may)."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i" if on else "-i", str(folder)], check=True)
    else:
        folder.chmod(0o555 if on else 0o755)


@pytest.mark.parametrize("target, folder", [("pi", ".pi/prompts"), ("claude-code", ".claude/commands"),
                                            ("opencode", ".opencode/command"), ("kilo", ".kilo/command")])
def test_a_read_only_folder_exits_4_and_changes_nothing(tmp_path, target, folder):
    old = make_profile(tmp_path / "a", "a", 3, "old")
    new = make_profile(tmp_path / "b", "b", 3, "new")
    project = tmp_path / "proj"
    project.mkdir()
    assert main(["export", target, str(old), "--project", str(project)]) == 0
    before = files(project)
    read_only(project / folder, True)
    try:
        done = subprocess.run([sys.executable, "-m", "pipeline", "export", target, str(new), "--project",
                               str(project)], capture_output=True, text=True, timeout=300)
    finally:
        read_only(project / folder, False)
    assert done.returncode == 4, done.stderr
    assert "nothing was changed" in done.stderr and str(project / folder) in done.stderr
    assert files(project) == before
