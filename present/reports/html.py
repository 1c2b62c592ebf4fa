"""The self-contained HTML report: one file, charts as inline SVG, CSS inline, no scripts.

Rendered with jinja2 (autoescape on) from ``templates/report.html.j2`` (a scenario's result) or
``templates/plan.html.j2`` (a plan's), both laid out by ``templates/_base.html.j2``.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

import jinja2
from markupsafe import Markup

from ..answer import Answer
from .kinds import kind_of

__all__ = ["render_html"]


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("present.reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(result: Answer) -> bytes:
    """The whole report as one self-contained UTF-8 HTML document."""
    kind = kind_of(result)
    # The charts' SVG is written by .chart, which escapes every text it holds.
    images = {name: Markup(svg) for name, svg in kind.charts(result).items()}
    css = files("present.reports").joinpath("templates/report.css").read_text("utf-8")
    ctx = kind.context(result, images)
    text = _env().get_template(f"{kind.template}.html.j2").render(css=css, **ctx)
    return text.encode("utf-8")
