"""The files ``pipeline init`` writes (tool files: nothing here reaches a model).

``{dir}``, ``{name}``, ``{install}`` and the pre-commit block are filled in by
:mod:`pipeline.cli.init`.
"""

PROFILE = """\
# yaml-language-server: $schema=profile.schema.json
# {name}: the team's context policy. It extends the built-in `default` profile and
# writes only what it changes (mappings merge; sections merge by id; a list such as
# `rules:` replaces the inherited list, `rules+:` adds to it).
#   pipeline show default                  the base, with every section id
#   pipeline explain {dir}/{name}.yaml   every effective value and where it comes from
#   pipeline render {dir}/{name}.yaml    the system prompt it gives
extends: builtin:default
name: {name}
# For example:
# compaction:
#   reserve_tokens: 24000
# system_prompt:
#   sections:
#     - id: rules
#       rules+:          # `+`: after the built-in rules (`rules:` would drop them)
#         - text: ...
"""

PRE_COMMIT_LOCAL = """\
  # context-pipeline: check the profiles before each commit that changes them or the
  # templates they load (uses the `pipeline` installed in the environment that runs pre-commit).
  - repo: local
    hooks:
      - id: pipeline-validate
        name: validate context-pipeline profiles
        entry: pipeline validate --strict --project . {dir}/
        language: system
        pass_filenames: false
        files: '{files}'
"""

PRE_COMMIT_REMOTE = """\
  # context-pipeline's own hook, from {repo} at {rev}.
  - repo: {repo}
    rev: {rev}
    hooks:
      - id: pipeline-validate
        args: [--project, .]
        files: ^{dir}/.*\\.ya?ml$
"""

WORKFLOW = """\
# Checks the context profiles in {dir}/ and, on pull requests, comments what they change.
name: context profiles
on:
  pull_request:
    paths: {paths}
  push:
    paths: {paths}
permissions:
  contents: read
  pull-requests: write
jobs:
  profiles:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: install
        # {install_note}
        run: pip install "{install}"
      - name: validate
        run: pipeline validate --strict --project . --format github {dir}/
      - name: diff
        if: github.event_name == 'pull_request'
        env:
          BASE: ${{{{ github.base_ref }}}}
        run: |
          : > profile-diff.md
          for f in {dir}/*.yaml; do
            if git cat-file -e "origin/$BASE:$f" 2>/dev/null; then old="origin/$BASE:$f"; else old=default; fi
            echo "### $f" >> profile-diff.md
            pipeline diff "$old" "$f" --format markdown >> profile-diff.md || [ $? -eq 1 ]
          done
      - name: comment
        if: github.event_name == 'pull_request'
        env:
          GH_TOKEN: ${{{{ github.token }}}}
        run: gh pr comment "${{{{ github.event.pull_request.number }}}}" --body-file profile-diff.md
"""

#: the repository's profile setting, in a file of its own (no pyproject.toml)
SETTING = """\
# The repository's context-pipeline profile (written by `pipeline init`): `pipeline export`,
# `validate`, `render`, `diff` and `explain` use it when no PROFILE is given.
profile = {profile}
"""

#: the same, as a table added to pyproject.toml
SETTING_TABLE = """\
[tool.context-pipeline]
# the profile `pipeline export`, `validate`, `render`, `diff` and `explain` use when none is given
profile = {profile}
"""

#: what the install step says when no --install was given
PLACEHOLDER_INSTALL = "context-pipeline @ git+https://github.com/<your-org>/context-pipeline@<rev>"
PLACEHOLDER_NOTE = ("replace <your-org>/context-pipeline with where your copy of context-pipeline lives "
                    "and <rev> with a tag or commit of it (or run `pipeline init --install SPEC`)")
GIVEN_NOTE = "written by `pipeline init --install`"

#: with ``--target T``: a hook that fails when the files `pipeline export T` writes are stale
EXPORT_HOOK = """\
  # context-pipeline: the {target} files exported from the repository's profile
  # ({profile}) are up to date; it runs when the profile, its templates or those files change.
  - repo: local
    hooks:
      - id: pipeline-export-{target}
        name: check the {target} files exported from the profile
        entry: pipeline export {target} --check{allow}
        language: system
        pass_filenames: false
        files: '{files}'
"""

#: with ``--target T``: the CI step after `validate`
EXPORT_STEP = """\
      - name: export {target} is up to date
        run: pipeline export {target} --check{allow}
"""
