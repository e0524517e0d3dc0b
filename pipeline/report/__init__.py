"""Reports for people and tools: rendered prompts (JSON, HTML) and profile diffs.

* :mod:`pipeline.report.prompt`: :func:`build_prompt_report`, :func:`prompt_json`, :func:`prompt_html`;
* :mod:`pipeline.report.diff`: :func:`diff_profiles` and its text, JSON and Markdown forms.

jinja2 templates live in ``templates/*.j2``; this is tool output only (profiles stay Jinja-free).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.report.prompt import PromptReport, SectionReport, build_prompt_report, prompt_html, prompt_json

__all__ = [
    "PromptReport", "SectionReport", "build_prompt_report", "prompt_html", "prompt_json",
]


def __getattr__(name: str) -> object:
    """The names of :mod:`pipeline.report.prompt`, imported on first use (so a command that
    only writes its output with :mod:`pipeline.report.output` does not load the reports)."""
    if name not in __all__:
        raise AttributeError(f"module 'pipeline.report' has no attribute {name!r}")
    from pipeline.report import prompt

    return getattr(prompt, name)
