"""Generate ``args.json``: argument splitting (``parseCommandArgs``) and argument-string
expansion (``substituteArgs`` after splitting) under pi 1.6.0, with pi 0.84.0's answer beside.

Needs both oracles, set up (``$PI16_ORACLE``, see ``pi16_oracle.py``; ``$PI_ORACLE``, default
``../shared/oracle`` beside the repository); tests do not. Inputs:

* ``exhaustive``: every string of length 0..5 over ``a ' " \\ <space>`` (3906 strings): the
  quote, escape and unclosed-quote rules of 1.3.0 / 1.5.1 in every combination;
* ``dense``: seeded random strings over a wider alphabet (JS whitespace, tabs, newlines,
  non-BMP characters, lone quotes at word starts, ends and middles);
* ``v084``: every ``parse_args`` input of ``tests/data/template_vectors.json`` (the 0.84.0
  vectors), so the differences show;
* ``expand``: every ``expand`` vector of the 0.84.0 file that splits an argument string,
  plus generated defaults over empty quoted arguments (``${1:-d}`` with ``''``).

    python tests/data/pi16/gen_args_vectors.py [--seed 1650] [--dense 1200]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi16_oracle import HERE, Oracle  # noqa: E402

V084 = HERE.parent / "template_vectors.json"
ORACLE_084 = Path(os.environ.get("PI_ORACLE", HERE.parents[2].parent / "shared" / "oracle"))
SMALL = ("a", "'", '"', "\\", " ")
WIDE = ("a", "b", "xy", "'", "'", '"', '"', "\\", "\\\\", " ", "  ", "\t", "\n", "\u00a0", "\u3000", "\ufeff",
        "\u2028", "\u200b", "é", "😀", "''", '""', "\\'", '\\"', "don't", "it's", "$1", "=", "-")


def exhaustive() -> list[str]:
    return ["".join(p) for n in range(6) for p in itertools.product(SMALL, repeat=n)]


def dense(rng: random.Random, count: int) -> list[str]:
    return ["".join(rng.choice(WIDE) for _ in range(rng.randint(1, 12))) for _ in range(count)]


def expand_cases(rng: random.Random, old: list[dict]) -> list[dict]:
    cases = [{"content": v["content"], "argsString": v["argsString"]} for v in old if "argsString" in v]
    bodies = ("[$1][$2][$3]", "${1:-d1} ${2:-d2} ${3:-d3}", "${@:-none}|$ARGUMENTS|${@:2}", "${ARGUMENTS:-x}$#$@",
              "${2:-two}:${@:1:2}")
    for _ in range(300):
        args = " ".join(rng.choice(("''", '""', "a", "'b c'", '"d \\" e"', "it's", "'x", '"', "\\'")) for _ in range(rng.randint(0, 4)))
        cases.append({"content": rng.choice(bodies), "argsString": args})
    return cases


def answers(oracle: Oracle, requests: list[dict]) -> list[dict]:
    return [{"ok": True, "result": e["result"]} if e["ok"] else {"ok": False} for e in oracle.envelopes(requests, 500)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1650)
    parser.add_argument("--dense", type=int, default=1200)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    old = json.loads(V084.read_text(encoding="utf-8"))
    groups = {"exhaustive": exhaustive(), "dense": dense(rng, args.dense), "v084": [v["args"] for v in old["parse_args"]]}
    cases = [(group, s) for group, strings in groups.items() for s in strings]
    expand = expand_cases(rng, old["expand"])
    new, prev = Oracle(), Oracle(ORACLE_084)
    out_parse, out_expand = [], []
    for oracle, key in ((new, "pi16"), (prev, "pi084")):
        parsed = answers(oracle, [{"op": "parse_args", "args": s} for _, s in cases])
        expanded = answers(oracle, [{"op": "expand", **c} for c in expand])
        for i, a in enumerate(parsed):
            if key == "pi16":
                out_parse.append({"group": cases[i][0], "args": cases[i][1]})
            out_parse[i][key] = a["result"] if a["ok"] else None
        for i, a in enumerate(expanded):
            if key == "pi16":
                out_expand.append(dict(expand[i]))
            out_expand[i][key] = a["result"] if a["ok"] else None
    new.close()
    prev.close()
    doc = {
        "pi_version": "1.6.0", "compared_with": "0.84.0",
        "generator": f"tests/data/pi16/gen_args_vectors.py --seed {args.seed} --dense {args.dense}",
        "counts": {g: len(s) for g, s in groups.items()} | {"expand": len(out_expand)},
        "differ": {"parse_args": sum(v["pi16"] != v["pi084"] for v in out_parse),
                   "expand": sum(v["pi16"] != v["pi084"] for v in out_expand)},
        "parse_args": out_parse, "expand": out_expand,
    }
    path = HERE / "args.json"
    lines = [json.dumps({k: v for k, v in doc.items() if k not in ("parse_args", "expand")}, ensure_ascii=False)[:-1]]
    for key in ("parse_args", "expand"):
        rows = ",\n".join(json.dumps(v) for v in doc[key])
        lines.append(f', "{key}": [\n{rows}\n]')
    path.write_text("".join(lines) + "}\n", encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8")) == doc
    print(f"wrote {path.name}: {len(out_parse)} splits, {len(out_expand)} expansions, differ {doc['differ']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
