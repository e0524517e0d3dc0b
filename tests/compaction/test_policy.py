"""Compaction policy: triggers, per-model overrides, strategies, summary validity, pins."""

from __future__ import annotations

import json

import pytest

from pipeline import compile_profile
from pipeline.compaction.engine import compact_session, plan_session
from pipeline.compaction.driver import compact
from pipeline.compaction.summarize import SummaryFailed
from pipeline.compaction.tokens import should_compact
from pipeline.compaction.triggers import threshold, would_trigger
from pipeline.errors import ProfileError
from pipeline.llm.types import Completion
from pipeline.model.compaction import Compaction
from pipeline.runtime.policy import CurrentModel, check_compaction
from pipeline.session import SessionFile, Usage
from pipeline.session.masks import MASK_TYPE
from pipeline.session.projection import build_context
from pipeline.model.run_plan import ContextTexts
from pipeline.model.run_plan import CompactionCheck

from .conftest import ROOT, ScriptedClient, default_profile
from .test_cli_compact import run

PI16 = json.loads((ROOT / "tests" / "data" / "pi16" / "compaction.json").read_text(encoding="utf-8"))
LONG = "tests/data/sessions/real/long-coding.jsonl"
GOOD = "\n\n".join(f"## {h}\n- x" for h in ("Goal", "Constraints & Preferences", "Progress", "Key Decisions",
                                             "Next Steps"))


def _profile(tmp_path, yaml: str):
    path = tmp_path / "p.yaml"
    path.write_text("extends: builtin:default\nname: t\n" + yaml, encoding="utf-8")
    return compile_profile(path)


# --------------------------------------------------------------------------- triggers


@pytest.mark.parametrize("tokens", [0, 183616, 183617, 10**6])
@pytest.mark.parametrize("window", [0, 20000, 200000])
def test_default_trigger_is_pis_rule(tokens, window):
    settings = Compaction()
    assert should_compact(tokens, window, settings) == (tokens > window - 16384)
    assert should_compact(tokens, window, Compaction.model_validate({"trigger": {"reserve_tokens": 16384}})) == (
        tokens > window - 16384)


def test_percent_and_tokens_triggers():
    percent = Compaction.model_validate({"trigger": {"percent_of_window": 75}})
    fixed = Compaction.model_validate({"trigger": {"tokens": 5000}})
    assert threshold(percent, 200000) == 150000
    assert should_compact(150001, 200000, percent) and not should_compact(150000, 200000, percent)
    assert threshold(fixed, 0) == threshold(fixed, 10**6) == 5000
    assert not should_compact(5000, 0, fixed)
    assert not should_compact(10**6, 0, Compaction.model_validate({"enabled": False, "trigger": {"tokens": 1}}))


def _snake(settings: dict) -> dict:
    names = {"reserveTokens": "reserve_tokens", "keepRecentTokens": "keep_recent_tokens", "enabled": "enabled"}
    out = {names[k]: v for k, v in settings.items() if k != "modelOverrides"}
    overrides = settings.get("modelOverrides", {})
    out["model_overrides"] = {key: {names[k]: v for k, v in o.items() if k != "enabled"} for key, o in overrides.items()}
    return out


@pytest.mark.parametrize("case", PI16["settings"], ids=lambda c: str(c["model"]))
def test_model_overrides_fall_back_key_by_key_as_pi16(case):
    settings = Compaction.model_validate(_snake(case["settings"]))
    model = case["model"] or {}
    mine = settings.for_model(model.get("provider"), model.get("id"))
    want = case["pi16"]
    assert (mine.enabled, mine.reserve_tokens, mine.keep_recent_tokens) == (
        want["enabled"], want["reserveTokens"], want["keepRecentTokens"])


def test_runtime_check_uses_the_models_override():
    settings = Compaction.model_validate({"model_overrides": {"p/m": {"trigger": {"tokens": 100}}}})
    reply = {"role": "assistant", "content": [], "provider": "p", "model": "m", "stopReason": "stop",
             "usage": {"input": 150, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150},
             "timestamp": 1}
    mine = check_compaction(reply, phase="after_run", model=CurrentModel("p", "m", 200000), settings=CompactionCheck.of(settings))
    other = check_compaction(reply, phase="after_run", model=CurrentModel("p", "x", 200000), settings=CompactionCheck.of(settings))
    assert (mine.action, other.action) == ("compact", "none")


def test_validate_checks_each_models_window(tmp_path):
    with pytest.raises(ProfileError) as err:
        _profile(tmp_path, """compaction:
  trigger: {percent_of_window: 80}
  model_overrides:
    "a/small": {context_window: 8000, trigger: {reserve_tokens: 9000}}
    "b/mid": {keep_recent_tokens: 30000, context_window: 32000}
    nomodel: {keep_recent_tokens: 1}
""")
    problems = {(p.key, p.location.line): p.message for p in err.value.problems}
    assert any("a/small" in k and line == 6 and "every turn" in m for (k, line), m in problems.items())
    assert any("b/mid" in k and "keep_recent_tokens (30000)" in m for (k, _), m in problems.items())
    assert any("nomodel" in k and "provider/model" in m for (k, _), m in problems.items())


def test_masking_and_pins_need_their_texts(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("extends: builtin:default\nname: t\ncompaction:\n  strategy: hybrid\n  masking: {placeholder: null}\n"
                    "  pins: {first_request: true, item: null, messages: [{pattern: '(x'}]}\n", encoding="utf-8")
    with pytest.raises(ProfileError) as err:
        compile_profile(path)
    keys = sorted(p.key for p in err.value.problems)
    assert keys == ["compaction.masking", "compaction.pins", "compaction.pins.messages.0.pattern"]


def test_plan_window_answers_would_it_trigger(capsys):
    code, out, _ = run(capsys, "compact", str(ROOT / LONG), "--plan", "--window", "40000")
    assert code == 0 and out.startswith("trigger:          fires: 31392 tokens, threshold 23616")
    code, out, _ = run(capsys, "compact", str(ROOT / LONG), "--plan", "--window", "200000", "--format", "json")
    assert json.loads(out)["trigger"] == {"tokens": 31392, "window": 200000, "threshold": 183616, "fires": False,
                                          "rule": "tokens > window - 16384"}
    assert would_trigger(31392, 40000, Compaction()).fires


def test_plan_window_answers_with_the_models_settings(capsys, tmp_path):
    """`--plan --window N --for-model P/M`: the trigger and the plan are those of the model's
    `compaction.model_overrides` entry; another model gets the block's."""
    profile = tmp_path / "o.yaml"
    profile.write_text('extends: builtin:default\nname: o\ncompaction:\n  model_overrides:\n'
                       '    "p/m": {reserve_tokens: 4000, keep_recent_tokens: 2000}\n', encoding="utf-8")
    argv = ["compact", str(ROOT / LONG), "--profile", str(profile), "--plan", "--window", "40000", "--format", "json"]
    code, out, _ = run(capsys, *argv, "--for-model", "p/m")
    tuned = json.loads(out)
    assert code == 0 and tuned["trigger"] == {"tokens": 31392, "window": 40000, "threshold": 36000, "fires": False,
                                              "rule": "tokens > window - 4000"}
    code, out, _ = run(capsys, *argv, "--for-model", "p/other")
    other = json.loads(out)
    assert code == 0 and other["trigger"]["threshold"] == 23616 and other["trigger"]["fires"]
    assert tuned["firstKeptEntryId"] != other["firstKeptEntryId"]  # the plan keeps 2000 tokens, not 20000


def test_summarizer_effort_replaces_the_sessions_level(tmp_path):
    from pipeline.compaction.engine import planned_requests

    profile = _profile(tmp_path, "summarizer: {reasoning: true, reasoning_effort: low}\n").profile
    plan = plan_session(SessionFile.open(ROOT / LONG), profile.compaction)
    assert {r.reasoning for r in planned_requests(plan, profile, profile.summarizer)} == {"low"}


# --------------------------------------------------------------------------- strategies


def test_mask_appends_one_custom_entry_and_rewrites_nothing(copy_session):
    path = copy_session(LONG)
    before = path.read_bytes()
    profile = default_profile()
    session = SessionFile.open(path)
    done = compact(session, profile, ScriptedClient([]), strategy="mask_tool_results")
    after = path.read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
    line = json.loads(after.splitlines()[-1])
    assert line["type"] == "custom" and line["customType"] == MASK_TYPE
    assert done.entry is None and len(done.mask.placeholders) == 28
    assert done.mask.tokens_after < done.mask.tokens_before
    texts = ContextTexts.from_profile(profile)
    context = build_context(SessionFile.open(path), texts)
    masked = [m for m in context.messages if m.role == "toolResult" and "left out to save room" in m.content[0].text]
    assert len(masked) == 28
    tool_calls = sum(1 for m in context.messages if m.role == "assistant" for b in m.content if b.type == "toolCall")
    assert tool_calls == sum(1 for m in build_context(SessionFile.open(ROOT / LONG), texts).messages
                             if m.role == "assistant" for b in m.content if b.type == "toolCall")
    again = compact(SessionFile.open(path), profile, ScriptedClient([]), strategy="mask_tool_results")
    assert again.mask_entry is None and not again.did_anything and again.reason == "nothing_to_mask"  # nothing new to mask


@pytest.mark.parametrize("window, summarized", [(0, True), (40000, True), (200000, False)])
def test_hybrid_summarizes_only_when_masking_is_not_enough(copy_session, window, summarized):
    path = copy_session(LONG)
    client = ScriptedClient([GOOD])
    done = compact(SessionFile.open(path), default_profile(), client, strategy="hybrid", window=window)
    assert done.mask_entry is not None
    assert (done.entry is not None) == summarized
    assert bool(client.requests) == summarized


# --------------------------------------------------------------------------- validity


def _stop(text: str, reason: str) -> Completion:
    return Completion(text=text, usage=Usage(1, 1, 0, 0, 2), stop_reason=reason, model="m", provider="scripted")


@pytest.mark.parametrize("bad, verdict, code", [
    (_stop("## Goal\n- cut", "length"), "length", "provider.summary-length"),
    (_stop("", "toolUse"), "tool_call", "provider.summary-tool-call"),
    (_stop("  \n", "stop"), "empty", "provider.summary-empty"),
])
def test_an_invalid_summary_is_retried_then_fails_with_nothing_written(copy_session, bad, verdict, code):
    path = copy_session("tests/data/sessions/real/compacted-branched.jsonl")
    before = path.read_bytes()
    profile = default_profile()
    settings = profile.compaction.model_copy(update={"keep_recent_tokens": 2000})
    client = ScriptedClient([bad, bad])
    with pytest.raises(SummaryFailed) as err:
        compact_session(SessionFile.open(path), profile, client, settings=settings)
    assert path.read_bytes() == before and len(client.requests) == 2
    assert err.value.problems[0].code == code and "nothing was written" in err.value.problems[0].message
    assert [(o.verdict, o.retried) for o in err.value.outcomes] == [(verdict, True), (verdict, False)]
    good = ScriptedClient([bad, GOOD])
    done = compact_session(SessionFile.open(path), profile, good, settings=settings)
    assert [o.verdict for o in done.result.outcomes][:2] == [verdict, "valid"]
    assert done.result.usage.input == 1


def test_retry_note_goes_into_the_retried_request(copy_session, tmp_path):
    path = copy_session("tests/data/sessions/real/compacted-branched.jsonl")
    profile = _profile(tmp_path, "summary:\n  validity: {retry_note: 'again: ${problem}'}\n").profile
    settings = profile.compaction.model_copy(update={"keep_recent_tokens": 2000})
    client = ScriptedClient([_stop("x", "length"), GOOD])
    compact_session(SessionFile.open(path), profile, client, settings=settings)
    assert client.requests[1].user_text == client.requests[0].user_text + "\n\nagain: length"


# --------------------------------------------------------------------------- pins


def test_pinned_texts_survive_verbatim_and_the_request_says_so(copy_session, tmp_path):
    path = copy_session(LONG)
    (tmp_path / "RULES.md").write_text("never push to main\n", encoding="utf-8")
    session = SessionFile.open(path)
    profile = _profile(tmp_path, f"""compaction:
  pins:
    first_request: true
    messages: [{{pattern: "(?i)fix it"}}]
    files: [RULES.md, missing.md]
    placement: after_summary
""").profile
    session = _with_cwd(session, tmp_path)
    client = ScriptedClient([GOOD, "prefix summary"])
    done = compact_session(session, profile, client)
    first = "I just cloned this repo. Can you look around and give me an overview of the structure and how the pieces fit together?"
    block = done.entry.summary[done.entry.summary.index("<pinned>"):]
    assert block.startswith("<pinned>\n" + first + "\n\nYes, fix it\n\nnever push to main\n\n</pinned>")
    assert done.entry.summary.startswith(GOOD)
    assert all("do not repeat them:\n<pinned>\n" + first in r.user_text for r in client.requests)
    assert [w.code for w in done.result.warnings] == ["session.pin-unreadable"]


def _with_cwd(session: SessionFile, cwd) -> SessionFile:
    """The session with its header's cwd pointing at ``cwd`` (a copy in the same directory)."""
    raw = session.path.read_text(encoding="utf-8").splitlines()
    header = json.loads(raw[0])
    header["cwd"] = str(cwd)
    session.path.write_text("\n".join([json.dumps(header)] + raw[1:]) + "\n", encoding="utf-8")
    return SessionFile.open(session.path)


def test_pi_opens_a_masked_file_and_shows_the_results_unmasked():
    """pi 0.84.0's context of a masked file (recorded by gen_masked.py) is the unmasked one; ours masks."""
    folder = ROOT / "tests" / "data" / "compaction" / "masked"
    pi = json.loads((folder / "pi_context.json").read_text(encoding="utf-8"))
    texts = ContextTexts.from_profile(default_profile())
    original = build_context(SessionFile.open(ROOT / LONG), texts).messages
    ours = build_context(SessionFile.open(folder / "long-coding-masked.jsonl"), texts).messages
    result_text = lambda m: "".join(getattr(b, "text", "") for b in m.content)  # noqa: E731
    assert pi["roles"] == [m.role for m in original] == [m.role for m in ours]
    assert pi["toolResults"] == [result_text(m) for m in original if m.role == "toolResult"]
    differ = [(a, b) for a, b in zip(pi["toolResults"], (result_text(m) for m in ours if m.role == "toolResult")) if a != b]
    assert len(differ) == 28 and all("left out to save room" in b for _, b in differ)


def test_compact_command_runs_a_strategy_and_a_models_override(copy_session, capsys, tmp_path):
    path = copy_session(LONG)
    code, out, err = run(capsys, "compact", str(path), "--strategy", "mask_tool_results")
    assert code == 0 and "appended mask" in err and "28 tool results masked" in err and out == ""
    code, out, err = run(capsys, "compact", str(path), "--strategy", "mask_tool_results")
    assert code == 0 and out.startswith("nothing to mask")
    profile = tmp_path / "o.yaml"
    profile.write_text('extends: builtin:default\nname: o\ncompaction:\n  model_overrides:\n'
                       '    "p/m": {keep_recent_tokens: 2000}\n', encoding="utf-8")
    fresh = copy_session("tests/data/sessions/real/compacted-branched.jsonl")
    code, out, err = run(capsys, "compact", str(fresh), "--profile", str(profile), "--plan", "--for-model", "p/m")
    assert code == 0 and out.startswith("cut:") and "keep_recent_tokens 2000" in out
    code, out, err = run(capsys, "compact", str(fresh), "--profile", str(profile), "--for-model", "p/m")
    assert code == 0 and "appended compaction" in err and out.startswith("## Goal")


def test_validate_model_window_checks_a_declared_trigger(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text("extends: builtin:default\nname: w\ncompaction:\n  trigger: {percent_of_window: 50}\n"
                    "  keep_recent_tokens: 30000\n", encoding="utf-8")
    code, out, err = run(capsys, "validate", str(path), "--model-window", "50000", "--model-window", "200000")
    text = out + err
    assert code == 1 and f"{path}:4:3: compaction.trigger: keep_recent_tokens (30000) must be below the threshold " \
        "(25000) in a window of 50000 (--model-window)" in text
    assert "200000" not in text  # 100000 is above what is kept there


def test_pinned_files_are_read_bounded(tmp_path, monkeypatch):
    """A FIFO named as a pin would block a plain read; a file beyond the limit would go into
    every summary: both are the `session.pin-unreadable` warning, the readable pin stays."""
    import os

    from pipeline.compaction.pins import collect_pins
    from pipeline.limits import FILE_LIMITS
    from pipeline.model.compaction import Pins

    (tmp_path / "RULES.md").write_text("never push to main\n", encoding="utf-8")
    (tmp_path / "BIG.md").write_text("x" * 65, encoding="utf-8")
    os.mkfifo(tmp_path / "PIPE.md")
    monkeypatch.setitem(FILE_LIMITS, "pinned file", 64)
    pins = Pins(files=("RULES.md", "PIPE.md", "BIG.md", "GONE.md"), item="${text}")
    found, problems = collect_pins([], pins, str(tmp_path))
    assert [(p.source, p.text) for p in found] == [("RULES.md", "never push to main\n")]
    assert [p.code for p in problems] == ["session.pin-unreadable"] * 3
    messages = [p.message for p in problems]
    assert messages[0].startswith("pinned file PIPE.md cannot be read: it is a FIFO (named pipe)")
    assert messages[1].startswith("pinned file BIG.md cannot be read: file too large: 65 bytes")
    assert messages[2] == "pinned file GONE.md cannot be read: No such file or directory"
