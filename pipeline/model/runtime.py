"""The blocks the agent runtime reads: ``retry``, ``context`` (how session entries become
messages) and ``runtime`` (the texts it writes or shows itself)."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from pipeline.model.base import MAX_COUNT, MAX_DELAY_MS, Strict
from pipeline.model.text import Text

class Retry(Strict):
    """Retries of agent turns that end in a transient error (pi's ``retry`` settings)."""

    enabled: bool = Field(True, description="retry a turn that ended in a transient provider error")
    max_retries: int = Field(3, ge=0, le=MAX_COUNT, description="retries per turn before the error is reported")
    base_delay_ms: int = Field(
        2000, ge=0, le=MAX_DELAY_MS, description="wait before retry n: base_delay_ms * 2^(n-1)"
    )
    max_agent_delay_ms: Optional[int] = Field(
        None, ge=0, le=MAX_DELAY_MS,
        description="longest wait before a retry (turns and summary calls); none: the doubling is never capped",
    )


class BashExecutionTexts(Strict):
    """How a user's own shell command (`!cmd`) is shown to the model."""

    ran: Text
    output: Text
    no_output: Text
    cancelled: Text
    exit_code: Text
    truncated: Text


class Context(Strict):
    bash_execution: BashExecutionTexts


class SkillCommand(Strict):
    """How `/skill:name args` becomes the user message: open + the skill's body + close (+ args)."""

    open: Text
    close: Text
    args: Text = Field(description="appended when the command has arguments")


class ToolErrors(Strict):
    """Tool results the runtime writes itself (they are error results)."""

    unknown: Text = Field(description="a call of a tool that is not active")
    invalid_arguments: Text = Field(description="arguments that do not match the tool's schema")
    failed: Text = Field(description="a tool that raised an exception")


class WireTexts(Strict):
    """Texts the message conversion inserts where a provider needs one."""

    orphan_tool_result: Text = Field(description="the result of a tool call that got none")
    user_image_omitted: Text = Field(description="an image in a user message, for a model without image input")
    tool_image_omitted: Text = Field(description="an image in a tool result, for a model without image input")
    tool_image_only: Text = Field(description="a tool result with images and no text")
    empty_tool_output: Text = Field(description="a tool result with neither text nor images")
    tool_images_intro: Text = Field(description="the user message that carries tool-result images")


class ToolOutput(Strict):
    """Texts of the built-in tools' results (read, ls, find, grep, edit, write)."""

    not_found: Text
    not_a_file: Text
    not_a_directory: Text
    outside: Text = Field(description="a path outside the working directory")
    not_regular: Text = Field(description="a FIFO, a device or a socket: never opened, so it cannot hang a tool")
    too_large: Text = Field(description="a file over the size the tools read (docs/limits.md)")
    unreadable: Text = Field(description="a file the system refuses to open (permissions, for instance)")
    empty_directory: Text
    no_matches: Text
    invalid_pattern: Text
    truncated: Text = Field(description="appended when the output was cut")


class Runtime(Strict):
    """What the agent runtime (`pipeline run`, the conversation facade) writes or shows itself."""

    aborted: Text = Field(description="errorMessage recorded on a reply the user cancelled")
    record_system_prompt: bool = Field(
        False,
        description="sessions record the system prompt and tool set as system messages; later changes are "
        "recorded as section patches and sent in place to models that read mid-conversation system messages",
    )
    context_edits: bool = Field(
        False,
        description="a failed reply that is retried (or recovered by compaction) is omitted from the context with "
        "a context_edit entry, and context edits apply when the context is read from a session",
    )
    record_thinking_level: bool = Field(
        False,
        description="before each prompt, a thinking_level_change entry when the level the branch records (as the "
        "model can run it) is not the conversation's own, so a resume restores the level that was used",
    )
    skill: SkillCommand
    tool_errors: ToolErrors
    wire: WireTexts
    tool_output: ToolOutput
