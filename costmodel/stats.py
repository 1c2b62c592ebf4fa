"""Statistics of Monte Carlo draws shared by every question: percentiles selected in place, bands
level by level, break-even summaries, and the ranks and bins of each input's draws that
sensitivity and the value of information rest on.

Percentiles are P10, P50 and P90 by linear interpolation between order statistics (numpy's
default ``linear`` method); "never" outcomes are +inf, and a percentile that lands on one is
NaN (reported as null). :func:`bootstrap_difference_se` gives the standard error of the
difference of two rows' P90 or CVaR95 on the same draws.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from .distributions import Discrete, Distribution
from .result import Bands, Breakeven, frozen_array
from .sampling import Sample, ascending, average_ranks
from .uncertainty import quantile_bins, select_ranks

__all__ = [
    "QUANTILES",
    "REPLICATES",
    "Drawn",
    "HELD_PAYBACKS",
    "LevelBands",
    "Paybacks",
    "Reciprocals",
    "RisingLine",
    "bootstrap_difference_se",
    "breakeven",
    "centred",
    "frontier",
    "input_bins",
    "input_ranks",
    "pearson",
    "percentiles",
    "row_stats",
    "significant",
    "uncertain",
]

#: The percentiles every band reports [-].
QUANTILES = (0.10, 0.50, 0.90)
_NAMES = ("p10", "p50", "p90")
#: Elements of one block of rows partitioned at once by :func:`row_stats`.
_BLOCK_ELEMENTS = 2_000_000
#: The share of the worst draws a CVaR averages [-] (CVaR95).
_TAIL = 0.05
#: Bootstrap replicates of :func:`bootstrap_difference_se`.
REPLICATES = 200
#: How far a bootstrap replicate's band of values reaches beyond the order statistics it reads,
#: in standard deviations of the number of resampled draws below them.
_REACH_SD = 8.0
#: Bytes of the working arrays of one chunk of bootstrap replicates (about, from above).
_CHUNK_BYTES = 32 * 2**20


class Drawn(Protocol):
    """What a simulation keeps of its draws: its ``inputs`` (with ``distributions()``), every
    input's ``draws`` by name and the ranks its ``sample`` knew."""

    inputs: Any
    draws: dict[str, Any]
    sample: Sample


def uncertain(inputs: Any) -> list[str]:
    """The names of the inputs that vary between draws, sorted."""
    return sorted(name for name, d in inputs.distributions().items() if not d.is_fixed)


def percentiles(values: np.ndarray) -> dict[str, Any]:
    """P10/P50/P90 by linear interpolation between order statistics, selected in place
    (``values`` is reordered): a partition at P50, then one in each half, and each upper
    neighbour the smallest value between its order statistic and the next. Same numbers as
    sorting, at about half the cost. A percentile that touches +inf (or NaN) is NaN.

    ``values`` of shape ``(n,)`` gives floats; ``(K, n)`` gives ``(K,)`` arrays, row by row
    (the same numbers, one numpy call per step for all rows).

    The selection stays in numpy: on x86 with AVX2 or AVX-512 its partition is vectorised
    (x86-simd-sort), about 9 us for 10,000 values. An exact selection in portable C (brackets
    from a strided sample, counting passes, a selection among the values inside them) took
    about twice as long per row at 10,000 and at a million draws (issue 32): copying out the
    bracketed values and selecting among them one value at a time costs more than numpy's
    vectorised passes."""
    order = _partitioned(values)
    if values.ndim == 1:
        return {name: _between(values, *o) for name, o in zip(_NAMES, order, strict=True)}
    out = {}
    with np.errstate(invalid="ignore"):  # inf - inf: a percentile on "never", NaN below
        for name, (frac, lo, bound) in zip(_NAMES, order, strict=True):
            v = values[:, lo]
            if frac != 0.0:
                v = v + frac * (np.fmin.reduce(values[:, lo + 1 : bound + 1], axis=1) - v)
            out[name] = np.where(np.isfinite(v), v, math.nan)
    return out


def _partitioned(values: np.ndarray) -> tuple[tuple[float, int, int], ...]:
    """Reorder ``values`` (``(n,)``, or ``(K, n)`` row by row) so that each order statistic
    :func:`percentiles` reads is in place and each upper neighbour lies between it and the
    next (:func:`_order_statistics`, which is returned): a partition at P50, then one in each
    half (fewer than 16 values are sorted)."""
    n = values.shape[-1]
    order = _order_statistics(n)
    if n < 16:  # too few to part: sorted, each neighbour is in place
        values.sort(axis=-1)
    else:
        (_, low10, _), (_, low50, _), (_, low90, _) = order
        values.partition(low50, axis=-1)
        values[..., :low50].partition(low10, axis=-1)
        values[..., low50 + 1 :].partition(low90 - low50 - 1, axis=-1)
    return order


def _from_order(n: int, kth: Callable[[int], Any]) -> dict[str, Any]:
    """P10/P50/P90 of ``n`` values as :func:`percentiles` finds them (NaN where one is not
    finite), from ``kth(k)``, the k-th smallest value (0-based): a float, or a fresh array
    of the k-th smallest of several sets of ``n`` values (then arrays of their percentiles)."""
    out = {}
    for name, (frac, lo, _) in zip(_NAMES, _order_statistics(n), strict=True):
        v = kth(lo)
        if frac != 0.0:
            v += frac * (kth(lo + 1) - v)
        if np.ndim(v):
            out[name] = np.where(np.isfinite(v), v, math.nan)
        else:
            out[name] = v if math.isfinite(v) else math.nan
    return out


def _between(values: np.ndarray, frac: float, lo: int, bound: int) -> float:
    """One percentile of partitioned ``values``: the order statistic at ``lo`` and ``frac`` of
    the way to the next; NaN sorts last, so the next is the smallest non-NaN up to ``bound``
    (NaN only if all are). NaN when it touches +inf (or NaN)."""
    v = float(values[lo])
    if frac != 0.0:
        v += frac * (float(np.fmin.reduce(values[lo + 1 : bound + 1])) - v)
    return v if math.isfinite(v) else math.nan


@lru_cache(maxsize=64)
def _order_statistics(n: int) -> tuple[tuple[float, int, int], ...]:
    """For each of P10, P50 and P90 among ``n`` values: the weight of the upper neighbour, the
    0-based rank of the lower order statistic and the last rank the upper neighbour can sit at
    once :func:`percentiles` has partitioned (the next partition point, or the end)."""
    positions = [q * (n - 1) for q in QUANTILES]
    low = [math.floor(p) for p in positions]
    bounds = [min(lo + 1, n - 1) for lo in low] if n < 16 else [*low[1:], n - 1]
    return tuple((p - lo, lo, b) for p, lo, b in zip(positions, low, bounds, strict=True))


class LevelBands:
    """Percentiles (and means) of one quantity, filled level by level."""

    def __init__(self, levels: int, mean: bool = True) -> None:
        self.q = {k: np.empty(levels) for k in ("p10", "p50", "p90")}
        self.mean = np.empty(levels) if mean else None

    def put(
        self, j: int, values: np.ndarray, scale: float = 1.0, q: dict[str, float] | None = None
    ) -> None:
        """Level ``j`` from ``values`` (reordered in place, unless their percentiles ``q`` are
        given), divided by ``scale``."""
        if self.mean is not None:
            self.mean[j] = values.mean() / scale
        self.put_percentiles(j, percentiles(values) if q is None else q, scale)

    def put_rows(self, values: np.ndarray) -> None:
        """Every level from ``values`` (levels, draws), partitioned row by row in place: the
        numbers :meth:`put` gives level by level, one call a step for every level."""
        if self.mean is not None:
            self.mean[:] = values.mean(axis=1)
        self.put_percentiles(slice(None), percentiles(values))

    def put_percentiles(self, j: Any, q: dict[str, Any], scale: Any = 1.0) -> None:
        """Level ``j``'s percentiles from ``q`` (as :func:`percentiles` gives them), divided
        by ``scale``; the mean is left as it was. ``j`` may select several levels (a slice,
        indices or a mask), ``q``'s values and ``scale`` then arrays of theirs."""
        for k, v in q.items():
            self.q[k][j] = v / scale

    def times(self, j: int, other: LevelBands, factor: float) -> None:
        """Level ``j`` as ``other``'s first level times ``factor`` >= 0: the mean and
        percentiles of a quantity proportional to one already summarised."""
        if self.mean is not None:
            self.mean[j] = other.mean[0] * factor
        for k, q in self.q.items():
            q[j] = other.q[k][0] * factor

    def scaled(self, j: int, other: LevelBands, scale: float) -> None:
        """Level ``j``'s percentiles as ``other``'s at that level divided by ``scale`` (no
        value, NaN, when ``scale`` is 0): the percentiles of a quantity over a constant."""
        for k, q in self.q.items():
            q[j] = other.q[k][j] / scale if scale else math.nan

    def bands(self) -> Bands:
        mean = None if self.mean is None else frozen_array(self.mean)
        return Bands(**{k: frozen_array(v) for k, v in self.q.items()}, mean=mean)

    @classmethod
    def of_rows(cls, values: np.ndarray) -> Bands:
        """The percentiles of each row of ``values`` (K x draws), without means; ``values`` is
        partitioned row by row in place."""
        return Bands(**{k: frozen_array(v) for k, v in percentiles(values).items()}, mean=None)


class Reciprocals:
    """The percentiles of ``c / (u * w)`` over the draws, for any constant ``c`` and ``u`` > 0,
    from the positive draws ``w`` (n,) sorted once: dividing a constant by a positive
    number is monotone in floating point too, so the k-th smallest ratio is ``c`` over ``u``
    times the k-th largest ``w`` (the k-th smallest when ``c`` < 0). The same numbers as
    :func:`percentiles` of the ratios (a quantity of the same amount in every draw over each
    draw's work, say), without an array of them per ``(c, u)``."""

    def __init__(self, w: np.ndarray) -> None:
        n = w.size
        ranks = {r for _, lo, _ in _order_statistics(n) for r in (lo, min(lo + 1, n - 1))}
        ordered = np.sort(w)  # faster than a partition at several ranks
        self._n, self._w = n, {k: float(ordered[k]) for k in ranks | {n - 1 - r for r in ranks}}
        self.smallest = float(ordered[0])

    def percentiles(self, c: Any, u: Any) -> dict[str, Any]:
        """P10/P50/P90 of ``c / (u * w)`` as :func:`percentiles` finds them (NaN where one
        is not finite); ``u * self.smallest`` must be above 0. ``c`` and ``u`` floats, or
        arrays (broadcast together): the percentiles at each pair, as arrays, the same
        numbers pair by pair."""
        last, several = self._n - 1, bool(np.ndim(c) or np.ndim(u))
        if several:
            c, u = np.broadcast_arrays(np.asarray(c, dtype=float), np.asarray(u, dtype=float))
        else:
            c = float(c)

        def ratio(k: int) -> Any:  # the k-th smallest ratio (of each pair)
            if several:
                return c / (u * np.where(c >= 0.0, self._w[last - k], self._w[k]))
            return c / (u * self._w[last - k if c >= 0.0 else k])

        with np.errstate(invalid="ignore"):  # inf - inf: NaN, as between floats
            return _from_order(self._n, ratio)


class RisingLine:
    """The percentiles of ``a + b * u`` over the draws at any u >= 0 from one sort, for draws
    whose ``a`` and ``b`` (n,) rise together (an order of the draws in which neither falls:
    each a multiple of one drawn factor, say): then ``a + b * u`` does not fall in that order
    either, in floating point too, and its k-th smallest value is that of the k-th draw.
    The same numbers as :func:`percentiles` of ``a + b * u`` computed draw by draw."""

    def __init__(self, n: int, ab: dict[int, tuple[float, float]]) -> None:
        self._n, self._ab = n, ab  # (a, b) of the k-th draw in the order, by the ranks read

    @classmethod
    def sloped(cls, a: float, b: np.ndarray) -> RisingLine:
        """The line of an ``a`` the same in every draw and each draw's ``b`` (reordered in
        place): the order of ``b``, which ``a + b * u`` keeps at every u >= 0, from one
        selection of the order statistics read (no sort)."""
        return cls(b.size, {k: (float(a), v) for k, v in _ranked(b).items()})

    @classmethod
    def of(cls, a: np.ndarray, b: np.ndarray) -> RisingLine | None:
        """The line of ``a`` and ``b``, or ``None`` where they do not rise together (or one
        holds a NaN)."""
        order = ascending(a)
        for x in (a, b):
            ordered = x[order]  # one at a time: a million draws hold 8 MB each
            if not np.all(ordered[1:] >= ordered[:-1]):
                return None
        n = a.size
        ranks = {r for _, lo, _ in _order_statistics(n) for r in (lo, min(lo + 1, n - 1))}
        return cls(n, {k: (float(a[order[k]]), float(b[order[k]])) for k in ranks})

    def percentiles(self, u: float) -> dict[str, float]:
        """P10/P50/P90 of ``a + b * u`` (NaN where one is not finite)."""

        def value(k: int) -> float:
            a, b = self._ab[k]
            return b * u + a

        return _from_order(self._n, value)


def _ranked(values: np.ndarray) -> dict[int, float]:
    """The order statistics :func:`percentiles` reads of ``values`` (n,), by 0-based rank:
    each percentile's lower one and, where it interpolates, the next; ``values`` is reordered
    (:func:`_partitioned`)."""
    out = {}
    for frac, lo, bound in _partitioned(values):
        out[lo] = float(values[lo])
        if frac != 0.0:
            out[lo + 1] = float(np.fmin.reduce(values[lo + 1 : bound + 1]))
    return out


#: The code of a payback month that is no number of months ("never": +inf, or NaN).
_NEVER = np.iinfo(np.uint16).max
#: Levels x draws of payback months :class:`Paybacks` holds as they are; more are held as codes.
HELD_PAYBACKS = 1_000_000


class Paybacks:
    """Every draw's payback month at every level [month] (U, S; inf: never), as the summary
    reads them: held as they are up to :data:`HELD_PAYBACKS` of them, else as 2-byte codes that
    order as the months do, floor(t * 65534 / H) ("never" 65535), a quarter of the memory (a
    million draws at 20 levels: 40 MB, not 160). A level's percentiles are then selected on its
    codes, and each order statistic they read is the exact month of one of the draws that share
    the code at its rank: ``exact`` computes the months of chosen draws again (ascending draw
    indices -> their months (U, k), the numbers the evaluation made; ``chunk`` draws at a
    time)."""

    def __init__(
        self,
        levels: int,
        draws: int,
        horizon: int,
        chunk: int,
        exact: Callable[[np.ndarray], np.ndarray],
    ) -> None:
        self._exact, self._chunk, self._scale = exact, chunk, (_NEVER - 1) / horizon
        held = levels * draws <= HELD_PAYBACKS
        self.held = np.empty((levels, draws)) if held else None
        self.codes = None if held else np.empty((levels, draws), np.uint16)

    def put(self, rows: slice, t: np.ndarray) -> None:
        """The months ``t`` (U, n) of the draws ``rows`` (overwritten when held as codes)."""
        if self.codes is None:
            self.held[:, rows] = t
            return
        self._code(t, self.codes[:, rows])

    def _code(self, t: np.ndarray, out: np.ndarray) -> np.ndarray:
        """The codes of months ``t`` (0 <= t <= H, or not a number: never) into ``out``
        (``t`` is overwritten): monotone, as a product with a positive number and the floor
        (a truncation, t being >= 0) are."""
        np.multiply(t, self._scale, out=t)
        np.fmin(t, _NEVER, out=t)  # inf and NaN: never
        np.copyto(out, t, casting="unsafe")
        return out

    def months(self) -> np.ndarray:
        """Every draw's months (U, S): those held, or computed again (a new array)."""
        if self.held is not None:
            return self.held
        return self._months_of(np.arange(self.codes.shape[1]))

    def _months_of(self, draws: np.ndarray) -> np.ndarray:
        """The exact months (U, k) of the ascending draw indices ``draws``, computed again
        ``chunk`` draws at a time."""
        out = np.empty((self.codes.shape[0], draws.size))
        for start in range(0, draws.size, self._chunk):
            stop = min(draws.size, start + self._chunk)
            out[:, start:stop] = self._exact(draws[start:stop])
        return out

    def summary(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """P10/P50/P90 of every level [month] (NaN where one lands on "never") and the share
        of draws that never pay back, per level."""
        if self.codes is None:
            block = np.array(self.held)
            draws = block.shape[1]
            never = (draws - np.count_nonzero(np.isfinite(block), axis=1)) / draws
            return percentiles(block), never
        levels, draws = self.codes.shape
        never = np.empty(levels)
        ranked, asked = [], {}  # each level's {rank: code}; (level, code) -> (below, draws)
        row = np.empty(draws, np.uint16)
        for j, codes in enumerate(self.codes):
            never[j] = np.count_nonzero(codes == _NEVER) / draws
            np.copyto(row, codes)
            ranked.append({k: int(c) for k, c in _ranked(row).items()})
            for code in set(ranked[j].values()) - {_NEVER}:
                asked[j, code] = np.count_nonzero(codes < code), np.flatnonzero(codes == code)
        if not asked:  # every order statistic read is "never"
            return _from_codes(levels, draws, lambda j, k: math.inf), never
        union = np.unique(np.concatenate([idx for _, idx in asked.values()]))
        if union.size > draws // 4:  # codes shared by many draws (identical draws, say)
            return self._summary_of_months(never)
        exact = self._months_of(union)
        check = self._code(np.array(exact), np.empty(exact.shape, np.uint16))
        sorted_at = {}
        for (j, code), (below, idx) in asked.items():
            at = np.searchsorted(union, idx)
            if np.any(check[j, at] != code):  # not the months that were coded
                return self._summary_of_months(never)
            sorted_at[j, code] = below, np.sort(exact[j, at])

        def kth(j: int, k: int) -> float:
            code = ranked[j][k]
            if code == _NEVER:
                return math.inf
            below, ordered = sorted_at[j, code]
            return float(ordered[k - below])

        return _from_codes(levels, draws, kth), never

    def _summary_of_months(self, never: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The percentiles of every level from the exact months of every draw, level by
        level, and ``never``."""
        months = self.months()
        out = {name: np.empty(months.shape[0]) for name in _NAMES}
        for j, row in enumerate(months):
            for name, v in percentiles(row).items():
                out[name][j] = v
        return out, never


def _from_codes(levels: int, draws: int, kth: Callable[[int, int], float]) -> dict[str, np.ndarray]:
    """P10/P50/P90 of each level from ``kth(level, k)``, the k-th smallest month of a level."""
    out = {name: np.empty(levels) for name in _NAMES}
    for j in range(levels):
        for name, v in _from_order(draws, lambda k, j=j: kth(j, k)).items():
            out[name][j] = v
    return out


def input_ranks(sim: Drawn, name: str, dist: Distribution | None = None) -> np.ndarray:
    """1-based ranks of input ``name``'s draws, from the sampler's ranks where it knows them;
    ``dist`` is the input's distribution (looked up in ``sim.inputs`` when not given)."""
    values = np.asarray(sim.draws[name])
    known = sim.sample.ranks.get(name)
    if known is None:
        return average_ranks(values)
    dist = dist if dist is not None else sim.inputs.distributions()[name]
    if isinstance(dist, Discrete):  # ties share their mean rank
        order = np.empty_like(known)
        order[known] = np.arange(known.size)
        return average_ranks(values, order)
    return known + 1.0


#: Elements of one block of :func:`_dot`: OpenBLAS computes a dot product of more than 10,000
#: elements on several threads, whose spinning after each call cost more CPU than the sums.
_DOT_BLOCK = 10_000


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """``x @ y`` in blocks of :data:`_DOT_BLOCK` elements, their sums added exactly: the one
    BLAS call of ``x @ y`` up to that length, on one thread; beyond it the same sum on every
    machine (a threaded sum depends on the number of threads)."""
    if x.size <= _DOT_BLOCK:
        return float(x @ y)
    return math.fsum(
        float(x[i : i + _DOT_BLOCK] @ y[i : i + _DOT_BLOCK]) for i in range(0, x.size, _DOT_BLOCK)
    )


def centred(x: np.ndarray) -> tuple[np.ndarray, float]:
    """``x`` less its mean (``x`` itself, changed in place), and the sum of the squares of
    that: a series of ranks centred once for every :func:`pearson` it enters."""
    x -= x.mean()
    return x, _dot(x, x)


def pearson(x: tuple[np.ndarray, float], y: tuple[np.ndarray, float]) -> float:
    """Pearson correlation of two :func:`centred` series (of ranks: Spearman's); 0 when one
    is constant."""
    denom = math.sqrt(x[1] * y[1])
    return _dot(x[0], y[0]) / denom if denom > 0 else 0.0


def input_bins(
    sim: Drawn, name: str, ranks: np.ndarray, count: int, dist: Distribution | None = None
) -> tuple[np.ndarray, int]:
    """Each draw's bin of input ``name`` and the number of bins: ``count`` equal-count bins of
    consecutive ranks (``ranks`` 1-based, or the sampler's own 0-based ranks where it knows
    them), or one bin per value for a discrete input (its draws tie); ``dist`` as for
    :func:`input_ranks`."""
    dist = dist if dist is not None else sim.inputs.distributions()[name]
    if isinstance(dist, Discrete):
        values = np.unique(np.asarray(dist.values, dtype=float))
        return np.searchsorted(values, sim.draws[name]), values.size
    known = sim.sample.ranks.get(name)
    if known is not None:
        return quantile_bins(known, count), count
    rank0 = ranks.astype(np.intp)  # from the 1-based ranks (whole or halves): truncated, less 1
    rank0 -= 1
    return quantile_bins(rank0, count, out=rank0), count


def breakeven(values: np.ndarray) -> Breakeven:
    """Break-even utilisation of every draw [-] (+inf: never) summarised: the mean over the
    draws that break even (NaN when none does), P10/P50/P90 and the shares of draws that break
    even at u = 0 (``prob_always``) and never (``prob_never``). ``values`` is not changed."""
    n = values.shape[0]
    finite = np.isfinite(values)
    return Breakeven(
        mean=float(values[finite].mean()) if finite.any() else math.nan,
        **percentiles(np.array(values)),
        prob_always=float(np.count_nonzero(values == 0.0) / n),
        prob_never=float(np.count_nonzero(~finite) / n),
    )


def row_stats(cost: np.ndarray, tail: float = _TAIL) -> dict[str, np.ndarray]:
    """Mean, P10/P50/P90 and CVaR (the mean of the worst ceil(``tail`` * n) of n draws; CVaR95
    with the default tail) of each row of ``cost`` (rows x draws), by name; percentiles
    interpolate linearly between order statistics as :func:`percentiles` does (NaN where one is
    not finite).

    Each block of rows is copied and selected one rank at a time, as :func:`percentiles` does
    (the median, then P10 below it and P90 above it), then the tail above P90: each partition
    reads only the part the one before left, some five times less than partitioning at every
    rank at once. Blocks of about :data:`_BLOCK_ELEMENTS` bound the memory of the copy.
    """
    rows, n = cost.shape
    worst = max(1, math.ceil(tail * n))
    first = n - worst
    _, low90, _ = _order_statistics(n)[-1]
    out = {name: np.empty(rows) for name in ("mean", "p10", "p50", "p90", "cvar95")}
    step = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, rows, step):
        block = slice(start, min(rows, start + step))
        out["mean"][block] = cost[block].mean(axis=1)
        part = cost[block].copy()
        for name, v in percentiles(part).items():
            out[name][block] = v
        if n >= 16 and first > low90 + 1:  # else sorted, or the tail begins in place
            part[:, low90 + 1 :].partition(first - low90 - 1, axis=1)
        out["cvar95"][block] = part[:, first:].mean(axis=1)
    return out


def _reads(objective: str, n: int) -> tuple[int, int, float]:
    """Where ``objective`` reads n sorted draws, as :func:`row_stats` computes it: ``p90``
    interpolates between the order statistics at 0-based positions (first, last) with the
    weight of the upper one (one statistic when 0.9 (n - 1) is whole); ``cvar95`` averages
    every draw from position first = n - ceil(0.05 n) to the end (last = first, weight 0)."""
    if objective == "p90":
        position = QUANTILES[-1] * (n - 1)
        lo = math.floor(position)
        frac = position - lo
        return lo, lo + 1 if frac != 0.0 else lo, frac
    if objective == "cvar95":
        first = n - max(1, math.ceil(_TAIL * n))
        return first, first, 0.0
    raise ValueError(f"no bootstrap of {objective!r}; valid: p90, cvar95")


@dataclass(frozen=True, eq=False)
class _Cells:
    """The n draws of two rows by their place for each, for the bootstrap of a statistic.

    Each row's band holds its draws from its order statistic ``reach`` ranks below the first
    position the statistic reads (:func:`_reads`) to the one ``reach`` above the last, ties
    with either end included; a draw is below (0), in (1) or above (2) each row's band, and
    in cell 3 * (its place for the first row) + (its place for the second). A replicate sorts
    each row's resampled draws in its band and counts those below; a CVaR adds up those above
    it too. ``sizes`` (9,) are the cells' numbers of draws and ``values`` each cell's values
    of its draws for (the first row, the second) where a replicate needs them one by one,
    ``None`` where it only counts them.
    """

    objective: str
    n: int
    sizes: np.ndarray
    values: tuple[tuple[np.ndarray | None, np.ndarray | None], ...]

    def place(self, row: int, cell: int) -> int:
        """The place of the draws of ``cell`` for ``row`` (0 first, 1 second)."""
        return cell // 3 if row == 0 else cell % 3

    def drawn(self) -> list[int]:
        """The cells whose draws a replicate picks one by one."""
        return [c for c, pair in enumerate(self.values) if any(v is not None for v in pair)]


def _cells(first: np.ndarray, second: np.ndarray, objective: str, reach: int) -> _Cells:
    """The cells of ``first`` and ``second`` (n,) for ``objective``, their bands ``reach``
    ranks beyond the positions it reads."""
    n = first.size
    k0, k1, _ = _reads(objective, n)
    ends = (max(0, k0 - reach), min(n - 1, k1 + reach))
    cell = np.zeros(n, dtype=np.int8)
    for weight, x in ((3, first), (1, second)):
        part = select_ranks(np.array(x), ends)
        cell[x >= part[ends[0]]] += weight  # in the band or above it
        cell[x > part[ends[1]]] += weight  # above it
    sizes = np.bincount(cell, minlength=9)
    needed = {1} if objective == "p90" else {1, 2}  # a CVaR adds up the draws above
    values = []
    for c in range(9):
        wanted = [place in needed and sizes[c] > 0 for place in (c // 3, c % 3)]
        draws = np.flatnonzero(cell == c) if any(wanted) else None
        pair = zip((first, second), wanted, strict=True)
        values.append(tuple(x[draws] if w else None for x, w in pair))
    return _Cells(objective, n, sizes, tuple(values))


def _replicate_differences(
    cells: _Cells, counts: np.ndarray, picks: dict[int, np.ndarray]
) -> np.ndarray | None:
    """The second row's statistic minus the first's in each of b replicates, from ``counts``
    (b, 9), how many of each replicate's n resampled draws fall in each cell, and ``picks``,
    which draws of each cell of :meth:`_Cells.drawn` those are (positions in the cell,
    replicate after replicate); ``None`` when some statistic would read outside its band.

    In a replicate, a row's sorted resample is the draws below its band, then those in it,
    then those above: position k is the (k - below)-th smallest resampled draw in the band.
    """
    b, n = counts.shape[0], cells.n
    k0, k1, frac = _reads(cells.objective, n)
    rows = np.arange(b)
    replicate = {c: np.repeat(rows, counts[:, c]) for c in picks}
    stat = []
    for j in range(2):
        place = np.array([cells.place(j, c) for c in range(9)])
        below = counts[:, place == 0].sum(axis=1)
        size = counts[:, place == 1].sum(axis=1)
        if np.any(below > k0) or np.any(k1 - below >= size):
            return None
        width = int(size.max())
        band = np.full((b, width), -np.inf)  # the band's draws, after -inf to the full width
        filled = np.zeros(b, dtype=np.int64)
        tail = np.zeros(b)
        for c, r in replicate.items():
            values = cells.values[c][j]
            if place[c] == 1:
                column = filled[r] + np.arange(r.size) - (np.cumsum(counts[:, c]) - counts[:, c])[r]
                band.ravel()[r * width + column] = values[picks[c]]
                filled += counts[:, c]
            elif values is not None:  # above a CVaR's band: all in its tail
                tail += np.bincount(r, weights=values[picks[c]], minlength=b)
        band.sort(axis=1)
        at = (width - size - below + k0)[:, None]  # the column of position k0
        if cells.objective == "cvar95":  # the band from position k0 on, and all above it
            tail += np.where(np.arange(width) >= at, band, 0.0).sum(axis=1)
            stat.append(tail / (n - k0))
            continue
        v = np.take_along_axis(band, at, axis=1)[:, 0]
        if frac != 0.0:
            v = v + frac * (np.take_along_axis(band, at + 1, axis=1)[:, 0] - v)
        stat.append(v)
    return stat[1] - stat[0]


def _replicates(cells: _Cells, rng: np.random.Generator, replicates: int) -> np.ndarray | None:
    """``replicates`` bootstrap differences of the two rows of ``cells``, in chunks of
    :data:`_CHUNK_BYTES` (about 64 bytes a draw picked one by one); ``None`` when one reads
    outside a band."""
    drawn = cells.drawn()
    picked = max(1, int(cells.sizes[drawn].sum()))
    step = max(1, _CHUNK_BYTES // (64 * picked))
    p = cells.sizes / cells.n
    out = np.empty(replicates)
    for start in range(0, replicates, step):
        b = min(step, replicates - start)
        counts = rng.multinomial(cells.n, p, size=b)
        picks = {c: rng.integers(0, cells.sizes[c], size=int(counts[:, c].sum())) for c in drawn}
        d = _replicate_differences(cells, counts, picks)
        if d is None:
            return None
        out[start : start + b] = d
    return out


def bootstrap_difference_se(
    first: np.ndarray,
    second: np.ndarray,
    objective: str,
    rng: np.random.Generator,
    replicates: int = REPLICATES,
) -> float:
    """The bootstrap standard error of objective(``second``) - objective(``first``), two rows
    of n draws of the same inputs, with ``objective`` ``p90`` or ``cvar95`` as
    :func:`row_stats` computes it [the rows' unit]: each of ``replicates`` (at least 2)
    replicates resamples the n draws with replacement, the same draws for both rows, and the
    standard error is the standard deviation of the replicate differences (B - 1 in the
    denominator).

    A replicate's statistic reads a few order statistics (or the top 5 %) of its resample, so
    only the resampled draws in a band around them are drawn one by one: of the n resampled
    draws, how many fall in either row's band and in each region outside (below or above each
    band) is multinomial, and those in the bands are uniform among them. That is the same
    resampling in law, at a cost in the band's size rather than in n. A band reaches
    :data:`_REACH_SD` standard deviations of the count of resampled draws below the statistic
    beyond it; should a replicate read outside one (about 1e-15 of them), every replicate is
    drawn again with bands twice as wide, up to all draws.
    """
    if replicates < 2:
        raise ValueError(f"a bootstrap needs at least 2 replicates, got {replicates}")
    n = first.size
    k0 = _reads(objective, n)[0]
    q = k0 / n
    reach = math.ceil(_REACH_SD * math.sqrt(n * q * (1.0 - q))) + 1
    while True:
        diffs = _replicates(_cells(first, second, objective, reach), rng, replicates)
        if diffs is not None:
            return float(np.std(diffs, ddof=1))
        reach *= 2


def significant(x: np.ndarray, digits: int = 12) -> np.ndarray:
    """``x`` rounded to ``digits`` significant digits (0, inf and NaN as they are)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = 10.0 ** (digits - 1 - np.floor(np.log10(np.abs(x))))
        out = np.round(x * scale) / scale
    return np.where(np.isfinite(out), out, x)


def frontier(mean: np.ndarray, p90: np.ndarray, ties: bool = False) -> np.ndarray:
    """Whether each candidate is on the frontier: no other has both a lower mean and a lower
    P90 cost. Sorted by mean, a candidate is beaten when the least P90 among the candidates of
    strictly lower mean is below its own (a NaN neither beats nor is beaten).

    With ``ties``, a candidate is also beaten by one as good on one figure and better on the
    other (ties in 12 significant digits, below rounding noise; equal candidates both stay):
    of candidates of equal emissions only the cheapest is on a cost-versus-carbon frontier."""
    if ties:
        mean, p90 = significant(mean), significant(p90)
    order = np.lexsort((p90, mean)) if ties else np.argsort(mean, kind="stable")
    m, p = mean[order], p90[order]
    least = np.concatenate(([np.inf], np.fmin.accumulate(p)))  # least[i]: min of p[:i]
    lower = np.searchsorted(m, m, side="left")  # how many have a strictly lower mean
    beaten = np.zeros(mean.size, dtype=bool)
    over = least[lower] <= p if ties else least[lower] < p
    if ties:  # equal mean, lower second figure: the first of its run of equal means is lower
        over |= p[lower] < p
    beaten[order] = over & ~np.isnan(m)
    return ~beaten
