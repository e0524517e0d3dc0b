"""The built-in tools read through the bounded reader: a FIFO, a device or an oversize file is
refused in the profile's words, never opened for a blocking read (no hang, no endless read).

Real files in a tmp dir: a FIFO made with ``os.mkfifo``, a sparse file one byte over the
tools' limit, and ``/dev/zero`` itself (a tool set whose working directory is ``/dev``). A
tool call that could hang runs in a thread, so a regression fails the test instead of
blocking the suite.
"""

from __future__ import annotations

import os
import threading

import pytest

from pipeline import compile_profile, files
from pipeline.runtime.conversation import Conversation
from pipeline.runtime.host import ModelInfo, ToolOutput
from pipeline.runtime.loop import Agent, model_client
from pipeline.runtime.tools import builtin_tools
from pipeline.session import SessionFile
from pipeline.testing.loopback import LoopbackServer
from pipeline.model.run_plan import RunPlan

PROFILE = compile_profile("default").profile
OUT = PROFILE.runtime.tool_output
LIMIT = files.limit("tool file")
MODEL = ModelInfo(id="m", provider="local", context_window=100000, max_tokens=4000)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nneedle here\n")
    os.mkfifo(tmp_path / "pipe")
    with open(tmp_path / "huge.log", "wb") as handle:  # sparse: costs no disk
        handle.truncate(LIMIT + 1)
    return tmp_path


def _call(tool, args, wait=20.0):
    """The tool's result; fails (instead of hanging) when the call does not return."""
    box: list = []
    worker = threading.Thread(target=lambda: box.append(tool.function(args)), daemon=True)
    worker.start()
    worker.join(wait)
    assert not worker.is_alive(), f"{tool.name}({args}) did not return: it blocked on the file"
    return box[0]


def _tools(cwd, profile=PROFILE):
    return {t.name: t for t in builtin_tools(["read", "grep", "edit", "write"], cwd, RunPlan.of(profile))}


def _refused(result, text):
    assert isinstance(result, ToolOutput) and result.is_error
    assert result.blocks() == [{"type": "text", "text": text}]


def test_read_refuses_a_fifo_without_blocking(tree):
    _refused(_call(_tools(tree)["read"], {"path": "pipe"}), OUT.not_regular.render(path="pipe"))


def test_read_refuses_a_device_without_reading_it():
    """/dev/zero would never end: it is refused before a byte is read."""
    _refused(_call(_tools("/dev")["read"], {"path": "zero"}), OUT.not_regular.render(path="zero"))


def test_read_refuses_a_file_over_the_limit_from_its_size(tree):
    text = OUT.too_large.render(path="huge.log", size=str(LIMIT + 1), limit=str(LIMIT))
    _refused(_call(_tools(tree)["read"], {"path": "huge.log", "offset": 1, "limit": 5}), text)
    assert str(LIMIT + 1) in text and str(LIMIT) in text


def test_a_file_at_the_limit_is_read(tree):
    with open(tree / "edge.log", "wb") as handle:
        handle.truncate(LIMIT)
    result = _call(_tools(tree)["read"], {"path": "edge.log", "limit": 1})
    assert isinstance(result, str) and result.startswith("\x00")


def test_grep_over_a_tree_passes_over_what_it_cannot_read(tree):
    assert _call(_tools(tree)["grep"], {"pattern": "needle"}) == "notes.txt:2:needle here"


def test_grep_of_a_named_fifo_or_oversize_file_says_why(tree):
    grep = _tools(tree)["grep"]
    _refused(_call(grep, {"pattern": "x", "path": "pipe"}), OUT.not_regular.render(path="pipe"))
    _refused(_call(grep, {"pattern": "x", "path": "huge.log"}),
             OUT.too_large.render(path="huge.log", size=str(LIMIT + 1), limit=str(LIMIT)))


def test_edit_and_write_never_open_a_fifo_or_a_device(tree):
    tools = _tools(tree)
    edit = {"path": "pipe", "edits": [{"oldText": "a", "newText": "b"}]}
    _refused(_call(tools["edit"], edit), OUT.not_regular.render(path="pipe"))
    _refused(_call(tools["write"], {"path": "pipe", "content": "x"}), OUT.not_regular.render(path="pipe"))
    _refused(_call(tools["edit"], {**edit, "path": "huge.log"}),
             OUT.too_large.render(path="huge.log", size=str(LIMIT + 1), limit=str(LIMIT)))
    os.symlink("/dev/null", tree / "sink")  # inside the directory, resolving to a device: outside it
    assert _call(tools["write"], {"path": "sink", "content": "x"}).is_error
    assert _call(tools["write"], {"path": "notes.txt", "content": "new\n"}).is_error is False
    assert (tree / "notes.txt").read_text() == "new\n"


def test_an_unreadable_file_is_said_in_the_profiles_words(tree):
    if os.geteuid() == 0:  # root reads anything: use a name the system cannot take instead
        long = "x" * 300
        (tree / "d").mkdir()
        result = _call(_tools(tree)["write"], {"path": f"d/{long}", "content": "x"})
        _refused(result, OUT.unreadable.render(path=f"d/{long}", reason="the path is longer than the system allows"))
        return
    (tree / "secret.txt").write_text("no")
    (tree / "secret.txt").chmod(0)
    _refused(_call(_tools(tree)["read"], {"path": "secret.txt"}),
             OUT.unreadable.render(path="secret.txt", reason="Permission denied"))


@pytest.mark.parametrize("name", ["default", "pi-1"])
def test_the_refusal_texts_are_the_profiles(name, snapshot):
    out = compile_profile(name).profile.runtime.tool_output
    assert {
        "not_regular": out.not_regular.render(path="pipe"),
        "too_large": out.too_large.render(path="huge.log", size="16777217", limit="16777216"),
        "unreadable": out.unreadable.render(path="secret.txt", reason="Permission denied"),
    } == snapshot


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_an_agent_run_gets_the_refusals_as_tool_results(tree, wire):
    session = SessionFile.create(tree.parent / f"{tree.name}.jsonl", cwd=str(tree))  # outside what grep walks
    conv = Conversation(RunPlan.of(PROFILE), session, model=MODEL, tools=builtin_tools(["read", "grep"], tree, RunPlan.of(PROFILE)),
                        cwd=str(tree))
    calls = [{"name": "read", "arguments": {"path": "pipe"}}, {"name": "read", "arguments": {"path": "huge.log"}},
             {"name": "grep", "arguments": {"pattern": "needle"}}]
    with LoopbackServer([{"toolCalls": calls}, "done"]) as server:
        base = server.openai_base_url if wire == "openai" else server.anthropic_base_url
        client = model_client(RunPlan.of(PROFILE), MODEL, wire, base_url=base, env={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
        box: list = []
        worker = threading.Thread(target=lambda: box.append(Agent(conv, client, wire=wire).run("look")), daemon=True)
        worker.start()
        worker.join(60)
        assert not worker.is_alive(), "the agent run blocked on a tool"
    assert box[0].answer == "done" and box[0].error is None
    expected = [OUT.not_regular.render(path="pipe"),
                OUT.too_large.render(path="huge.log", size=str(LIMIT + 1), limit=str(LIMIT)),
                "notes.txt:2:needle here"]
    assert _tool_results(server.bodies[1], wire) == expected


def _tool_results(body, wire):
    if wire == "openai":
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]
    blocks = [b for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
              for b in m["content"] if b.get("type") == "tool_result"]
    return [b["content"] if isinstance(b["content"], str) else b["content"][0]["text"] for b in blocks]
