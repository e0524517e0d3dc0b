"""`pipeline compact --keep-recent/--reserve` go through the profile's checks; `--reasoning LEVEL`.

The flags are overrides merged as the profile's last layer (``compile_profile(...,
overrides=, origin=)``). Exit codes: a flag value that is not a whole number >= 0 is a
usage error (2, argparse); a number the profile's rules reject fails like a profile file
with it would (1), each problem located at the flag that caused it
(``--reserve: compaction.reserve_tokens: ...``). Nothing is written in either case.
"""

from __future__ import annotations

import json

import pytest

from pipeline.cli import main
from pipeline import compile_profile
from pipeline.compaction.engine import compact_session
from pipeline.errors import PipelineError
from pipeline.llm.anthropic_messages import thinking_budget
from pipeline.session import SessionFile

from .conftest import REAL, ScriptedClient, default_profile

LONG = str(REAL / "long-coding.jsonl")  # thinking level "medium" at its leaf


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def profile_file(tmp_path):
    def write(**summarizer) -> str:
        path = tmp_path / "p.yaml"
        lines = ["extends: builtin:default", "name: p", "summarizer:"]
        lines += [f"  {key}: {json.dumps(value)}" for key, value in summarizer.items()]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(path)

    return write


def test_a_reserve_whose_summary_budget_rounds_to_zero_names_the_flag(capsys, copy_session):
    path = copy_session("tests/data/sessions/real/long-coding.jsonl")
    before = path.read_bytes()
    for extra in (["--plan"], ["--print-request"], []):
        code, out, err = run(capsys, "compact", str(path), "--reserve", "1", *extra)
        *lines, count = err.strip().splitlines()
        assert count == f"{len(lines)} errors" and len(lines) >= 2, err
        assert (code, out) == (1, "") and all(line.startswith("--reserve: compaction.reserve_tokens: ") for line in lines), err
        assert "max_tokens must be a positive integer" not in err and "less than one token" in err
    assert path.read_bytes() == before


def test_the_profiles_window_rules_apply_to_the_overrides(capsys, profile_file):
    profile = profile_file(context_window=64000)  # threshold 64000 - 16384 = 47616
    code, _, err = run(capsys, "compact", LONG, "--plan", "--profile", profile, "--reserve", "70000")
    assert code == 1 and err.startswith("--reserve: compaction.reserve_tokens: ") and "context_window (64000)" in err
    code, _, err = run(capsys, "compact", LONG, "--plan", "--profile", profile, "--keep-recent", "50000")
    assert code == 1 and err.startswith("--keep-recent: compaction.keep_recent_tokens: ") and "47616" in err
    # keep_recent_tokens (the built-in's 20000) is over the threshold only because of --reserve:
    # the problem is located at the flag, never in the installed built-in, and says whose value it is
    code, _, err = run(capsys, "compact", LONG, "--plan", "--profile", profile, "--reserve", "44000")
    assert code == 1 and err.startswith("--reserve: compaction.keep_recent_tokens: keep_recent_tokens (20000)")
    assert "context_window - reserve_tokens = 20000; this value comes from builtin:default" in err
    assert "default.yaml" not in err


def test_a_warning_from_an_override_is_shown_and_the_run_goes_on(capsys, profile_file):
    profile = profile_file(context_window=64000)
    code, out, err = run(capsys, "compact", LONG, "--plan", "--profile", profile, "--keep-recent", "40000")
    assert code == 0 and out.startswith("nothing to compact")  # the session holds about 31000 tokens
    assert err.startswith("--keep-recent: warning: compaction.keep_recent_tokens: ") and err.count("\n") == 1


def test_malformed_values_are_usage_errors(capsys):
    for flag, value in (("--reserve", "-1"), ("--keep-recent", "1.5"), ("--reasoning", "extreme")):
        with pytest.raises(SystemExit) as stopped:
            main(["compact", LONG, "--plan", flag, value])
        assert stopped.value.code == 2 and f"argument {flag}:" in capsys.readouterr().err


def test_library_overrides_are_checked_and_named_by_origin():
    with pytest.raises(PipelineError) as failed:
        compile_profile("default", {"compaction.reserve_tokens": 1}, {"compaction.reserve_tokens": "--reserve"})
    assert {(str(p.location), p.key) for p in failed.value.problems} == {("--reserve", "compaction.reserve_tokens")}
    with pytest.raises(PipelineError) as failed:
        compile_profile("default", {"compaction.keep_recent_tokens": -1})
    [problem] = failed.value.problems
    assert (str(problem.location), problem.key) == ("<override compaction.keep_recent_tokens>", "compaction.keep_recent_tokens")
    settings = compile_profile("default", {"compaction.keep_recent_tokens": 5, "compaction.reserve_tokens": 4096})
    assert (settings.profile.compaction.keep_recent_tokens, settings.profile.compaction.reserve_tokens) == (5, 4096)
    base = compile_profile("default")
    assert base.with_overrides({}) is base
    assert base.with_overrides({"compaction.reserve_tokens": 4096}).profile.compaction.reserve_tokens == 4096


def _bodies(capsys, *argv: str) -> list[dict]:
    code, out, err = run(capsys, "compact", LONG, "--print-request", *argv)
    assert code == 0, err
    return json.loads(out)


def test_reasoning_replaces_the_sessions_level(capsys, profile_file):
    profile = profile_file(reasoning=True)
    args = ["--profile", profile, "--llm", "anthropic", "--model", "m"]
    session_level = [b.get("thinking") for b in _bodies(capsys, *args)]
    high = [b.get("thinking") for b in _bodies(capsys, *args, "--reasoning", "high")]
    caps = [b["max_tokens"] for b in _bodies(capsys, *args)]
    assert session_level == [{"type": "enabled", "budget_tokens": thinking_budget("medium", cap)} for cap in caps]
    assert high == [{"type": "enabled", "budget_tokens": thinking_budget("high", cap)} for cap in caps]
    assert high != session_level
    assert [b.get("thinking") for b in _bodies(capsys, *args, "--reasoning", "off")] == [None, None]
    openai = _bodies(capsys, "--profile", profile, "--llm", "openai", "--model", "m", "--reasoning", "minimal")
    assert [b["reasoning_effort"] for b in openai] == ["minimal", "minimal"]


def test_reasoning_with_a_model_that_does_not_reason_is_ignored_with_a_warning(capsys):
    code, out, err = run(capsys, "compact", LONG, "--print-request", "--llm", "openai", "--model", "m",
                         "--reasoning", "high")
    assert code == 0 and all("reasoning_effort" not in b for b in json.loads(out))
    assert err.startswith("warning: --reasoning high: ignored: the summarizer does not reason")


def test_reasoning_is_refused_where_it_cannot_apply(capsys):
    code, _, err = run(capsys, "compact", LONG, "--branch-to", "abc", "--reasoning", "high")
    assert code == 2 and "branch summaries never reason" in err
    code, _, err = run(capsys, "compact", LONG, "--plan", "--reasoning", "high")
    assert code == 2 and "--reasoning goes with" in err


def test_compact_session_asks_for_the_given_level(copy_session):
    from pipeline.model.summary import Summarizer

    profile = default_profile()
    path = copy_session("tests/data/sessions/real/long-coding.jsonl")
    client = ScriptedClient(["## Goal\nx"])
    compact_session(SessionFile.open(path), profile, client, summarizer=Summarizer(reasoning=True),
                    thinking_level="xhigh")
    assert len(client.requests) >= 2 and {r.reasoning for r in client.requests} == {"xhigh"}


def test_the_profiles_own_warnings_are_shown(capsys, tmp_path):
    profile = tmp_path / "w.yaml"
    profile.write_text("extends: builtin:default\nname: w\ntemplates:\n  sources: [project, project]\n")
    code, out, err = run(capsys, "compact", LONG, "--plan", "--profile", str(profile))
    assert code == 0 and out.startswith("cut:")
    assert "templates.sources.1: template source `project` is listed twice" in err


def test_summarizer_flags_are_overrides_checked_like_the_profile(capsys):
    code, _, err = run(capsys, "compact", LONG, "--print-request", "--llm", "openai", "--model", "m",
                       "--base-url", "ftp://127.0.0.1/v1")
    assert code == 1 and err == "--base-url: summarizer.base_url: `base_url` must start with http:// or https://\n"
    bodies = _bodies(capsys, "--llm", "openai", "--model", "gpt-test")
    assert {b["model"] for b in bodies} == {"gpt-test"}
