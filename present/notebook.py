"""Answers in a notebook: a scenario's or plan's :class:`~present.answer.Answer` (or an engine
result alone, a :class:`~costmodel.result.Result` or :class:`~costmodel.plan_result.PlanResult`)
shown as a short HTML summary (its name, the verdict, the key figures and a small table) when
it is the last expression of a Jupyter cell.

The answer and result types know nothing of display, so this module lends IPython the HTML
instead: :func:`register` adds :func:`html` to IPython's ``text/html`` display formatter for
the three types. ``present`` does that itself when it is imported inside a running
IPython (``scenarios`` imports it); call :func:`register` in an IPython started after that
import, or load this module as an extension (``%load_ext present.notebook``).

>>> from present import notebook
>>> notebook.html(result)  # the HTML a notebook shows for result
>>> notebook.register()    # True once IPython's formatter knows the three types

Every text is HTML-escaped; numbers are formatted by :mod:`present.formatting`,
the tables are the reports' (:mod:`present.reports`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np

from costmodel.plan_result import PlanResult
from costmodel.result import Result
from pricing.text import counted

from .answer import Answer
from .reports.plan_tables import best_plan_table, candidates_table
from .reports.tables import (
    Table,
    key_figures_table,
    per_utilisation_table,
    scenario_name,
    warning_rows,
)
from .verdict import verdict

__all__ = ["html", "load_ipython_extension", "register"]

#: The columns of a scenario's per-utilisation table a notebook shows, and its title: with
#: renting alone, or with a hosted API.
_LEVEL_COLUMNS = {
    False: (
        "Rent or buy",
        ("Utilisation", "Buy TCO P50", "Rent TCO P50", "P(buy cheaper)", "Payback P50 [months]"),
    ),
    True: (
        "Buy, rent or API",
        (
            "Utilisation",
            "Buy TCO P50",
            "Rent TCO P50",
            "API TCO P50",
            "P(buy cheaper than rent)",
            "P(buy cheaper than API)",
            "Cheapest (share of draws)",
        ),
    ),
}
#: The columns of a plan's candidates table a notebook shows (rows: the marked candidates).
_PLAN_COLUMNS = (
    "Servers",
    "Reserved",
    "Cost mean",
    "Cost P90",
    "CVaR95",
    "Owned share",
    "P(cheaper than cloud)",
    "Plan",
)
#: Most utilisation levels a notebook shows; more are thinned to evenly spaced ones.
_MOST_LEVELS = 7
#: A highlighted row: a tint that reads on light and dark notebook themes alike.
_HIGHLIGHT = "background: rgba(31, 95, 168, 0.12)"


def _columns(t: Table, headers: Sequence[str]) -> Table:
    """The columns ``headers`` of ``t``, in that order."""
    at = [t.headers.index(h) for h in headers]
    return Table(
        tuple(headers),
        tuple(tuple(row[i] for i in at) for row in t.rows),
        tuple(t.numeric[i] for i in at),
        t.highlight,
    )


def _rows(t: Table, keep: Sequence[bool]) -> Table:
    """The rows of ``t`` where ``keep`` is true."""
    picked = [j for j, k in enumerate(keep) if k]
    highlight = tuple(t.highlight[j] for j in picked) if t.highlight else ()
    return Table(t.headers, tuple(t.rows[j] for j in picked), t.numeric, highlight)


def _cell(tag: str, text: str, numeric: bool) -> str:
    align = "right" if numeric else "left"
    return f'<{tag} style="text-align: {align}">{escape(text)}</{tag}>'


def _table(t: Table) -> str:
    """``t`` as an HTML table, numeric columns right-aligned, highlighted rows tinted."""
    head = "".join(_cell("th", h, n) for h, n in zip(t.headers, t.numeric, strict=True))
    body = []
    for j, row in enumerate(t.rows):
        tint = f' style="{_HIGHLIGHT}"' if t.highlight and t.highlight[j] else ""
        cells = "".join(_cell("td", c, n) for c, n in zip(row, t.numeric, strict=True))
        body.append(f"<tr{tint}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _warnings(result: Answer) -> str:
    """The warnings as a list, most severe first, or ``""`` without any."""
    items = [
        f"<li><strong>{escape(w.severity)}</strong> {escape(w.message)}</li>"
        for w in warning_rows(result)
    ]
    return f"<ul>{''.join(items)}</ul>" if items else ""


def _page(result: Answer, title: str, sentence: str, tables: Sequence[Table], hint: str) -> str:
    """Name, verdict, tables, warnings and how the run was made, in one ``<div>``."""
    draws = counted(result.samples, "sample")
    run = f"seed {result.seed}, {draws} ({result.method}). {hint}"
    return "".join(
        [
            '<div class="costmodel-result">',
            f"<p><strong>{escape(title)}: {escape(scenario_name(result))}</strong></p>",
            f"<p>{escape(sentence)}</p>" if sentence else "",
            *(_table(t) for t in tables),
            _warnings(result),
            f'<p style="font-size: smaller; opacity: 0.8">{escape(run)}</p>',
            "</div>",
        ]
    )


def _levels(result: Result) -> list[bool]:
    """Which utilisation levels to show: all of up to :data:`_MOST_LEVELS`, else evenly spaced
    ones from the first to the last, with the report utilisation's."""
    n = len(result.utilisation)
    if n <= _MOST_LEVELS:
        return [True] * n
    keep = {round(i) for i in np.linspace(0, n - 1, _MOST_LEVELS - 1)}
    keep.add(result.level(result.cumulative_cost.utilisation))
    return [i in keep for i in range(n)]


def _scenario_html(result: Answer[Result]) -> str:
    shown = _levels(result)
    title, columns = _LEVEL_COLUMNS[result.api_tco is not None]
    levels = _columns(_rows(per_utilisation_table(result), shown), columns)
    hint = (
        f"{sum(shown)} of {len(shown)} utilisation levels; answer.to_frame() has them all, "
        "with every column, and present.reports.render(answer, 'html') is the whole "
        "report."
    )
    sentence = result.verdict or verdict(result)
    return _page(result, title, sentence, [key_figures_table(result), levels], hint)


def _plan_html(result: Answer[PlanResult]) -> str:
    candidates = candidates_table(result)
    marked = [bool(row[-1]) for row in candidates.rows]  # best, frontier or all-cloud
    shown = _columns(_rows(candidates, marked), _PLAN_COLUMNS)
    hint = (
        f"{len(result.candidates)} candidates; the table shows the best, the frontier and "
        "all-cloud. answer.to_frame() has them all."
    )
    return _page(result, "GPU fleet plan", result.verdict, [best_plan_table(result), shown], hint)


def html(shown: Answer | Result | PlanResult) -> str:
    """The HTML a notebook shows for ``shown``: a plan's or a scenario's summary (an engine
    result alone with the verdict of a scenario's numbers, without name or warnings)."""
    answer = Answer.of(shown)
    if answer.is_plan:
        return _plan_html(answer)
    return _scenario_html(answer)


def register(shell: Any = None) -> bool:
    """Show results as :func:`html` in ``shell`` (by default the running IPython, if any).

    Returns whether a shell was found; registering twice is harmless.
    """
    if shell is None:
        ipython = sys.modules.get("IPython")  # not imported: no IPython is running
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return False
    formatter = shell.display_formatter.formatters["text/html"]
    for kind in (Answer, Result, PlanResult):
        formatter.for_type(kind, html)
    return True


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext present.notebook``: :func:`register` in ``shell``."""
    register(shell)
