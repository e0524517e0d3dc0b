"""A conversation's system prompt: its inputs, the base render, a run's hooks and the record.

:class:`PromptState` is what :class:`~pipeline.runtime.conversation.Conversation` holds for
the prompt: the active tools and the resources a host gave (context files, skills, prompt
parts, caller sections and guidelines), the base prompt rendered when they change (never per
turn), the state of the current run (:class:`~pipeline.runtime.override.RunPrompt`: the
before-agent-start hooks' override, the run's render options) and, for a profile whose
sessions record the prompt, the :class:`~pipeline.runtime.system.RecordedPrompt`. It reads
the run plan's render plan and patch words (:class:`~pipeline.model.run_plan.RunPlan`) and
writes nothing: recording hands the new system message to the caller's writer.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from pipeline.llm.wire import ToolDefinition
from pipeline.model.render_plan import CatalogEntry, RenderPlan
from pipeline.model.run_plan import PatchTexts
from pipeline.prompt import ContextFile, RenderContext, Skill, render_sections, render_system_prompt, section_record
from pipeline.runtime.host import AgentStart, BeforeAgentStart, HookResult, Tool
from pipeline.runtime.override import RunPrompt, run_hooks
from pipeline.runtime.system import RecordedPrompt, RunOptions, declaration
from pipeline.session.messages import AgentMessage
from pipeline.session.system import apply_sections

#: The resources :meth:`PromptState.reload` replaces (``templates`` is the conversation's).
RESOURCES = ("skills", "context_files", "custom_prompt", "append_prompts", "guidelines", "sections")


class PromptState:
    """The system prompt of one conversation (see the module docstring)."""

    def __init__(self, plan: RenderPlan, *, patch: Optional[PatchTexts], recording: bool, cwd: str,
                 tools: Sequence[Tool] = (),
                 skills: Sequence[Skill] = (), context_files: Sequence[ContextFile] = (),
                 custom_prompt: Optional[str] = None, append_prompts: Sequence[str] = (),
                 guidelines: Sequence[str] = (), sections: Mapping[str, str] = {},
                 before_agent_start: Sequence[BeforeAgentStart] = ()) -> None:
        self.catalog = {entry.name: entry for entry in plan.catalog}
        self.plan, self.cwd, self.recording = plan, cwd, recording
        self.skills, self.context_files = tuple(skills), tuple(context_files)
        self.custom_prompt, self.append_prompts = custom_prompt, tuple(append_prompts)
        self.guidelines, self.sections = tuple(guidelines), dict(sections)
        self.before_agent_start = tuple(before_agent_start)
        self.recorded = RecordedPrompt(plan.join, patch, recording=recording)
        self.options = RunOptions(self.sections, self.guidelines)
        self.tools: tuple[Tool, ...] = tuple(tools)
        self.run: Optional[RunPrompt] = None
        self.hook_seen: tuple[str, ...] = ()
        self._base: Optional[str] = None

    # ------------------------------------------------------------------ inputs

    def set_tools(self, tools: Sequence[Tool]) -> None:
        """Change the active tools; the base prompt is rebuilt (an override stays for its run)."""
        self.tools = tuple(tools)
        self._base = None

    def reload(self, resources: Mapping[str, Any]) -> None:
        """Replace resources (:data:`RESOURCES`); the base prompt is rebuilt."""
        for name, value in resources.items():
            setattr(self, name, value if name == "custom_prompt" else dict(value) if name == "sections" else tuple(value))
        self._base = None

    def _entry(self, tool: Tool) -> Optional[CatalogEntry]:
        return self.catalog.get(tool.name)

    def _snippet(self, tool: Tool) -> Optional[str]:
        if tool.snippet is not None:
            return tool.snippet
        entry = self._entry(tool)
        return entry.snippet.render() if entry is not None and entry.snippet is not None else None

    def _guidelines(self, tool: Tool) -> tuple[str, ...]:
        if tool.guidelines is not None:
            return tool.guidelines
        entry = self._entry(tool)
        return tuple(g.render() for g in entry.guidelines) if entry is not None else ()

    def description(self, tool: Tool) -> str:
        """The tool's description: its own, else the catalog's, else its snippet."""
        if tool.description is not None:
            return tool.description
        entry = self._entry(tool)
        if entry is not None and entry.description is not None:
            return entry.description.render()
        return self._snippet(tool) or ""

    def tool_definitions(self) -> tuple[ToolDefinition, ...]:
        return tuple(ToolDefinition(name=t.name, description=self.description(t), parameters=t.parameters)
                     for t in self.tools)

    def render_context(self, options: Optional[RunOptions] = None) -> RenderContext:
        """The inputs of the base system prompt (the active tools and the resources); with
        ``options``, a run's caller sections and guidelines instead of the conversation's."""
        snippets = {t.name: s for t in self.tools if (s := self._snippet(t)) is not None}
        options = options or RunOptions(self.sections, self.guidelines)
        return RenderContext(
            cwd=self.cwd, tools=tuple(t.name for t in self.tools), tool_snippets=snippets,
            tool_guidelines={t.name: self._guidelines(t) for t in self.tools}, guidelines=options.guidelines,
            custom_prompt=self.custom_prompt, append_prompts=self.append_prompts,
            context_files=self.context_files, skills=self.skills, sections=options.sections,
        )

    @property
    def base(self) -> str:
        """The base system prompt, rendered when the tools or the resources changed."""
        if self._base is None:
            self._base = render_system_prompt(self.plan, self.render_context())
        return self._base

    # ------------------------------------------------------------------ a run

    def forced(self) -> bool:
        """A hook set the whole prompt of the current run."""
        return self.run is not None and self.run.override is not None

    def current(self, *, in_place: bool, sent_in_place: int) -> str:
        """The prompt of the next request: the run's override when one is set, else the base
        (a recording profile: the system prompt the recorded system messages give)."""
        if self.recording and not self.forced():
            return self.view(in_place=in_place, sent_in_place=sent_in_place)[0]
        return self.run.at_turn(self.base) if self.run is not None else self.base

    def start_run(self, text: str) -> list[Mapping[str, Any]]:
        """Run the before-agent-start hooks for a prompt of ``text``: the run's override and render
        options are set; returns the messages the hooks add after the user's."""
        messages: list[Mapping[str, Any]] = []
        sections, guidelines = dict(self.sections), list(self.guidelines)

        def results() -> Iterable[Optional[str]]:
            nonlocal sections
            current = self.base
            for hook in self.before_agent_start:
                result = hook(AgentStart(text, current, dict(sections))) or HookResult()
                if result.message is not None:
                    messages.append(result.message)
                if result.system_prompt is not None:
                    current = result.system_prompt
                if self.recording:
                    sections = apply_sections(sections, result.sections)
                    guidelines.extend(result.guidelines)
                yield result.system_prompt

        chain = run_hooks(self.base, results())
        self.hook_seen = chain.seen
        self.run = RunPrompt(self.base, chain.override)
        self.options = RunOptions(sections, tuple(guidelines))
        return messages

    def end_run(self) -> None:
        self.run = None

    # ------------------------------------------------------------------ the recorded prompt

    def reset(self, messages: Iterable[AgentMessage]) -> None:
        """The context was read again from the session: its system messages are the record."""
        self.recorded.reset(messages)

    def record(self, timestamp: Any, append: Callable[[dict[str, Any]], Any]) -> Optional[dict]:
        """Record what changed in the system prompt (the run's options rendered, against the replay of
        the recorded system messages) through ``append``; ``None`` when nothing did (or nothing is recorded)."""
        if not self.recording:
            return None
        record = section_record(render_sections(self.plan, self.render_context(self.options)))
        tools = [declaration(t) for t in self.tool_definitions()]
        return self.recorded.record(record, tools, timestamp, append)

    def view(self, *, in_place: bool, sent_in_place: int) -> tuple[str, tuple[ToolDefinition, ...]]:
        """(system prompt, tools) the recorded system messages give the model."""
        return self.recorded.view(in_place=in_place, sent_in_place=sent_in_place)

    def request(self, *, in_place: bool, sent_in_place: int) -> tuple[str, tuple[ToolDefinition, ...], bool]:
        """(system prompt, tools, whether later system messages leave the request) of the next request."""
        if self.recording and not self.forced():
            return (*self.view(in_place=in_place, sent_in_place=sent_in_place), False)
        return self.current(in_place=in_place, sent_in_place=sent_in_place), self.tool_definitions(), True
