"""Prompt templates: the argument language, Markdown template files, ``/name args``.

Behaviour follows pi 0.84.0 (``parseCommandArgs``, ``substituteArgs``,
``loadPromptTemplates``, ``expandPromptTemplate``); the language itself is defined once,
in ``grammar/template_args.lark``. The package re-exports nothing: each name is imported
from the module that defines it.

>>> from pipeline.templates.plan import substitute_args
>>> from pipeline.templates.invoke import expand_input, parse_args
>>> from pipeline.templates.files import PromptTemplate
>>> substitute_args("Review $1 focusing on ${@:2}", parse_args("a.py speed 'memory use'"))
'Review a.py focusing on speed memory use'
>>> expand_input("/t x", [PromptTemplate("t", "", "[$1][${2:-none}]")])
'[x][none]'
"""
