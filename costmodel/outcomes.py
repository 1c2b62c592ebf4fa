"""Break-even utilisation and payback months, per draw.

``inf`` marks "never" (renting stays cheaper at u = 1, or buying does not pay back within the
horizon); a break-even of 0 means buying is cheaper even when idle ("always").
"""

from __future__ import annotations

import numpy as np

from .cashflows import BuyLine, Gap, RentLine, Value

__all__ = ["TIE_RTOL", "breakeven_utilisation", "payback", "payback_by_scan"]


#: Relative tolerance of a tie between two TCOs [-], of the larger of them.
TIE_RTOL = 1e-9


def breakeven_utilisation(buy: BuyLine, rent: RentLine, draws: int) -> np.ndarray:
    """The smallest u in [0, 1] such that TCO_buy(v) <= TCO_rent(v) for every v in [u, 1] (buying
    no dearer from u upward), per draw, shape ``(draws,)``; 0 ("always") when that holds from
    u = 0, ``inf`` ("never") when renting is cheaper at u = 1.

    "No dearer" compares with a tolerance of :data:`TIE_RTOL` of the larger TCO, so that a tie
    broken only by rounding counts as a tie. TCO_buy is linear in u and TCO_rent is linear with
    at most one kink k (where the reservation is filled), so the gap d = TCO_buy - TCO_rent is
    piecewise linear on [0, k] and [k, 1] and is compared at u = 0, k and 1: when buying is
    dearer at k, the answer lies on [k, 1] (d crosses 0 between k and 1); else, when it is
    dearer at 0, on [0, k]; else it is 0. The crossing is d's own zero by linear interpolation,
    kept inside its segment (a tie within the tolerance sits at the segment's end). A tie at
    u = 0 with buying dearer above it is therefore not "always". The rent line's own ``per_u``
    (a priced carbon) moves with the buy line's: only the gap counts.
    """
    b0, b1 = buy.at_zero, buy.per_u - rent.per_u
    r0, s = rent.at_zero, rent.slope
    k = np.clip(rent.kink, 0.0, 1.0)
    d0 = b0 - r0
    dk = b0 + b1 * k - r0
    d1 = b0 + b1 - r0 - s * np.maximum(0.0, 1.0 - rent.kink)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.clip(k * d0 / (d0 - dk), 0.0, k)
        second = np.clip(k + (1.0 - k) * dk / (dk - d1), k, 1.0)
    dearer = [_dearer(d, buy, rent, u) for d, u in ((d0, 0.0), (dk, k), (d1, 1.0))]
    out = np.where(dearer[2], np.inf, np.where(dearer[1], second, np.where(dearer[0], first, 0.0)))
    return np.broadcast_to(out, (draws,))


def _dearer(d: Value, buy: BuyLine, rent: RentLine, u: Value) -> np.ndarray:
    """Whether buying is dearer at ``u``, where the gap TCO_buy - TCO_rent is ``d`` [USD]: ``d``
    above :data:`TIE_RTOL` times the larger of the two TCOs' magnitudes."""
    return d > TIE_RTOL * np.maximum(np.abs(buy.tco(u)), np.abs(rent.tco(u)))


def _interpolate(month: np.ndarray, here: np.ndarray, prev: np.ndarray) -> np.ndarray:
    """t = (m - 1) + f(m-1)/(f(m-1) - f(m)) for the first month m (index ``month``) with
    f(m) <= 0; ``inf`` where there is none (``here`` > 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = month + prev / (prev - here)
    return np.where(here <= 0.0, t, np.inf)


def _scan(gap: Gap, rows: np.ndarray, u: float) -> np.ndarray:
    """Payback [month] at utilisation ``u`` of draws ``rows``, scanning every month."""
    f = gap.net0[:, rows] + u * gap.slope[:, rows]
    if gap.rent_u is not None:
        f -= np.maximum(0.0, u - gap.kink[rows]) * gap.rent_u[:, rows]
    month = np.argmax(f <= 0.0, axis=0)
    index = np.arange(rows.size)
    here = f[month, index]
    prev = np.where(month == 0, gap.capex[rows], f[np.maximum(month - 1, 0), index])
    return _interpolate(month, here, prev)


def payback_by_scan(gap: Gap, levels: np.ndarray) -> np.ndarray:
    """:func:`payback` by scanning every month at every level (the reference method)."""
    rows = np.arange(gap.capex.size)
    out = np.array([_scan(gap, rows, u) for u in np.asarray(levels, dtype=float)])
    out[:, gap.capex <= 0.0] = 0.0
    return out


def _levels_below(threshold: np.ndarray, levels: np.ndarray, out: np.ndarray) -> np.ndarray:
    """How many of the ascending ``levels`` lie strictly below each threshold, into ``out``
    (uint8); ``threshold`` is overwritten.

    An evenly spaced grid is counted arithmetically (a misplaced boundary case is caught by the
    exact check of :func:`payback`); any other grid by binary search.
    """
    step = np.diff(levels)
    if levels.size > 1 and np.allclose(step, step[0], rtol=0, atol=1e-9) and step[0] > 0:
        with np.errstate(invalid="ignore"):
            np.subtract(threshold, levels[0], out=threshold)
            np.divide(threshold, step[0], out=threshold)
        np.ceil(threshold, out=threshold)
        np.clip(threshold, 0, levels.size, out=threshold)
        np.copyto(out, threshold, casting="unsafe")
        return out
    np.copyto(out, np.searchsorted(levels, threshold, side="left"), casting="unsafe")
    return out


def payback(gap: Gap, levels: np.ndarray) -> np.ndarray:
    """Fractional month at which cumulative buy cost first meets cumulative rent cost, at each
    utilisation level; shape ``(U, S)``.

    f_m(u) = C0 + sum_{j<=m}[opex_j(1-tau) - tau*D_j]d_j - sum_{j<=m} rent_j(1-tau)d_j; the first
    month m with f_m(u) <= 0 gives t = (m - 1) + f_{m-1}/(f_{m-1} - f_m), linear inside the month;
    ``inf`` when f stays positive through the horizon; 0 when C0 <= 0.

    Without a reservation f_m(u) = net0_m + u*netu_m is linear in u, so where netu_m < 0,
    f_m(u) <= 0 exactly when u >= t_m = -net0_m/netu_m. The first such month for every level
    at once is the number of months whose running minimum of t_m lies above the level. Draws
    whose gap can close at low utilisation and open again at high (a month with netu_m > 0 and
    net0_m <= 0), and draws with a reservation, are scanned month by month instead, as is any
    (draw, level) where the month found is not the first with f_m(u) <= 0 in floating point.
    """
    levels = np.asarray(levels, dtype=float)
    net0, netu = gap.net0, gap.slope
    months, draws = net0.shape
    out = np.empty((levels.size, draws))
    rising = netu >= 0
    scan = gap.kink > 0
    threshold = gap.spare
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(net0, netu, out=threshold)
    np.negative(threshold, out=threshold)
    if rising.any():  # a flat or rising gap is closed at every u, or at none
        scan |= np.any(rising & (net0 <= 0), axis=0)
        threshold[rising] = np.where(net0[rising] <= 0, -np.inf, np.inf)
    for m in range(1, months):  # running minimum over months
        np.minimum(threshold[m], threshold[m - 1], out=threshold[m])
    order = np.argsort(levels, kind="stable")
    below = _levels_below(threshold, levels[order], gap.work.get("below", net0.shape, np.uint8))
    # the months before the first with f <= 0 at the k-th smallest level: those whose running
    # minimum has more than k levels below it (at most 240 months: a byte each)
    before = gap.work.get("before", (levels.size, draws), np.uint8)
    before.fill(0)
    highest = below.max(axis=1)  # non-increasing over months, as each draw's count is
    for k in range(levels.size):
        for m in range(months):
            if highest[m] <= k:  # no draw has a later month above this level
                break
            before[k] += below[m] > k
    cols = np.arange(draws)
    flat0, flat_u = net0.ravel(), netu.ravel()
    capex = gap.capex
    for k, j in enumerate(order):
        u, month = levels[j], before[k].astype(np.intp)
        never = month == months
        at = np.minimum(month, months - 1) * draws + cols  # flat index of (month, draw)
        here = np.take(flat0, at) + u * np.take(flat_u, at)
        here[never] = np.inf
        at -= draws  # the month before; month 0 starts from the capex
        first = at < 0
        np.maximum(at, cols, out=at)
        prev = np.take(flat0, at) + u * np.take(flat_u, at)
        np.copyto(prev, capex, where=first)
        t = _interpolate(month, here, prev)
        exact = ~scan & (never | ((here <= 0) & (first | (prev > 0))))
        if not exact.all():
            redo = np.flatnonzero(~exact)
            t[redo] = _scan(gap, redo, u)
        out[j] = t
    out[:, capex <= 0.0] = 0.0
    return out
