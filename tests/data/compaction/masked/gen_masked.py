"""Regenerate the masked-session vector: a copy of long-coding.jsonl with a mask entry, and pi 0.84.0's view of it.

    python tests/data/compaction/masked/gen_masked.py     # needs the pi 0.84.0 oracle (PI_ORACLE, default ../shared/oracle)

pi ignores our ``custom`` mask entry: the file opens and pi's context shows every tool result
unmasked. ``pi_context.json`` records pi's ``build_context`` answer reduced to roles and the
tool results' texts; the test compares it with our projection of the same file without masks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from pipeline import compile_profile
from pipeline.compaction.driver import compact
from pipeline.session import SessionFile

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]


def main() -> None:
    target = HERE / "long-coding-masked.jsonl"
    shutil.copyfile(ROOT / "tests/data/sessions/real/long-coding.jsonl", target)
    profile = compile_profile("default").profile
    compact(SessionFile.open(target), profile, None, strategy="mask_tool_results")  # type: ignore[arg-type]
    oracle = Path(os.environ.get("PI_ORACLE", ROOT.parent / "shared" / "oracle")) / "oracle"
    request = json.dumps({"op": "build_context", "sessionFile": str(target)})
    answer = json.loads(subprocess.run([str(oracle)], input=request, capture_output=True, text=True, check=True).stdout)
    messages = answer["result"]["messages"]
    reduced = {
        "roles": [m["role"] for m in messages],
        "toolResults": ["".join(b.get("text", "") for b in m["content"]) for m in messages if m["role"] == "toolResult"],
    }
    (HERE / "pi_context.json").write_text(json.dumps(reduced, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
