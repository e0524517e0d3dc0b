"""Section patches: what changed between two renders, as a model that already has the first one needs it.

A render's *record* maps each section's name to its text, in output order
(:func:`section_record`). Between the record a model has and the one wanted:

* :func:`section_patch`: every wanted section whose text differs from the model's (or
  that the model lacks), in the wanted order, then ``None`` for every section the
  model has that is no longer wanted, in the model's order; ``None`` when nothing changed.
* the replay of a record and its patches is the recorded prompt's one value,
  :class:`pipeline.session.system.SystemState` (``SystemState(sections=leading).patched(patches)``,
  the replay rule of :func:`pipeline.session.system.apply_sections`: ``None`` deletes a name, a
  known name keeps its place with the new text, a new name goes last). A model without
  mid-conversation system messages is sent the replay as its one system prompt
  (:meth:`~pipeline.session.system.SystemState.prompt`), which can order sections differently
  from a fresh render.
* :func:`frame_patch`: the patch as the text of a mid-conversation system message, with
  the profile's words (``system_prompt.patch``).

Pure: no profile is read here beyond the texts passed in.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from pipeline.model.run_plan import PatchTexts
from pipeline.prompt.render import RenderedSection
from pipeline.session.system import SystemState

Record = Mapping[str, str]
Patch = dict[str, Optional[str]]


def section_record(sections: Iterable[RenderedSection]) -> dict[str, str]:
    """Name → text of rendered sections, in output order."""
    return {s.name or s.id: s.text for s in sections}


def section_patch(previous: Record, current: Record) -> Optional[Patch]:
    """Changed and added sections (``current`` order), then removed ones as ``None`` (``previous`` order)."""
    patch: Patch = {name: text for name, text in current.items() if name not in previous or previous[name] != text}
    patch.update({name: None for name in previous if name not in current})
    return patch or None


def frame_patch(patch: Mapping[str, Optional[str]], texts: PatchTexts) -> str:
    """The patch as a mid-conversation message: per entry the `changed` line, a blank line and the
    section's text, or the `removed` line; parts joined by ``texts.separator``."""
    parts = [
        texts.removed.render({"name": name}) if text is None else f"{texts.changed.render({'name': name})}\n\n{text}"
        for name, text in patch.items()
    ]
    return texts.separator.join(parts)


def turn_patch(
    leading: Record, patches: Iterable[Optional[Mapping[str, Optional[str]]]], current: Record
) -> Optional[Patch]:
    """The patch to record before a new prompt: ``current`` against the replay of the
    conversation's system messages so far (so the replay's order is the base)."""
    return section_patch(SystemState(sections=leading).patched(patches).sections, current)


def system_view(
    leading: Record, patches: Iterable[Optional[Mapping[str, Optional[str]]]], *, mid_conversation: bool,
    texts: Optional[PatchTexts], join: Optional[str] = None,
) -> tuple[str, tuple[str, ...]]:
    """What a provider is sent: the leading system prompt and the framed later system messages.

    A model that reads mid-conversation system messages keeps the leading prompt unchanged
    (its cached prefix survives) and gets each patch framed where it was recorded; any
    other model gets the replay as its one prompt and no later system messages."""
    changes = [p for p in patches if p]
    if not mid_conversation:
        return SystemState(sections=leading).patched(changes).prompt(join), ()
    if texts is None:
        raise ValueError("framing patches needs the profile's system_prompt.patch texts")
    return SystemState(sections=leading).prompt(join), tuple(frame_patch(p, texts) for p in changes)
