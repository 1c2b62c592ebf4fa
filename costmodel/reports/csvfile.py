"""The tidy CSV export: one row per utilisation level (columns in :mod:`.tables`).

Floats are written with ``repr`` precision so they read back exactly; nulls are empty cells.
Money in [USD] present value, shares as fractions [-], payback in [month].
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from .tables import per_utilisation_columns

__all__ = ["render_csv"]


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return v


def render_csv(result: Mapping[str, Any]) -> bytes:
    """The per-utilisation table as UTF-8 CSV with a header row and ``\\n`` line ends."""
    cols = per_utilisation_columns(result)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([name for name, _ in cols])
    for row in zip(*(values for _, values in cols), strict=True):
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue().encode("utf-8")
