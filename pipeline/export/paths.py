"""Confinement: every path an export writes, deletes, reads back or records stays inside its root.

A path the export handles is relative to the export root (the project or ``--user-dir``)
and written with ``/``. :func:`path_problem` says why such a path is not one the export
may use: absolute, empty parts, ``.`` or ``..``, or a part that is not a safe file name
on every platform (:func:`name_problem`: separators, ``:``, NUL and other control
characters, Windows' reserved device names, a trailing dot or space, more than 255
bytes). Template names become file names through the targets, which ask
:func:`template_name_problem` first and report a template with an unsafe name lost.

:func:`link_in_the_way` walks a path from the root part by part without following
anything: a symbolic link anywhere on it (the file itself or a folder above it) is where
the export would leave its root, so it is a conflict, and ``--force`` replaces the link
itself, never what it points to (:func:`replace_links`).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Optional

#: Windows' reserved device names (any extension: ``NUL.md`` is the device too)
RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                      *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10)),
                      "COM¹", "COM²", "COM³", "LPT¹", "LPT²", "LPT³"})
#: characters no file name may hold on some platform (Windows forbids these, every system `/` and NUL)
_FORBIDDEN = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*]')
MAX_NAME_BYTES = 255
#: room kept in a name for the export's own ``.NAME.context-pipeline-new`` beside it
MARGIN = len(".") + len(".context-pipeline-new")


def name_problem(name: str) -> Optional[str]:
    """Why ``name`` is not a safe file name on every platform (None when it is)."""
    if name in ("", ".", ".."):
        return "an empty name, `.` or `..`" if name else "an empty name"
    bad = _FORBIDDEN.search(name)
    if bad is not None:
        char = bad.group()
        shown = f"`{char}`" if char.isprintable() else f"U+{ord(char):04X}"
        return f"it holds {shown}, which is not allowed in a file name on every platform"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        return "it holds a lone surrogate"
    if name.endswith((".", " ")):
        return "it ends in a dot or a space (Windows drops them)"
    if name.split(".")[0].upper().rstrip() in RESERVED:
        return f"`{name.split('.')[0]}` is a reserved device name on Windows"
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES - MARGIN:
        return f"the name is longer than {MAX_NAME_BYTES - MARGIN} bytes"
    return None


def path_problem(rel: object) -> Optional[str]:
    """Why ``rel`` is not a path the export may use below its root (None when it may)."""
    if not isinstance(rel, str) or not rel:
        return "not a relative path"
    if rel.startswith("/") or re.match(r"[A-Za-z]:", rel) or rel.startswith("\\"):
        return "an absolute path: the export only writes inside its root"
    for part in rel.split("/"):
        if part == "..":
            return "it climbs out of the root with `..`"
        problem = name_problem(part)
        if problem is not None:
            return f"part `{_shown(part)}`: {problem}"
    return None


def template_name_problem(name: str) -> Optional[str]:
    """Why a template's name cannot become a file name (its ``:`` parts are folders)."""
    for part in name.split(":"):
        problem = name_problem(part)
        if problem is not None:
            return f"its name part `{_shown(part)}` is not a safe file name ({problem})"
    return None


def _shown(part: str) -> str:
    """A name part as a message can show it (control characters escaped, at most 60 characters)."""
    text = part.encode("unicode_escape", "backslashreplace").decode("ascii") if not part.isprintable() else part
    return text if len(text) <= 60 else text[:57] + "..."


def link_in_the_way(root: Path, rel: str) -> Optional[tuple[str, str]]:
    """``(part, what)``: the first prefix of ``rel`` that is a symbolic link, or not a
    folder although more of the path follows, and what it is; None when the path stays
    inside ``root`` all the way (missing parts are fine: the export creates them)."""
    parts = rel.split("/")
    here = root
    for i, part in enumerate(parts):
        here = here / part
        prefix = "/".join(parts[: i + 1])
        try:
            info = os.lstat(here)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as err:
            return prefix, f"cannot be examined ({err.strerror})"
        if stat.S_ISLNK(info.st_mode):
            return prefix, "a symbolic link (the export does not follow links out of its root)"
        if i < len(parts) - 1 and not stat.S_ISDIR(info.st_mode):
            return prefix, "not a folder"
    return None


def folder_problem(root: Path, rel: str) -> Optional[str]:
    """Why ``rel`` is not an existing folder below ``root`` the export may write into (None
    when it is): an unsafe path (:func:`path_problem`), a link or a file on the way, or nothing there."""
    problem = path_problem(rel)
    if problem is not None:
        return problem
    linked = link_in_the_way(root, rel + "/-")
    if linked is not None:
        return f"`{_shown(linked[0])}` is {linked[1]}"
    if not (root / rel).is_dir():
        return f"`{_shown(rel)}` is not a folder of the project ({root / rel})"
    return None


def is_link(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def replace_links(root: Path, rel: str) -> list[tuple[Path, str]]:
    """Each symbolic link among the folders above ``rel`` replaced by an empty folder (the
    link's target is never touched); returns (folder, link target) to put a link back."""
    replaced: list[tuple[Path, str]] = []
    here = root
    for part in rel.split("/")[:-1]:
        here = here / part
        if is_link(here):
            target = os.readlink(here)
            os.unlink(here)
            os.mkdir(here)
            replaced.append((here, target))
    return replaced
