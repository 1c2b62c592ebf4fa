"""The tidy CSV export: one row per utilisation level of a scenario's result (columns of
:meth:`Result.columns`), or one row per candidate of a plan's (columns of
:func:`~present.reports.plan_tables.candidate_columns`).

Floats are written with ``repr`` precision so they read back exactly, counts as integers and
flags as ``True``/``False``; no value (NaN) is an empty cell. Money in [USD] present value,
shares as fractions [-], payback in [month].
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

from ..answer import Answer
from .kinds import kind_of

__all__ = ["render_csv"]


def _cell(v: Any) -> str:
    if isinstance(v, bool | int):
        return str(v)
    return "" if math.isnan(v) else repr(float(v))


def render_csv(result: Answer) -> bytes:
    """The result's table as UTF-8 CSV with a header row and ``\\n`` line ends."""
    cols = kind_of(result).columns(result)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([name for name, _ in cols])
    for row in zip(*(values for _, values in cols), strict=True):
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue().encode("utf-8")
