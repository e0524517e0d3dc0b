"""The offline summarizer: deterministic, fills every heading from the conversation, words from the profile."""

from __future__ import annotations

import shutil

import pytest

from pipeline.compaction.engine import branch_session, compact_session
from pipeline.compaction.plan import plan_compaction
from pipeline.compaction.requests import RequestContext, branch_request, history_request
from pipeline.compaction.summarize import plan_calls
from pipeline.compaction.summary_schema import heading_line
from pipeline.llm.errors import LLMConfigError
from pipeline.compaction.offline import OfflineClient, one_line, parse_calls
from pipeline.model.summary import Offline, OfflineFill
from pipeline.session import ContextTexts, SessionFile, convert_to_llm, parse_message

from .conftest import REAL, default_profile
from .entryspec import entries

CONVERSATION = [
    {"role": "user", "content": "Add a --verbose flag to the CLI", "timestamp": 1},
    {"role": "assistant", "timestamp": 2, "stopReason": "toolUse", "content": [
        {"type": "text", "text": "Looking at the CLI."},
        {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "src/cli.js"}},
        {"type": "toolCall", "id": "2", "name": "edit", "arguments": {"path": "src/cli.js", "edits": []}},
    ]},
    {"role": "toolResult", "toolCallId": "1", "toolName": "read", "content": [{"type": "text", "text": "code"}],
     "timestamp": 3},
    {"role": "assistant", "timestamp": 4, "stopReason": "toolUse", "content": [
        {"type": "toolCall", "id": "3", "name": "bash", "arguments": {"command": "npm test"}},
        {"type": "toolCall", "id": "4", "name": "write", "arguments": {"path": "test/v.test.js", "content": "x"}},
    ]},
    {"role": "user", "content": "Now document   it\nin the README", "timestamp": 5},
]


def _messages(profile=None):
    profile = profile or default_profile()
    return convert_to_llm([parse_message(m) for m in CONVERSATION], ContextTexts.from_profile(profile))


def _history(profile=None, previous=None):
    profile = profile or default_profile()
    ctx = RequestContext(profile.summary, profile.compaction)
    return history_request(_messages(profile), ctx, previous_summary=previous)


def _section(text: str, heading: str) -> str:
    return text.split(heading + "\n", 1)[1].split("\n\n##", 1)[0]


def test_every_heading_is_written_and_the_result_is_deterministic():
    profile = default_profile()
    client = OfflineClient(profile.summary)
    first, second = client.complete(_history()), client.complete(_history())
    assert first == second and first.provider == "offline" and first.stop_reason == "stop"
    fmt = profile.summary.schema_format
    lines = first.text.split("\n")
    for section in profile.summary.schema_:
        assert heading_line(section, fmt) in lines
        for item in section.items:
            assert fmt.item_prefix + item.heading in lines


def test_the_conversation_fills_the_configured_headings():
    text = OfflineClient(default_profile().summary).complete(_history()).text
    goal = _section(text, "## Goal")
    assert goal == "- Add a --verbose flag to the CLI\n- Now document it in the README"
    assert "- [x] read src/cli.js" in text and "- [x] bash: npm test" in text and "- [x] write test/v.test.js" in text
    assert "### In Progress\n- [ ] Now document it in the README" in text
    assert "## Next Steps\n1. Now document it in the README" in text
    critical = _section(text, "## Critical Context")
    assert critical.split("\n") == ["- src/cli.js", "- test/v.test.js"]  # modified first; read-only ones follow
    empty = default_profile().summary.offline.empty.render()
    assert _section(text, "## Key Decisions") == empty


def test_words_and_layout_come_from_the_profile():
    profile = default_profile()
    offline = Offline(empty="NADA", fill=(OfflineFill(heading="Goal", sources=("requests",), item="* ${text}"),),
                      max_item_chars=10, ellipsis="~")
    summary = profile.summary.model_copy(update={"offline": offline})
    profile = profile.model_copy(update={"summary": summary})
    text = OfflineClient(summary).complete(_history(profile)).text
    assert _section(text, "## Goal") == "* Add a --ve~\n* Now docume~"
    assert "(none)" not in text and text.count("NADA") == 7  # the 4 other plain sections and the 3 items of Progress


def test_an_update_keeps_the_previous_summary_and_adds_to_it():
    client = OfflineClient(default_profile().summary)
    previous = client.complete(_history()).text.replace("- Add a --verbose flag", "- Earlier goal kept")
    previous += "\n\n<read-files>\nold.md\n</read-files>"
    updated = client.complete(_history(previous=previous)).text
    assert _section(updated, "## Goal").split("\n")[:2] == ["- Earlier goal kept to the CLI", "- Now document it in the README"]
    assert "old.md" not in updated  # the file lists are the engine's, appended after the summary
    assert updated.count("## Goal") == 1


def test_turn_prefix_and_branch_use_their_own_headings():
    profile = default_profile()
    client = OfflineClient(profile.summary)
    ctx = RequestContext(profile.summary, profile.compaction)
    prefix = client.complete(plan_request_of_kind(profile, "turn_prefix")).text
    assert [line for line in prefix.split("\n") if line.startswith("## ")] == [
        "## " + fill.heading for fill in profile.summary.offline.turn_prefix
    ]
    branch = client.complete(branch_request(_messages(), ctx)).text
    assert [line for line in branch.split("\n") if line.startswith("## ")] == [
        "## " + s.heading for s in profile.summary.branch_schema
    ]


def plan_request_of_kind(profile, kind):
    plan = plan_compaction(entries("U5 A10 T10 A10 T10 A10"), profile.compaction.model_copy(update={"keep_recent_tokens": 20}))
    calls = plan_calls(plan, RequestContext(profile.summary, profile.compaction), ContextTexts.from_profile(profile), None)
    return next(c.request for c in calls if c.request.kind == kind)


def test_a_profile_without_offline_words_is_refused():
    summary = default_profile().summary.model_copy(update={"offline": None})
    with pytest.raises(LLMConfigError, match="summary.offline"):
        OfflineClient(summary)


def test_build_body_is_our_internal_request():
    request = _history()
    body = OfflineClient(default_profile().summary).build_body(request)
    assert body == {"provider": "offline", "model": "offline", "kind": "history", "max_tokens": request.max_tokens,
                    "system": request.system_prompt, "user": request.user_text}


def test_tool_call_lines_are_parsed_back():
    assert parse_calls('read(path="a b.ts", offset=3); ls(); bash(command="x; y(z)")') == [
        ("read", {"path": "a b.ts", "offset": 3}, 'read(path="a b.ts", offset=3)'),
        ("ls", {}, "ls()"),
        ("bash", {"command": "x; y(z)"}, 'bash(command="x; y(z)")'),
    ]


def test_offline_compaction_is_marked_and_keeps_pis_details(tmp_path):
    path = tmp_path / "s.jsonl"
    shutil.copyfile(REAL / "long-coding.jsonl", path)
    profile = default_profile()
    session = SessionFile.open(path)
    done = compact_session(session, profile, OfflineClient(profile.summary))
    details = done.entry.raw["details"]
    assert details["producedBy"] == "offline"
    assert details["readFiles"] == list(done.result.files.read_files) and details["modifiedFiles"]
    assert done.entry.raw["usage"]["totalTokens"] == 0 and done.entry.raw["fromHook"] is False


@pytest.mark.parametrize("prefix", [239, 240])
def test_a_cut_item_never_splits_an_emoji(prefix):
    offline = default_profile().summary.offline.model_copy(update={"max_item_chars": 240})
    cut = one_line("a" * prefix + "\U0001F600 and more", offline)
    assert not any("\ud800" <= ch <= "\udfff" for ch in cut)
    assert cut == "a" * prefix + offline.ellipsis


def _assistant(text: str, calls=()) -> dict:
    content = [{"type": "text", "text": text}] + [
        {"type": "toolCall", "id": f"c{i}", "name": name, "arguments": args} for i, (name, args) in enumerate(calls)]
    return {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
            "model": "m", "stopReason": "toolUse" if calls else "stop", "timestamp": 2,
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}}


def _not_requests(session: SessionFile) -> None:
    """Things that are user messages for the model but nobody's request: a custom message and a `!command` run."""
    session.append_custom_message("ext", "extension context note")
    session.append_message({"role": "bashExecution", "command": "git status", "output": "clean", "exitCode": 0,
                            "cancelled": False, "truncated": False, "timestamp": 3})


def test_only_what_the_user_typed_counts_as_a_request(tmp_path):
    """Summaries, extension messages and shell runs reach the summarizer as user messages too."""
    profile = default_profile()
    session = SessionFile.create(tmp_path / "s.jsonl", cwd="/w")
    session.append_message({"role": "user", "content": "Fix the login bug", "timestamp": 1})
    reply = session.append_message(_assistant("Reading it.", [("read", {"path": "src/login.js"})]))
    session.append_message({"role": "toolResult", "toolCallId": "c0", "toolName": "read",
                            "content": [{"type": "text", "text": "code"}], "isError": False, "timestamp": 2})
    session.append_branch_summary(reply.id, "## Goal\n- a goal of the abandoned branch")
    _not_requests(session)
    session.append_message({"role": "user", "content": "Now add tests for login", "timestamp": 4})
    session.append_message(_assistant("Added."))
    session.append_message({"role": "user", "content": "Thanks, ship it", "timestamp": 5})  # kept

    settings = profile.compaction.model_copy(update={"keep_recent_tokens": 1})
    [call] = plan_calls(plan_compaction(session.path_to(), settings), RequestContext(profile.summary, settings),
                        ContextTexts.from_profile(profile), None)
    # five user parts: two typed, the branch summary, the extension's note, the shell run
    assert call.request.user_text.count("\n" + profile.summary.labels.user) == 5
    assert call.request.user_requests == ("Fix the login bug", "Now add tests for login")

    done = compact_session(session, profile, OfflineClient(profile.summary), settings=settings)
    assert _section(done.entry.summary, "## Goal") == "- Fix the login bug\n- Now add tests for login"
    assert _section(done.entry.summary, "## Next Steps") == "1. Now add tests for login"
    for foreign in ("abandoned branch", "extension context note", "git status",
                    profile.summary.projection.branch.open.render().split("\n")[0]):
        assert foreign not in done.entry.summary


def test_a_branch_summary_lists_only_typed_requests(tmp_path):
    """The branch being left holds a compaction and a branch summary (both summaries for the model)."""
    profile = default_profile()
    session = SessionFile.create(tmp_path / "s.jsonl", cwd="/w")
    first = session.append_message({"role": "user", "content": "Start the refactor", "timestamp": 1})
    session.append_message(_assistant("On it."))
    session.append_compaction("## Goal\n- a compacted goal", first.id, 100)
    session.append_branch_summary(session.leaf_id, "## Goal\n- a branch goal")
    _not_requests(session)
    session.append_message({"role": "user", "content": "Try approach B", "timestamp": 4})
    session.append_message(_assistant("Tried."))

    done = branch_session(session, profile, OfflineClient(profile.summary), first.id)
    summary = done.entry.summary
    assert _section(summary, "## Goal") == "- Try approach B"
    for foreign in ("compacted goal", "a branch goal", "extension context note", "git status"):
        assert foreign not in summary
