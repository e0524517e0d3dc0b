"""Argument splitting as ``templates.argument_splitting`` declares it, against both pi versions
(``tests/data/pi16/args.json``): every split of pi 1.6.0 and of 0.84.0, and every expansion through
the facade of ``builtin:pi-1`` and ``builtin:default``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.templates.files import PromptTemplate
from pipeline.templates.invoke import split_args

ARGS = json.loads((Path(__file__).resolve().parent.parent / "data" / "pi16" / "args.json").read_text(encoding="utf-8"))
PI1, DEFAULT = compile_profile("builtin:pi-1"), compile_profile("default")


def test_the_profiles_declare_their_splitting() -> None:
    assert PI1.profile.templates.argument_splitting == "pi-1.6"
    assert DEFAULT.profile.templates.argument_splitting == "pi-0.84"


@pytest.mark.parametrize(("splitting", "key"), [("pi-1.6", "pi16"), ("pi-0.84", "pi084")])
def test_every_split_agrees(splitting: str, key: str) -> None:
    cases = ARGS["parse_args"]
    wrong = [(c["args"], c[key]) for c in cases if split_args(c["args"], splitting) != c[key]]
    assert len(cases) == 5806 and not wrong, wrong[:5]


@pytest.mark.parametrize(("pipeline", "key"), [(PI1, "pi16"), (DEFAULT, "pi084")], ids=["pi-1", "default"])
def test_every_expansion_agrees(pipeline, key: str) -> None:
    cases = ARGS["expand"]
    wrong = []
    for case in cases:
        template = PromptTemplate("t", "", case["content"])
        got = pipeline.expand("/t " + case["argsString"], [template])
        if got != case[key]:
            wrong.append((case["content"], case["argsString"], got, case[key]))
    assert len(cases) == 500 and not wrong, wrong[:3]


def test_the_splittings_differ_where_pi_changed() -> None:
    assert split_args("doesn't matter", "pi-1.6") == ["doesn't", "matter"]
    assert split_args("doesn't matter", "pi-0.84") == ["doesnt matter"]
    assert split_args('"" x', "pi-1.6") == ["", "x"] and split_args('"" x', "pi-0.84") == ["x"]
