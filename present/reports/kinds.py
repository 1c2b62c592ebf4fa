"""The kinds of result a report shows and what differs between them: the one place that tells a
fleet :class:`~costmodel.plan_result.PlanResult` from a rent-versus-buy
:class:`~costmodel.result.Result`.

The HTML and Markdown reports are one page layout filled from a kind's template, context and
charts; the CSV report is a kind's table of columns; the XLSX workbook is a kind's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from costmodel.result import Result

from ..answer import Answer
from .context import plan_context, report_context
from .plan_tables import candidate_columns

__all__ = ["Kind", "kind_of"]


@dataclass(frozen=True)
class Kind:
    """How one kind of result is reported.

    ``template`` is the stem of ``templates/<template>.html.j2`` and ``.md.j2``; ``charts``
    gives ``{chart name: SVG document}``; ``context`` the templates' variables from the result
    and ``{chart name: inline SVG or image URI}``; ``columns`` the CSV table as
    ``[(column, values)]``; ``xlsx`` the workbook's bytes.
    """

    template: str
    charts: Callable[[Any], dict[str, str]]
    context: Callable[[Any, Mapping[str, str]], dict[str, Any]]
    columns: Callable[[Any], list[tuple[str, Any]]]
    xlsx: Callable[[Any], bytes]


def _lazy(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported at its first call: openpyxl is slow to import, and a CSV
    report needs neither it nor the charts."""

    def call(*args: Any) -> Any:
        return getattr(import_module(module, __package__), name)(*args)

    return call


def _columns(answer: Answer[Result]) -> list[tuple[str, Any]]:
    """The per-level table of a scenario's result (:meth:`Result.columns`)."""
    return answer.result.columns()


_SCENARIO = Kind(
    template="report",
    charts=_lazy(".charts", "render_charts"),
    context=report_context,
    columns=_columns,
    xlsx=_lazy(".xlsx", "render_xlsx"),
)
_PLAN = Kind(
    template="plan",
    charts=_lazy(".plan_charts", "render_plan_charts"),
    context=plan_context,
    columns=candidate_columns,
    xlsx=_lazy(".xlsx", "render_plan_xlsx"),
)


def kind_of(answer: Answer) -> Kind:
    """The kind of ``answer``: a plan's for a :class:`PlanResult`, else a scenario's."""
    return _PLAN if answer.is_plan else _SCENARIO
