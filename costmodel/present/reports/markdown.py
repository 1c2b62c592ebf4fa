"""The Markdown report: the HTML report's content as GitHub-flavoured pipe tables plus charts.

Charts are PNG images, embedded as data URIs (one standalone file) or linked to files beside
the document when :func:`costmodel.present.reports.write` saves them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import jinja2

from ...plan_result import PlanResult
from ...result import Result
from .html import data_uri
from .kinds import kind_of
from .tables import Table

__all__ = ["md_escape", "md_table", "render_markdown"]

#: The ASCII punctuation Markdown (CommonMark, GFM, GitHub's math) gives a meaning to: links and
#: images, HTML and autolinks (``:``, ``.``, ``@`` too), emphasis, code, headings, lists, quotes,
#: tables, entities, math. A backslash-escaped one is plain text. ``! " % ' , / ; ?`` mean
#: nothing without one of these, so they stay as they are, for readable numbers.
_SPECIAL = re.compile(r"([#$&()*+\-.:<=>@\[\\\]^_`{|}~])")


def md_escape(text: Any) -> str:
    """``text`` as literal Markdown on one line, safe in prose, headings and table cells.

    Whitespace runs become one space and markup characters are backslash-escaped, so whatever
    the text holds (``[x](javascript:...)``, ``<script>``, ``*``, ``#``) renders as itself.
    """
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> str:
    """A pipe table; ``numeric`` columns are right-aligned. Cells must already be escaped."""
    lines = ["| " + " | ".join(headers) + " |"]
    lines.append("|" + "|".join("---:" if n else ":---" for n in numeric) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _table(t: Table) -> str:
    rows = [[md_escape(c) for c in row] for row in t.rows]
    return md_table([md_escape(h) for h in t.headers], rows, t.numeric)


def _assumptions(rows: Sequence[Mapping[str, Any]]) -> str:
    cells = [[md_escape(a[k]) for k in ("key", "text", "unit", "source")] for a in rows]
    return md_table(["Key", "Value", "Unit", "Source"], cells, [False] * 4)


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("costmodel.present.reports", "templates"),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = md_escape
    env.globals["table"] = _table
    return env


def render_markdown(
    result: Result | PlanResult, image_links: Mapping[str, str] | None = None
) -> bytes:
    """The report as UTF-8 Markdown.

    ``image_links`` maps chart name -> relative link; without it the charts are embedded as
    ``data:image/png;base64`` URIs so the document stands alone.
    """
    kind = kind_of(result)
    if image_links is None:
        image_links = {name: data_uri(png) for name, png in kind.charts(result).items()}
    ctx = kind.context(result, image_links)
    ctx["assumptions"] = _assumptions(ctx["assumptions"])
    return _env().get_template(f"{kind.template}.md.j2").render(**ctx).encode("utf-8")
