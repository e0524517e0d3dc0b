#!/usr/bin/env python3
"""Generate the session test vectors from pi 0.84.0 (the oracle). Needs the oracle; the tests do not.

    /tmp/venv/bin/python tests/data/sessions/gen_vectors.py [--oracle /tmp/oracle]

What it writes (all under ``tests/data/sessions/``):

* ``real/*.jsonl`` — copies of the oracle's four agent sessions (written by pi itself);
* ``generated/*.jsonl`` — small sessions built by pi's own ``SessionManager`` (op
  ``session_create``): every entry type, compactions (one re-kept before an older
  one), branch summaries (empty, from the root), labels, model/thinking changes,
  failed replies, several roots;
* ``edge/*.jsonl`` — hand-made files pi loads: damaged lines, duplicate ids, dangling
  parents, odd values, format versions 1 and 2;
* ``written/*.jsonl`` — files written by *our* store (including a torn last line that a
  later append repaired), to prove pi 0.84.0 loads what we write;
* ``vectors/context.json`` — pi's ``buildSessionContext`` + ``convertToLlm`` for many
  leaves of every file (messages de-duplicated into one table);
* ``vectors/open.json`` — what pi's ``SessionManager.open`` makes of every file;
* ``vectors/convert.json`` — ``convertToLlm`` on odd agent messages;
* ``vectors/tree.json`` — pi's deepest common ancestor of pairs of entries.

pi's own sentences never reach these files: the summary wrappers (op ``constants``) and
the shell-command words (found by probing ``convert_to_llm`` with marker strings) are
recognised in pi's output at generation time and replaced by the mask texts in
``MASKS``; the tests build a ``ContextTexts`` from the same masks.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from pipeline.js import js_json  # noqa: E402
from pipeline.session import SessionFile  # noqa: E402

REAL_SESSIONS = Path(os.environ.get("PI_SESSIONS", "/work/shared/oracle/sessions"))

MASKS = {
    "compaction_open": "<<COMPACTION_OPEN>>",
    "compaction_close": "<<COMPACTION_CLOSE>>",
    "branch_open": "<<BRANCH_OPEN>>",
    "branch_close": "<<BRANCH_CLOSE>>",
    "bash_ran": "<<RAN:${command}>>",
    "bash_output": "<<OUTPUT:${output}>>",
    "bash_no_output": "<<NO_OUTPUT>>",
    "bash_cancelled": "<<CANCELLED>>",
    "bash_exit_code": "<<EXIT:${code}>>",
    "bash_truncated": "<<TRUNCATED:${path}>>",
}


# =========================================================================== oracle


class Oracle:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def run(self, requests: list[dict], allow_errors: bool = False) -> list:
        """One ``--jsonl`` process for a batch; results in order."""
        text = "".join(json.dumps(r) + "\n" for r in requests)
        proc = subprocess.run(
            [str(self.directory / "oracle"), "--jsonl"], input=text, capture_output=True, text=True,
            cwd=self.directory, check=True,
        )
        replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        assert len(replies) == len(requests), proc.stderr[-2000:]
        for request, reply in zip(requests, replies):
            if not reply["ok"] and not allow_errors:
                raise RuntimeError(f"oracle failed on {json.dumps(request)[:300]}: {reply['error']}")
        return [reply.get("result") if reply["ok"] else {"error": reply["error"]} for reply in replies]


# =========================================================================== masking

C, O, P = "\ue000cmd\ue000", "\ue001out\ue001", "\ue002path\ue002"


def js_truthy(v) -> bool:
    return not (v is None or v is False or v == "" or (isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0))


def js_str(v) -> str:
    if isinstance(v, str):
        return v
    return js_json(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else {True: "true", False: "false", None: "null"}.get(v, str(v))


def _field(m: dict, key: str) -> str:
    """``String(m[key])`` in a template literal (a missing key is ``undefined``)."""
    return js_str(m[key]) if key in m else "undefined"


class PiWords:
    """pi's wrapper and shell-command words, found at generation time (never written anywhere)."""

    def __init__(self, oracle: Oracle) -> None:
        constants, *probes = oracle.run([{"op": "constants"}] + [
            {"op": "convert_to_llm", "messages": [dict(role="bashExecution", command=C, timestamp=1, **kw)]}
            for kw in (
                dict(output="", exitCode=0, cancelled=False, truncated=False),
                dict(output=O, exitCode=0, cancelled=False, truncated=False),
                dict(output=O, exitCode=0, cancelled=True, truncated=False),
                dict(output=O, exitCode=4242, cancelled=False, truncated=False),
                dict(output=O, exitCode=0, cancelled=False, truncated=True, fullOutputPath=P),
            )
        ])
        self.compaction = (constants["COMPACTION_SUMMARY_PREFIX"], constants["COMPACTION_SUMMARY_SUFFIX"])
        self.branch = (constants["BRANCH_SUMMARY_PREFIX"], constants["BRANCH_SUMMARY_SUFFIX"])
        no, out, cancelled, exit_, trunc = (p[0]["content"][0]["text"] for p in probes)
        after_no, after_out = no.split(C, 1)[1], out.split(C, 1)[1]
        common = os.path.commonprefix([after_no, after_out])
        self.ran = (out.split(C, 1)[0], common)
        self.no_output = after_no[len(common):]
        rest = after_out[len(common):]
        self.output = tuple(rest.split(O))
        self.cancelled = cancelled[len(out):]
        self.exit = tuple(exit_[len(out):].split("4242"))
        self.truncated = tuple(trunc[len(out):].split(P))
        assert len(self.output) == len(self.exit) == len(self.truncated) == 2

    def mask_bash(self, text: str, m: dict) -> str:
        """Read pi's text for message ``m`` piece by piece; rebuild it with the masks."""
        reader, out = _Reader(text), []
        reader.expect(self.ran[0] + _field(m, "command") + self.ran[1])
        out.append(MASKS["bash_ran"].replace("${command}", _field(m, "command")))
        if js_truthy(m.get("output")):
            reader.expect(self.output[0] + _field(m, "output") + self.output[1])
            out.append(MASKS["bash_output"].replace("${output}", _field(m, "output")))
        else:
            reader.expect(self.no_output)
            out.append(MASKS["bash_no_output"])
        if reader.take(self.cancelled):
            out.append(MASKS["bash_cancelled"])
        elif reader.take(self.exit[0]):
            code = _field(m, "exitCode")
            reader.expect(code + self.exit[1])
            out.append(MASKS["bash_exit_code"].replace("${code}", code))
        if reader.take(self.truncated[0]):
            path = _field(m, "fullOutputPath")
            reader.expect(path + self.truncated[1])
            out.append(MASKS["bash_truncated"].replace("${path}", path))
        assert reader.done(), (text, m)
        return "".join(out)

    def mask_summary(self, text: str, role: str) -> str:
        (pre, post), key = (self.compaction, "compaction") if role == "compactionSummary" else (self.branch, "branch")
        assert text.startswith(pre) and text.endswith(post), (role, text[:80])
        return MASKS[f"{key}_open"] + text[len(pre): len(text) - len(post)] + MASKS[f"{key}_close"]

    def mask(self, agent: list[dict], llm: list[dict]) -> list[dict]:
        """pi's convertToLlm output with pi's words replaced by the masks."""
        kept = [m for m in agent if _kept_by_pi(m)]
        assert len(kept) == len(llm), (len(kept), len(llm))
        return [self._mask_one(a, m) for a, m in zip(kept, llm)]

    def _mask_one(self, agent: dict, llm: dict) -> dict:
        role = agent.get("role")
        if role not in ("bashExecution", "compactionSummary", "branchSummary"):
            return llm
        text = llm["content"][0]["text"]
        masked = self.mask_bash(text, agent) if role == "bashExecution" else self.mask_summary(text, role)
        return {**llm, "content": [{"type": "text", "text": masked}]}


def _kept_by_pi(m) -> bool:
    role = m.get("role") if isinstance(m, dict) else None
    if role == "bashExecution":
        return not js_truthy(m.get("excludeFromContext"))
    return role in ("user", "assistant", "toolResult", "custom", "branchSummary", "compactionSummary")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def take(self, piece: str) -> bool:
        if piece and self.text.startswith(piece, self.pos):
            self.pos += len(piece)
            return True
        return False

    def expect(self, piece: str) -> None:
        assert self.text.startswith(piece, self.pos), (self.text[self.pos:self.pos + 80], piece[:80])
        self.pos += len(piece)

    def done(self) -> bool:
        return self.pos == len(self.text)


# =========================================================================== sessions pi writes

T0 = 1780300000000
USAGE = {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 20, "totalTokens": 135,
         "cost": {"input": 0.00003, "output": 0.000075, "cacheRead": 0.00003, "cacheWrite": 0.000075, "total": 0.00021}}


def user(text, t, blocks=True):
    return {"message": {"role": "user", "content": [{"type": "text", "text": text}] if blocks else text, "timestamp": T0 + t}}


def asst(text, t, *, calls=(), thinking=None, stop=None, error=None, provider="anthropic", model="claude-sonnet-4-5"):
    content = ([{"type": "thinking", "thinking": thinking, "thinkingSignature": "c2ln"}] if thinking else [])
    content += [{"type": "text", "text": text}] if text is not None else []
    content += [{"type": "toolCall", "id": cid, "name": name, "arguments": args} for cid, name, args in calls]
    message = {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": provider,
               "model": model, "usage": USAGE, "stopReason": stop or ("toolUse" if calls else "stop"),
               "timestamp": T0 + t}
    if error:
        message["errorMessage"] = error
    return {"message": message}


def result(cid, name, text, t, is_error=False):
    return {"message": {"role": "toolResult", "toolCallId": cid, "toolName": name,
                        "content": [{"type": "text", "text": text}], "isError": is_error, "timestamp": T0 + t}}


def bash(command, output, t, **extra):
    base = {"role": "bashExecution", "command": command, "output": output, "exitCode": 0, "cancelled": False,
            "truncated": False, "timestamp": T0 + t}
    return {"message": {**base, **extra}}


FILES = {"readFiles": ["src/a.py"], "modifiedFiles": ["src/b.py"]}
IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}


def spec_all_types() -> list[dict]:
    return [
        {"model": {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}},              # 0
        {"thinkingLevel": "high"},                                                          # 1
        user("start here", 2),                                                              # 2
        asst("reading", 3, thinking="look first", calls=[("toolu_1", "read", {"path": "a.py"})]),  # 3
        result("toolu_1", "read", "print('a')", 4),                                        # 4
        asst("done", 5),                                                                    # 5
        bash("ls", "a\nb", 6),                                                              # 6
        bash("true", "", 7),                                                                # 7
        bash("sleep 9", "partial", 8, cancelled=True, exitCode=None),                       # 8
        bash("false", "", 9, exitCode=2),                                                   # 9
        bash("big", "x" * 40, 10, truncated=True, fullOutputPath="/tmp/full.txt"),          # 10
        bash("big2", "y", 11, truncated=True),                                              # 11
        bash("secret", "hidden", 12, excludeFromContext=True),                              # 12
        bash("odd", "o", 13, exitCode=None),                                                # 13
        {"customMessage": {"customType": "ext", "content": "note for the model", "display": False, "details": {"x": 1}}},  # 14
        {"customMessage": {"customType": "ext", "content": [{"type": "text", "text": "look"}, IMAGE], "display": True}},  # 15
        {"customEntry": {"customType": "ext-state", "data": {"n": 1}}},                     # 16
        {"label": {"targetIndex": 2, "label": "start"}},                                    # 17
        {"label": {"targetIndex": 2, "label": "renamed"}},                                  # 18
        {"label": {"targetIndex": 3, "label": "tmp"}},                                      # 19
        {"label": {"targetIndex": 3, "label": ""}},                                         # 20
        {"sessionName": "demo\r\nname  "},                                                  # 21
        {"message": {"role": "custom", "customType": "ext", "content": "via message", "display": True, "timestamp": T0 + 22}},  # 22
        {"message": {"role": "user", "content": [{"type": "text", "text": "see"}, IMAGE], "timestamp": T0 + 23}},  # 23
        asst("", 24, stop="error", error="overloaded_error: try later"),                    # 24
        asst("half", 25, stop="aborted"),                                                   # 25
        user("after failures", 26, blocks=False),                                           # 26
        asst("ok", 27, provider="openai", model="gpt-5"),                                   # 27
        {"compaction": {"summary": "## Goal\nall types", "firstKeptIndex": 22, "tokensBefore": 1234,
                        "details": FILES, "usage": USAGE}},                                 # 28
        user("post compaction", 29),                                                        # 29
        asst("fine", 30),                                                                   # 30
        {"thinkingLevel": "low"},                                                           # 31
        {"model": {"provider": "google", "modelId": "gemini-2.5-pro"}},                     # 32
        {"branchWithSummary": {"from": 26, "summary": "explored X", "details": FILES}},     # 33
        user("on new branch", 34),                                                          # 34
        asst("branch reply", 35),                                                           # 35
        {"branchWithSummary": {"from": 29, "summary": ""}},                                 # 36
        user("after empty summary", 37),                                                    # 37
        asst("reply", 38),                                                                  # 38
        {"branchWithSummary": {"from": None, "summary": "a summary at the root", "fromHook": True}},  # 39
        user("from root", 40),                                                              # 40
        asst("root reply", 41),                                                             # 41
    ]


def spec_compactions() -> list[dict]:
    return [
        user("u1", 0), asst("a1", 1), user("u2", 2), asst("a2", 3),                         # 0-3
        {"compaction": {"summary": "first summary", "firstKeptIndex": 2, "tokensBefore": 100}},  # 4
        user("u3", 5), asst("a3", 6),                                                       # 5-6
        {"compaction": {"summary": "second, re-keeping from the start", "firstKeptIndex": 0, "tokensBefore": 200,
                        "details": FILES}},                                                 # 7
        user("u4", 8), asst("a4", 9),                                                       # 8-9
        {"compaction": {"summary": "third, kept id not on the path", "firstKeptEntryId": "deadbeef",
                        "tokensBefore": 300}},                                              # 10
        user("u5", 11), asst("a5", 12),                                                     # 11-12
        {"branch": 9},                                                                      # 13
        user("u4 alt", 14), asst("a4 alt", 15),                                             # 14-15
        {"compaction": {"summary": "", "firstKeptIndex": 14, "tokensBefore": 0}},           # 16 (empty summary)
        user("u6", 17), asst("a6", 18),                                                     # 17-18
    ]


def spec_roots() -> list[dict]:
    return [
        user("first root", 0), asst("r1", 1),                                               # 0-1
        {"resetLeaf": True},                                                                # 2
        user("second root", 3), asst("r2", 4),                                              # 3-4
        {"label": {"targetIndex": 0, "label": "first"}},                                    # 5
        {"branch": 0},                                                                      # 6
        user("again", 7), asst("r3", 8, calls=[("toolu_9", "bash", {"command": "ls"})]),    # 7-8
        result("toolu_9", "bash", "", 9, is_error=True),                                    # 9
        {"thinkingLevel": "medium"},                                                        # 10
        {"sessionName": ""},                                                                # 11
    ]


GENERATED = {"all-types": spec_all_types, "compactions": spec_compactions, "roots": spec_roots}


# =========================================================================== hand-made files pi loads

HEADER = {"type": "session", "version": 3, "id": "019e0000-0000-7000-8000-00000000edge",
          "timestamp": "2026-06-01T10:00:00.000Z", "cwd": "/home/u/proj"}


def _e(kind, id, parent, n, **fields):
    return {"type": kind, "id": id, "parentId": parent, "timestamp": f"2026-06-01T10:00:{n:02d}.000Z", **fields}


def _m(id, parent, n, message):
    return _e("message", id, parent, n, message=message)


def _u(text, n):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": T0 + n}


def _a(text, n, **extra):
    return {**asst(text, n)["message"], **extra}


def edge_lines() -> str:
    rows = [
        js_json(HEADER),
        js_json(_m("a0000001", None, 1, _u("hello", 1))),
        "",
        js_json(_m("a0000002", "a0000001", 2, _a("hi", 2))),
        "this is not json {",
        "[1, 2, 3]",
        js_json({**HEADER, "id": "second-header"}),
        "   ",
        js_json(_m("a0000003", "a0000002", 3, _u("more", 3))),
        js_json(_m("a0000004", "a0000003", 4, _a("sure", 4))),
    ]
    return "\n".join(rows) + "\n" + js_json(_m("a0000005", "a0000004", 5, _u("cut sho", 5)))[:57]


def edge_tree() -> str:
    rows = [
        HEADER,
        _m("b0000001", None, 1, _u("root", 1)),
        _m("b0000002", "b0000001", 2, _a("one", 2)),
        _m("b0000003", "b0000002", 3, _u("two", 3)),
        _m("b0000002", "b0000001", 4, _a("duplicate id: the later entry wins", 4)),
        _e("future_thing", "b0000005", "b0000003", 5, payload={"kept": [1, 2]}),
        _m("b0000006", "b0000005", 6, _a("after unknown", 6)),
        _m("b0000007", "zzzzzzzz", 7, _u("dangling parent", 7)),
        _m("b0000008", "b0000007", 8, _a("under dangling", 8)),
        _m("b0000009", "b0000006", 9, _u("last entry", 9)),
    ]
    return "".join(js_json(r) + "\n" for r in rows)


def edge_values() -> str:
    rows = [
        HEADER,
        _e("thinking_level_change", "c0000001", None, 1),
        _e("model_change", "c0000002", "c0000001", 2, provider="openai"),
        _m("c0000003", "c0000002", 3, {"role": "user", "content": None, "timestamp": T0}),
        _m("c0000004", "c0000003", 4, {"role": "assistant", "stopReason": "stop", "timestamp": T0}),
        _m("c0000005", "c0000004", 5, {"role": "narrator", "text": "unknown role", "timestamp": T0}),
        _m("c0000006", "c0000005", 6, {"role": "toolResult", "toolCallId": "t", "toolName": "x", "content": None,
                                       "isError": False, "extra": {"kept": True}, "timestamp": T0}),
        _e("branch_summary", "c0000007", "c0000006", 7, fromId="c0000001"),
        _e("branch_summary", "c0000008", "c0000007", 8, fromId="root", summary=""),
        {"type": "custom_message", "customType": "ext", "content": None, "id": "c0000009", "parentId": "c0000008",
         "timestamp": "2026-06-01T10:00:09.000Z"},
        {"type": "custom_message", "customType": "ext", "display": True, "id": "c000000a", "parentId": "c0000009",
         "timestamp": "not a date"},
        _m("c000000b", "c000000a", 11, {"role": "bashExecution", "command": "x", "output": 0, "exitCode": "0",
                                        "cancelled": 0, "truncated": 1, "fullOutputPath": "p", "timestamp": T0}),
        _m("c000000c", "c000000b", 12, {"role": "bashExecution", "output": "o", "exitCode": False,
                                        "cancelled": False, "truncated": True, "timestamp": T0}),
        _m("c000000d", "c000000c", 13, {"role": "bashExecution", "command": "y", "output": "", "exitCode": 1.5,
                                        "excludeFromContext": 0, "timestamp": T0}),
        _m("c000000e", "c000000d", 14, {"role": "custom", "customType": "ext", "timestamp": T0}),
        _m("c000000f", "c000000e", 15, {"role": "compactionSummary", "summary": "inside a message", "tokensBefore": 1,
                                        "timestamp": T0}),
        _e("compaction", "c0000010", "c000000f", 16, firstKeptEntryId="c000000b", tokensBefore=5),
        _m("c0000011", "c0000010", 17, _a("after", 17, provider=None)),
        _e("compaction", "c0000012", "c0000011", 18, summary="latest; odd timestamp", firstKeptEntryId="c0000011",
           tokensBefore=7, extraKey=[1]) | {"timestamp": "2026-06-01"},
        _m("c0000013", "c0000012", 19, {"role": "user", "content": "bye", "timestamp": T0}),
    ]
    return "".join(js_json(r) + "\n" for r in rows)


def edge_v1() -> str:
    rows = [
        {"type": "session", "id": "v1-session", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/old"},
        {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": _u("old one", 1)},
        {"type": "message", "timestamp": "2025-01-01T00:00:02.000Z", "message": _a("old two", 2)},
        {"type": "message", "timestamp": "2025-01-01T00:00:03.000Z",
         "message": {"role": "hookMessage", "customType": "h", "content": "from a hook", "display": True,
                     "timestamp": T0 + 3}},
        {"type": "message", "timestamp": "2025-01-01T00:00:04.000Z", "message": _u("old three", 4)},
        {"type": "compaction", "timestamp": "2025-01-01T00:00:05.000Z", "summary": "v1 summary",
         "firstKeptEntryIndex": 3, "tokensBefore": 50},
        {"type": "message", "timestamp": "2025-01-01T00:00:06.000Z", "message": _a("old four", 6)},
        {"type": "compaction", "timestamp": "2025-01-01T00:00:07.000Z", "summary": "forward index",
         "firstKeptEntryIndex": 9, "tokensBefore": 60},
        {"type": "message", "timestamp": "2025-01-01T00:00:08.000Z", "message": _u("old five", 8)},
        {"type": "message", "timestamp": "2025-01-01T00:00:09.000Z", "message": _a("old six", 9)},
    ]
    return "".join(js_json(r) + "\n" for r in rows)


def edge_v2() -> str:
    rows = [
        {**HEADER, "version": 2, "id": "v2-session"},
        _m("d0000001", None, 1, _u("v2 one", 1)),
        _m("d0000002", "d0000001", 2, {"role": "hookMessage", "customType": "h", "content": [{"type": "text", "text": "hook"}],
                                       "display": False, "timestamp": T0}),
        _m("d0000003", "d0000002", 3, _a("v2 two", 3)),
    ]
    return "".join(js_json(r) + "\n" for r in rows)


def edge_late_header() -> str:
    """pi takes the first line that parses as the header; a NaN line does not parse in JavaScript."""
    rows = ["junk before the header", js_json(HEADER), js_json(_m("e0000001", None, 1, _u("one", 1))),
            '{"type":"custom","customType":"x","data":NaN,"id":"e0000002","parentId":"e0000001"}',
            js_json(_m("e0000003", "e0000001", 3, _u("two", 3)))]
    return "\n".join(rows) + "\n"


EDGE = {"late-header": edge_late_header, "lines": edge_lines, "tree": edge_tree, "values": edge_values, "v1": edge_v1, "v2": edge_v2}


# =========================================================================== files our store writes


def written_basic(path: Path) -> None:
    s = SessionFile.create(path, cwd="/home/u/proj")
    s.append_model_change("anthropic", "claude-sonnet-4-5")
    s.append_thinking_level_change("medium")
    first = s.append_message(user("written by us", 1)["message"])
    s.append_message(asst("reply", 2, calls=[("toolu_w", "read", {"path": "x"})])["message"])
    s.append_message(result("toolu_w", "read", "contents", 3)["message"])
    s.append_message(asst("ok", 4)["message"])
    s.append_message(bash("ls", "", 5, exitCode=1)["message"])
    s.append_custom("ext", {"k": [1, 2]})
    s.append_custom_message("ext", "custom text", display=False, details={"d": 1})
    s.append_label(first.id, "mine")
    s.append_session_info("written\nsession ")
    kept = s.append_message(user("kept", 6)["message"])
    s.append_message(asst("kept reply", 7)["message"])
    s.append_compaction("our summary", kept.id, 99, details=FILES, usage=USAGE, from_hook=False)
    s.append_message(user("after our compaction", 8)["message"])
    s.append_branch_summary(first.id, "our branch summary", details=FILES)
    s.append_message(user("on our branch", 9)["message"])


def written_torn(path: Path) -> None:
    s = SessionFile.create(path, cwd="/home/u/proj")
    s.append_message(user("before the crash", 1)["message"])
    s.append_message(asst("reply", 2)["message"])
    with open(path, "ab") as handle:  # a writer died half-way through a line
        handle.write(js_json({"type": "message", "id": "0badc0de", "parentId": s.leaf_id})[:30].encode())
    reopened = SessionFile.open(path)
    assert reopened.torn_line == 4, reopened.problems
    reopened.append_message(user("after the crash", 3)["message"])
    reopened.append_message(asst("still fine", 4)["message"])


WRITTEN = {"basic": written_basic, "torn": written_torn}


# =========================================================================== cases


def leaves_of(entries: list[dict]) -> list[str]:
    """Leaves of the tree, compactions and their parents, branch summaries, a few more."""
    ids = [e["id"] for e in entries]
    parents = {e.get("parentId") for e in entries}
    chosen = [e["id"] for e in entries if e["id"] not in parents]
    for e in entries:
        if e["type"] in ("compaction", "branch_summary"):
            chosen += [e["id"]] + ([e["parentId"]] if e.get("parentId") else [])
    step = max(1, len(ids) // 5)
    chosen += ids[::step]
    return list(dict.fromkeys(c for c in chosen if c))


def collect_files(oracle: Oracle) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for sub in ("real", "generated", "edge", "written"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
        (HERE / sub).mkdir(parents=True)
    for src in sorted(REAL_SESSIONS.glob("*.jsonl")):
        shutil.copyfile(src, HERE / "real" / src.name)
        files[f"real/{src.name}"] = HERE / "real" / src.name
    requests = [{"op": "session_create", "cwd": "/home/u/proj", "now": "2026-06-01T10:00:00Z", "seed": 100 + i,
                 "steps": make(), "out": str(HERE / "generated" / f"{name}.jsonl"), "returnJsonl": False}
                for i, (name, make) in enumerate(GENERATED.items())]
    for (name, _), res in zip(GENERATED.items(), oracle.run(requests)):
        files[f"generated/{name}.jsonl"] = Path(res["file"])
    for name, make in EDGE.items():
        (HERE / "edge" / f"{name}.jsonl").write_text(make(), encoding="utf-8")
        files[f"edge/{name}.jsonl"] = HERE / "edge" / f"{name}.jsonl"
    for name, write in WRITTEN.items():
        write(HERE / "written" / f"{name}.jsonl")
        files[f"written/{name}.jsonl"] = HERE / "written" / f"{name}.jsonl"
    return files


def open_vectors(oracle: Oracle, files: dict[str, Path]) -> tuple[dict, dict]:
    opened = oracle.run([{"op": "session_open", "sessionFile": str(p)} for p in files.values()])
    out, entries_by_file = {}, {}
    for name, res in zip(files, opened):
        objects = [e for e in res["entries"] if isinstance(e, dict)]  # pi keeps a JSON array line as an "entry"
        res["entries"], non_objects = objects, len(res["entries"]) - len(objects)
        entries_by_file[name] = res["entries"]
        migrated = (_file_version(files[name]) or 1) < 2  # pi gives v1 entries fresh random ids
        out[name] = {
            "header": res["header"],
            "entryCount": res["entryCount"],
            "nonObjects": non_objects,
            "entryTypes": [e["type"] for e in res["entries"]],
            "structure": _structure(res["entries"]),
            "entryIds": None if migrated else [e["id"] for e in res["entries"]],
            "leafId": None if migrated else res["leafId"],
            "branchLength": len(res["branch"]),
            "branch": None if migrated else res["branch"],
            "name": res["name"],
            "migratedEntries": res["entries"] if migrated else None,
        }
    return out, entries_by_file


def _file_version(path: Path):
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            return json.loads(line).get("version")
        except ValueError:
            continue
    return None


def _structure(entries: list[dict]) -> list[list]:
    """Per entry: index of its parent and of its first kept entry (ids vary after a v1 migration)."""
    index = {e["id"]: i for i, e in enumerate(entries)}
    return [[index.get(e.get("parentId")), index.get(e.get("firstKeptEntryId"))] for e in entries]


def context_vectors(oracle: Oracle, words: PiWords, files: dict[str, Path], entries_by_file: dict) -> dict:
    plan: list[tuple[str, dict]] = []
    for name, path in files.items():
        migrated = name.startswith("edge/v1")
        leaves = [] if migrated else leaves_of(entries_by_file[name])
        plan.append((name, {}))
        plan += [(name, {"leafId": leaf}) for leaf in leaves]
        if name == "generated/all-types.jsonl":
            plan += [(name, {"leafId": None}), (name, {"leafId": "nonexistent"})]
    requests = []
    for name, extra in plan:
        requests.append({"op": "build_context", "sessionFile": str(files[name]), **extra})
        requests.append({"op": "build_context_entries", "sessionFile": str(files[name]), "idsOnly": True, **extra})
    results = oracle.run(requests)
    table: dict[str, int] = {}
    messages: list = []

    def ref(message) -> int:
        key = js_json(message)
        if key not in table:
            table[key] = len(messages)
            messages.append(message)
        return table[key]

    cases = []
    for i, (name, extra) in enumerate(plan):
        ctx, ids = results[2 * i], results[2 * i + 1]
        masked = words.mask(ctx["agentMessages"], ctx["messages"])
        cases.append({
            "file": name, **extra,
            "messages": [ref(m) for m in masked],
            "agentMessages": [ref(m) for m in ctx["agentMessages"]],
            "thinkingLevel": ctx.get("thinkingLevel"),
            "model": ctx.get("model"),
            "contextEntryIds": None if name.startswith("edge/v1") else ids["entryIds"],
        })
    return {"texts": MASKS, "messages": messages, "cases": cases}


def convert_vectors(oracle: Oracle, words: PiWords) -> dict:
    batches = [
        [{"role": "bashExecution", "command": "c", "output": None, "exitCode": None, "cancelled": None, "timestamp": 1}],
        [{"role": "bashExecution", "command": 7, "output": "out", "exitCode": -3, "truncated": True,
          "fullOutputPath": "", "timestamp": 2}],
        [{"role": "bashExecution", "command": "c", "output": "o", "exitCode": 0, "cancelled": "yes", "truncated": True,
          "fullOutputPath": "/p", "excludeFromContext": False}],
        [{"role": "custom", "customType": "x", "content": [{"type": "text", "text": "blocks"}], "timestamp": 3},
         {"role": "custom", "content": "plain", "display": False}],
        [{"role": "compactionSummary", "summary": "s", "tokensBefore": 1, "timestamp": 4},
         {"role": "compactionSummary", "tokensBefore": 1, "timestamp": 5},
         {"role": "branchSummary", "summary": None, "fromId": "x", "timestamp": 6},
         {"role": "branchSummary", "summary": 12.5, "fromId": "x", "timestamp": 7}],
        [{"role": "hookMessage", "content": "dropped"}, {"role": "nobody"},
         {"role": "user", "content": "kept", "timestamp": 8, "extra": {"a": 1}},
         {"role": "assistant", "content": [], "stopReason": "aborted", "timestamp": 9},
         {"role": "toolResult", "toolCallId": "t", "content": [], "isError": True, "timestamp": 10}],
    ]
    results = oracle.run([{"op": "convert_to_llm", "messages": b} for b in batches])
    return {"texts": MASKS, "cases": [{"messages": b, "expected": words.mask(b, r)} for b, r in zip(batches, results)]}


def tree_vectors(oracle: Oracle, entries_by_file: dict) -> list[dict]:
    """pi's deepest common ancestor (``collectEntriesForBranchSummary``) for pairs of entries."""
    plan = []
    for name, entries in entries_by_file.items():
        if name.startswith("edge/v1"):
            continue
        parents = {e.get("parentId") for e in entries}
        leaves = [e["id"] for e in entries if e["id"] not in parents]
        picks = leaves + [e["id"] for e in entries[:: max(1, len(entries) // 4)]]
        plan += [(name, a, b) for a in leaves for b in dict.fromkeys(picks) if a != b]
    results = oracle.run([{"op": "branch_entries", "sessionFile": str(HERE / n), "oldLeafId": a, "targetId": b}
                          for n, a, b in plan])
    return [{"file": n, "a": a, "b": b, "commonAncestorId": r["commonAncestorId"], "branchEntryIds": r["entryIds"]}
            for (n, a, b), r in zip(plan, results)]


def write_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--oracle", default=os.environ.get("PI_ORACLE", "/tmp/oracle"))
    oracle = Oracle(Path(parser.parse_args().oracle))
    words = PiWords(oracle)
    files = collect_files(oracle)
    opened, entries_by_file = open_vectors(oracle, files)
    write_json(HERE / "vectors" / "open.json", opened)
    write_json(HERE / "vectors" / "context.json", context_vectors(oracle, words, files, entries_by_file))
    write_json(HERE / "vectors" / "convert.json", convert_vectors(oracle, words))
    write_json(HERE / "vectors" / "tree.json", tree_vectors(oracle, entries_by_file))
    print(f"{len(files)} session files; vectors in {HERE / 'vectors'}")


if __name__ == "__main__":
    main()
