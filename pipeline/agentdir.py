"""Where pi keeps its user-level files: the agent directory.

``$PI_CODING_AGENT_DIR`` when set, else ``~/.pi/agent``. Prompt templates
(``<agent>/prompts``), context files, skills and ``SYSTEM.md`` are all found there, so
every stage asks this module instead of spelling the rule again.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.errors import Location, PipelineError, Problem

CONFIG_DIR = ".pi"
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
#: The agent directory as written when nothing overrides it (``~`` not yet expanded).
DEFAULT_AGENT_DIR = f"~/{CONFIG_DIR}/agent"
#: ``templates.global_dir`` that stands for pi's agent directory (``$PI_CODING_AGENT_DIR/prompts`` when set).
DEFAULT_GLOBAL_DIR = DEFAULT_AGENT_DIR + "/prompts"


def agent_dir(home: Path | str | None = None) -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` (``~`` expanded) or ``~/.pi/agent``;
    ``home`` stands for ``~`` when given."""
    env = os.environ.get(AGENT_DIR_ENV)
    if env:
        path = expand_home(env, home)
        reason = path_too_long(path)
        if reason is not None:
            raise PipelineError(Problem(f"cannot use the agent directory: {reason}", Location(f"${AGENT_DIR_ENV}"),
                                        hint=f"set {AGENT_DIR_ENV} to an existing directory, or unset it",
                                        code="profile.bad-agent-dir"))
        return path
    return expand_home(DEFAULT_AGENT_DIR, home)


def path_too_long(path: Path | str) -> str | None:
    """Why the system cannot take ``path`` (longer than ``PATH_MAX`` or a name longer than
    ``NAME_MAX``), or None."""
    raw = os.fsencode(path)
    path_max, name_max = _limits()
    if len(raw) >= path_max:
        return f"the path is {len(raw)} bytes long (the system allows {path_max - 1})"
    longest = max((len(part) for part in raw.split(b"/")), default=0)
    if longest > name_max:
        return f"a name in the path is {longest} bytes long (the system allows {name_max})"
    return None


def _limits() -> tuple[int, int]:
    try:
        return os.pathconf("/", "PC_PATH_MAX"), os.pathconf("/", "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 4096, 255


def expand_home(text: str, home: Path | str | None = None) -> Path:
    """``text`` with a leading ``~`` expanded (to ``home`` when given, else as the OS does)."""
    if home is not None and (text == "~" or text.startswith(("~/", "~" + os.sep))):
        return Path(home) / text[2:]
    return Path(os.path.expanduser(text))
