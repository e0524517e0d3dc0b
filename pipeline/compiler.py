"""Profile -> Pipeline. (Provisional: the full source layer and checks are being built.)"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml import YAML

from pipeline.errors import PipelineError, Problem
from pipeline.model import Profile
from pipeline.resources import builtin_profiles


@dataclass(frozen=True)
class Pipeline:
    """A compiled, validated, immutable profile that runtimes execute."""

    profile: Profile
    origin: str
    fingerprint: str
    warnings: tuple[Problem, ...] = field(default=())


def _resolve(path_or_name: str | Path) -> Path:
    text = str(path_or_name)
    name = text.removeprefix("builtin:")
    builtins = builtin_profiles()
    if name in builtins and (text.startswith("builtin:") or not Path(text).exists()):
        return builtins[name]
    return Path(text)


def compile_profile(path_or_name: str | Path = "default") -> Pipeline:
    path = _resolve(path_or_name)
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise PipelineError(f"cannot read profile: {err.strerror}", key=None) from None
    profile = Profile.model_validate(data)
    digest = hashlib.sha256(json.dumps(profile.model_dump(mode="json", by_alias=True), sort_keys=True).encode()).hexdigest()
    return Pipeline(profile=profile, origin=str(path), fingerprint=digest[:16])
