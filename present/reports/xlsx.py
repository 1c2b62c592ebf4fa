"""The XLSX workbooks. A scenario's result: sheets ``summary``, ``per_utilisation`` (the columns
of :meth:`Result.columns`, a hosted API's included, with a break-even chart of every side),
``assumptions``, ``warnings``, ``sensitivity`` and ``tornado`` (with a hosted API also
``sensitivity_vs_api`` and ``tornado_vs_api``: the same against the API); a plan's:
``summary``, ``candidates``, ``frontier`` (the frontier's candidates, cheapest first, with the
cost-versus-risk chart of every candidate), ``work_split`` (with the best plan's monthly work,
stacked), ``assumptions`` and ``warnings``. The charts are the workbook's own, drawn from its
cells, as the SVG charts of the other reports draw them.

Numbers are stored as numbers; display formats only change how they look: money [USD] as
``$#,##0``, unit costs as ``$#,##0.00`` [USD/reference GPU-hour] or ``$#,##0.000`` [USD/M
tokens], shares and utilisation [-] as percentages, payback [month] and work [reference
GPU-hours/month] with one decimal. No value is an empty cell. openpyxl stores floats to 16
significant digits (Excel itself keeps 15); the CSV and JSON exports keep full precision.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

from openpyxl import Workbook
from openpyxl.chart import BarChart, Reference, ScatterChart, Series
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from costmodel.plan_result import PlanResult
from costmodel.result import Column, Quantity, Result
from costmodel.sides import side as side_of
from costmodel.units import unit as unit_of

from ..answer import Answer
from ..formatting import text_cell
from .colours import BUY, LAYERS, MARK, OTHER, RENT, side_colour
from .plan_tables import (
    WORK_LAYERS,
    candidate_columns,
    frontier_columns,
    plan_summary_items,
    work_split_columns,
)
from .tables import assumption_rows, summary_items, warning_rows
from .uncertainty import TORNADO_HEADER, tornado_rows, uncertainty_items

__all__ = ["PLAN_SHEETS", "SHEETS", "render_plan_xlsx", "render_xlsx"]

SHEETS = ("summary", "per_utilisation", "assumptions", "warnings", "sensitivity", "tornado")
PLAN_SHEETS = ("summary", "candidates", "frontier", "work_split", "assumptions", "warnings")
_BOLD = Font(bold=True)
_PERCENT, _MONEY, _UNIT_COST, _MONTHS = "0.0%", "$#,##0", "$#,##0.00", "0.0"
_TOKEN_COST = "$#,##0.000"  # a cost per M tokens, to a tenth of a cent
_WORK = "#,##0.0"


#: The display format of each quantity a column declares ([t CO2e] to the kilogram, [g CO2e]
#: per unit of work whole).
_FORMATS = {
    Quantity.USD: _MONEY,
    Quantity.SHARE: _PERCENT,
    Quantity.MONTH: _MONTHS,
    Quantity.TONNES: "#,##0.000",
    Quantity.GRAMS_PER_UNIT: "#,##0",
    Quantity.WORK: _WORK,
}


def _number_format(column: Column, unit: str | None = None) -> str | None:
    """The display format of a column or summary item, by the quantity it declares; a cost
    per unit of work by its unit (``unit``: to the cent, or a tenth of a cent when the
    unit's costs are fractions of a cent apart)."""
    if column.quantity is Quantity.USD_PER_UNIT:
        return _TOKEN_COST if unit is not None and unit_of(unit).fine else _UNIT_COST
    return _FORMATS.get(column.quantity)


def _value(v: Any) -> Any:
    """A cell value: NaN is an empty cell, numpy numbers plain Python numbers, text never a
    formula (:func:`~present.formatting.text_cell`)."""
    if isinstance(v, float) and math.isnan(v):
        return None
    return v.item() if hasattr(v, "item") else text_cell(v)


def _sheet(ws: Worksheet, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Header row in bold and frozen, then rows; columns sized to their longest text.

    Text cells are stored as text: openpyxl would otherwise make ``#N/A`` an error cell.
    """
    ws.append(list(headers))
    for cell in ws[1]:
        cell.font = _BOLD
    for row in rows:
        ws.append([_value(v) for v in row])
        for cell in ws[ws.max_row]:
            if isinstance(cell.value, str):
                cell.data_type = "s"
    ws.freeze_panes = "A2"
    for i, header in enumerate(headers, start=1):
        letter = get_column_letter(i)
        longest = max(
            (
                len(str(c.value)) if not isinstance(c.value, float) else 12
                for c in ws[letter]
                if c.value is not None
            ),
            default=len(header),
        )
        ws.column_dimensions[letter].width = min(max(longest, len(header), 8) + 2, 80)


def _summary(ws: Worksheet, items: Sequence[Column]) -> None:
    _sheet(ws, ("item", "value"), items)
    for row, item in enumerate(items, start=2):
        key, fmt = item[0], _number_format(item)
        if fmt:
            ws.cell(row, 2).number_format = fmt
        ws.cell(row, 2).alignment = Alignment(horizontal="left", wrap_text=key == "verdict")
    ws.column_dimensions["B"].width = 90


def _columns(ws: Worksheet, cols: Sequence[Column], unit: str | None = None) -> int:
    """A table given as :class:`Column` pairs, each column in the display format of what it
    counts (:func:`_number_format`); returns the number of rows."""
    rows = list(zip(*(list(values) for _, values in cols), strict=True))
    _sheet(ws, [name for name, _ in cols], rows)
    for i, col in enumerate(cols, start=1):
        fmt = _number_format(col, unit)
        if fmt:
            for (cell,) in ws.iter_rows(min_row=2, min_col=i, max_col=i):
                cell.number_format = fmt
    return len(rows)


def _per_utilisation(ws: Worksheet, result: Result) -> None:
    cols = result.columns()
    n = _columns(ws, [Column(c[0], c[1].tolist(), c.quantity) for c in cols], result.unit)
    chart = _breakeven_chart(ws, [name for name, _ in cols], n, result.sides)
    ws.add_chart(chart, f"B{n + 4}")


def _axes(
    chart: ScatterChart | BarChart, title: str, x: tuple[str, str], y: tuple[str, str]
) -> None:
    """Title, size and the axes' ``(title, number format)``, both axes shown."""
    chart.title = title
    chart.style = 13
    chart.height, chart.width = 9, 18
    for axis, (name, fmt) in ((chart.x_axis, x), (chart.y_axis, y)):
        axis.title = name
        axis.number_format = fmt
        axis.delete = False  # Excel hides an axis that does not say so


def _column(ws: Worksheet, names: list[str], name: str, n: int) -> Reference:
    """Rows 2..n+1 of column ``name`` of a table whose header is ``names``."""
    col = names.index(name) + 1
    return Reference(ws, min_col=col, min_row=2, max_row=n + 1)


def _breakeven_chart(ws: Worksheet, names: list[str], n: int, sides: Sequence[str]) -> ScatterChart:
    """Each side's TCO P50 [USD] against utilisation [%]: buying's line crosses each of the
    others at the break-even against it."""
    chart = ScatterChart()
    _axes(
        chart,
        "Total cost of ownership (P50): " + " vs ".join(side_of(s).doing for s in sides),
        ("Utilisation of the owned GPUs", _PERCENT),
        ("TCO [USD, present value]", _MONEY),
    )
    x = _column(ws, names, "utilisation", n)
    for side in sides:
        y = _column(ws, names, f"{side}_tco_p50", n)
        title = f"{side_of(side).label} P50"
        chart.series.append(_points(x, y, title, side_colour(side), "circle", line=True))
    return chart


def _points(
    x: Reference, y: Reference, title: str, colour: str, symbol: str, line: bool = False
) -> Series:
    """A scatter series of markers ``symbol`` in ``colour``, joined only when ``line``."""
    series = Series(y, x, title=title)
    series.marker.symbol = symbol
    series.marker.size = {"star": 10, "square": 7}.get(symbol, 5 if line else 4)
    series.marker.graphicalProperties.solidFill = colour[1:]
    series.marker.graphicalProperties.line.solidFill = colour[1:]
    if line:
        series.graphicalProperties.line.solidFill = colour[1:]
    else:
        series.graphicalProperties.line.noFill = True
    return series


def _round_down(x: float) -> float:
    """The multiple of half a power of ten at or below ``x`` [USD]: 11.4M -> 10M, 52,960 ->
    50,000; ``x`` itself when it is not positive."""
    if x <= 0:
        return x
    step = 10 ** math.floor(math.log10(x)) / 2
    return math.floor(x / step) * step


def _frontier_chart(
    wb: Workbook, result: PlanResult, summary: list[str], front: int
) -> ScatterChart:
    """Mean against P90 cost [USD] of every candidate, the frontier joined cheapest first, the
    best plan and all-cloud marked (their figures in the summary sheet)."""
    chart = ScatterChart()
    _axes(
        chart,
        "Cost versus risk of every candidate",
        ("Mean cost [USD, present value]", _MONEY),
        ("P90 cost [USD, present value]", _MONEY),
    )
    names = [name for name, _ in candidate_columns(result)]
    cands, n = wb[PLAN_SHEETS[1]], len(result.candidates)
    mean, p90 = _column(cands, names, "cost_mean", n), _column(cands, names, "cost_p90", n)
    chart.series.append(_points(mean, p90, "candidate", OTHER, "circle"))
    # from a round number below the cheapest, not from zero: the candidates differ by less
    shown = [*result.candidates, result.all_cloud]
    chart.x_axis.scaling.min = _round_down(min(c.cost.mean for c in shown))
    chart.y_axis.scaling.min = _round_down(min(c.cost.p90 for c in shown))
    frontier = wb[PLAN_SHEETS[2]]
    mean, p90 = (_column(frontier, names, f"cost_{s}", front) for s in ("mean", "p90"))
    chart.series.append(_points(mean, p90, "frontier", BUY, "circle", line=True))
    marks = (("best", "best plan", RENT, "star"), ("all_cloud", "all-cloud", MARK, "square"))
    for who, title, colour, symbol in marks:
        rows = [summary.index(f"{who}_cost_{s}") + 2 for s in ("mean", "p90")]
        x, y = (Reference(wb[PLAN_SHEETS[0]], min_col=2, min_row=r) for r in rows)
        chart.series.append(_points(x, y, title, colour, symbol))
    return chart


def _work_split_chart(ws: Worksheet, result: PlanResult) -> BarChart:
    """The best plan's mean work of each month [reference GPU-hours/month], stacked by where
    it runs; a layer without work is left out, as in the SVG chart."""
    chart = BarChart()
    chart.type, chart.grouping, chart.overlap, chart.gapWidth = "col", "stacked", 100, 30
    _axes(chart, "Work of the best plan by month",
          ("Month", "0"), ("Work [reference GPU-hours/month]", "#,##0"))  # fmt: skip
    cols = work_split_columns(result)
    names, n = [name for name, _ in cols], len(result.work_split.owned)
    values = dict(cols)
    layers = [(*layer, colour) for layer, colour in zip(WORK_LAYERS, LAYERS, strict=True)]
    shown = [layer for layer in layers if any(v > 0 for v in values[layer[0]])]
    for column, title, colour in shown or layers[:1]:
        series = Series(_column(ws, names, column, n), title=title)
        series.graphicalProperties.solidFill = colour[1:]
        series.graphicalProperties.line.noFill = True
        chart.series.append(series)
    chart.set_categories(_column(ws, names, "month", n))
    return chart


def _assumptions(ws: Worksheet, result: Answer) -> None:
    rows = []
    for a in assumption_rows(result):
        plain = a["value"] if isinstance(a["value"], int | float | str) else a["text"]
        rows.append((a["key"], plain, a["unit"], a["source"]))
    _sheet(ws, ("key", "value", "unit", "source"), rows)


def _warnings(ws: Worksheet, result: Answer) -> None:
    rows = [(w.code, w.severity, w.message) for w in warning_rows(result)]
    _sheet(ws, ("code", "severity", "message"), rows)
    ws.column_dimensions["C"].width = min(ws.column_dimensions["C"].width, 100)


def _sensitivity(ws: Worksheet, result: Result, versus: str = "rent") -> None:
    sens = result.sensitivity if versus == "rent" else result.rival(versus).sensitivity
    rows = [(d.input, d.spearman, sens.utilisation) for d in sens.inputs]
    _sheet(ws, ("input", f"spearman_rho_with_buy_minus_{versus}_tco", "utilisation"), rows)
    for (cell,) in ws.iter_rows(min_row=2, min_col=3, max_col=3):
        cell.number_format = _PERCENT


def _tornado(ws: Worksheet, result: Result, versus: str = "rent") -> None:
    """Each uncertain input from its P10 to its P90 (others at their medians), largest swing
    first, with its EVPPI, against side ``versus``; empty for results stored before the
    tornado existed."""
    _sheet(ws, [name for name, _ in TORNADO_HEADER], tornado_rows(result, versus))
    for i, col in enumerate(TORNADO_HEADER, start=1):
        fmt = _number_format(col)
        if fmt:
            for (cell,) in ws.iter_rows(min_row=2, min_col=i, max_col=i):
                cell.number_format = fmt


def _save(wb: Workbook) -> bytes:
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def render_xlsx(result: Answer[Result]) -> bytes:
    """A scenario result's workbook (sheets :data:`SHEETS`) as XLSX bytes."""
    wb = Workbook()
    ws = wb.active
    ws.title = SHEETS[0]
    _summary(ws, summary_items(result) + uncertainty_items(result))
    _per_utilisation(wb.create_sheet(SHEETS[1]), result)
    _assumptions(wb.create_sheet(SHEETS[2]), result)
    _warnings(wb.create_sheet(SHEETS[3]), result)
    _sensitivity(wb.create_sheet(SHEETS[4]), result)
    _tornado(wb.create_sheet(SHEETS[5]), result)
    for rival in result.rivals:
        _sensitivity(wb.create_sheet(f"sensitivity_vs_{rival.versus}"), result, rival.versus)
        _tornado(wb.create_sheet(f"tornado_vs_{rival.versus}"), result, rival.versus)
    return _save(wb)


def render_plan_xlsx(result: Answer[PlanResult]) -> bytes:
    """A plan result's workbook (sheets :data:`PLAN_SHEETS`) as XLSX bytes."""
    wb = Workbook()
    ws = wb.active
    ws.title = PLAN_SHEETS[0]
    items = plan_summary_items(result)
    _summary(ws, items)
    _columns(wb.create_sheet(PLAN_SHEETS[1]), candidate_columns(result))
    front = _columns(wb.create_sheet(PLAN_SHEETS[2]), frontier_columns(result))
    chart = _frontier_chart(wb, result, [key for key, _ in items], front)
    wb[PLAN_SHEETS[2]].add_chart(chart, f"A{front + 4}")
    split = wb.create_sheet(PLAN_SHEETS[3])
    columns = work_split_columns(result)
    _columns(split, columns)
    split.add_chart(_work_split_chart(split, result), f"{get_column_letter(len(columns) + 2)}2")
    _assumptions(wb.create_sheet(PLAN_SHEETS[4]), result)
    _warnings(wb.create_sheet(PLAN_SHEETS[5]), result)
    return _save(wb)
