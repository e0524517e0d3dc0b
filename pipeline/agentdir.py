"""Where pi keeps its user-level files: the agent directory.

``$PI_CODING_AGENT_DIR`` when set, else ``~/.pi/agent``. Prompt templates
(``<agent>/prompts``), context files, skills and ``SYSTEM.md`` are all found there, so
every stage asks this module instead of spelling the rule again.
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_DIR = ".pi"
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
#: The agent directory as written when nothing overrides it (``~`` not yet expanded).
DEFAULT_AGENT_DIR = f"~/{CONFIG_DIR}/agent"


def agent_dir(home: Path | str | None = None) -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` (``~`` expanded) or ``~/.pi/agent``;
    ``home`` stands for ``~`` when given."""
    env = os.environ.get(AGENT_DIR_ENV)
    if env:
        return expand_home(env, home)
    return expand_home(DEFAULT_AGENT_DIR, home)


def expand_home(text: str, home: Path | str | None = None) -> Path:
    """``text`` with a leading ``~`` expanded (to ``home`` when given, else as the OS does)."""
    if home is not None and (text == "~" or text.startswith(("~/", "~" + os.sep))):
        return Path(home) / text[2:]
    return Path(os.path.expanduser(text))
