"""Template dialects as sources: Claude Code, opencode, Gemini CLI and Codex files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.cli import main
from pipeline.templates.analysis import analyze
from pipeline.templates.discovery import load_sources
from pipeline.templates.files import read_template
from pipeline.templates.invoke import expand_input
from pipeline.templates.discovery import TemplateSource
from pipeline.templates.dialects import read_dialect_file


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load(path: Path, dialect: str):
    return load_sources([TemplateSource(path, "path", dialect=dialect)])


def codes(template) -> list[str]:
    return [p.code for p in template.problems()]


# --- Claude Code ---------------------------------------------------------------------------


def test_claude_namespaces_and_indexed_arguments(tmp_path):
    root = tmp_path / ".claude" / "commands"
    write(root / "frontend" / "component.md", """
        ---
        description: Make a component
        argument-hint: [name] [style]
        ---
        Create $ARGUMENTS[0] styled $1 (all: $ARGUMENTS).
    """)
    loaded = load(root, "claude-code")
    t = loaded.get("frontend:component")
    assert t is not None and t.description == "Make a component"
    assert t.argument_hint == "[name] [style]"
    assert expand_input("/frontend:component Btn 'big red'", loaded) == "Create Btn styled big red (all: Btn 'big red')."
    assert "template.argument-hint-unquoted" in codes(t)
    assert t.analyze().arity.hint() == "<1> <2> [rest...]"


def test_claude_appends_arguments_when_the_body_has_no_placeholder(tmp_path):
    f = write(tmp_path / "c" / "plain.md", "Say hello.\n")
    loaded = load(f.parent, "claude-code")
    assert expand_input("/plain to Bob", loaded) == "Say hello.\n\n\nARGUMENTS: to Bob"
    assert expand_input("/plain", loaded) == "Say hello.\n"


def test_claude_features_not_run_are_reported_per_file(tmp_path):
    f = write(tmp_path / "c" / "review.md", """
        ---
        allowed-tools: Bash(git diff:*)
        model: claude-opus-4
        ---
        Diff: !`git diff HEAD`
        Read @src/app.py first. Budget $0.50.
    """)
    t = read_dialect_file(f, "claude-code")
    found = {p.code: p for p in t.problems()}
    assert set(found) >= {"template.dialect-key", "template.dialect-shell", "template.dialect-file", "template.dollar-amount"}
    assert (found["template.dialect-shell"].location.line, found["template.dialect-shell"].location.col) == (5, 7)
    keys = [p.message for p in t.problems() if p.code == "template.dialect-key"]
    assert any("`allowed-tools`" in m for m in keys) and any("`model`" in m for m in keys)
    # the text stays as written: nothing is run, nothing is dropped
    assert "!`git diff HEAD`" in t.invoke("") and "@src/app.py" in t.invoke("")


def test_claude_invalid_yaml_other_than_the_hint_is_skipped_with_a_warning(tmp_path):
    f = write(tmp_path / "c" / "bad.md", "---\ndescription: [unclosed\n---\nbody\n")
    loaded = load(f.parent, "claude-code")
    assert len(loaded) == 0 and loaded.problems[0].code == "template.frontmatter"


# --- pi: the bracketed hint and prices ---------------------------------------------------------


def test_pi_unquoted_bracket_hint_is_skipped_with_a_hint_to_quote_it(tmp_path):
    f = write(tmp_path / "fix.md", "---\nargument-hint: [issue-number] [priority]\n---\nFix $1\n")
    with pytest.raises(Exception) as err:
        read_template(f)
    problem = err.value.problems[0]
    assert problem.code == "template.frontmatter"
    assert 'quote the value: argument-hint: "[issue-number] [priority]"' in problem.hint
    assert "the template is skipped" in problem.hint


def test_pi_bracket_hint_as_list_keeps_pis_value_and_says_so(tmp_path):
    f = write(tmp_path / "fix.md", "---\nargument-hint: [file, line]\n---\nFix $1\n")
    t = read_template(f)
    assert t.argument_hint == ("file", "line")  # pi keeps the list
    assert t.hint_text == "[file, line]"
    note = next(p for p in t.problems() if p.code == "template.argument-hint-list")
    assert note.severity == "info" and "`argument-hint: [file, line]`" in note.message and note.location.line == 2
    assert 'argument-hint: "[file, line]"' in note.hint


def test_pi_dollar_amount_is_flagged_where_substitution_eats_it():
    found = [(f.code, f.col) for f in analyze("Costs $0.50, or $5.99 each; $1 is fine.").findings]
    assert found == [("template.dollar-amount", 7), ("template.dollar-amount", 17)]
    message = analyze("$5.99").findings[0].message
    assert "argument 5" in message


# --- opencode, Codex, Gemini ---------------------------------------------------------------------


def test_opencode_last_position_takes_the_rest(tmp_path):
    f = write(tmp_path / ".opencode" / "command" / "fix.md", "---\nagent: build\n---\nFix $1 in $2\n")
    loaded = load(f.parent, "opencode")
    assert expand_input('/fix bug "src/a b.py" extra', loaded) == "Fix bug in src/a b.py extra"
    assert "template.dialect-key" in codes(loaded.get("fix"))


def test_opencode_appends_arguments_without_placeholders(tmp_path):
    f = write(tmp_path / "cmd" / "plain.md", "Say hi")
    assert expand_input("/plain now", load(f.parent, "opencode")) == "Say hi\n\nnow"


def test_codex_prompts_named_and_positional(tmp_path):
    f = write(tmp_path / "prompts" / "draft.md", "Draft $1 for $FILE; all: $ARGUMENTS; $$5 cost\n")
    loaded = load(f.parent, "codex")
    assert loaded.get("prompts:draft") is not None
    assert expand_input("/prompts:draft intro FILE=a.md", loaded) == "Draft intro for a.md; all: intro; $5 cost\n"


def test_gemini_toml_args_and_namespaces(tmp_path):
    root = tmp_path / ".gemini" / "commands"
    write(root / "git" / "commit.toml", '''
        description = "Commit the staged work"
        prompt = """Write a commit message for {{args}}.
        !{git diff --staged}
        @{docs/style.md}
        """
    ''')
    write(root / "plain.toml", 'prompt = "Summarise."\n')
    write(root / "broken.toml", 'prompt = "unclosed\n')
    write(root / "noprompt.toml", 'description = "x"\n')
    loaded = load(root, "gemini")
    t = loaded.get("git:commit")
    assert t.description == "Commit the staged work"
    assert expand_input("/git:commit the parser", loaded).startswith("Write a commit message for the parser.\n")
    assert expand_input("/plain now", loaded) == "Summarise.\n\n/plain now"
    assert {"template.dialect-shell", "template.dialect-file"} <= set(codes(t))
    shell = next(p for p in t.problems() if p.code == "template.dialect-shell")
    assert shell.location.line == 3
    skipped = {Path(p.location.file).name: p.code for p in loaded.problems}
    assert skipped == {"broken.toml": "template.toml", "noprompt.toml": "template.toml"}


# --- profiles ---------------------------------------------------------------------------------


def test_profile_sources_name_dialects(tmp_path, monkeypatch):
    write(tmp_path / ".claude" / "commands" / "review.md", "Review $ARGUMENTS")
    write(tmp_path / ".claude" / "commands" / "ns" / "deep.md", "Deep $0")
    write(tmp_path / ".opencode" / "commands" / "oc.md", "OC $1")
    write(tmp_path / ".gemini" / "commands" / "gm.toml", 'prompt = "GM {{args}}"')
    write(tmp_path / "extra" / "x.md", "X $ARGUMENTS[0]")
    prof = write(tmp_path / "p.yaml", """
        extends: builtin:default
        name: d
        templates:
          sources: [claude-code, opencode, gemini, {dialect: claude-code, path: extra}]
    """)
    p = compile_profile(str(prof))
    assert not p.warnings
    loaded = p.load_templates(tmp_path)
    assert [t.name for t in loaded] == ["ns:deep", "review", "oc", "gm", "x"]
    assert p.expand("/ns:deep a b", loaded) == "Deep a"
    assert p.expand("/gm z", loaded) == "GM z"
    assert p.expand("/x q", loaded) == "X q"
    assert not p.load_templates(tmp_path, trusted=False).templates[:1] or \
        [t.name for t in p.load_templates(tmp_path, trusted=False)] == ["x"]


def test_validate_reports_dialect_findings_of_explicit_sources(tmp_path, capsys):
    write(tmp_path / "cmds" / "r.md", "Run !`make test` now")
    prof = write(tmp_path / "p.yaml", """
        extends: builtin:default
        name: d
        templates:
          sources: [{dialect: claude-code, path: cmds}, {dialect: gemini, path: missing}]
    """)
    assert main(["validate", str(prof)]) == 1  # a relative source that does not exist is an error
    err = capsys.readouterr()
    assert "missing does not exist" in err.out + err.err
    (tmp_path / "missing").mkdir()
    assert main(["validate", str(prof)]) == 0
    err = capsys.readouterr()
    assert "runs a shell command in Claude Code" in err.out + err.err
    assert main(["validate", "--strict", str(prof)]) == 1  # the shell-command warning


def test_schema_rejects_an_unknown_dialect(tmp_path, capsys):
    prof = write(tmp_path / "p.yaml", """
        extends: builtin:default
        name: d
        templates:
          sources: [{dialect: cursor, path: x}]
    """)
    assert main(["validate", str(prof)]) == 1
    out = capsys.readouterr()
    assert "p.yaml:4:23: templates.sources.0.dialect: invalid value `cursor`" in out.out + out.err


def test_a_plain_value_yaml_cannot_take_gets_a_hint_to_quote_it(tmp_path):
    f = write(tmp_path / "c" / "done.md", "---\ndescription: Finish up (phase: done)\n---\nbody\n")
    for loaded in (load(f.parent, "pi"), load(f.parent, "claude-code")):
        assert len(loaded) == 0
        assert 'quote the value: description: "Finish up (phase: done)"' in loaded.problems[0].hint


def test_templates_dir_with_a_dialect_on_the_command_line(tmp_path, capsys):
    write(tmp_path / "cmds" / "ns" / "go.md", "Go $0 !`date`")
    assert main(["expand", "/ns:go far", "--templates-dir", str(tmp_path / "cmds"), "--dialect", "claude-code"]) == 0
    assert capsys.readouterr().out == "Go far !`date`\n"
    assert main(["templates", "--templates-dir", str(tmp_path / "cmds"), "--dialect", "claude-code"]) == 0
    cap = capsys.readouterr()
    assert "/ns:go" in cap.out and "runs a shell command in Claude Code" in cap.err
    assert main(["templates", "--dialect", "gemini"]) == 2


def test_claude_indexed_arguments_in_a_pi_template_are_flagged():
    found = analyze("Fix $ARGUMENTS[0] and $ARGUMENTS.").findings
    assert [(f.code, f.col) for f in found] == [("template.indexed-arguments", 5)]
    assert "`$1`" in found[0].hint


def test_templates_json_names_the_dialect(tmp_path, capsys):
    import json

    write(tmp_path / "cmds" / "a.toml", 'prompt = "A {{args}}"')
    assert main(["templates", "--templates-dir", str(tmp_path / "cmds"), "--dialect", "gemini", "--format", "json"]) == 0
    [item] = json.loads(capsys.readouterr().out)
    assert (item["name"], item["dialect"], item["arity"]["hint"]) == ("a", "gemini", "[args...]")
