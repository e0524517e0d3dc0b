"""Prompt templates: the argument language, Markdown template files, ``/name args``.

Behaviour follows pi 0.84.0 (``parseCommandArgs``, ``substituteArgs``,
``loadPromptTemplates``, ``expandPromptTemplate``); the language itself is defined once,
in ``grammar/template_args.lark``.

>>> substitute_args("Review $1 focusing on ${@:2}", parse_args("a.py speed 'memory use'"))
'Review a.py focusing on speed memory use'
>>> expand_input("/t x", [PromptTemplate("t", "", "[$1][${2:-none}]")])
'[x][none]'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.lazy import lazy_attributes

#: Each name, by the module that defines it: imported on first use, so a start that loads
#: no template (or only reads template files) imports none of the language's machinery.
_MODULES = {
    **dict.fromkeys(('Arity', 'Finding', 'TemplateAnalysis', 'analyze'), 'analysis'),
    **dict.fromkeys(('LoadedTemplates', 'TemplateSource', 'explicit_sources', 'global_template_dir', 'load_profile_templates', 'load_sources', 'load_templates', 'profile_sources', 'scan_directory'), 'discovery'),
    **dict.fromkeys(('PromptTemplate', 'read_template'), 'files'),
    **dict.fromkeys(('Frontmatter', 'FrontmatterError', 'parse_frontmatter'), 'frontmatter'),
    **dict.fromkeys(('Invocation', 'expand_input', 'find_template', 'match_invocation', 'parse_args', 'parse_args_16', 'split_args'), 'invoke'),
    **dict.fromkeys(('AllArgs', 'Default', 'Literal', 'Node', 'Pos', 'Positional', 'Slice'), 'nodes'),
    **dict.fromkeys(('Template', 'parse_template', 'substitute_args'), 'plan'),
}


__getattr__ = lazy_attributes(__name__, globals(), _MODULES)


if TYPE_CHECKING:  # the names as the type checker and editors see them
    from .analysis import Arity, Finding, TemplateAnalysis, analyze
    from .discovery import (
        LoadedTemplates,
        TemplateSource,
        explicit_sources,
        global_template_dir,
        load_profile_templates,
        load_sources,
        load_templates,
        profile_sources,
        scan_directory,
    )
    from .files import PromptTemplate, read_template
    from .frontmatter import Frontmatter, FrontmatterError, parse_frontmatter
    from .invoke import Invocation, expand_input, find_template, match_invocation, parse_args, parse_args_16, split_args
    from .nodes import AllArgs, Default, Literal, Node, Pos, Positional, Slice
    from .plan import Template, parse_template, substitute_args

__all__ = [
    "AllArgs", "Arity", "Default", "Finding", "Frontmatter", "FrontmatterError", "Invocation", "Literal",
    "LoadedTemplates", "Node", "Pos", "Positional", "PromptTemplate", "Slice", "Template", "TemplateAnalysis",
    "TemplateSource", "analyze", "expand_input", "explicit_sources", "find_template", "global_template_dir",
    "load_profile_templates", "load_sources", "load_templates", "match_invocation", "parse_args", "parse_args_16", "split_args",
    "parse_frontmatter", "parse_template", "profile_sources", "read_template", "scan_directory",
    "substitute_args",
]
