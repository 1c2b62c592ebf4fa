"""The tidy CSV export: one row per utilisation level (columns of :meth:`Result.columns`).

Floats are written with ``repr`` precision so they read back exactly; no value is an empty cell.
Money in [USD] present value, shares as fractions [-], payback in [month].
"""

from __future__ import annotations

import csv
import io
import math

from ..result import Result

__all__ = ["render_csv"]


def _cell(v: float) -> str:
    return "" if math.isnan(v) else repr(float(v))


def render_csv(result: Result) -> bytes:
    """The per-utilisation table as UTF-8 CSV with a header row and ``\\n`` line ends."""
    cols = result.columns()
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([name for name, _ in cols])
    for row in zip(*(values for _, values in cols), strict=True):
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue().encode("utf-8")
