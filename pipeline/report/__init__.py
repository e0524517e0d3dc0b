"""Reports for people and tools: rendered prompts (JSON, HTML) and profile diffs.

* :mod:`pipeline.report.prompt`: :func:`build_prompt_report`, :func:`prompt_json`, :func:`prompt_html`;
* :mod:`pipeline.report.diff`: :func:`diff_profiles` and its text, JSON and Markdown forms.

jinja2 templates live in ``templates/*.j2``; this is tool output only (profiles stay Jinja-free).
"""
