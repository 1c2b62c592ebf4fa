"""The Markdown report: the HTML report's content as GitHub-flavoured pipe tables plus charts.

Charts are SVG images, embedded as data URIs (one standalone file) or linked to files beside
the document when :func:`present.reports.write` saves them.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from functools import cache, partial
from typing import Any

import jinja2

from ..answer import Answer
from .kinds import kind_of
from .tables import Table

__all__ = ["data_uri", "md_escape", "md_table", "render_markdown"]

#: What gives Markdown (CommonMark, GitHub's flavour and its math) a meaning wherever it stands:
#: a backslash; code, emphasis and strikethrough marks (an ``_`` inside a word means nothing);
#: the ``]`` that closes a link or an image (``](`` or ``][``); ``<`` of HTML and autolinks;
#: ``&`` of an entity; a ``$`` that can close math (one followed by a digit cannot, so money
#: stays as it is); the ``:`` of ``://`` and the ``.`` of ``www.`` (GitHub links bare web
#: addresses); a ``#`` that opens the text or a run of ``#`` that ends it (a heading's closing
#: sequence).
_INLINE = re.compile(
    r"[\\`*~<]|\](?=[(\[])"
    r"|(?<![^\W_])_|_(?![^\W_])"
    r"|&(?=#\d+;|#[xX][0-9a-fA-F]+;|[A-Za-z][A-Za-z0-9]*;)"
    r"|\$(?!\d)"
    r"|:(?=//)|(?<=\b[wW]{3})\."
    r"|^#|(?:^|(?<=\s))#(?=#*$)"
)
#: What starts a block at the start of a line: a list item (``-``, ``+``, ``1.``, ``1)``), a
#: quote, a thematic break (``-``; ``*`` and ``_`` are escaped anywhere), a link reference or
#: footnote definition (``[``: without one, a lone ``[x]`` is plain text).
_LINE_START = re.compile(r"^(?:[-+>\[]|\d+[.)])")


def md_escape(text: Any, *, cell: bool = False, line_start: bool = False) -> str:
    """``text`` as literal Markdown on one line, escaping only what would mean something where
    it stands, so that ``lab-4x-rtx2080ti`` and ``-$65,740`` stay as they are.

    Whitespace runs become one space and the characters of :data:`_INLINE` are
    backslash-escaped, so whatever the text holds (``[x](javascript:...)``, ``<script>``, ``*``,
    ``#``) renders as itself. ``cell``: the text is a table cell, ``|`` is escaped too;
    ``line_start``: the text starts a line, a leading list, quote or break marker is escaped.
    """
    out = _INLINE.sub(lambda m: "\\" + m.group(), " ".join(str(text).split()))
    if cell:
        out = out.replace("|", "\\|")
    if line_start:
        out = _LINE_START.sub(lambda m: m.group()[:-1] + "\\" + m.group()[-1], out)
    return out


def data_uri(svg: str) -> str:
    """A ``data:image/svg+xml;base64,...`` URI for an SVG document."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> str:
    """A pipe table; ``numeric`` columns are right-aligned. Cells must already be escaped."""
    lines = ["| " + " | ".join(headers) + " |"]
    lines.append("|" + "|".join("---:" if n else ":---" for n in numeric) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _cell(text: Any) -> str:
    return md_escape(text, cell=True)


def _table(t: Table) -> str:
    rows = [[_cell(c) for c in row] for row in t.rows]
    return md_table([_cell(h) for h in t.headers], rows, t.numeric)


def _assumptions(rows: Sequence[Mapping[str, Any]]) -> str:
    cells = [[_cell(a[k]) for k in ("key", "text", "unit", "source")] for a in rows]
    return md_table(["Key", "Value", "Unit", "Source"], cells, [False] * 4)


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("present.reports", "templates"),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = md_escape
    env.filters["md_line"] = partial(md_escape, line_start=True)
    env.globals["table"] = _table
    return env


def render_markdown(result: Answer, image_links: Mapping[str, str] | None = None) -> bytes:
    """The report as UTF-8 Markdown.

    ``image_links`` maps chart name -> relative link; without it the charts are embedded as
    ``data:image/svg+xml;base64`` URIs so the document stands alone.
    """
    kind = kind_of(result)
    if image_links is None:
        image_links = {name: data_uri(svg) for name, svg in kind.charts(result).items()}
    ctx = kind.context(result, image_links)
    ctx["assumptions"] = _assumptions(ctx["assumptions"])
    return _env().get_template(f"{kind.template}.md.j2").render(**ctx).encode("utf-8")
