"""Whole-command rows of ``benchmarks/run.py --only agents``: what a user of the CLI waits for.

* ``pipeline run`` start to answer, against the real ``pi -p`` 1.6.0 on the same loopback
  server (the scripted OpenAI-compatible ``LoopbackServer``), runs alternating, and the
  peak RSS of both;
* ``pipeline chat`` from its start to its first prompt (under a pseudo-terminal), against
  the same ``pi -p`` figure;
* ``pi -p`` in a project with the extension ``pipeline export pi`` writes, against ``pi -p``
  without it: the start-up time the extension adds (goal: under 100 ms);
* ``pipeline validate`` over a folder of 200 profiles (a team's folder);
* ``pipeline replay`` over a generated archive: sessions per second, against the floor of
  reading and parsing every line of every member.

pi is the pinned install of ``tests/agents/npm_install.py`` (the same
``@earendil-works/pi-coding-agent`` 1.6.0 as ``../shared/oracle-1.6``, Node 22), installed
on first use and cached on the machine. Figures only; nothing is asserted.
"""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "agents"))

import npm_install  # noqa: E402

PROMPT = "say hi"
CHAT_READY = b"> "
PROFILES = 200
ARCHIVE_SESSIONS = 400


def _wait(argv: list[str], cwd: Path, env: dict[str, str], answer: bool = True) -> tuple[float, float]:
    """Wall time and peak RSS (MB) of one command that must succeed (and print an answer)."""
    out_path = cwd.parent / "out.txt"
    with open(out_path, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    text = out_path.read_text(errors="replace")
    if os.waitstatus_to_exitcode(status) or (answer and "hi" not in text):
        raise RuntimeError(f"{' '.join(argv[:4])}... failed ({status}): {text[-500:]}")
    return seconds, usage.ru_maxrss / 1024


class Agents:
    """The loopback server, pi's agent directory and our environment, set up once."""

    def __init__(self, directory: Path) -> None:
        from pipeline.testing.loopback import LoopbackServer

        self.dir = directory
        self.server = LoopbackServer(["hi, how can I help?"]).start()
        self.project = directory / "project"
        self.project.mkdir(parents=True, exist_ok=True)
        agent = directory / "pi-agent"
        agent.mkdir(exist_ok=True)
        (agent / "models.json").write_text(json.dumps({"providers": {"loop": {
            "baseUrl": self.server.openai_base_url, "api": "openai-completions", "apiKey": "none",
            "models": [{"id": "m", "contextWindow": 128000, "maxTokens": 1024}]}}}))
        (directory / "home").mkdir(exist_ok=True)
        self.pi_env = npm_install.agent_env("pi")
        self.pi_env.update(HOME=str(directory / "home"), PI_CODING_AGENT_DIR=str(agent))
        self.ours_env = {**os.environ, "OPENAI_API_KEY": "none", "XDG_CACHE_HOME": str(directory / "xdg-cache"),
                         "PI_CODING_AGENT_DIR": str(agent), "HOME": str(directory / "home")}
        self.ours_env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.count = 0

    def close(self) -> None:
        self.server.stop()

    def _session(self) -> str:
        self.count += 1
        path = self.dir / f"run-{os.getpid()}-{self.count}.jsonl"
        path.unlink(missing_ok=True)
        return str(path)

    def ours_run(self) -> tuple[float, float]:
        argv = [sys.executable, "-m", "pipeline", "run", "--session", self._session(), "--new",
                "--base-url", self.server.openai_base_url, "--model", "m", PROMPT]
        return _wait(argv, self.project, self.ours_env)

    def pi_run(self) -> tuple[float, float]:
        argv = ["pi", "-p", "--no-session", "--offline", "--model", "loop/m", PROMPT]
        return _wait(argv, self.project, self.pi_env)

    def pi_run_exported(self) -> tuple[float, float]:
        """``pi -p`` in a project that ``pipeline export pi`` wrote (its generated extension loads)."""
        exported = self.dir / "exported"
        if not (exported / ".pi" / "extensions").is_dir():
            exported.mkdir(parents=True, exist_ok=True)
            subprocess.run([sys.executable, "-m", "pipeline", "export", "pi", "--project", str(exported)],
                           env=self.ours_env, check=True, capture_output=True)
        argv = ["pi", "-p", "--no-session", "--offline", "--model", "loop/m", PROMPT]
        return _wait(argv, exported, self.pi_env)

    def ours_chat(self) -> tuple[float, float]:
        """From the start of ``pipeline chat`` to its first prompt on the terminal."""
        argv = [sys.executable, "-m", "pipeline", "chat", "--session", self._session(), "--new",
                "--base-url", self.server.openai_base_url, "--model", "m"]
        start = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: exec the command on the pseudo-terminal
            os.chdir(self.project)
            os.execve(argv[0], argv, self.ours_env)
        seen = b""
        try:
            while CHAT_READY not in seen:
                ready, _, _ = select.select([fd], [], [], 60)
                if not ready:
                    raise RuntimeError(f"pipeline chat showed no prompt in 60 s: {seen[-300:]!r}")
                seen += os.read(fd, 4096)
            seconds = time.perf_counter() - start
        finally:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(fd)
        return seconds, 0.0


def profile_folder(directory: Path) -> Path:
    """200 overlay profiles, each extending the default with its own sections and settings."""
    folder = directory / "profiles"
    if folder.is_dir() and len(list(folder.glob("*.yaml"))) == PROFILES:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(PROFILES):
        (folder / f"team-{i:03d}.yaml").write_text(
            "extends: builtin:default\n"
            f"name: team-{i:03d}\n"
            "compaction:\n"
            f"  keep_recent_tokens: {10000 + i}\n"
            "system_prompt:\n"
            "  sections:\n"
            f"    - id: team-rules-{i}\n"
            "      kind: text\n"
            f"      text: \"Rule {i}: keep changes small and run the tests of ${{cwd}}.\"\n",
            encoding="utf-8")
    return folder


def replay_archive(directory: Path) -> Path:
    """A tar of generated sessions (the evaluation package's generator), written once."""
    from pipeline.evaluation.generate import generate

    out = directory / f"replay-{ARCHIVE_SESSIONS}.tar"
    if out.exists():
        return out
    with tarfile.open(out, "w") as tf:
        for i in range(ARCHIVE_SESSIONS):
            g = generate(i, segments=2, turns=6, result_chars=3000)
            lines = [g.header, *(line for segment in g.segments for line in segment)]
            data = ("\n".join(lines) + "\n").encode()
            info = tarfile.TarInfo(f"archive/s{i:04d}.jsonl")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return out


def read_archive_floor(archive: Path) -> float:
    """Seconds to read every member and parse every line as JSON: the least a replay does."""
    start = time.perf_counter()
    with tarfile.open(archive) as tf:
        for member in tf:
            handle = tf.extractfile(member)
            if handle is not None:
                for line in handle.read().splitlines():
                    json.loads(line)
    return time.perf_counter() - start
