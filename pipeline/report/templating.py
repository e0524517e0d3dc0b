"""The jinja2 environment of the report stage (tool output only; profiles stay Jinja-free).

Templates live in ``pipeline/report/jinja/*.j2`` (shipped as package data).
``*.html.j2`` templates are autoescaped; Markdown and text templates are not.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

TEMPLATE_DIR = Path(__file__).resolve().parent / "jinja"


@lru_cache(maxsize=1)
def environment():
    """The shared, strict environment (undefined names are errors)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    return Environment(
        loader=FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default_for_string=True),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_template(name: str, **values: Any) -> str:
    """Render ``templates/NAME`` with ``values``."""
    return environment().get_template(name).render(**values)
