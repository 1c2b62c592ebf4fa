"""Break-even utilisation and payback months, per draw.

``inf`` marks "never" (renting stays cheaper at u = 1, or buying does not pay back within the
horizon); a break-even of 0 means buying is cheaper even when idle ("always").

Payback's loop over months lives in C (``costmodel/_payback.c``, the kernel ``"payback"`` of
:mod:`costmodel.compiled`): one pass over the month-major gap, months outer and draws inner,
each draw closing its levels from the highest down as the gap reaches zero, where numpy builds
several month-major arrays (counts of open levels, their running minimum, gathers) for every
chunk of draws, since it cannot stop a draw at its first month: at 1M draws x 60 months
(benchmarks/scenario-1m.yaml) 0.14-0.18 s of CPU against numpy's 0.34-0.37 s, at 10,000
draws x 36 months (a request) 1.3 ms against 3.4 ms, and with a reservation's kink, where
every level of every draw is scanned, 7.5 ms against 45 ms (10,000 draws x 48 months of
``h100-8x-vs-p5-48xlarge-reserved-1y``). The numpy form (:func:`_payback_numpy`,
with ``COSTMODEL_KERNELS=numpy`` or without the built kernel) is the reference: the kernel
does the same floating-point operations in the same order and gives the same numbers bit for
bit (tests/test_payback.py compares them on random gaps).
"""

from __future__ import annotations

import numpy as np

from .cashflows import BuyLine, Gap, RentLine, Value, Workspace
from .compiled import kernel

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


def _interpolate(
    month: np.ndarray, here: np.ndarray, prev: np.ndarray, mask: np.ndarray | None = None
) -> np.ndarray:
    """t = (m - 1) + f(m-1)/(f(m-1) - f(m)) for the first month m (index ``month``) with
    f(m) <= 0; ``inf`` where there is none (``here`` > 0). Written over ``prev`` (``here`` is
    overwritten too), and returned; ``mask`` is a boolean buffer of their shape (a new one
    when not given)."""
    still = np.greater(here, 0.0, out=mask)  # no crossing: f still open
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.subtract(prev, here, out=here)
        t = np.divide(prev, step, out=prev)
        np.add(month, t, out=t)
        # inf where f is still open, t elsewhere, without a branch per draw (a copy under a
        # mask costs a mispredicted branch a draw): max(t, +inf or -inf); t is no NaN where
        # f is open (prev > 0 there, so prev / (prev - f) is a number or +inf)
        bound = np.multiply(still, 2.0, out=step)
        bound -= 1.0
        bound *= np.inf
        np.maximum(t, bound, out=t)
    return t


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


#: How near a level, in steps of an evenly spaced grid beyond the grid's own unevenness, a
#: threshold counted arithmetically must lie for its count to be checked on the gap itself [-]:
#: a million times the rounding of the count.
_NEAR = 1e-6


def _open_levels(net0: np.ndarray, netu: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """How many of ``levels`` leave the gap open, f = net0 + u * netu > 0, per element (uint8):
    the gap itself, evaluated as the scan evaluates it."""
    count = np.zeros(net0.shape, np.uint8)
    for u in levels:
        count += net0 + u * netu > 0.0
    return count


def _count_evenly(
    ratio: np.ndarray, levels: np.ndarray, out: np.ndarray, work: Workspace
) -> np.ndarray:
    """How many of the evenly spaced ascending ``levels`` lie strictly below each threshold
    t = -``ratio``, into ``out`` (uint8), arithmetically; returns the flat indices of the
    thresholds within rounding of a level, whose counts the caller checks (``ratio`` is
    overwritten; the workspace ``work`` lends the buffers, so that no fresh array is touched
    chunk after chunk)."""
    step = levels[1] - levels[0]
    grid = levels[0] + step * np.arange(levels.size)
    slack = float(np.max(np.abs(levels - grid))) / step + _NEAR
    x = ratio
    below = work.get("below", x.shape)  # the levels below each threshold, before clipping
    with np.errstate(invalid="ignore"):
        np.multiply(x, -1.0 / step, out=x)
        x -= levels[0] / step  # the threshold in steps from the first level, (t - u_0)/step
        np.ceil(x, out=below)
        np.subtract(below, x, out=x)  # steps up to the next level, in [0, 1)
        x -= 0.5  # within the slack of a level: at most it, or at least 1 - it
        np.abs(x, out=x)
        near = np.greater_equal(x, 0.5 - slack, out=work.get("near", x.shape, np.bool_))
    doubt = np.flatnonzero(near)
    np.clip(below, 0, levels.size, out=below)
    np.copyto(out, below, casting="unsafe")
    return doubt


def _open_counts(gap: Gap, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each month and draw, how many of the ascending ``levels`` leave the gap open
    (f_m(u) > 0), exactly as f is evaluated, month-major uint8 ``(H, S)``; and which draws
    must be scanned month by month, ``(S,)``: every draw of a gap with a reservation's kink,
    and those whose gap is closed at low utilisation in a month where it rises with u.

    Where netu_m < 0, f_m(u) is non-increasing in u (in floating point too), so the open
    levels are those below t_m = -net0_m/netu_m: counted arithmetically on an evenly spaced
    grid, each count within rounding of a level checked on f itself; any other grid is counted
    on f level by level. A flat or rising gap is open at every level or closed at every one.
    """
    net0, netu, ratio, work = gap.net0, gap.slope, gap.spare, gap.work
    count = work.get("count", net0.shape, np.uint8)
    rising = np.greater_equal(netu, 0.0, out=work.get("rising", net0.shape, np.bool_))
    scan = np.full(gap.capex.shape, gap.rent_u is not None)  # a kink below every level
    some_rise = bool(rising.any())
    if some_rise:
        scan |= np.any(rising & (net0 <= 0), axis=0)
    step = np.diff(levels)
    if levels.size < 2 or step[0] <= 0 or not np.allclose(step, step[0], rtol=0, atol=1e-9):
        count[...] = _open_levels(net0, netu, levels)
        return count, scan
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(net0, netu, out=ratio)  # -t_m, the threshold t_m = -net0_m/netu_m negated
    if some_rise:  # open at every level (t = +inf), or closed at every one (t = -inf)
        ratio[rising] = np.where(net0[rising] <= 0, np.inf, -np.inf)
    doubt = _count_evenly(ratio, levels, count, work)
    flat = count.ravel()
    flat[doubt] = _open_levels(net0.ravel()[doubt], netu.ravel()[doubt], levels)
    return count, scan


def _months_before(count: np.ndarray, levels: int, work: Workspace) -> np.ndarray:
    """For each of ``levels`` ascending levels, the months before the first in which the gap
    is closed, per draw, draw-major ``(S, U)`` (as :func:`_crossings` gathers), from each
    month's count of open levels ``count`` (overwritten by its running minimum over months):
    the months whose running minimum leaves more than k levels open, for the k-th level."""
    months, draws = count.shape
    for m in range(1, months):  # row by row: 10x faster than accumulate on axis 0
        np.minimum(count[m], count[m - 1], out=count[m])
    before = work.get("before", (levels, draws), np.uint8)  # at most 255 months a byte
    above = work.get("above", count.shape, np.bool_)
    highest = count.max(axis=1)  # non-increasing over months
    for k in range(levels):
        last = int(np.count_nonzero(highest > k))  # no draw has a later month open at level k
        np.greater(count[:last], k, out=above[:last])
        np.add.reduce(above[:last], axis=0, dtype=np.uint8, out=before[k])
    out = work.get("months", (draws, levels), np.intp)
    np.copyto(out.T, before)
    return out


def _gap_at(gap: Gap, at: np.ndarray, u: np.ndarray, out: np.ndarray) -> np.ndarray:
    """f(u) = net0 + u * slope at the flat indices ``at`` of the month-major arrays, into
    ``out`` (the workspace's ``"gathered"`` buffer holds the slope's)."""
    np.take(gap.net0.ravel(), at, out=out, mode="clip")  # every index is valid
    slope = np.take(gap.slope.ravel(), at, out=gap.work.get("gathered", at.shape), mode="clip")
    np.multiply(u, slope, out=slope)
    out += slope
    return out


def _crossings(gap: Gap, levels: np.ndarray, month: np.ndarray) -> np.ndarray:
    """The payback at every level (``levels`` (U,)) from the first month with f <= 0 (index
    ``month``, draw-major (S, U), H for none), gathered for all levels at once, ``(S, U)``:
    interpolated from the month before (the capex before month 0); ``inf`` without one, where
    f is still open in the last month.

    The gathers go draw by draw, every level of a draw before the next draw: a draw's months
    lie in one column of the month-major arrays, whose cache lines the next seven draws share,
    so each line is fetched into the core's cache once however far apart the levels' months
    are. Level by level, every level would fetch the arrays (megabytes, beyond the core's
    cache) once more wherever the months differ between draws, as they do where each draw has
    its own throughput (benchmarks/bench_throughput_error.py, 10,000 draws, 36 months, 20
    levels: payback took 1.2-1.4 ms more than with one throughput in every draw level by
    level, 0.1-0.4 ms more draw by draw)."""
    months, draws = gap.net0.shape
    work, cols = gap.work, np.arange(draws)[:, None]
    at = np.minimum(month, months - 1, out=work.get("at", month.shape, np.intp))
    at *= draws
    at += cols  # flat index of (month, draw)
    here = _gap_at(gap, at, levels, work.get("here", month.shape))
    at -= draws  # the month before; month 0 starts from the capex
    first = np.less(at, 0, out=work.get("first", month.shape, np.bool_))
    np.maximum(at, cols, out=at)
    prev = _gap_at(gap, at, levels, work.get("prev", month.shape))
    np.copyto(prev, gap.capex[:, None], where=first)
    return _interpolate(month, here, prev, mask=first)


def payback(gap: Gap, levels: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Fractional month at which cumulative buy cost first meets cumulative rent cost, at each
    utilisation level (``levels`` in [0, 1], any order) [month]; shape ``(U, S)``, into ``out``
    when given.

    f_m(u) = C0 + sum_{j<=m}[opex_j(1-tau) - tau*D_j]d_j - sum_{j<=m} rent_j(1-tau)d_j; the first
    month m with f_m(u) <= 0 gives t = (m - 1) + f_{m-1}/(f_{m-1} - f_m), linear inside the month;
    ``inf`` when f stays positive through the horizon; 0 when C0 <= 0.

    By the compiled kernel where it is built (see the module's docstring), else by
    :func:`_payback_numpy`; the same numbers either way.
    """
    levels = np.asarray(levels, dtype=float)
    out = np.empty((levels.size, gap.capex.size)) if out is None else out
    compiled = kernel("payback")
    if compiled is None:
        return _payback_numpy(gap, levels, out)
    order = np.argsort(levels, kind="stable")
    whole = out.flags.c_contiguous and out.dtype == np.float64
    into = out if whole else gap.work.get("payback", out.shape)
    months, draws = gap.net0.shape
    net0, slope = (np.ascontiguousarray(x, dtype=float) for x in (gap.net0, gap.slope))
    rent_u = None if gap.rent_u is None else np.ascontiguousarray(gap.rent_u, dtype=float)
    kink, capex = (
        np.ascontiguousarray(np.broadcast_to(x, (draws,)), dtype=float)
        for x in (gap.kink, gap.capex)
    )
    compiled.payback(net0, slope, rent_u, kink, capex, levels[order], order, into, months, draws)
    if not whole:
        out[...] = into
    return out


def _payback_numpy(gap: Gap, levels: np.ndarray, out: np.ndarray) -> np.ndarray:
    """:func:`payback` in numpy (the compiled kernel's reference), into ``out`` ``(U, S)``.

    Without a reservation f_m(u) = net0_m + u*netu_m, and the first month in which the gap is
    closed at the k-th smallest level is the number of months whose running minimum of open
    levels (:func:`_open_counts`) is above k: found for every level at once, then f is
    gathered at that month and the one before for every level at once, draw by draw
    (:func:`_crossings`). Draws whose gap can close at low utilisation and open again at high
    (a month with netu_m >= 0 and net0_m <= 0), and draws with a reservation, are scanned
    month by month instead.
    """
    order = np.argsort(levels, kind="stable")
    ordered = levels[order]
    count, scan = _open_counts(gap, ordered)
    t = _crossings(gap, ordered, _months_before(count, levels.size, gap.work))  # (S, U)
    rows = np.flatnonzero(scan)
    if rows.size:
        for k, u in enumerate(ordered):
            t[rows, k] = _scan(gap, rows, u)
    out[order] = t.T
    free = gap.capex <= 0.0
    if free.any():
        out[:, free] = 0.0
    return out
