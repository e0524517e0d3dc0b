"""`pipeline chat` on a real terminal (a pty): readline editing, Tab completion of /commands and
template names, multi-line input, history kept across sessions (issue 21, item 13)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from pipeline.session import MessageEntry, SessionFile

from .routed import RoutedServer

ROOT = Path(__file__).resolve().parents[2]


class Terminal:
    """A child process on a pty; ``expect`` waits for text in what it printed."""

    def __init__(self, argv: list[str], env: dict) -> None:
        master, slave = os.openpty()
        self.master, self.output, self.seen = master, b"", 0
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT,
                                     start_new_session=True)
        os.close(slave)
        self._lock = threading.Lock()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.output += data

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def expect(self, text: str, timeout: float = 30) -> None:
        """Wait for ``text`` after what the last ``expect`` matched."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                found = self.output.find(text.encode(), self.seen)
                if found >= 0:
                    self.seen = found + len(text.encode())
                    return
            time.sleep(0.05)
        raise AssertionError(f"{text!r} not shown; the terminal showed {self.output!r}")

    def finish(self) -> int:
        try:
            return self.proc.wait(timeout=30)
        finally:
            os.close(self.master)


def _start(tmp_path, server, *extra) -> Terminal:
    env = {**os.environ, "OPENAI_API_KEY": "k", "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
           "XDG_STATE_HOME": str(tmp_path / "state"), "TERM": "xterm", "INPUTRC": "/dev/null"}
    argv = [sys.executable, "-m", "pipeline", "chat", "--session", str(tmp_path / "s.jsonl"), *extra,
            "--base-url", server.openai_base_url, "--model", "m", "--cwd", str(tmp_path / "proj")]
    return Terminal(argv, env)


def test_chat_edits_completes_continues_lines_and_keeps_history(tmp_path):
    proj = tmp_path / "proj"
    (proj / ".pi" / "prompts").mkdir(parents=True)
    (proj / ".pi" / "prompts" / "fixup.md").write_text("---\ndescription: Fix a file\n---\nFix $1 please.\n")
    with RoutedServer(["answer one", "answer two", "answer three"], ["x"]) as server:
        term = _start(tmp_path, server, "--new")
        term.expect("> ")
        term.send("/templ\t\n")  # Tab completes the command
        term.expect("/fixup  Fix a file")
        term.send("/fix\tmain.py\n")  # and a template's name
        term.expect("answer one")
        term.send("first line\\\n")  # a backslash continues the input
        term.expect("… ")
        term.send("second lime\x08\x08ne\n")  # editing: backspace works, no ^H in the prompt
        term.expect("answer two")
        term.expect("> ")
        term.send("/quit\n")
        assert term.finish() == 0
        history = (tmp_path / "state" / "context-pipeline" / "chat_history").read_text()
        assert "first line\\" in history and "/quit" in history
        term = _start(tmp_path, server)  # a new session of the chat: the history is there
        term.expect("> ")
        term.send("\x10\x10\x10\n")  # Ctrl-P three times: `first line\` from the last chat
        term.expect("… ")
        term.send("again\n")
        term.expect("answer three")
        term.expect("> ")
        term.send("\x04")  # Ctrl-D ends the chat
        assert term.finish() == 0
    users = [m["content"][0]["text"] if isinstance(m["content"], list) else m["content"]
             for m in server.bodies[-1]["messages"] if m["role"] == "user"]
    assert users == ["Fix main.py please.", "first line\nsecond line", "first line\nagain"]
    entries = SessionFile.open(tmp_path / "s.jsonl").entries
    assert sum(isinstance(e, MessageEntry) and e.message.role == "user" for e in entries) == 3
