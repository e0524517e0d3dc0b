"""Streaming reader for session files: lines → JSON objects → typed entries.

The file is read in blocks of lines (split on ``\\n`` only, as pi splits it). A plain
``message`` line (the bulk of a file) is indexed by its head alone: type, id, parent,
timestamp and role are decoded (msgspec, every other key checked but skipped) and the
entry remembers where its line is; its JSON is parsed when the message is asked for
(:class:`FileLines`). The header, other entry types and anything unusual go line by
line through :class:`Scanner` and keep their parsed object. Nothing is dropped
silently: every line pi would skip is reported as a located
:class:`~pipeline.errors.Problem` (``file:line``):

* ``session.torn-line`` — the last line has no newline and does not parse (a crash
  mid-write); left out of the context;
* ``session.repaired-torn-line`` (a warning) — a complete line that is a JSON object cut
  short (:func:`~pipeline.session.jsonline.is_cut_object`): a torn line the store
  repaired by starting the next entry on a fresh line;
* ``session.not-json`` / ``session.not-object`` — any other complete line that is not a
  JSON object;
* ``session.blank-line``, ``session.extra-header`` (a second ``type: "session"`` line,
  which pi ignores) and ``session.no-newline`` (a complete last line without its
  newline) — warnings;
* ``session.line-too-long`` — a line beyond :data:`~pipeline.limits.SESSION_MAX_LINE`
  bytes, streamed past without being held;
* shape problems of single entries (``session.bad-entry``) and unknown entry types
  or message roles (``session.unknown-type``, warnings).

Tree problems (duplicate ids, dangling parents, cycles) are found by
:mod:`pipeline.session.tree`.
"""

from __future__ import annotations

import json
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Union

import msgspec

from pipeline import files
from pipeline.errors import Location, Problem, SessionError
from pipeline.limits import SESSION_MAX_LINE
from pipeline.js import js_trim
from pipeline.session.entries import Entry, MessageEntry, SessionHeader, entry_issues, parse_entry
from pipeline.gcpause import gc_paused
from pipeline.session.jsonline import describe_error, is_cut_object
from pipeline.session.messages import KNOWN_ROLES, LATER_ROLES, UnknownMessage
from pipeline.session.migrate import header_version, migrate, needs_migration


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: ``JSON.parse``: like Python's decoder minus ``NaN``/``Infinity``.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _parse(text: str) -> Any:
    """``JSON.parse`` of one line; the usual ``{...}`` + newline skips the decoder's whitespace scans."""
    if text[:1] == "{" and text[-1:] == "\n":
        try:
            obj, end = _DECODER.raw_decode(text)
        except ValueError:
            pass  # decode() below reports it, with the same position
        else:
            if end == len(text) - 1:
                return obj
    return _DECODER.decode(text)


_FULL = msgspec.json.Decoder()


def parse_line(raw: bytes) -> Any:
    """``JSON.parse`` of one line's bytes: msgspec's decoder, and on anything it refuses
    (a lone surrogate escape, bytes that are not UTF-8, a number beyond a double, NaN)
    the reader's own decoder, so the value is always the one :class:`Scanner` accepted."""
    try:
        return _FULL.decode(raw)
    except msgspec.DecodeError:
        return _parse(raw.decode("utf-8", "replace"))


def _at_line(problem: Problem, line: int) -> bool:
    return problem.location is not None and problem.location.line == line


TORN = "torn last line (a write was cut short); left out"
TORN_HINT = "the next append starts on a fresh line"
REPAIRED = "torn line (a write was cut short), repaired by a later append; skipped"
REPAIRED_HINT = "the entry being written then was never completed; the lines after it are intact"


@dataclass
class Scanner:
    """Turns raw lines into JSON objects, counting lines and bytes and reporting bad lines."""

    file: str
    line: int = 0
    offset: int = 0
    problems: list[Problem] = field(default_factory=list)
    tail_start: int | None = None  # offset of an unterminated last line
    torn: Problem | None = None

    def scan(self, lines: "Iterator[bytes | Overlong]") -> Iterator[tuple[int, dict[str, Any]]]:
        """Yield ``(line number, object)`` for every line holding a JSON object."""
        for raw in lines:
            self.line += 1
            if isinstance(raw, Overlong):
                self._overlong(raw)
                continue
            start, self.offset = self.offset, self.offset + len(raw)
            terminated = raw.endswith(b"\n")
            self.tail_start = None if terminated else start
            obj = self._decode(raw, terminated)
            if obj is not None:
                yield self.line, obj

    def _overlong(self, raw: "Overlong") -> None:
        start, self.offset = self.offset, self.offset + raw.size
        self.tail_start = None if raw.terminated else start
        self.report(f"line longer than {SESSION_MAX_LINE} bytes ({raw.size} bytes); skipped", "session.line-too-long",
                    hint="see docs/limits.md")

    def _decode(self, raw: bytes, terminated: bool) -> dict[str, Any] | None:
        text = raw.decode("utf-8", "replace")
        if text[:1] != "{" and not js_trim(text):
            self.report("blank line (skipped)", "session.blank-line", "warning")
            return None
        try:
            obj = _parse(text)
        except ValueError as err:
            return self._bad_json(err, text, terminated, len(raw) - terminated)
        except RecursionError:
            self.report("line is nested too deeply to read; skipped", "session.too-deep",
                        hint="pi reads it; this tool stops at Python's nesting limit")
            return None
        except MemoryError:
            return self._too_big(len(raw) - terminated)
        if not isinstance(obj, dict):
            self.report(f"line is JSON but not an object ({type(obj).__name__}); skipped", "session.not-object")
            return None
        if not terminated:
            self.report("last line has no newline; the next append starts a new line", "session.no-newline", "warning")
        return obj

    def _too_big(self, size: int) -> None:  # the line's bytes, newline excluded
        self.report(f"line too large to read in the memory available ({size} bytes); skipped",
                    "session.line-too-long", hint="see docs/limits.md")
        return None

    def _bad_json(self, err: ValueError, text: str, terminated: bool, size: int) -> None:
        try:
            self._classify(err, text, terminated)
        except MemoryError:
            self._too_big(size)

    def _classify(self, err: ValueError, text: str, terminated: bool) -> None:
        if not terminated:
            self.torn = self.report(TORN, "session.torn-line", hint=TORN_HINT)
        elif is_cut_object(text[:-1]):
            self.report(REPAIRED, "session.repaired-torn-line", "warning", hint=REPAIRED_HINT)
        else:
            self.report(f"{describe_error(err)}; skipped", "session.not-json")
        return None

    def tail_problems(self, raw: bytes | None) -> list[Problem]:
        """What a torn last line (``raw``) will be reported as once an append ends it with a
        newline (see :func:`~pipeline.session.jsonline.is_cut_object`). Worked out *before*
        the append, so that reading the line, however long, can fail without the file having
        changed."""
        if self.torn is None or raw is None:
            return []
        saved, self.problems = self.problems, []
        try:
            self._decode(raw + b"\n", True)
            return self.problems
        finally:
            self.problems = saved

    def end_tail(self, found: list[Problem]) -> None:
        """The store ended the unterminated last line with a newline: what was reported about
        it as a last line no longer holds; ``found`` (:meth:`tail_problems`) replaces it."""
        stale = ("session.torn-line", "session.no-newline")
        self.problems[:] = [p for p in self.problems if not (p.code in stale and _at_line(p, self.line))]
        self.problems.extend(found)
        self.torn = None
        self.tail_start = None

    def report(self, message: str, code: str, severity: str = "error", hint: str | None = None) -> Problem:
        """Record a problem at the current line and return it."""
        problem = Problem(message, Location(self.file, self.line), severity=severity, code=code, hint=hint)
        self.problems.append(problem)
        return problem


@dataclass(frozen=True)
class Overlong:
    """A line beyond :data:`~pipeline.limits.SESSION_MAX_LINE`: its size only (never held)."""

    size: int
    terminated: bool


def is_header(obj: dict[str, Any]) -> bool:
    """pi's header test: ``type == "session"`` and a string ``id``."""
    return obj.get("type") == "session" and isinstance(obj.get("id"), str)


@dataclass
class Loaded:
    """Everything read from one file."""

    header: SessionHeader
    entries: list[Entry]
    problems: list[Problem]
    migrated_from: Any  # the file's version when it was migrated in memory, else None
    scanner: Scanner


def load(path: Path) -> Loaded:
    """Read a session file; raises :class:`PipelineError` when it is not a session at all."""
    label = str(path)
    scanner = Scanner(label)
    with gc_paused(promote=True):
        try:
            with files.open_regular(path, "session file", label) as handle:
                indexer = _Indexer(scanner, FileLines(label, os.dup(handle.fileno())))
                indexer.run(_blocks(handle))
        except OSError as err:
            raise SessionError(Problem(f"cannot read session file: {files.describe_os_error(err)}", Location(label),
                                        code="session.unreadable")) from None
        if indexer.header is None:
            raise SessionError(_no_json_line(label, scanner.problems))
        return indexer.finish()


class FileLines:
    """The session file's lines, read again by offset (``pread`` on a descriptor kept open,
    so a file renamed over the path later does not change what was read)."""

    def __init__(self, label: str, fd: int) -> None:
        self.label, self.fd = label, fd
        weakref.finalize(self, os.close, fd)

    def parse(self, offset: int, size: int) -> Any:
        """The JSON object on the line at ``offset`` (``size`` bytes, newline excluded)."""
        raw = os.pread(self.fd, size, offset)
        if len(raw) != size:
            raise SessionError(Problem("the file shrank since it was opened (it is not append-only)",
                                        Location(self.label), code="session.shrank"))
        return parse_line(raw)

    def blocks(self, offset: int, size: int) -> list[tuple[Any, Any, Any]] | None:
        """``(type, name, arguments)`` of each block of the line's ``message.content`` (a
        missing key reads as None), building nothing for text or thinking; None when the
        content is not a list of objects (or the line is one msgspec refuses): read the JSON then."""
        raw = os.pread(self.fd, size, offset)
        try:
            line = _BLOCKS.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            return None
        return [(b.type, b.name, b.arguments) for b in line.message.content]


class _Block(msgspec.Struct):
    """A content block as the file-operation scan reads it (text and thinking skipped)."""

    type: Any = None
    name: Any = None
    arguments: Any = None


class _Blocks(msgspec.Struct):
    content: list[_Block]


class _BlocksLine(msgspec.Struct):
    message: _Blocks


_BLOCKS = msgspec.json.Decoder(_BlocksLine)


class _Role(msgspec.Struct):
    role: Any = msgspec.UNSET
    content: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET  # located, not parsed


_NULL = msgspec.Raw(b"null")
#: Roles whose null or missing ``content`` the projection replaces (such lines keep their object).
_CONTENT_ROLES = frozenset({"user", "assistant", "toolResult"})


class _Head(msgspec.Struct):
    """What the index needs of a ``message`` line; every other key is skipped (checked, not built)."""

    type: str = ""
    id: str = ""
    parentId: Union[str, None] = msgspec.UNSET  # noqa: N815 (pi's key)
    timestamp: Union[str, msgspec.UnsetType] = msgspec.UNSET
    message: Union[_Role, msgspec.UnsetType] = msgspec.UNSET


_HEAD = msgspec.json.Decoder(_Head)
_BLOCK = 8 << 20


def _blocks(handle: BinaryIO, max_line: int | None = None) -> Iterator["bytes | Overlong"]:
    """The file in blocks of whole lines (the last may be an unterminated line); a line
    longer than ``max_line`` is read past without being held and given as :class:`Overlong`."""
    max_line = SESSION_MAX_LINE if max_line is None else max_line
    carry, skipped = b"", None  # skipped: bytes read past so far of an overlong line
    while data := handle.read(_BLOCK):
        if skipped is not None or len(carry) + _first_line_length(data) > max_line:
            newline = data.find(b"\n")
            skipped = (len(carry) if skipped is None else skipped) + (len(data) if newline < 0 else newline + 1)
            carry = b""
            if newline < 0:
                continue
            yield Overlong(skipped, True)
            skipped, data = None, data[newline + 1:]
        data = carry + data if carry else data
        cut = data.rfind(b"\n") + 1
        carry = data[cut:]
        if cut:
            yield data[:cut]
    if skipped is not None:
        yield Overlong(skipped, False)
    elif carry:
        yield carry


def _first_line_length(data: bytes) -> int:
    newline = data.find(b"\n")
    return len(data) if newline < 0 else newline


def _plain(head: _Head | None) -> bool:
    """A ``message`` line whose entry needs no report and whose projection needs nothing
    but its role (a known one; ``content`` present and not null where it matters)."""
    if head is None or head.type != "message" or head.parentId is msgspec.UNSET or head.timestamp is msgspec.UNSET:
        return False
    message = head.message
    if message is msgspec.UNSET or not isinstance(message.role, str) or message.role not in KNOWN_ROLES:
        return False
    return message.role not in _CONTENT_ROLES or (message.content is not msgspec.UNSET and message.content != _NULL)


class _Indexer:
    """Reads blocks of lines: the header and anything unusual through the :class:`Scanner`;
    plain ``message`` lines by their head only (:class:`_Head`), keeping where each line
    is instead of its object."""

    def __init__(self, scanner: Scanner, lines: FileLines) -> None:
        self.scanner, self.lines = scanner, lines
        self.header: tuple[int, dict] | None = None
        self.migrating = False
        self.entries: list[Entry] = []
        self.objects: list[tuple[int, dict]] = []  # held when the file is migrated

    def run(self, blocks: Iterator["bytes | Overlong"]) -> None:
        for block in blocks:
            if isinstance(block, Overlong):
                self._one(block)  # reported by the scanner, never held
                continue
            pos = 0
            while pos < len(block) and (self.header is None or self.migrating or not block.endswith(b"\n")):
                end = block.find(b"\n", pos)
                end = len(block) if end < 0 else end + 1
                self._one(block[pos:end])
                pos = end
            if pos < len(block):
                self._plain_lines(block[pos:] if pos else block)

    def _one(self, raw: "bytes | Overlong") -> None:
        scanner = self.scanner
        for line, obj in scanner.scan(iter((raw,))):
            if self.header is None:
                if not is_header(obj):
                    raise SessionError(_not_a_session(scanner.file, line))
                self.header = (line, obj)
                self.migrating = needs_migration(header_version(obj))
            elif obj.get("type") == "session":
                scanner.report("a second session header (ignored, as pi ignores it)", "session.extra-header", "warning")
            elif self.migrating:
                self.objects.append((line, obj))
            else:
                entry = entry_or_none(obj, line, scanner.file, scanner.problems)
                if entry is not None:
                    self.entries.append(entry)

    def _plain_lines(self, block: bytes) -> None:
        scanner, append, source, decode = self.scanner, self.entries.append, self.lines, _HEAD.decode
        lines = block.split(b"\n")
        lines.pop()  # the block ends with a newline
        for raw in lines:
            try:
                head: _Head | None = decode(raw)
            except (msgspec.DecodeError, RecursionError):
                head = None
            if _plain(head):
                scanner.line += 1
                append(MessageEntry(
                    id=head.id, parent_id=head.parentId, timestamp=head.timestamp,  # type: ignore[union-attr]
                    role_name=head.message.role, source=source, offset=scanner.offset,  # type: ignore[union-attr]
                    size=len(raw), line=scanner.line,
                ))
                scanner.offset += len(raw) + 1
                scanner.tail_start = None
            else:
                self._one(raw + b"\n")

    def finish(self) -> Loaded:
        assert self.header is not None
        return _finish(self.scanner.file, self.header, self.objects, self.scanner, self.entries)




def _not_a_session(label: str, line: int | None) -> Problem:
    """pi's rule: the first line that parses must be a header with a string ``id``."""
    if line is None:
        return Problem("not a pi session file: no JSON line in it", Location(label), code="session.not-a-session")
    return Problem(
        "not a pi session file: the first JSON line must be a header "
        '{"type":"session","version":3,"id":...}',
        Location(label, line), code="session.not-a-session",
    )


def _no_json_line(label: str, problems: list[Problem]) -> Problem:
    """No line parsed: located at the first line that could not be read (a file whose only
    line was cut short says ``file:1:``), with why; a file of blank lines, or none, is
    named alone."""
    bad = next((p for p in problems if p.severity == "error" and p.location is not None and p.location.line), None)
    if bad is None or bad.location is None:
        return _not_a_session(label, None)
    line, why = bad.location.line, bad.message.split("; ")[0]  # not "; skipped": nothing is left to read
    return Problem(f"not a pi session file: no JSON line in it (line {line}: {why})", Location(label, line),
                   code="session.not-a-session")


def _finish(label: str, header_line: tuple[int, dict], objects: list[tuple[int, dict]], scanner: Scanner,
            entries: list[Entry]) -> Loaded:
    line, header_obj = header_line
    version = header_version(header_obj)
    migrated_from = None
    if needs_migration(version):
        migrate([header_obj] + [obj for _, obj in objects])
        migrated_from = version
        scanner.problems.append(Problem(
            f"session format version {version} migrated to 3 in memory (the file is not rewritten)",
            Location(label, line), severity="warning", code="session.migrated",
        ))
    header = SessionHeader.from_json(header_obj, line)
    entries = entries + build_entries(objects, label, scanner.problems)
    return Loaded(header, entries, scanner.problems, migrated_from, scanner)


def build_entries(objects: list[tuple[int, dict[str, Any]]], label: str, problems: list[Problem]) -> list[Entry]:
    """Typed entries for parsed objects; entries pi could not use are reported and left out."""
    entries: list[Entry] = []
    for line, obj in objects:
        entry = entry_or_none(obj, line, label, problems)
        if entry is not None:
            entries.append(entry)
    return entries


def entry_or_none(obj: dict[str, Any], line: int, label: str, problems: list[Problem]) -> Entry | None:
    """One typed entry, or None (reported) when it has no id or a message entry has no message."""
    fatal = False
    for key, message, is_fatal in entry_issues(obj):
        severity = "error" if is_fatal else "warning"
        problems.append(Problem(message, Location(label, line), key=key, severity=severity, code="session.bad-entry"))
        fatal = fatal or is_fatal
    if fatal:
        return None
    entry = parse_entry(obj, line)
    _note_unknown(entry, label, problems)
    return entry


def _note_unknown(entry: Entry, label: str, problems: list[Problem]) -> None:
    if entry.type == "unknown":
        what = f"unknown entry type {json.dumps(entry.raw.get('type'))} (kept as is; not in the context)"
    elif isinstance(entry, MessageEntry) and entry.role == UnknownMessage.role:
        role = entry.raw["message"].get("role")
        if isinstance(role, str) and role in LATER_ROLES:  # pi 1.x's recorded system prompt: expected
            return  # (a role that is an object, `{"type": "toolCall"}`, is only named: it is unhashable)
        role = json.dumps(role)
        what = f"unknown message role {role} (kept; pi leaves it out of the context)"
    else:
        return
    problems.append(Problem(what, Location(label, entry.line), severity="warning", code="session.unknown-type"))


__all__ = ["FileLines", "Loaded", "Overlong", "Scanner", "build_entries", "entry_or_none", "is_header", "load",
           "parse_line"]
