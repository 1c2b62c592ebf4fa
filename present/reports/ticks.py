"""Where an axis's ticks go and how far it reaches: round steps, as matplotlib's ``MaxNLocator``
chooses them, without a figure.

An axis shows its data with 5 % of their range to spare at each end that is not fixed (as
matplotlib's default margins), and ticks at the multiples of the smallest round step (1, 2,
2.5 or 5 times a power of ten; whole numbers only on a counting axis) that puts at most
``bins + 1`` ticks within it.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["nice_ticks", "view"]

_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0, 20.0)
MARGIN = 0.05  # [-] of the data's range, at each end not fixed


def view(
    data: np.ndarray, low: float | None = None, high: float | None = None
) -> tuple[float, float]:
    """The range [data units] an axis shows: the finite ``data`` with :data:`MARGIN` to spare
    at each end not fixed by ``low`` or ``high``; a range of one value is widened by 5 % of it
    (1 at zero) at each end."""
    finite = data[np.isfinite(data)]
    lo = float(finite.min()) if finite.size else 0.0
    hi = float(finite.max()) if finite.size else 1.0
    pad = (hi - lo) * MARGIN or max(abs(hi) * MARGIN, 1.0 if hi == 0 else 0.0)
    lo = lo - pad if low is None else low
    hi = hi + pad if high is None else high
    if hi <= lo:  # a fixed end beyond all the data
        hi, lo = (lo + 1.0, lo) if high is None else (hi, hi - 1.0)
    return lo, hi


def nice_ticks(lo: float, hi: float, bins: int, integer: bool = False) -> np.ndarray:
    """The ticks [data units] within [``lo``, ``hi``]: multiples of the smallest round step
    that gives at most ``bins`` intervals; whole numbers only when ``integer``. An end within
    1e-9 of a step of a multiple is taken as that multiple (the rounding of ``lo / step``)."""
    raw = (hi - lo) / max(bins, 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    steps = [m * mag for m in _STEPS]
    if integer:
        steps = [s for s in steps if s >= 1 and s == round(s)] or [1.0]
    for step in steps:
        first = math.ceil(lo / step - 1e-9)
        last = math.floor(hi / step + 1e-9)
        if last - first <= bins:
            break
    return np.arange(first, last + 1) * step
