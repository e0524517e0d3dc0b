"""``builtin:pi-1``'s compaction plans against pi 1.6.0's ``prepareCompaction``.

* ``tests/data/pi16/compaction.json`` ``plans``: the 198 shared cases (the sessions of
  ``tests/data/compaction/plans.json`` at their leaves and keep budgets; 20 of them plan
  differently under 1.6), and the 16 ``settingsFor`` cases (per-model overrides, resolved
  through a profile that extends ``builtin:pi-1``);
* ``tests/data/pi16/plans_projection.json``: sessions built for the projection rules the
  shared ones do not reach (context edits, the recovery suffix, older compactions in the
  kept range, usage before an edit, system-message entries), written to real files; 200
  of them (``rich #n``) sessions as pi 1.x writes them: the prompt recorded first, patches,
  compactions with ``systemMessage`` snapshots, branch summaries and context edits mixed.

pi-1 plans with ``compaction.plan_on: projection`` and ``compaction.cut_fallback: last``; the
default profile keeps 0.84.0's planner, checked here on the 20 cases that differ (the rest
of its plans are ``tests/compaction/test_plans_oracle.py``'s).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.compaction.plan import CompactionPlan, plan_compaction
from pipeline.session import SessionFile
from pipeline.model.run_plan import RunPlan

from planspec import plan_entries

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((ROOT / "tests" / "data" / "pi16" / "compaction.json").read_text(encoding="utf-8"))
EDGE = json.loads((ROOT / "tests" / "data" / "pi16" / "plans_projection.json").read_text(encoding="utf-8"))
SHARED = [p for p in DATA["plans"] if "keep" in p]
FOR_MODEL = [p for p in DATA["plans"] if "settingsFor" in p]
PI1 = compile_profile("builtin:pi-1").profile.compaction
DEFAULT = compile_profile("default").profile.compaction


def view(plan: CompactionPlan) -> dict:
    stamps = lambda ms: [m.message.raw.get("timestamp") for m in ms]  # noqa: E731
    return {
        "firstKeptEntryId": plan.first_kept_entry_id, "firstKeptEntryIndex": plan.first_kept_index,
        "isSplitTurn": plan.is_split_turn, "tokensBefore": plan.tokens_before,
        "messagesToSummarizeCount": len(plan.summarize),
        "messagesToSummarizeRoles": [m.message.role for m in plan.summarize],
        "messagesToSummarizeTimestamps": stamps(plan.summarize),
        "turnPrefixMessagesCount": len(plan.turn_prefix),
        "turnPrefixMessagesRoles": [m.message.role for m in plan.turn_prefix],
        "turnPrefixMessagesTimestamps": stamps(plan.turn_prefix),
        "fileOps": plan.files.to_json(), "previousSummary": plan.previous_summary,
    }


@lru_cache(maxsize=None)
def session(rel: str) -> SessionFile:
    return SessionFile.open(ROOT / rel)


def planned(case: dict, settings) -> dict | None:
    s = session(case["session"])
    plan = plan_compaction(s.path_to(case["leaf"] or s.leaf_id), settings)
    return view(plan) if isinstance(plan, CompactionPlan) else None


def pi16(case: dict) -> dict | None:
    return None if case["pi16"] is None else {k: v for k, v in case["pi16"].items() if k != "settings"}


def test_counts() -> None:
    same = [c for c in SHARED if pi16(c) == c["pi084"]]
    assert (len(SHARED), len(same), len(FOR_MODEL)) == (198, 178, 16)
    assert (PI1.plan_on, PI1.cut_fallback, DEFAULT.plan_on, DEFAULT.cut_fallback) == ("projection", "last", "path", "first")


@pytest.mark.parametrize("case", SHARED, ids=lambda c: f"{Path(c['session']).stem}@{c['leaf'] or 'last'}/keep{c['keep']}")
def test_plan(case: dict) -> None:
    assert planned(case, PI1.model_copy(update={"keep_recent_tokens": case["keep"]})) == pi16(case)


@pytest.mark.parametrize("case", [c for c in SHARED if pi16(c) != c["pi084"]],
                         ids=lambda c: f"{Path(c['session']).stem}@{c['leaf'] or 'last'}/keep{c['keep']}")
def test_the_default_profile_keeps_the_084_plan(case: dict) -> None:
    assert planned(case, DEFAULT.model_copy(update={"keep_recent_tokens": case["keep"]})) == case["pi084"] != pi16(case)


def _profile_yaml(settings: dict) -> str:
    """A profile extending pi-1 with pi's settings.json ``compaction`` block in our keys
    (an override's ``enabled`` has no key: pi ignores it)."""
    names = {"keepRecentTokens": "keep_recent_tokens", "reserveTokens": "reserve_tokens", "enabled": "enabled"}
    lines = ["extends: builtin:pi-1", "compaction:" if settings else "compaction: {}"]
    lines += [f"  {names[k]}: {json.dumps(v)}" for k, v in settings.items() if k != "modelOverrides"]
    if "modelOverrides" in settings:
        lines.append("  model_overrides:")
        for key, override in settings["modelOverrides"].items():
            given = {names[k]: v for k, v in override.items() if k != "enabled"}
            lines.append(f"    {json.dumps(key)}: {json.dumps(given)}")
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=None)
def _compiled(text: str, tmp: Path):
    path = tmp / f"p{abs(hash(text))}.yaml"
    path.write_text(text, encoding="utf-8")
    return compile_profile(str(path)).profile.compaction


@pytest.mark.parametrize("case", FOR_MODEL, ids=lambda c: f"{Path(c['session']).stem}/{c['settingsFor']['provider']}")
def test_plan_for_model(case: dict, tmp_path_factory) -> None:
    settings = _compiled(_profile_yaml(case["settings"]), tmp_path_factory.getbasetemp())
    model = case["settingsFor"]
    resolved = settings.for_model(model["provider"], model["id"])
    if case["pi16"] is not None:  # pi reports the settings it planned with
        pi = case["pi16"]["settings"]
        assert (resolved.enabled, resolved.reserve_tokens, resolved.keep_recent_tokens) == (
            pi["enabled"], pi["reserveTokens"], pi["keepRecentTokens"])
    assert planned(case, resolved) == pi16(case)


@pytest.mark.parametrize("case", DATA["settings"], ids=lambda c: json.dumps(c["model"]))
def test_settings_resolution(case: dict, tmp_path_factory) -> None:
    """``compaction_settings``: our keys give pi 1.6's resolved settings for the model."""
    settings = _compiled(_profile_yaml(case["settings"]), tmp_path_factory.getbasetemp())
    model = case["model"] or {}
    resolved = settings.for_model(model.get("provider"), model.get("id"))
    assert {"enabled": resolved.enabled, "reserveTokens": resolved.reserve_tokens,
            "keepRecentTokens": resolved.keep_recent_tokens} == case["pi16"]


def _session_file(spec: str, tmp: Path) -> SessionFile:
    header = {"type": "session", "version": 3, "id": "00000000-0000-7000-8000-000000000000",
              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    path = tmp / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [header, *plan_entries(spec)]), encoding="utf-8")
    return SessionFile.open(path)


def test_edge_cases_cover_the_rules() -> None:
    specs = " ".join(c["spec"] for c in EDGE["cases"])
    assert len(EDGE["cases"]) >= 250 and all(t in specs for t in (" X", " R", " RB", " S ", "@", "!"))
    rich = [c for c in EDGE["cases"] if c["what"].startswith("rich #")]
    tokens = lambda c: c["spec"].split()  # noqa: E731
    assert len(rich) >= 200 and all(tokens(c)[0] in ("S", "ST") for c in rich)
    for mark in ("SP", "BS", "CS", "X", "RB"):  # each kind of entry in at least 20 sessions
        assert sum(any(t.startswith(mark) for t in tokens(c)) for c in rich) >= 20, mark
    assert sum(c["pi16"] is not None for c in rich) >= 130  # plans, not only "nothing to compact"
    moved = [c for c in EDGE["cases"] if c["what"].startswith("omitted failed reply")]
    assert any(c["pi16"] and c["pi16"]["firstKeptEntryId"] == "e0000003" for c in moved)


@pytest.mark.parametrize("case", EDGE["cases"], ids=lambda c: f"{c['spec'][:40]}/keep{c['keep']}")
def test_projection_edge_case(case: dict, tmp_path: Path) -> None:
    s = _session_file(case["spec"], tmp_path)
    plan = plan_compaction(s.path_to(), PI1.model_copy(update={"keep_recent_tokens": case["keep"]}))
    assert (view(plan) if isinstance(plan, CompactionPlan) else None) == case["pi16"]


# --------------------------------------------------------------------------- the command line

SHARED_DIRS = [ROOT.parent / "shared" / "oracle" / "sessions", ROOT.parent / "shared" / "oracle-1.6" / "sessions"]
REAL = ROOT / "tests" / "data" / "sessions" / "real"
CLI_CASES = [c for c in SHARED if c["session"].startswith("tests/data/sessions/real/") and c["leaf"] is None]


def _cli_plan(capsys, *argv: str) -> dict:
    from pipeline.cli import main

    code = main(["compact", *argv, "--plan", "--format", "json"])
    out, _ = capsys.readouterr()
    assert code == 0
    return json.loads(out)


def _pi_view(pi: dict | None, rel: str) -> dict | None:
    """pi's preparation in ``compact --plan --format json`` terms (ids from the timestamps' entries)."""
    if pi is None:
        return None
    return {"firstKeptEntryId": pi["firstKeptEntryId"], "isSplitTurn": pi["isSplitTurn"],
            "tokensBefore": pi["tokensBefore"], "summarize": pi["messagesToSummarizeCount"],
            "turnPrefix": pi["turnPrefixMessagesCount"], "previousSummary": pi["previousSummary"]}


def _our_view(plan: dict) -> dict | None:
    if plan.get("plan", 0) is None:
        return None
    return {"firstKeptEntryId": plan["firstKeptEntryId"], "isSplitTurn": plan["isSplitTurn"],
            "tokensBefore": plan["tokensBefore"], "summarize": len(plan["summarizeIds"]),
            "turnPrefix": len(plan["turnPrefixIds"]), "previousSummary": plan["previousSummary"]}


@pytest.mark.parametrize("directory", [REAL, *SHARED_DIRS], ids=["repo", "shared-0.84", "shared-1.6"])
@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: f"{Path(c['session']).stem}/keep{c['keep']}")
def test_compact_plan_command_gives_pi16s_plan(capsys, directory: Path, case: dict) -> None:
    if not directory.is_dir():
        pytest.skip(f"{directory} is absent (the shared oracle sessions; the repository's copies are checked)")
    path = directory / Path(case["session"]).name
    assert path.read_bytes() == (ROOT / case["session"]).read_bytes()
    keep = ("--keep-recent", str(case["keep"]))
    assert _our_view(_cli_plan(capsys, str(path), "--profile", "builtin:pi-1", *keep)) == _pi_view(case["pi16"], case["session"])
    assert _our_view(_cli_plan(capsys, str(path), *keep)) == _pi_view(case["pi084"], case["session"])


@pytest.mark.parametrize("case", FOR_MODEL, ids=lambda c: f"{Path(c['session']).stem}/{c['settingsFor']['provider']}")
def test_compact_plan_command_for_model(capsys, tmp_path: Path, case: dict) -> None:
    profile = tmp_path / "pi1-overrides.yaml"
    profile.write_text(_profile_yaml(case["settings"]), encoding="utf-8")
    model = f"{case['settingsFor']['provider']}/{case['settingsFor']['id']}"
    plan = _cli_plan(capsys, str(ROOT / case["session"]), "--profile", str(profile), "--for-model", model)
    assert _our_view(plan) == _pi_view(case["pi16"], case["session"])


def test_plan_text_names_the_turn_start_and_the_kept_part(capsys) -> None:
    from pipeline.cli import main

    case = next(c for c in CLI_CASES if c["session"].endswith("compacted-branched.jsonl") and c["keep"] == 8000)
    assert main(["compact", str(ROOT / case["session"]), "--plan", "--profile", "builtin:pi-1", "--keep-recent", "8000"]) == 0
    out = capsys.readouterr().out
    s = session(case["session"])
    path = s.path_to()
    index = case["pi16"]["firstKeptEntryIndex"]
    assert f"keep from entry {case['pi16']['firstKeptEntryId']} (entry {index + 1} of {len(path)} on the branch)" in out
    assert f"{len(path) - index} entries from" in out
    plan = plan_compaction(path, PI1.model_copy(update={"keep_recent_tokens": 8000}))
    assert plan.is_split_turn and f"the turn starts at entry {plan.turn_start_entry_id}" in out
    assert path[plan.turn_start_index].id == plan.turn_start_entry_id


# --------------------------------------------------------------------------- the runtime and `pipeline compact`


def _for_model_case(name: str, provider: str) -> dict:
    return next(c for c in FOR_MODEL if c["session"].endswith(name) and c["settingsFor"]["provider"] == provider)


@pytest.mark.parametrize("provider", ["ollama", "openai", "other"])
def test_runtime_and_command_compact_with_the_same_plan(tmp_path: Path, capsys, provider: str) -> None:
    """The runtime's compaction (``Conversation.compact``) and ``pipeline compact --for-model``
    write the compaction entry pi 1.6 plans, with the model's overrides."""
    import shutil

    from pipeline.cli import main
    from pipeline.runtime.conversation import Conversation
    from pipeline.runtime.host import ModelInfo

    case = _for_model_case("compacted-branched.jsonl", provider)
    profile_path = tmp_path / "pi1-overrides.yaml"
    profile_path.write_text(_profile_yaml(case["settings"]), encoding="utf-8")
    model = case["settingsFor"]
    written = {}
    for how in ("runtime", "command"):
        copy = tmp_path / f"{how}.jsonl"
        shutil.copyfile(ROOT / case["session"], copy)
        if how == "runtime":
            profile = compile_profile(str(profile_path)).profile
            conv = Conversation(RunPlan.of(profile), SessionFile.open(copy), cwd=str(tmp_path),
                                model=ModelInfo(id=model["id"], provider=model["provider"], context_window=200000))
            conv.compact()
        else:
            assert main(["compact", str(copy), "--profile", str(profile_path),
                         "--for-model", f"{model['provider']}/{model['id']}"]) == 0
            capsys.readouterr()
        last = SessionFile.open(copy).entries[-1].raw
        written[how] = (last["type"], last["firstKeptEntryId"], last["tokensBefore"])
    pi = case["pi16"]
    assert written == {how: ("compaction", pi["firstKeptEntryId"], pi["tokensBefore"]) for how in written}


@pytest.mark.parametrize("case", EDGE["cut_points"], ids=lambda c: f"{c['spec'][:40]}/keep{c['keep']}")
def test_path_cut_with_the_last_fallback(case: dict) -> None:
    """``plan_on: path`` with ``cut_fallback: last`` is pi 1.6's plain ``findCutPoint`` on the
    raw path (context edits show nothing there); the default's ``first`` differs only where
    the budget is reached after the last cut point."""
    from pipeline.compaction.cut import find_cut_point
    from pipeline.session import parse_entry

    path = [parse_entry(raw) for raw in plan_entries(case["spec"])]
    settings = DEFAULT.model_copy(update={"cut_fallback": "last"})
    cut = find_cut_point(path, 0, len(path), case["keep"], settings)
    pi = case["pi16"]
    assert (cut.first_kept_index, cut.turn_start_index, cut.is_split_turn) == (
        pi["firstKeptEntryIndex"], pi["turnStartIndex"], pi["isSplitTurn"])
