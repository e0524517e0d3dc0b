"""Line editing for `pipeline chat` on a terminal (stdlib :mod:`readline`; a helper module, not a command).

Editing and key bindings are readline's (Ctrl-A/E, Ctrl-L clears, Ctrl-R searches...);
history is kept across sessions in ``$XDG_STATE_HOME/context-pipeline/chat_history``
(else ``~/.local/state/...``); Tab completes `/commands` and template names; a line
ending in a backslash continues on the next (multi-line input). Where readline is
missing (some builds), plain :func:`input` is used and the rest still works.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

HISTORY_LENGTH = 1000
PROMPT, MORE = "> ", "… "


def history_path(environ: Optional[dict] = None) -> Path:
    """``$XDG_STATE_HOME/context-pipeline/chat_history`` (an absolute value only, as the XDG spec says),
    else ``~/.local/state/context-pipeline/chat_history``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "context-pipeline" / "chat_history"


class LineEditor:
    """Reads one (possibly multi-line) input from the terminal; :meth:`close` saves the history."""

    def __init__(self, words: Callable[[], Iterable[str]], history: Optional[Path] = None) -> None:
        self.words = words
        self.history = history or history_path()
        try:
            import readline
        except ImportError:  # a Python without readline: plain input()
            self.readline: Any = None
            return
        self.readline = readline
        readline.set_history_length(HISTORY_LENGTH)
        try:
            readline.read_history_file(self.history)
        except OSError:  # no history yet, or unreadable: start without
            pass
        readline.set_completer_delims(" \t\n")
        readline.set_completer(self._complete)
        if "libedit" in (readline.__doc__ or ""):
            readline.parse_and_bind("bind ^I rl_complete")
        else:
            readline.parse_and_bind("tab: complete")

    def _complete(self, text: str, state: int) -> Optional[str]:
        if not text.startswith("/"):
            return None
        matches = sorted(w for w in set(self.words()) if w.startswith(text))
        return matches[state] + " " if state < len(matches) else None

    def read(self) -> Optional[str]:
        """The next input (continuation lines joined with newlines), or None at end of input."""
        lines: list[str] = []
        prompt = PROMPT
        while True:
            try:
                line = input(prompt)
            except EOFError:
                return "\n".join(lines) if lines else None
            if line.endswith("\\"):
                lines.append(line[:-1])
                prompt = MORE
                continue
            lines.append(line)
            return "\n".join(lines)

    def close(self) -> None:
        if self.readline is None:
            return
        try:
            self.history.parent.mkdir(parents=True, exist_ok=True)
            self.readline.write_history_file(self.history)
        except OSError:  # a read-only home: the chat still ends cleanly
            pass


__all__ = ["LineEditor", "history_path"]
