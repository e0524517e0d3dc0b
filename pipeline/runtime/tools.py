"""Built-in host tools in Python: read-only ``read``, ``ls``, ``find``, ``grep`` over a working
directory, and the opt-in ``bash``, ``edit``, ``write``.

Their parameters are pi 0.84.0's (the same JSON schemas, without descriptions); what
they say to the model (descriptions, snippets, guidelines, and the texts of their
results: not found, empty directory, truncation...) comes from the profile:
``system_prompt.tools.<name>`` and ``runtime.tool_output``. Paths are resolved against
the working directory and must stay inside it (symbolic links included). Every file a tool
reads goes through the bounded reader (:mod:`pipeline.files`, kind ``tool file``): a FIFO, a
device or a socket is never opened for reading or writing, so it cannot hang a tool, and a
file over the limit is refused from its size; the result says so in the profile's words.

:func:`builtin_tools` builds the tools a profile and a working directory give;
:data:`READ_ONLY` and :data:`OPT_IN` name them.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from pipeline import files
from pipeline.errors import PipelineError, Problem
from pipeline.model.run_plan import RunPlan
from pipeline.runtime.host import Tool, ToolOutput

READ_ONLY = ("read", "ls", "find", "grep")
OPT_IN = ("bash", "edit", "write")
MAX_LINES = 2000
MAX_BYTES = 50 * 1024
MAX_RESULTS = 1000
BASH_TIMEOUT_S = 120
#: The kind of file (pipeline/limits.py) the tools read.
KIND = "tool file"

_STR, _NUM, _BOOL = {"type": "string"}, {"type": "number"}, {"type": "boolean"}
SCHEMAS: dict[str, dict[str, Any]] = {
    "read": {"type": "object", "required": ["path"], "properties": {"path": _STR, "offset": _NUM, "limit": _NUM}},
    "ls": {"type": "object", "properties": {"path": _STR, "limit": _NUM}},
    "find": {"type": "object", "required": ["pattern"], "properties": {"pattern": _STR, "path": _STR, "limit": _NUM}},
    "grep": {"type": "object", "required": ["pattern"], "properties": {
        "pattern": _STR, "path": _STR, "glob": _STR, "ignoreCase": _BOOL, "literal": _BOOL, "context": _NUM,
        "limit": _NUM}},
    "bash": {"type": "object", "required": ["command"], "properties": {"command": _STR, "timeout": _NUM}},
    "edit": {"type": "object", "required": ["path", "edits"], "properties": {"path": _STR, "edits": {
        "type": "array", "items": {"type": "object", "required": ["oldText", "newText"],
                                   "properties": {"oldText": _STR, "newText": _STR}}}}},
    "write": {"type": "object", "required": ["path", "content"], "properties": {"path": _STR, "content": _STR}},
}


class _Failed(Exception):
    """A tool result that is an error (its text already in the profile's words)."""


class Workspace:
    """The tools' working directory and the profile's ``runtime.tool_output`` texts."""

    def __init__(self, cwd: str | os.PathLike, texts: Any) -> None:
        self.root = Path(cwd).resolve()
        self.texts = texts

    def say(self, name: str, **values: Any) -> str:
        return getattr(self.texts, name).render({k: str(v) for k, v in values.items()})

    def path(self, given: Any, *, default: str = ".") -> Path:
        text = given if isinstance(given, str) and given else default
        target = (self.root / os.path.expanduser(text)).resolve()
        if target != self.root and self.root not in target.parents:
            raise _Failed(self.say("outside", path=text))
        if files.missing(target):  # a path the system cannot take is not "missing": reading it says why
            raise _Failed(self.say("not_found", path=text))
        return target

    def read(self, path: Path, given: Any) -> bytes:
        """The bytes of a regular file within :data:`KIND`'s limit; a refusal in the profile's words."""
        try:
            return files.read_bytes(path, KIND)
        except PipelineError as err:
            raise _Failed(self.refusal(err, given)) from None

    def refusal(self, err: PipelineError, given: Any) -> str:
        why = files.reason(err)
        if why == "not-regular":
            return self.say("not_regular", path=given)
        if why == "file-too-large":
            return self.say("too_large", path=given, size=err.size, limit=files.limit(KIND))
        return self.say("unreadable", path=given, reason=err.problems[0].message.removeprefix(f"cannot read {KIND}: "))

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def cut(self, lines: list[str], limit: Any = None) -> str:
        """At most ``limit`` (else :data:`MAX_LINES`) lines and :data:`MAX_BYTES` bytes, with the note."""
        cap = int(limit) if isinstance(limit, (int, float)) and limit > 0 else MAX_LINES
        shown, size = [], 0
        for line in lines[:cap]:
            size += len(line.encode("utf-8")) + 1
            if size > MAX_BYTES and shown:
                break
            shown.append(line)
        text = "\n".join(shown)
        return text + self.say("truncated", shown=len(shown), total=len(lines)) if len(shown) < len(lines) else text


# --------------------------------------------------------------------------- read-only tools


def _read(ws: Workspace, args: Mapping[str, Any]) -> str:
    path = ws.path(args.get("path"))
    if files.is_directory(path):
        raise _Failed(ws.say("not_a_file", path=args.get("path")))
    text = ws.read(path, args.get("path")).decode("utf-8", "replace")
    offset, limit = args.get("offset"), args.get("limit")
    if offset is None and limit is None and len(text.encode("utf-8")) <= MAX_BYTES and text.count("\n") <= MAX_LINES:
        return text
    lines = text.split("\n")
    start = max(int(offset) - 1, 0) if isinstance(offset, (int, float)) else 0
    return ws.cut(lines[start:], limit)


def _sort_key(name: str) -> tuple[str, str]:
    return (name.lower(), name)


def _ls(ws: Workspace, args: Mapping[str, Any]) -> str:
    path = ws.path(args.get("path"))
    if not files.is_directory(path):
        raise _Failed(ws.say("not_a_directory", path=args.get("path") or "."))
    names = [e.name + ("/" if e.is_dir() else "") for e in sorted(os.scandir(path), key=lambda e: _sort_key(e.name))]
    return ws.cut(names, args.get("limit")) if names else ws.say("empty_directory")


def _walk(ws: Workspace, start: Path) -> list[Path]:
    found: list[Path] = []
    for directory, dirs, files in os.walk(start):
        dirs[:] = sorted((d for d in dirs if d not in (".git", "node_modules")), key=_sort_key)
        found.extend(Path(directory) / f for f in sorted(files, key=_sort_key))
        if len(found) > 20 * MAX_RESULTS:
            break
    return found


def _find(ws: Workspace, args: Mapping[str, Any]) -> str:
    start = ws.path(args.get("path"))
    pattern = str(args.get("pattern") or "*")
    matches = [ws.relative(p) for p in _walk(ws, start)
               if fnmatch.fnmatch(p.relative_to(start).as_posix(), pattern) or fnmatch.fnmatch(p.name, pattern)]
    if not matches:
        return ws.say("no_matches")
    return ws.cut(matches, args.get("limit") or MAX_RESULTS)


def _grep(ws: Workspace, args: Mapping[str, Any]) -> str:
    start = ws.path(args.get("path"))
    source = str(args.get("pattern") or "")
    flags = re.IGNORECASE if args.get("ignoreCase") else 0
    try:
        regex = re.compile(re.escape(source) if args.get("literal") else source, flags)
    except re.error as err:
        raise _Failed(ws.say("invalid_pattern", error=err)) from None
    glob = args.get("glob")
    if not files.is_directory(start):  # one file, named: a refusal is the result
        hits = _grep_file(ws, start, regex, ws.read(start, args.get("path")))
        return ws.cut(hits, args.get("limit") or MAX_RESULTS) if hits else ws.say("no_matches")
    hits: list[str] = []
    for path in _walk(ws, start):
        if isinstance(glob, str) and glob and not fnmatch.fnmatch(path.name, glob):
            continue
        hits.extend(_grep_file(ws, path, regex))
        if len(hits) >= MAX_RESULTS:
            break
    return ws.cut(hits, args.get("limit") or MAX_RESULTS) if hits else ws.say("no_matches")


def _grep_file(ws: Workspace, path: Path, regex: re.Pattern, data: bytes | None = None) -> list[str]:
    """Matching lines of one file; in a walk, a file the bounded reader refuses (a FIFO, a
    device, one too large) is passed over like a binary one."""
    if data is None:
        try:
            data = files.read_bytes(path, KIND)
        except PipelineError:
            return []
    if b"\x00" in data[:8192]:
        return []
    lines = data.decode("utf-8", "replace").split("\n")
    return [f"{ws.relative(path)}:{i}:{line}" for i, line in enumerate(lines, 1) if regex.search(line)]


# --------------------------------------------------------------------------- opt-in tools


def _bash(ws: Workspace, args: Mapping[str, Any]) -> ToolOutput:
    timeout = args.get("timeout") if isinstance(args.get("timeout"), (int, float)) else BASH_TIMEOUT_S
    try:
        done = subprocess.run(["bash", "-c", str(args.get("command") or "")], cwd=ws.root, capture_output=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as err:
        output = (err.stdout or b"") + (err.stderr or b"")
        return ToolOutput(content=output.decode("utf-8", "replace"), is_error=True)
    output = (done.stdout + done.stderr).decode("utf-8", "replace")
    return ToolOutput(content=ws.cut(output.split("\n")), is_error=done.returncode != 0,
                      details={"exitCode": done.returncode})


def _edit(ws: Workspace, args: Mapping[str, Any]) -> ToolOutput:
    path = ws.path(args.get("path"))
    if files.is_directory(path):
        raise _Failed(ws.say("not_a_file", path=args.get("path")))
    text = ws.read(path, args.get("path")).decode("utf-8")
    for edit in args.get("edits") or []:
        old, new = str(edit.get("oldText")), str(edit.get("newText"))
        if text.count(old) != 1:
            raise _Failed(ws.say("no_matches"))
        text = text.replace(old, new, 1)
    _write_regular(ws, path, text.encode("utf-8"), args.get("path"))
    return ToolOutput(content=ws.relative(path), details={"edits": len(args.get("edits") or [])})


def _write(ws: Workspace, args: Mapping[str, Any]) -> ToolOutput:
    given = str(args.get("path") or "")
    target = (ws.root / given).resolve()
    if ws.root not in target.parents:
        raise _Failed(ws.say("outside", path=given))
    if files.is_directory(target):
        raise _Failed(ws.say("not_a_file", path=given))
    target.parent.mkdir(parents=True, exist_ok=True)
    data = str(args.get("content") or "").encode("utf-8")
    _write_regular(ws, target, data, given)
    return ToolOutput(content=ws.relative(target), details={"bytes": len(data)})


def _write_regular(ws: Workspace, path: Path, data: bytes, given: Any) -> None:
    """Replace (or create) a regular file: opened without blocking and checked before a
    byte is written, so a FIFO (which would wait for a reader) or a device is refused."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as err:
        if err.errno == errno.ENXIO:  # a FIFO nobody reads
            raise _Failed(ws.say("not_regular", path=given)) from None
        raise _Failed(ws.say("unreadable", path=given, reason=files.describe_os_error(err))) from None
    with os.fdopen(fd, "wb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _Failed(ws.say("not_regular", path=given))
        os.set_blocking(fd, True)
        handle.truncate(0)
        handle.write(data)


_FUNCTIONS: dict[str, Callable[[Workspace, Mapping[str, Any]], Any]] = {
    "read": _read, "ls": _ls, "find": _find, "grep": _grep, "bash": _bash, "edit": _edit, "write": _write,
}


def _guarded(ws: Workspace, function: Callable[[Workspace, Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any]], Any]:
    def call(args: Mapping[str, Any]) -> Any:
        try:
            return function(ws, args)
        except _Failed as failed:
            return ToolOutput(content=str(failed), is_error=True)

    return call


def builtin_tools(names: Sequence[str], cwd: str | os.PathLike, plan: RunPlan) -> list[Tool]:
    """The built-in tools ``names`` over ``cwd``; texts from ``plan`` (its ``runtime`` block)."""
    unknown = [n for n in names if n not in _FUNCTIONS]
    if unknown:
        raise ValueError(f"unknown tool {unknown[0]!r}; built-in tools: {', '.join((*READ_ONLY, *OPT_IN))}")
    if plan.runtime is None:
        raise PipelineError(Problem("the profile has no `runtime` block, which the built-in tools need", key="runtime",
                                    code="profile.missing-key"))
    ws = Workspace(cwd, plan.runtime.tool_output)
    return [Tool(name=n, parameters=SCHEMAS[n], function=_guarded(ws, _FUNCTIONS[n])) for n in names]
