"""Generate ``context.json``: pi 1.6.0's ``build_context`` (``buildSessionContext`` +
``convertToLlm``) of the session files in the repository, for ``pipeline context`` under a
profile that records the system prompt (``builtin:pi-1``): 1.x files (pi's and ours, with
recorded system messages, patches and compaction snapshots), the 0.84.0 files, and pi's
files of ``edits.json`` (context edits applied), at their last entry and at a few earlier
leaves.

Per case: ``file`` (repository path, or ``edits:<session>:<case index>``), ``leafId`` and
pi's ``messages`` with its compaction- and branch-summary sentences masked as in ``loop/``
(``[pi: compaction summary prefix]``, ``[pi: branch summary prefix]``).

Needs a set-up pi 1.6.0 oracle (``$PI16_ORACLE``); tests do not.

    python tests/data/pi16/gen_context_vectors.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi16_oracle import HERE, ROOT, Oracle, write_json  # noqa: E402

FILES = sorted([*(HERE / "sessions").glob("*.jsonl"), *(ROOT / "tests" / "data" / "sessions" / "real").glob("*.jsonl")])
MASKS = {"COMPACTION_SUMMARY_PREFIX": "[pi: compaction summary prefix]", "BRANCH_SUMMARY_PREFIX": "[pi: branch summary prefix]"}


def edited_files() -> list[tuple[str, str]]:
    """pi's edited files of ``edits.json`` (one in five written ones), rebuilt as the test does."""
    doc = json.loads((HERE / "edits.json").read_text(encoding="utf-8"))
    out = []
    written = [(i, c) for i, c in enumerate(doc["cases"]) if c["written"]]
    for i, case in written[::5]:
        lines = doc["base_jsonl"][case["session"]].splitlines()
        edit = {"type": "context_edit", "id": "ffffffff", "parentId": json.loads(lines[-1])["id"],
                "timestamp": "2026-06-01T11:00:00.000Z", **case["written"]}
        out.append((f"edits:{case['session']}:{i}", "\n".join([*lines, json.dumps(edit)]) + "\n"))
    return out


def main() -> int:
    oracle = Oracle()
    constants = oracle.one({"op": "constants"})
    prefixes = {constants[k][:constants[k].index("<summary>")]: mask for k, mask in MASKS.items()}
    todo: list[tuple[str, str, str | None]] = []
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        ids = [json.loads(line).get("id") for line in text.splitlines()[1:]]
        leaves = [None, *(ids[i] for i in (len(ids) // 3, (2 * len(ids)) // 3) if len(ids) > 6)]
        todo += [(str(path.relative_to(ROOT)), text, leaf) for leaf in leaves]
    todo += [(name, text, None) for name, text in edited_files()]
    requests = [{"op": "build_context", "jsonl": text, **({"leafId": leaf} if leaf else {})} for _, text, leaf in todo]
    cases = []
    for (name, _, leaf), result in zip(todo, oracle.results(requests)):
        dumped = json.dumps(result["messages"], ensure_ascii=False)
        for sentence, mask in prefixes.items():
            dumped = dumped.replace(json.dumps(sentence, ensure_ascii=False)[1:-1], mask)
        cases.append({"file": name, "leafId": leaf, "messages": json.loads(dumped)})
    oracle.close()
    text = json.dumps(cases, ensure_ascii=False)
    assert not any(sentence in text for sentence in prefixes)
    write_json(HERE / "context.json", {"pi_version": "1.6.0", "generator": "tests/data/pi16/gen_context_vectors.py",
                                       "cases": cases})
    return 0


if __name__ == "__main__":
    sys.exit(main())
