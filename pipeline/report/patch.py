"""The section patch a change of profile would send (``pipeline diff OLD NEW --patch``).

For each scenario both profiles render their record of named sections; the patch is what a
model holding OLD's prompt would be sent to have NEW's (:meth:`pipeline.Pipeline.section_patch`):
framed in NEW's words (``system_prompt.patch``) for a model that reads mid-conversation system
messages, and the replayed prompt for one that does not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable, Optional

from pipeline.facade import Pipeline
from pipeline.prompt import RenderContext


@dataclass(frozen=True)
class ScenarioPatch:
    scenario: str
    patch: Optional[dict[str, Optional[str]]]
    update: Optional[str]  # the framed patch (None: no patch, or NEW frames none)
    replayed: Optional[str]  # the one prompt of a model without mid-conversation system messages


def section_patches(
    renders: Iterable[tuple[str, Pipeline, RenderContext, Pipeline, RenderContext]],
) -> tuple[ScenarioPatch, ...]:
    """Per scenario ``(name, old pipeline, old context, new pipeline, new context)``: the patch."""
    out = []
    for name, old, old_ctx, new, new_ctx in renders:
        before, after = old.system_sections(old_ctx) or {}, new.system_sections(new_ctx) or {}
        patch = new.patches.section_patch(before, after)
        framed = new.patches.frame_patch(patch) if patch and new.profile.system_prompt.patch else None
        replayed = new.patches.replay_prompt(before, [patch]) if patch else None
        out.append(ScenarioPatch(name, patch, framed, replayed))
    return tuple(out)


def patch_text(patches: Iterable[ScenarioPatch]) -> str:
    """One block per scenario: the framed patch, or the changed names when NEW frames none."""
    blocks = []
    for p in patches:
        if not p.patch:
            blocks.append(f"# {p.scenario}: no section changes, nothing is sent\n")
            continue
        names = ", ".join(f"{n} (removed)" if t is None else n for n, t in p.patch.items())
        body = p.update if p.update is not None else "(the new profile sets no system_prompt.patch texts)"
        blocks.append(f"# {p.scenario}: patch of {len(p.patch)} section(s): {names}\n{body}\n")
    return "\n".join(blocks)


def patch_json(patches: Iterable[ScenarioPatch]) -> str:
    return json.dumps(
        [{"scenario": p.scenario, "patch": p.patch, "patch_order": list(p.patch or {}), "update": p.update,
          "replayed_prompt": p.replayed} for p in patches],
        ensure_ascii=False, indent=2,
    )
