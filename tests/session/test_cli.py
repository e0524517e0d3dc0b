"""`pipeline context` and `pipeline session tree|check`, run through the real CLI entry point."""

from __future__ import annotations

import json
import os

import pytest

from pipeline.cli import main

from .conftest import DATA, vectors


@pytest.fixture
def mask_profile(tmp_path):
    """A profile (overlaying the built-in one) whose projection words are the vectors' masks."""
    texts = vectors("context")["texts"]
    path = tmp_path / "masks.yaml"
    lines = [
        "version: 1", "name: masks", "extends: builtin:default", "summary:", "  projection:",
        f"    compaction: {{open: {json.dumps(texts['compaction_open'])}, close: {json.dumps(texts['compaction_close'])}}}",
        f"    branch: {{open: {json.dumps(texts['branch_open'])}, close: {json.dumps(texts['branch_close'])}}}",
        "context:", "  bash_execution:",
    ]
    for key in ("ran", "output", "no_output", "cancelled", "exit_code", "truncated"):
        lines.append(f"    {key}: {json.dumps(texts['bash_' + key])}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


DEFAULT_CASES = [c for c in vectors("context")["cases"] if "leafId" not in c]


def test_context_json_equals_pi_for_every_file(capsys, mask_profile):
    table = vectors("context")["messages"]
    for case in DEFAULT_CASES:
        code, out, _ = _run(capsys, "context", str(DATA / case["file"]), "--profile", str(mask_profile),
                            "--format", "json")
        assert code == 0
        got = json.loads(out)
        assert got["messages"] == [table[i] for i in case["messages"]], case["file"]
        assert (got.get("thinkingLevel"), got.get("model")) == (case.get("thinkingLevel"), case.get("model"))


def test_context_leaf_prefix_and_text_format(capsys, mask_profile):
    case = next(c for c in vectors("context")["cases"]
                if c["file"] == "real/compacted-branched.jsonl" and c.get("leafId"))
    path = str(DATA / case["file"])
    code, out, _ = _run(capsys, "context", path, "--leaf", case["leafId"][:6], "--profile", str(mask_profile),
                        "--format", "json")
    assert code == 0 and json.loads(out)["leafId"] == case["leafId"]
    assert len(json.loads(out)["messages"]) == len(case["messages"])
    code, out, _ = _run(capsys, "context", path, "--leaf", case["leafId"], "--profile", str(mask_profile))
    assert code == 0
    assert out.count("── ") == len(case["messages"])
    first_call = next(b for i in case["messages"] for b in vectors("context")["messages"][i].get("content", [])
                      if isinstance(b, dict) and b.get("type") == "toolCall")
    assert f"[tool call {first_call['name']} {first_call['id']}]" in out


def test_context_uses_the_default_profile_words(capsys):
    """Without --profile the built-in profile's compaction wrapper surrounds the summary."""
    from pipeline import compile_profile

    projection = compile_profile("default").profile.summary.projection.compaction
    code, out, _ = _run(capsys, "context", str(DATA / "real" / "multi-compaction.jsonl"), "--format", "json")
    first = json.loads(out)["messages"][0]["content"][0]["text"]
    assert code == 0 and first.startswith(projection.open.render()) and first.endswith(projection.close.render())


def test_drop_failed_leaves_out_error_and_aborted_replies(capsys, mask_profile):
    path = str(DATA / "generated" / "all-types.jsonl")
    case = next(c for c in vectors("context")["cases"] if c["file"] == "generated/all-types.jsonl"
                and any(vectors("context")["messages"][i].get("stopReason") == "aborted" for i in c["messages"]))
    args = ["context", path, "--leaf", case["leafId"], "--profile", str(mask_profile), "--format", "json"]
    _, kept, _ = _run(capsys, *args)
    _, dropped, _ = _run(capsys, *args, "--drop-failed")
    kept, dropped = json.loads(kept)["messages"], json.loads(dropped)["messages"]
    assert {m.get("stopReason") for m in kept} >= {"error", "aborted"}
    assert dropped == [m for m in kept if m.get("stopReason") not in ("error", "aborted")]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["context", "{missing}"], "cannot read session file"),
        (["context", "{dir}"], "cannot read session file"),
        (["context", "{notsession}"], "not a pi session file"),
        (["context", str(DATA / "real" / "short-chat.jsonl"), "--leaf", "nope"], "no such entry: 'nope'"),
        (["session", "tree", "{missing}"], "cannot read session file"),
        (["session", "check", "{notsession}"], "not a pi session file"),
    ],
)
def test_user_errors_are_one_located_line(capsys, tmp_path, argv, message):
    (tmp_path / "n.jsonl").write_text('{"hello": "world"}\n')
    paths = {"{missing}": str(tmp_path / "missing.jsonl"), "{dir}": str(tmp_path),
             "{notsession}": str(tmp_path / "n.jsonl")}
    code, out, err = _run(capsys, *[paths.get(a, a) for a in argv])
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


def test_odd_characters_are_printed_not_raised(capsys, tmp_path):
    """A lone surrogate (a JSON escape pi writes for half an emoji) and control characters."""
    path = tmp_path / "odd.jsonl"
    header = '{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}'
    entry = ('{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
             '"message":{"role":"user","content":"half \\ud83d \\u001b[31mred","timestamp":1}}')
    path.write_text(header + "\n" + entry + "\n")
    code, out, err = _run(capsys, "context", str(path))
    assert code == 0 and "half \\ud83d \x1b[31mred" in out and err == ""
    code, out, _ = _run(capsys, "session", "tree", str(path))
    assert code == 0 and "half \\ud83d \\x1b[31mred" in out  # one-line views escape control characters


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_context_with_a_deeply_nested_value_is_printed(capsys, tmp_path, fmt):
    """As deep as the reader takes (Python's parser stops near 1,000 levels; such lines are
    reported as too deep), a value is printed: JSON.stringify itself goes past 4,000."""
    path = tmp_path / "deep.jsonl"
    header = '{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}'
    arguments = "[" * 900 + "]" * 900
    call = '{"type":"toolCall","id":"c","name":"t","arguments":' + arguments + "}"
    entry = ('{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
             '"message":{"role":"assistant","content":[' + call + '],"timestamp":1}}')
    path.write_text(header + "\n" + entry + "\n")
    code, out, err = _run(capsys, "context", str(path), "--format", fmt)
    assert code == 0 and err == "" and arguments in out


@pytest.mark.parametrize("argv", [["context"], ["session"]])
def test_help_explains_with_examples(capsys, argv):
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and "examples:" in out and f"pipeline {argv[0]} " in out


def test_session_tree_marks_leaf_and_labels(capsys):
    path = DATA / "real" / "compacted-branched.jsonl"
    code, out, _ = _run(capsys, "session", "tree", str(path))
    lines = out.splitlines()
    open_vector = vectors("open")["real/compacted-branched.jsonl"]
    assert code == 0 and len(lines) == 1 + open_vector["entryCount"]
    leaf_lines = [line for line in lines if line.endswith("◀ leaf")]
    assert len(leaf_lines) == 1 and open_vector["leafId"] in leaf_lines[0]
    assert sum("├─ " in line for line in lines) == 1 and sum("└─ " in line for line in lines) == 1
    assert any("[coverage check]" in line for line in lines)


def test_session_check_clean_and_damaged(capsys):
    code, out, _ = _run(capsys, "session", "check", str(DATA / "real" / "long-coding.jsonl"))
    assert code == 0 and out.strip().endswith("0 errors, 0 warnings")
    damaged = DATA / "edge" / "lines.jsonl"
    code, out, _ = _run(capsys, "session", "check", str(damaged))
    assert code == 1
    shown = os.path.relpath(damaged)  # inside the cwd: named relative to it, problems and summary alike
    assert f"{shown}:11: torn last line" in out and out.splitlines()[-1].startswith(f"{shown}: damaged")
    code, out, _ = _run(capsys, "session", "check", str(damaged), "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["ok"] is False and report["tornLine"] == 11
    assert [p["line"] for p in report["problems"]] == [3, 5, 6, 7, 8, 11]


def test_session_check_warnings_only_is_clean(capsys):
    code, out, _ = _run(capsys, "session", "check", str(DATA / "edge" / "v2.jsonl"))
    assert code == 0 and "migrated in memory" in out
