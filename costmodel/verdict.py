"""A one-sentence answer from the summarised numbers."""

from __future__ import annotations

import numpy as np

from .formatting import fmt_share, fmt_utilisation, missing
from .result import Breakeven, Payback

__all__ = ["verdict"]


def verdict(
    breakeven: Breakeven,
    utilisation: np.ndarray,
    prob_buy_cheaper: np.ndarray,
    payback: Payback,
    level: float,
) -> str:
    """Break-even P50 with its P10-P90 range, then the picture at utilisation ``level``.

    The second half is left out when ``level`` is not one of the ``utilisation`` levels.
    """
    be = breakeven
    if missing(be.p50):
        head = (
            "Renting is cheaper at every utilisation in most draws: buying never breaks "
            f"even in {fmt_share(be.prob_never)} of draws"
        )
    elif be.p50 == 0.0:
        head = f"Buying is cheaper even when idle in {fmt_share(be.prob_always)} of draws"
    else:
        head = f"Buying breaks even at {fmt_utilisation(be.p50)} utilisation"
        if be.p10 != be.p90:  # a spread to report ("never", NaN, counts as one)
            head += f" (P10-P90: {fmt_utilisation(be.p10)} to {fmt_utilisation(be.p90)})"
    hits = np.flatnonzero(np.abs(np.asarray(utilisation) - level) < 1e-9)
    if not hits.size:
        return head + "."
    j = int(hits[0])
    tail = (
        f"; at {fmt_utilisation(level)} utilisation buying is cheaper in "
        f"{fmt_share(prob_buy_cheaper[j])} of draws"
    )
    if not missing(float(payback.p50[j])):
        tail += f" and pays back in {payback.p50[j]:.1f} months (P50)"
    return head + tail + "."
