"""The self-contained HTML report: one file, charts as base64 PNG, CSS inline, no scripts.

Rendered with jinja2 (autoescape on) from ``templates/report.html.j2``.
"""

from __future__ import annotations

import base64
from functools import cache
from importlib.resources import files

import jinja2

from ..result import Result
from .charts import render_charts
from .context import report_context

__all__ = ["data_uri", "render_html"]


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("costmodel.reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def data_uri(png: bytes) -> str:
    """A ``data:image/png;base64,...`` URI for PNG bytes."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def render_html(result: Result) -> bytes:
    """The whole report as one self-contained UTF-8 HTML document."""
    images = {name: data_uri(png) for name, png in render_charts(result).items()}
    css = files("costmodel.reports").joinpath("templates/report.css").read_text("utf-8")
    ctx = report_context(result, images)
    text = _env().get_template("report.html.j2").render(css=css, **ctx)
    return text.encode("utf-8")
