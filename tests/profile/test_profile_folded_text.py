"""Folded (`>`) YAML scalars reach the model as plain text, with no fold markers."""

from pipeline import compile_profile


def test_folded_scalar_has_no_fold_markers(tmp_path):
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "extends: builtin:default\n"
        "system_prompt:\n"
        "  sections:\n"
        "    - id: identity\n"
        "      text: >-\n"
        "        first line\n"
        "        second line\n"
        "\n"
        "        new paragraph\n",
        encoding="utf-8",
    )
    sections = {s.id: s for s in compile_profile(profile).profile.system_prompt.sections}
    assert sections["identity"].text.raw == "first line second line\nnew paragraph"


def test_double_quoted_bell_escape_is_kept(tmp_path):
    profile = tmp_path / "p.yaml"
    profile.write_text(
        'extends: builtin:default\nsystem_prompt:\n  sections:\n    - id: identity\n      text: "a\\ab"\n',
        encoding="utf-8",
    )
    sections = {s.id: s for s in compile_profile(profile).profile.system_prompt.sections}
    assert sections["identity"].text.raw == "a\ab"


def test_builtin_default_has_no_control_characters():
    profile = compile_profile("default").profile
    dumped = profile.model_dump_json(by_alias=True)
    assert "\\u0007" not in dumped
