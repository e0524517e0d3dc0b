"""Shared by the pi 1.6.0 vector generators: the oracle process and pi's sentences as masks.

Needs a set-up pi 1.6.0 oracle: ``$PI16_ORACLE``, default ``../shared/oracle-1.6`` beside the
repository (run its ``setup.sh`` first); the tests that read the vectors do not. pi's fixed sentences are learned at run time from the oracle's own
output for known inputs, replaced by mask tokens before anything is written, and a final
scan fails the generator if one is left in a file.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
ORACLE_DIR = Path(os.environ.get("PI16_ORACLE", ROOT.parent / "shared" / "oracle-1.6"))
PACKAGE_DIR = "/opt/pi"


class Oracle:
    """``./oracle --jsonl``: one batch (a JSON array) per line, one array of envelopes back."""

    def __init__(self, directory: Path = ORACLE_DIR) -> None:
        self.proc = subprocess.Popen(
            [str(directory / "oracle"), "--jsonl"], cwd=directory, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, encoding="utf-8",
        )

    def envelopes(self, requests: list[dict], chunk: int = 200) -> list[dict]:
        out: list[dict] = []
        for i in range(0, len(requests), chunk):
            self.proc.stdin.write(json.dumps(requests[i : i + chunk], ensure_ascii=True) + "\n")
            self.proc.stdin.flush()
            reply = json.loads(self.proc.stdout.readline())
            if isinstance(reply, dict):
                raise RuntimeError(f"oracle: {reply}")
            out.extend(reply)
        return out

    def results(self, requests: list[dict]) -> list[Any]:
        out = []
        for request, env in zip(requests, self.envelopes(requests)):
            if not env["ok"]:
                raise RuntimeError(f"oracle failed on {json.dumps(request)[:300]}: {env['error']}")
            out.append(env["result"])
        return out

    def one(self, request: dict) -> Any:
        return self.results([request])[0]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def sp(options: dict) -> dict:
    return {"op": "system_prompt", "packageDir": PACKAGE_DIR, "options": options}


def _inner(section: str, name: str) -> str:
    head, tail = f"<{name}>\n", f"\n</{name}>"
    assert section.startswith(head) and section.endswith(tail), section[:80]
    return section[len(head) : -len(tail)]


class PromptMasks:
    """pi 1.6.0's system-prompt sentences (learned from the oracle) and their mask tokens."""

    def __init__(self, oracle: Oracle) -> None:
        skill = {"name": "n", "description": "d", "filePath": "/f", "baseDir": "/"}
        base = {"cwd": "/w", "selectedTools": ["bash"]}
        plain, ps, both, ctx, sk_read, sk_bash, sk_ind = oracle.results([
            sp(base),
            sp({"cwd": "/w", "selectedTools": ["powershell"]}),
            sp({"cwd": "/w", "selectedTools": ["bash", "powershell"]}),
            sp({"cwd": "/w", "customPrompt": "C", "contextFiles": [{"path": "p", "content": "c"}]}),
            sp({"cwd": "/w", "selectedTools": ["read"], "skills": [skill]}),
            sp({"cwd": "/w", "selectedTools": ["bash"], "skills": [skill]}),
            sp({"cwd": "/w", "selectedTools": ["bash"], "hiddenTools": ["bash"], "skills": [skill]}),
        ])
        s = plain["sections"]
        tools_tail = _inner(s["tools"], "tools").split("\n\n", 1)[1]
        gb, gc, gp = (line[2:] for line in _inner(s["rules"], "rules").split("\n"))
        gps = _inner(ps["sections"]["rules"], "rules").split("\n")[0][2:]
        gbps = _inner(both["sections"]["rules"], "rules").split("\n")[0][2:]
        pci = _inner(ctx["sections"]["project_context"], "project_context").split("\n\n", 1)[0]
        intro = [_inner(x["sections"]["skills"], "skills").split("\n\n<available_skills>")[0].split("\n")
                 for x in (sk_read, sk_bash, sk_ind)]
        assert intro[0][0] == intro[1][0] == intro[2][0] and intro[0][2] == intro[1][2] == intro[2][2]
        # Longest first, so a sentence inside a longer block is never masked on its own.
        found = {
            "<DOCS>": _inner(s["docs"], "docs"),
            "<PRE>": s["preamble"],
            "<SK_INTRO>": intro[0][0],
            "<SK_PATHS>": intro[0][2],
            "<SK_READ>": intro[0][1],
            "<SK_BASH>": intro[1][1],
            "<SK_ANY>": intro[2][1],
            "<G_BASH_PS>": gbps,
            "<G_PS>": gps,
            "<G_BASH>": gb,
            "<G_PATHS>": gp,
            "<G_CONCISE>": gc,
            "<PCI>": pci,
            "<MORE_TOOLS>": tools_tail,
        }
        self.sentences = dict(sorted(found.items(), key=lambda kv: -len(kv[1])))
        diff = oracle.one({"op": "diff_system_prompt_sections", "previousSections": {"preamble": "P", "zz": "x"},
                           "currentSections": {"preamble": "P", "yy": "y"}})
        upd, rem = diff["update"].split("\n\n")[0], diff["update"].split("\n\n")[-1]
        self.update_words = {"<UPD>": upd.split('"yy"')[0], "<REM>": rem.split('"zz"')[0]}
        for mask, sentence in {**self.sentences, **self.update_words}.items():
            assert sentence.strip() and mask not in sentence, mask

    def unmask(self, value: Any) -> Any:
        if isinstance(value, str):
            for mask, sentence in self.sentences.items():
                value = value.replace(mask, sentence)
            return value
        if isinstance(value, list):
            return [self.unmask(v) for v in value]
        if isinstance(value, dict):
            return {k: self.unmask(v) for k, v in value.items()}
        return value

    def mask(self, value: Any) -> Any:
        if isinstance(value, str):
            for mask, sentence in self.sentences.items():
                value = value.replace(sentence, mask)
            return value
        if isinstance(value, list):
            return [self.mask(v) for v in value]
        if isinstance(value, dict):
            return {k: self.mask(v) for k, v in value.items()}
        return value

    def mask_update(self, text: str | None) -> str | None:
        if text is None:
            return None
        text = self.mask(text)
        for mask, words in self.update_words.items():
            text = text.replace(words, mask)
        return text

    def check(self, doc: Any) -> None:
        blob = json.dumps(doc, ensure_ascii=False)
        for sentence in [*self.sentences.values(), *self.update_words.values()]:
            for line in sentence.split("\n"):
                quoted = json.dumps(line, ensure_ascii=False)[1:-1]
                if len(line) > 12 and quoted in blob:
                    raise AssertionError(f"unmasked pi text in output: {line[:60]!r}")


def write_json(path: Path, doc: Any) -> None:
    """Indented JSON; ASCII escapes only when a value holds a lone surrogate (not UTF-8)."""
    text = json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = (json.dumps(doc, indent=1) + "\n").encode("ascii")
    path.write_bytes(data)
    print(f"wrote {path.relative_to(HERE.parents[2])}")
