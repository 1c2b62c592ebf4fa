"""The self-contained HTML report: one file, charts as base64 PNG, CSS inline, no scripts.

Rendered with jinja2 (autoescape on) from ``templates/report.html.j2`` (a scenario's result) or
``templates/plan.html.j2`` (a plan's), both laid out by ``templates/_base.html.j2``.
"""

from __future__ import annotations

import base64
from functools import cache
from importlib.resources import files

import jinja2

from ..answer import Answer
from .kinds import kind_of

__all__ = ["data_uri", "render_html"]


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("present.reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def data_uri(png: bytes) -> str:
    """A ``data:image/png;base64,...`` URI for PNG bytes."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def render_html(result: Answer) -> bytes:
    """The whole report as one self-contained UTF-8 HTML document."""
    kind = kind_of(result)
    images = {name: data_uri(png) for name, png in kind.charts(result).items()}
    css = files("present.reports").joinpath("templates/report.css").read_text("utf-8")
    ctx = kind.context(result, images)
    text = _env().get_template(f"{kind.template}.html.j2").render(css=css, **ctx)
    return text.encode("utf-8")
