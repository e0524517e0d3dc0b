"""Session entries for the projection plan cases (``tests/data/pi16/plans_projection.json``),
from a compact notation; shared by the vector generator and the test, so the file holds
the notation, not the entries.

Tokens are those of ``tests/compaction/entryspec.py`` (``U10 A10 T10 B CU CM BS MC TL LB CE
SI Cn:b:k``) plus pi 1.x's context edits and a few variations:

* ``Xk`` a ``context_edit`` that omits entry ``k`` (``replacement: null``);
* ``Rk:n`` a ``context_edit`` whose replacement is an ``n``-token string;
* ``RBk:n`` one whose replacement is a block list: an ``n``-token text and a ``read`` call of
  ``new-k.ts`` (so the file lists see the edited call);
* ``REk`` one whose replacement object has no ``content`` key;
* suffixes on ``A``: ``@u`` usage of ``u`` total tokens (an anchor for the context
  estimate), ``!`` stop reason ``error``, ``#f`` a ``read`` call of ``f.ts``, ``$f`` an
  ``edit`` call of ``f.ts``.
* ``S`` a ``system`` message entry (pi 1.x's recorded prompt: one section); ``ST`` one that
  also adds a tool; ``SP`` a later patch that drops the ``preamble`` section, adds ``cwd``
  and removes that tool;
* ``US`` a ``usage`` entry (pi 1.x's record of a side call's usage: shows nothing);
* ``CSn:b:k`` a compaction as pi 1.x writes one while a system message is recorded: with
  its ``systemMessage`` snapshot.

Ids are ``e0000000``, ``e0000001``... (the token's position); each entry's parent is the
one before it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compaction"))

from entryspec import entry_id, raw_entries  # noqa: E402

_EDIT = re.compile(r"^(X|RB|RE|R)(\d+)(?::(\d+))?$")
_SNAPSHOT = re.compile(r"^CS(\d+):(\d+):(\d+)$")
_TOOL = {"name": "read", "description": "read a file", "parameters": {"type": "object", "properties": {}}}


def _system(token: str, index: int) -> dict:
    message: dict = {"role": "system", "content": "", "sections": {"preamble": "p" * 40},
                     "timestamp": 1767225600000 + index * 1000}
    if token == "ST":
        message["toolsAdded"] = [_TOOL]
    elif token == "SP":
        message["sections"] = {"preamble": None, "cwd": "w" * 20}
        message["toolsRemoved"] = [{"name": "read"}]
    return message
_ASSISTANT = re.compile(r"^A(\d+)((?:@\d+|!|#\w+|\$\w+)*)$")


def _edit(kind: str, target: int, n: int | None) -> dict:
    edit: dict = {"type": "context_edit", "targetId": entry_id(target)}
    if kind == "X":
        edit["replacement"] = None
    elif kind == "R":
        edit["replacement"] = {"content": "r" * (4 * (n or 0))}
    elif kind == "RB":
        edit["replacement"] = {"content": [{"type": "text", "text": "r" * (4 * (n or 0))},
                                           {"type": "toolCall", "id": "x", "name": "read",
                                            "arguments": {"path": f"new-{target}.ts"}}]}
    else:
        edit["replacement"] = {}
    return edit


def _assistant(raw: dict, suffixes: str) -> None:
    message = raw["message"]
    for part in re.findall(r"@\d+|!|#\w+|\$\w+", suffixes):
        if part.startswith("@"):
            total = int(part[1:])
            message["usage"] = dict(message["usage"], input=total, totalTokens=total)
        elif part == "!":
            message["stopReason"] = "error"
        else:
            name = "read" if part[0] == "#" else "edit"
            message["content"].append({"type": "toolCall", "id": f"c{part[1:]}", "name": name,
                                       "arguments": {"path": f"{part[1:]}.ts"}})


def plan_entries(spec: str) -> list[dict]:
    """The entry objects ``spec`` describes (see the module doc)."""
    tokens = spec.split()
    plain = []
    for token in tokens:
        if _EDIT.match(token) or token in ("S", "ST", "SP", "US"):
            plain.append("SI")
        elif _SNAPSHOT.match(token):
            plain.append(token[0] + token[2:])
        else:
            match = _ASSISTANT.match(token)
            plain.append(f"A{match.group(1)}" if match else token)
    out = raw_entries(" ".join(plain))
    for index, token in enumerate(tokens):
        head = {k: out[index][k] for k in ("id", "parentId", "timestamp")}
        edit, assistant = _EDIT.match(token), _ASSISTANT.match(token)
        if edit:
            kind, target, n = edit.groups()
            out[index] = {**_edit(kind, int(target), int(n) if n else None), **head}
        elif token in ("S", "ST", "SP"):
            out[index] = {"type": "message", **head, "message": _system(token, index)}
        elif token == "US":
            out[index] = {"type": "usage", **head, "kind": "summary", "provider": "anthropic", "model": "m",
                          "usage": {"input": 900, "output": 10, "totalTokens": 910}}
        elif _SNAPSHOT.match(token):
            out[index]["systemMessage"] = dict(_system("ST", index), sections={"preamble": "q" * 60})
        elif assistant and assistant.group(2):
            _assistant(out[index], assistant.group(2))
    return out
