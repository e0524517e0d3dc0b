"""``pipeline compact``: --plan, --print-request, offline runs, --branch-to, bad input."""

from __future__ import annotations

import json

import pytest

from pipeline.cli import main
from pipeline.compaction.fileops import FileOps, file_lists
from pipeline.session import SessionFile

from .conftest import REAL, ROOT, default_profile, vectors

PLAN_KEYS = ["firstKeptEntryId", "isSplitTurn", "tokensBefore", "summarizeIds", "turnPrefixIds", "previousSummary",
             "readFiles", "modifiedFiles"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def usage_error(capsys, *argv: str) -> str:
    """Run a command argparse rejects: exit 2, the message on stderr."""
    with pytest.raises(SystemExit) as stopped:
        main(list(argv))
    assert stopped.value.code == 2
    return capsys.readouterr().err


def _pi_plan(name: str, keep: int = 20000) -> dict | None:
    return next(c["expected"] for c in vectors("plans")
                if c["session"].endswith(f"/{name}.jsonl") and c["leaf"] is None and c["keep"] == keep)


@pytest.mark.parametrize("name", ["long-coding", "compacted-branched", "multi-compaction"])
@pytest.mark.parametrize("keep", [1000, 8000, 20000])
def test_plan_json_equals_pis_preparation(capsys, name, keep):
    code, out, _ = run(capsys, "compact", str(REAL / f"{name}.jsonl"), "--plan", "--format", "json",
                       "--keep-recent", str(keep))
    plan, pi = json.loads(out), _pi_plan(name, keep)
    assert code == 0
    if pi is None:  # pi would not compact either
        assert plan["plan"] is None and plan["reason"] in ("too_small", "already_compacted")
        return
    assert list(plan) == PLAN_KEYS
    ops = FileOps()
    for key in ("read", "written", "edited"):
        getattr(ops, key).update(dict.fromkeys(pi["fileOps"][key]))
    lists = file_lists(ops)
    assert plan == {
        "firstKeptEntryId": pi["firstKeptEntryId"],
        "isSplitTurn": pi["isSplitTurn"],
        "tokensBefore": pi["tokensBefore"],
        "summarizeIds": plan["summarizeIds"],
        "turnPrefixIds": plan["turnPrefixIds"],
        "previousSummary": pi["previousSummary"],
        "readFiles": list(lists.read_files),
        "modifiedFiles": list(lists.modified_files),
    }
    session = SessionFile.open(REAL / f"{name}.jsonl")
    stamps = [session.get(i).raw["message"]["timestamp"] if session.get(i).type == "message" else None
              for i in plan["summarizeIds"]]
    assert len(stamps) == pi["messagesToSummarizeCount"] and len(plan["turnPrefixIds"]) == pi["turnPrefixMessagesCount"]
    assert [s for s in stamps if s is not None] == [
        t for t, s in zip(pi["messagesToSummarizeTimestamps"], stamps) if s is not None]


def test_plan_text(capsys):
    code, out, _ = run(capsys, "compact", str(REAL / "long-coding.jsonl"), "--plan")
    pi = _pi_plan("long-coding")
    assert code == 0
    assert f"keep from entry {pi['firstKeptEntryId']}" in out and f"tokens before:    {pi['tokensBefore']}" in out
    assert "split turn:       yes" in out and "modified files:   src/cli.js" in out


def test_nothing_to_compact(capsys):
    path = str(REAL / "short-chat.jsonl")
    assert _pi_plan("short-chat") is None
    code, out, _ = run(capsys, "compact", path, "--plan", "--format", "json")
    assert code == 0 and json.loads(out) == {
        "plan": None, "reason": "too_small",
        "message": "nothing would be summarized: everything fits within keep_recent_tokens",
    }
    code, out, _ = run(capsys, "compact", path)
    assert code == 0 and out.startswith("nothing to compact: ") and "a smaller --keep-recent N" in out


def test_print_request_offline_is_our_internal_request(capsys):
    code, out, _ = run(capsys, "compact", str(REAL / "long-coding.jsonl"), "--print-request", "--instructions", "tests")
    bodies = json.loads(out)
    assert code == 0 and [b["kind"] for b in bodies] == ["history", "turn_prefix"]
    label = default_profile().summary.instructions.custom_label.render()
    assert bodies[0]["user"].endswith(f"\n\n{label}: tests") and bodies[0]["max_tokens"] == 13107
    assert bodies[1]["max_tokens"] == 8192 and bodies[0]["system"] == default_profile().summary.system_prompt.render()


@pytest.mark.parametrize("provider,cap_key", [("openai", "max_completion_tokens"), ("anthropic", "max_tokens")])
def test_print_request_needs_no_key_and_sends_nothing(capsys, monkeypatch, provider, cap_key):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, out, _ = run(capsys, "compact", str(REAL / "multi-compaction.jsonl"), "--print-request", "--llm", provider,
                       "--model", "m1", "--base-url", "http://127.0.0.1:9", "--reserve", "4096", "--keep-recent", "4000")
    bodies = json.loads(out)
    assert code == 0 and len(bodies) == 2 and all(b["model"] == "m1" for b in bodies)
    assert [b[cap_key] for b in bodies] == [3276, 2048]
    texts = json.dumps(bodies)
    assert "<previous-summary>" in texts  # the update of the previous summary


def test_print_request_http_provider_without_model_is_one_clear_error(capsys):
    code, out, err = run(capsys, "compact", str(REAL / "long-coding.jsonl"), "--print-request", "--llm", "openai")
    assert code == 1 and out == "" and err.strip().count("\n") == 0 and "no model" in err


def test_offline_run_appends_one_entry_and_pipeline_context_shows_it(capsys, copy_session):
    path = copy_session("tests/data/sessions/real/long-coding.jsonl")
    before = path.read_bytes()
    code, out, err = run(capsys, "compact", str(path))
    after = path.read_bytes()
    assert code == 0 and after.startswith(before) and after[len(before):].count(b"\n") == 1
    entry = json.loads(after[len(before):])
    assert entry["type"] == "compaction" and out == entry["summary"] + "\n"
    assert "summarizing history (1/2)…" in err and f"appended compaction {entry['id']}" in err
    session = SessionFile.open(path)
    assert session.leaf_id == entry["id"] and not session.problems
    code, shown, _ = run(capsys, "context", str(path), "--format", "json")
    first = json.loads(shown)["messages"][0]["content"][0]["text"]
    assert code == 0 and entry["summary"] in first
    code, out, _ = run(capsys, "compact", str(path), "--plan", "--format", "json")
    assert json.loads(out)["reason"] == "already_compacted"


def test_branch_to_appends_a_branch_summary(capsys, copy_session):
    path = copy_session("tests/data/sessions/real/compacted-branched.jsonl")
    before = path.read_bytes()
    code, out, err = run(capsys, "compact", str(path), "--branch-to", "ec0856")
    assert code == 0, err
    entry = json.loads(path.read_bytes()[len(before):])
    assert entry["type"] == "branch_summary" and entry["parentId"] == "ec085678" and entry["fromId"] == "ec085678"
    assert entry["summary"].startswith(default_profile().summary.branch_preamble.render())
    assert entry["details"]["producedBy"] == "offline" and out == entry["summary"] + "\n"


def test_bad_input_is_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "compact", str(tmp_path / "missing.jsonl"), "--plan")
    assert code == 1 and err.count("\n") == 1
    err = usage_error(capsys, "compact", str(REAL / "long-coding.jsonl"), "--plan", "--keep-recent", "-5")
    assert "argument --keep-recent: must be 0 or more, got -5" in err
    err = usage_error(capsys, "compact", str(REAL / "long-coding.jsonl"), "--plan", "--reserve", "lots")
    assert "argument --reserve: expected a whole number of tokens, got 'lots'" in err
    code, _, err = run(capsys, "compact", str(REAL / "long-coding.jsonl"), "--branch-to", "zzzz")
    assert code == 1 and "no such entry" in err
    code, _, _ = run(capsys, "compact", str(REAL / "long-coding.jsonl"), "--replace-instructions")
    assert code == 2


def test_no_flags_uses_the_profiles_summarizer(capsys, copy_session, tmp_path):
    """A profile naming an HTTP summarizer is used without flags (here: no key → one clear error, file unchanged)."""
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\nsummarizer:\n  provider: openai\n  model: m\n"
                       "  api_key_env: CP_TEST_UNSET_KEY\n", encoding="utf-8")
    path = copy_session("tests/data/sessions/real/long-coding.jsonl")
    before = path.read_bytes()
    code, _, err = run(capsys, "compact", str(path), "--profile", str(profile))
    assert code == 1 and path.read_bytes() == before
    assert "CP_TEST_UNSET_KEY" in err.splitlines()[-1]


def test_reading_the_shared_sessions_does_not_need_the_oracle():
    assert (ROOT / "tests" / "data" / "sessions" / "real" / "long-coding.jsonl").exists()


def test_print_request_bodies_carry_pis_requests(capsys):
    """With pi's structure in the profile, the OpenAI bodies hold exactly pi's captured requests (wording masked)."""
    from .conftest import MASKED_PROFILE

    case = next(c for c in vectors("requests")["summary_request"] if c["session"] and c["session"].endswith("short-chat.jsonl"))
    code, out, _ = run(capsys, "compact", str(ROOT / case["session"]), "--print-request", "--llm", "openai",
                       "--model", "m", "--profile", str(MASKED_PROFILE), "--keep-recent", "100")
    bodies = json.loads(out)
    assert code == 0 and len(bodies) == len(case["calls"])
    for body, call in zip(bodies, case["calls"]):
        assert body["messages"] == [{"role": "system", "content": call["systemPrompt"]},
                                    {"role": "user", "content": call["userText"]}]
        assert body["max_completion_tokens"] == call["maxTokens"] and "reasoning_effort" not in body


def test_format_without_plan_is_a_usage_error_and_compacts_nothing(capsys, copy_session):
    path = copy_session("tests/data/sessions/real/long-coding.jsonl")
    before = path.read_bytes()
    code, out, err = run(capsys, "compact", str(path), "--format", "json")
    assert (code, out) == (2, "") and path.read_bytes() == before
    assert err == "pipeline compact: --format goes with --plan (--print-request always prints JSON)\n"


def test_branch_to_with_plan_is_refused_before_the_session_is_read(capsys, tmp_path):
    code, _, err = run(capsys, "compact", str(tmp_path / "missing.jsonl"), "--branch-to", "abc", "--plan")
    assert code == 2 and "--branch-to cannot be combined with --plan" in err
