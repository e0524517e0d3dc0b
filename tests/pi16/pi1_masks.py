"""The built-in ``pi-1`` profile in pi 1.6.0's masked space (``tests/data/pi16/README.md``, "Masks").

pi's vectors hold a mask token (``<PRE>``, ``<G_BASH>``...) where pi has a sentence; the
profile has its own sentence there. :class:`Masks` reads our sentences from the compiled
profile by key, so options in masked space can be *unmasked* into render inputs and a render
can be *masked* back into pi's space for an exact comparison.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Mapping

from pipeline import compile_profile
from pipeline.prompt import ContextFile, RenderContext, Skill


class Masks:
    def __init__(self, profile: str = "builtin:pi-1") -> None:
        self.pipeline = compile_profile(profile)

    def _section(self, id_: str):
        return next(s for s in self.pipeline.profile.system_prompt.sections if s.id == id_)

    @cached_property
    def sentences(self) -> dict[str, str]:
        """Mask token → our sentence."""
        rules = self._section("rules").rules
        skills = {name: self._section(name).open.render().split("\n") for name in ("skills_read", "skills_bash", "skills_indirect")}
        patch = self.pipeline.profile.system_prompt.patch
        out = {
            "<PRE>": self._section("identity").text.render(),
            "<MORE_TOOLS>": self._section("tools").close.render().removeprefix("\n\n"),
            "<G_BASH_PS>": rules[0].text.render(), "<G_PS>": rules[1].text.render(), "<G_BASH>": rules[2].text.render(),
            "<G_CONCISE>": rules[5].text.render(), "<G_PATHS>": rules[6].text.render(),
            "<DOCS>": self._section("docs").text.render(),
            "<PCI>": self._section("project_context").open.render().removesuffix("\n\n"),
            "<SK_INTRO>": skills["skills_read"][0], "<SK_PATHS>": skills["skills_read"][2],
            "<SK_READ>": skills["skills_read"][1], "<SK_BASH>": skills["skills_bash"][1],
            "<SK_ANY>": skills["skills_indirect"][1],
            "<UPD>": patch.changed.render({"name": "X"}).removesuffix('"X":'),
            "<REM>": patch.removed.render({"name": "X"}).removesuffix('"X".'),
        }
        assert all(out.values()) and len(set(out.values())) == len(out)
        return out

    def mask(self, text: str | None) -> str | None:
        if text is None:
            return None
        for token, sentence in sorted(self.sentences.items(), key=lambda kv: -len(kv[1])):
            text = text.replace(sentence, token)
        return text

    def unmask(self, text: str) -> str:
        for token, sentence in self.sentences.items():
            text = text.replace(token, sentence)
        return text

    def mask_record(self, record: Mapping[str, str | None] | None) -> dict | None:
        return None if record is None else {name: self.mask(text) for name, text in record.items()}

    def context(self, options: Mapping[str, Any]) -> RenderContext:
        """What pi's ``buildSystemPromptSections`` receives, as our render inputs (unmasked)."""
        u = self.unmask
        tools = options.get("selectedTools")
        append = options.get("appendSystemPrompt")
        return RenderContext(
            cwd=u(options["cwd"]),
            tools=None if tools is None else tuple(tools),
            hidden_tools=tuple(options.get("hiddenTools", ())),
            tool_snippets={k: u(v) for k, v in options.get("toolSnippets", {}).items()},
            tool_guidelines={k: tuple(map(u, v)) for k, v in options.get("toolGuidelines", {}).items()},
            guidelines=tuple(map(u, options.get("promptGuidelines", ()))),
            custom_prompt=None if options.get("customPrompt") is None else u(options["customPrompt"]),
            append_prompts=() if append is None else (u(append),),
            context_files=tuple(ContextFile(u(f["path"]), u(f["content"])) for f in options.get("contextFiles", ())),
            skills=tuple(
                Skill(u(s["name"]), u(s["description"]), u(s["filePath"]), u(s.get("baseDir", "")),
                      bool(s.get("disableModelInvocation")))
                for s in options.get("skills", ())
            ),
            sections={k: u(v) for k, v in options.get("sections", {}).items()},
            forced_prompt=None if options.get("forceSystemPrompt") is None else u(options["forceSystemPrompt"]),
        )
