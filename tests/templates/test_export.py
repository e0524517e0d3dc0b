"""`pipeline templates export`: pi templates written in other dialects, read back the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.templates.discovery import load_sources
from pipeline.templates.files import PromptTemplate
from pipeline.templates.discovery import TemplateSource
from pipeline.templates.dialects.export import export_template, write_exported

BODIES = {
    "two": "Review $1 for $2.",
    "all": "Do: $@ (also $ARGUMENTS)",
    "money": "Cost is 5$ per run, $ sign alone, $X stays",
    "dollars": "Pay $$1 now, then $",
    "hint": "Look at $1",
}
ARGS = ["a.py speed", "x y", "one", ""]


def pi(name: str, body: str) -> PromptTemplate:
    return PromptTemplate(name, "desc " + name, body, "<file>" if name == "hint" else None)


@pytest.mark.parametrize("target", ["claude-code", "codex", "opencode"])
def test_written_templates_expand_as_pi_does_when_read_back(tmp_path, target):
    items = [export_template(pi(n, b), target) for n, b in BODIES.items()]
    assert all(i.text is not None for i in items), [i.reasons for i in items]
    write_exported(items, tmp_path)
    loaded = load_sources([TemplateSource(tmp_path, "path", dialect=target)])
    assert not loaded.problems
    for name, body in BODIES.items():
        back = loaded.get("prompts:" + name if target == "codex" else name)
        assert back.description == "desc " + name
        for args in ARGS:
            words = args.split()
            highest = pi(name, body).analyze().highest_positional
            if target == "opencode" and 0 < highest < len(words):
                continue  # opencode's highest $N takes the rest: returned as a note instead
            if target == "claude-code" and len(words) < highest:
                continue  # Claude Code leaves a placeholder without its argument as written: a note
            if args and not pi(name, body).template.placeholders and target != "codex":
                continue  # the tool appends the arguments: a note, checked below
            assert back.invoke(args) == pi(name, body).template.substitute(words), (name, args)
    assert loaded.get("prompts:hint" if target == "codex" else "hint").hint_text == "<file>"
    if target == "claude-code":
        positional = [i for n, i in zip(BODIES, items) if pi(n, BODIES[n]).analyze().highest_positional]
        assert positional and all(any("as written" in x for x in i.notes) for i in positional)
    money = next(i for i in items if i.name == "money")
    assert any("appends" in n for n in money.notes) == (target != "codex")


@pytest.mark.parametrize("target,body,reason", [
    ("claude-code", "From ${@:2}", "slice"),
    ("opencode", "Or ${1:-x}", "default"),
    ("gemini", "All $@", "{{args}}"),
    ("gemini", "First $1", "no positional"),
    ("codex", "Tenth $10", "above 9"),
    ("claude-code", "Run !`make` first with $1", "its own syntax"),
    ("gemini", "Keep {{args}} literal", "its own syntax"),
    ("claude-code", "All $@[2] of them", "would read as"),
])
def test_what_cannot_be_expressed_is_not_written(target, body, reason):
    item = export_template(pi("t", body), target)
    assert item.text is None and item.relpath is None
    assert any(reason in r for r in item.reasons), item.reasons


def test_gemini_writes_toml_for_a_body_without_placeholders(tmp_path):
    item = export_template(pi("ns:plain", "It's '''quoted''' text"), "gemini")
    assert item.relpath == "ns/plain.toml"
    write_exported([item], tmp_path)
    back = load_sources([TemplateSource(tmp_path, "path", dialect="gemini")]).get("ns:plain")
    assert back.invoke("") == "It's '''quoted''' text"
    assert any("appends the arguments" in n for n in item.notes)


def test_cli_export_reports_per_template_and_fails_when_one_is_not_written(tmp_path, capsys, monkeypatch):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "ok.md").write_text("---\ndescription: Fine\n---\nReview $1\n")
    (prompts / "slice.md").write_text("Rest: ${@:2}\n")
    out = tmp_path / "out"
    rc = main(["templates", "export", "--to", "claude-code", "--templates-dir", str(prompts), "-o", str(out)])
    cap = capsys.readouterr()
    assert rc == 1
    assert f"/ok: wrote {out / 'ok.md'}" in cap.out
    assert "/slice: not written: `${@:2}` is a slice" in cap.err
    assert (out / "ok.md").read_text() == '---\ndescription: "Fine"\n---\nReview $ARGUMENTS[0]\n'
    assert not (out / "slice.md").exists()
    monkeypatch.chdir(tmp_path)
    (prompts / "slice.md").unlink()
    assert main(["templates", "export", "--to", "codex", "--templates-dir", str(prompts)]) == 0
    assert (tmp_path / ".codex" / "prompts" / "ok.md").is_file()
    assert main(["templates", "--to", "codex"]) == 2
