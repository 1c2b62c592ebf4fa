"""The XLSX workbook: sheets ``summary``, ``per_utilisation``, ``assumptions``, ``warnings``,
``sensitivity``.

Numbers are stored as numbers (display formats only change how they look): money [USD] as
``#,##0``, shares [-] as percentages, payback [month] with one decimal. Nulls are empty cells.
openpyxl stores floats to 16 significant digits (Excel itself keeps 15); the CSV and JSON
exports keep full precision.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from .tables import assumption_rows, per_utilisation_columns, summary_items, warning_rows

__all__ = ["SHEETS", "render_xlsx"]

SHEETS = ("summary", "per_utilisation", "assumptions", "warnings", "sensitivity")
_BOLD = Font(bold=True)


def _number_format(column: str) -> str | None:
    if column == "utilisation" or "prob" in column or column.startswith("breakeven_utilisation"):
        return "0.0%"
    if column.startswith(("buy_tco", "rent_tco")):
        return "#,##0"
    if column.startswith("cost_per_ref"):
        return "#,##0.00"
    if column.startswith("payback_months"):
        return "0.0"
    return None


def _sheet(ws: Worksheet, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Header row in bold and frozen, then rows; columns sized to their longest text."""
    ws.append(list(headers))
    for cell in ws[1]:
        cell.font = _BOLD
    for row in rows:
        ws.append(list(row))
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


def _summary(ws: Worksheet, result: Mapping[str, Any]) -> None:
    items = summary_items(result)
    _sheet(ws, ("item", "value"), items)
    for row, (key, _) in enumerate(items, start=2):
        fmt = _number_format(key)
        if fmt:
            ws.cell(row, 2).number_format = fmt
        ws.cell(row, 2).alignment = Alignment(horizontal="left", wrap_text=key == "verdict")
    ws.column_dimensions["B"].width = 90


def _per_utilisation(ws: Worksheet, result: Mapping[str, Any]) -> None:
    cols = per_utilisation_columns(result)
    rows = list(zip(*(values for _, values in cols), strict=True))
    _sheet(ws, [name for name, _ in cols], rows)
    for i, (name, _) in enumerate(cols, start=1):
        fmt = _number_format(name)
        if fmt:
            for (cell,) in ws.iter_rows(min_row=2, min_col=i, max_col=i):
                cell.number_format = fmt


def _assumptions(ws: Worksheet, result: Mapping[str, Any]) -> None:
    rows = []
    for a in assumption_rows(result):
        plain = a["value"] if isinstance(a["value"], int | float | str) else a["text"]
        rows.append((a["key"], plain, a["unit"], a["source"]))
    _sheet(ws, ("key", "value", "unit", "source"), rows)


def _warnings(ws: Worksheet, result: Mapping[str, Any]) -> None:
    rows = [(w["code"], w["severity"], w["message"]) for w in warning_rows(result)]
    _sheet(ws, ("code", "severity", "message"), rows)
    ws.column_dimensions["C"].width = min(ws.column_dimensions["C"].width, 100)


def _sensitivity(ws: Worksheet, result: Mapping[str, Any]) -> None:
    sens = result.get("sensitivity") or {}
    u = sens.get("utilisation")
    rows = [(r["input"], r["spearman"], u) for r in sens.get("inputs") or []]
    _sheet(ws, ("input", "spearman_rho_with_buy_minus_rent_tco", "utilisation"), rows)


def render_xlsx(result: Mapping[str, Any]) -> bytes:
    """The workbook as XLSX bytes."""
    wb = Workbook()
    ws = wb.active
    ws.title = SHEETS[0]
    _summary(ws, result)
    _per_utilisation(wb.create_sheet(SHEETS[1]), result)
    _assumptions(wb.create_sheet(SHEETS[2]), result)
    _warnings(wb.create_sheet(SHEETS[3]), result)
    _sensitivity(wb.create_sheet(SHEETS[4]), result)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()
