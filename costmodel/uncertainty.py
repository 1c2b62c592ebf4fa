"""How far to trust the Monte Carlo answer, and what would change it.

- :func:`median_interval`: a 95 % confidence interval of a median, used for the break-even
  P50: from two order statistics for independent draws (the binomial interval), from the
  spread between replicates for a sample drawn in replicates (Woodruff's interval);
- :func:`mean_gap_se`: standard errors of the mean buy - rent gap at each level, from the
  covariances of the TCO lines' coefficients (no pass over the draws per level), and
  :func:`mean_se`, :func:`replicate_se` the standard error of any mean or statistic;
- :func:`wilson`: Wilson's score interval of a share of draws, such as P(buy cheaper);

A sample of independent replicates (``blocks``, the sizes of consecutive blocks of draws, as
:attr:`~costmodel.sampling.Sample.blocks`; ``()`` for independent draws) is measured by the
random-group method: a statistic's variance is estimated from the spread of its value between
the R replicates (Wolter, *Introduction to Variance Estimation*, 2nd ed., 2007, ch. 2), and a
95 % interval is the estimate +- t(0.975, R - 1) standard errors (:func:`critical`). For
``lhs`` and ``sobol``, whose draws within a replicate are not independent, that is what makes
the intervals hold at their stated rate while keeping the narrower widths those samplers earn.
- :func:`tornado`: each uncertain input from its P10 to its P90, the others at their medians,
  through the closed-form TCO lines (2 x inputs deterministic evaluations, remembered for the
  last few scenarios: they depend on neither the seed nor the number of draws), against
  renting or the hosted API;
- :func:`expected_value_of_information`: EVPI and the single-input EVPPI of the buy-or-rent
  (or buy-or-API) decision at one utilisation, from the per-draw gap and equal-count bins of
  each input.

Money in USD at present value, utilisation as a fraction [-]. "Never" (no break-even up to
u = 1) is ``inf`` in the arrays handled here; the :class:`~costmodel.result.Result` writes NaN.
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np

from . import carbon
from .cashflows import Lines
from .inputs import ModelInputs
from .outcomes import breakeven_utilisation
from .result import Z95, Tornado, TornadoBar
from .sides.registry import further_lines

__all__ = [
    "CONFIDENCE",
    "binomial_half_cdf",
    "critical",
    "evppi",
    "expected_value_of_information",
    "halfwidth",
    "mean_gap_se",
    "mean_se",
    "median_interval",
    "median_interval_ranks",
    "quantile_bins",
    "replicate_se",
    "select_ranks",
    "tornado",
    "wilson",
]

#: Confidence level of the break-even P50 interval [-].
CONFIDENCE = 0.95
#: The P10 and P90 a tornado moves each input between, and the median it holds the others at.
_TORNADO_Q = (0.10, 0.50, 0.90)


def binomial_half_cdf(x: int, n: int) -> float:
    """P(B <= x) for B ~ Binomial(n, 1/2) [-], for x at or below n/2.

    The terms C(n, i)/2^n for i = x, x - 1, ... follow pmf(i - 1) = pmf(i) * i/(n - i + 1);
    below the mean that ratio is under 1 and falls, so only the 64 sqrt(n) largest terms are
    summed (the next lies 128 standard deviations below x, some e^-8000 of the first); the
    first comes from log-gamma functions, whose rounding at large arguments leaves a relative
    error of about 1e-9 at a million draws, far below the ~5e-5 that P(B <= x) moves from one
    x to the next there; no scipy import.
    """
    if x < 0:
        return 0.0
    if x >= n:
        return 1.0
    log_top = math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1) - n * math.log(2)
    count = min(x + 1, 64 * math.isqrt(n) + 64)
    i = np.arange(x, x - count, -1, dtype=float)
    ratios = i[:-1] / (n - i[:-1] + 1.0)
    return math.exp(log_top) * (1.0 + float(np.cumprod(ratios).sum()))


@lru_cache(maxsize=64)
def median_interval_ranks(n: int) -> tuple[int, int] | None:
    """0-based ranks (lo, hi) of the order statistics that bound the median of n draws with at
    least 95 % confidence, or ``None`` when no pair does (n <= 5).

    With B the number of draws below the true median, B ~ Binomial(n, 1/2) for a continuous
    quantity, and [X_(j), X_(n+1-j)] (1-based) covers the median unless B < j or B > n - j:
    coverage 1 - 2 P(B <= j - 1). ``lo`` = j - 1 is the largest x with P(B <= x) <= 0.025,
    found from the normal approximation n/2 - 1.96 sqrt(n)/2 and corrected with the exact
    binomial sums. Atoms (a break-even of "always" or "never") only widen the coverage.
    """
    tail = (1.0 - CONFIDENCE) / 2.0
    if binomial_half_cdf(0, n) > tail:
        return None
    x = max(0, min(n // 2, math.floor(n / 2.0 - Z95 * math.sqrt(n) / 2.0)))
    while x > 0 and binomial_half_cdf(x, n) > tail:
        x -= 1
    while x + 1 <= n // 2 and binomial_half_cdf(x + 1, n) <= tail:
        x += 1
    return x, n - 1 - x


def median_interval(values: np.ndarray, blocks: tuple[int, ...] = ()) -> tuple[float, float]:
    """The 95 % interval (lo, hi) of the median of ``values``, which is reordered in place
    (``inf`` is ranked last and may be an end).

    Independent draws (``blocks`` empty): the distribution-free interval of two order
    statistics (:func:`median_interval_ranks`); with too few draws for one (5 or fewer) it is
    the one value when all draws agree, else (NaN, NaN). Draws in replicates (``blocks``, the
    sizes of consecutive replicates): Woodruff's interval (Woodruff 1952, "Confidence intervals
    for medians and other position measures", JASA 47): with M the sample median, the share of
    each replicate's draws below M estimates F(M) and :func:`replicate_se` gives its standard
    error s (the larger of those of the shares below and at or below M, so that a median on a
    tie of "always" or "never" draws keeps its uncertainty); with h = t(0.975, R - 1) s for
    R replicates (:func:`critical`) the interval runs from the j-th to the (n + 1 - j)-th
    smallest of the n draws, j = max(1, floor(n (1/2 - h))): the quantiles 1/2 -+ h.
    """
    n = values.shape[0]
    ranks = _woodruff_ranks(values, blocks) if blocks else median_interval_ranks(n)
    if ranks is None:
        lo, hi = float(values.min()), float(values.max())
        return (lo, hi) if lo == hi else (math.nan, math.nan)
    select_ranks(values, ranks)
    return float(values[ranks[0]]), float(values[ranks[1]])


def select_ranks(values: np.ndarray, ranks: tuple[int, ...]) -> np.ndarray:
    """``values`` (n,) reordered in place so that each of the ascending 0-based ``ranks``
    holds its order statistic, everything below it before and everything above after: one
    partition at each rank, of the part after the one before (numpy's partition at several
    ranks at once is some six times slower at a million values). Returns ``values``."""
    done = 0  # the values before this place are in place
    for rank in ranks:
        if rank >= done:
            values[done:].partition(rank - done)
            done = rank + 1
    return values


def _woodruff_ranks(values: np.ndarray, blocks: tuple[int, ...]) -> tuple[int, int]:
    """0-based ranks (lo, hi) of the ends of Woodruff's interval of the median of ``values``
    drawn in replicates of sizes ``blocks`` (:func:`median_interval`)."""
    n = values.shape[0]
    middle = float(np.partition(values, (n - 1) // 2)[(n - 1) // 2])
    starts = np.cumsum((0, *blocks[:-1]))
    se = max(
        replicate_se(np.add.reduceat(values < middle, starts) / np.asarray(blocks), blocks),
        replicate_se(np.add.reduceat(values <= middle, starts) / np.asarray(blocks), blocks),
    )
    j = max(1, math.floor(n * (0.5 - critical(len(blocks)) * se)))
    return j - 1, n - j


def replicate_se(estimates: np.ndarray, blocks: tuple[int, ...]) -> float:
    """Standard error of a statistic over a sample of R independent replicates of sizes
    ``blocks`` [draw] from its value in each, ``estimates`` (same unit), by the random-group
    method: sqrt(sum_b n_b (x_b - x_bar)^2 / ((R - 1) n)), with x_bar = sum_b n_b x_b / n and
    n = sum_b n_b; for replicates of m draws each, the standard deviation of the R values over
    sqrt(R). NaN with one replicate."""
    sizes = np.asarray(blocks, dtype=float)
    if sizes.size < 2:
        return math.nan
    x = np.asarray(estimates, dtype=float)
    n = float(sizes.sum())
    spread = x - float(sizes @ x) / n
    return math.sqrt(float(sizes @ (spread * spread)) / ((sizes.size - 1) * n))


def mean_se(values: np.ndarray, blocks: tuple[int, ...] = ()) -> float:
    """Standard error of the mean of ``values`` (same unit): s / sqrt(n) with the sample
    standard deviation s for independent draws (NaN with fewer than 2), :func:`replicate_se`
    of the replicates' means for draws in replicates of sizes ``blocks``."""
    n = values.shape[0]
    if blocks:
        starts = np.cumsum((0, *blocks[:-1]))
        return replicate_se(np.add.reduceat(values, starts) / np.asarray(blocks), blocks)
    return float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan


#: t(0.975, 15) [-], the 95 % multiple for the 16 replicates a sampler draws, kept so that a
#: run need not import scipy (tests/test_coverage.py checks it against scipy.stats.t).
_T975_15 = 2.131449545559776


@lru_cache(maxsize=8)
def critical(replicates: int | None = None) -> float:
    """The multiple of a standard error that makes a 95 % interval [-]: the normal 1.96 for
    independent draws (``replicates`` ``None``, or fewer than 2), Student's t(0.975, R - 1)
    for R replicates (2.131 for 16), whose standard errors are estimated from R values."""
    if replicates is None or replicates < 2:
        return Z95
    if replicates == 16:
        return _T975_15
    from scipy.stats import t

    return float(t.ppf(0.5 + CONFIDENCE / 2.0, replicates - 1))


#: The exact (Garwood) 97.5 % lower bounds of a Poisson mean after 1, 2 and 3 events,
#: chi2.ppf(0.025, 2x)/2 [-].
_POISSON_LOW = (0.025317807984289876, 0.24220927854396496, 0.6186721228956014)


def wilson(count: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval (lo, hi) [-] of a share with ``count`` of ``n`` draws (arrays
    of counts at once), at 95 %: with p = count/n and z = 1.96,
    (p + z^2/(2n) +- z sqrt(p(1 - p)/n + z^2/(4n^2))) / (1 + z^2/n) (Wilson 1927, JASA 22;
    ``scipy.stats.binomtest(count, n).proportion_ci(method="wilson")``). Unlike
    p +- z sqrt(p(1 - p)/n) it does not shrink to a point when every draw agrees: with all n
    it is [n/(n + z^2), 1]. Within 3 draws of either end its bound there is lowered to the
    Poisson one, x/n with x the exact lower bound of a Poisson mean after 1, 2 or 3 events
    (the modified Wilson interval of Brown, Cai and DasGupta 2001, Statistical Science 16,
    which lifts the coverage of a share of 0.9999 in 2,048 draws from 87 % to 99 %).
    """
    k = np.asarray(count, dtype=float)
    p = k / n
    z2 = Z95 * Z95
    centre = p + z2 / (2.0 * n)
    reach = Z95 * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    scale = 1.0 + z2 / n
    lo, hi = np.maximum((centre - reach) / scale, 0.0), np.minimum((centre + reach) / scale, 1.0)
    lo, hi = np.where(k == 0, 0.0, lo), np.where(k == n, 1.0, hi)  # exactly, not to rounding
    for events, poisson in enumerate(_POISSON_LOW, start=1):
        lo = np.where(k == events, np.minimum(lo, poisson / n), lo)
        hi = np.where(n - k == events, np.maximum(hi, 1.0 - poisson / n), hi)
    return lo, hi


def halfwidth(lo: float, hi: float) -> float:
    """Half the width of an interval [-]: (hi - lo)/2; 0 when both ends are "never" (the
    median is "never" with confidence); ``inf`` when only the upper end is; NaN without an
    interval."""
    if math.isinf(lo) and math.isinf(hi):
        return 0.0
    return (hi - lo) / 2.0


def _centred(x: float | np.ndarray, blocks: tuple[int, ...] = ()) -> np.ndarray | None:
    """``x`` minus its mean, or ``None`` for a fixed value (no spread); for draws in replicates
    of sizes ``blocks``, each replicate's mean of ``x`` less the overall mean, times the square
    root of the replicate's size (so that sum_b of the products of two of these is
    sum_b n_b (x_b - x_bar)(y_b - y_bar), the random-group covariance times R - 1)."""
    if np.ndim(x) == 0:
        return None
    if not blocks:
        return np.asarray(x) - np.mean(x)
    sizes = np.asarray(blocks, dtype=float)
    means = np.add.reduceat(np.asarray(x, dtype=float), np.cumsum((0, *blocks[:-1]))) / sizes
    return (means - float(sizes @ means) / sizes.sum()) * np.sqrt(sizes)


def mean_gap_se(
    buy_at_zero: float | np.ndarray,
    buy_per_u: float | np.ndarray,
    rent_at_zero: float | np.ndarray,
    rent_slope: float | np.ndarray,
    kink: float,
    levels: np.ndarray,
    draws: int,
    blocks: tuple[int, ...] = (),
) -> np.ndarray:
    """Standard error [USD] of the mean of TCO_buy - TCO_rent at each level: s/sqrt(n) with the
    sample standard deviation s (n - 1 in the denominator) for independent draws; for draws in
    replicates of sizes ``blocks``, :func:`replicate_se` of the replicates' means.

    Per draw the gap is D(u) = (b0 - r0) + b1*u - s*c(u), c(u) = max(0, u - kink), with a
    ``kink`` common to every draw, so Var D(u) = w' C w for w = (1, u, -c(u)) and C the
    covariance matrix of (b0 - r0, b1, s): three dot products for every level at once. With
    replicates C is that of the replicates' means of (b0 - r0, b1, s), each weighted by its
    size (the random-group method), and the mean gap of each is the same line in them.
    NaN with fewer than 2 draws (or replicates) when any coefficient varies; 0 when none does.
    """
    columns = [np.subtract(buy_at_zero, rent_at_zero), buy_per_u, rent_slope]
    columns = [_centred(c, blocks) for c in columns]
    levels = np.asarray(levels, dtype=float)
    weights = [np.ones_like(levels), levels, -np.maximum(0.0, levels - kink)]
    var = np.zeros_like(levels)
    if all(c is None for c in columns):
        return var
    count = len(blocks) if blocks else draws  # independent values the covariances rest on
    if count < 2:
        return np.full_like(levels, math.nan)
    for i, ci in enumerate(columns):
        for j in range(i, len(columns)):
            cj = columns[j]
            if ci is None or cj is None:
                continue
            cov = float(np.einsum("i,i->", ci, cj)) / (count - 1)  # no BLAS threads
            var += (1.0 if i == j else 2.0) * cov * weights[i] * weights[j]
    return np.sqrt(np.maximum(var, 0.0) / draws)


def quantile_bins(ranks: np.ndarray, count: int, out: np.ndarray | None = None) -> np.ndarray:
    """Bin index of each draw from its 0-based integer rank among n (``ranks``): ``count``
    bins of consecutive ranks whose sizes differ by at most one, bin = floor(rank * count / n),
    in exact integer arithmetic; into ``out`` (an intp array, which may be ``ranks``) when
    given."""
    bins = np.multiply(ranks, count, dtype=np.intp, out=out)
    bins //= ranks.shape[0]
    return bins


def evppi(gap: np.ndarray, bins: np.ndarray, count: int, best: float) -> float:
    """Single-input EVPPI [USD] of the buy-or-rent decision from the per-draw ``gap`` =
    TCO_buy - TCO_rent (or of buying against another rival, from its gap) and each draw's bin
    of that input.

    min(E buy, E rent) - E_bins[min(E[buy | bin], E[rent | bin])]; with E rent taken out of
    both terms this is ``best`` - (1/n) sum_bins min(sum of the gap in the bin, 0), where
    ``best`` = min(E gap, 0). Rounding is clipped at 0.
    """
    sums = np.bincount(bins, weights=gap, minlength=count)
    np.minimum(sums, 0.0, out=sums)
    return max(0.0, best - float(sums.sum()) / gap.shape[0])


def expected_value_of_information(gap: np.ndarray) -> tuple[float, float]:
    """(EVPI, min(E gap, 0)) [USD] from the per-draw ``gap`` = TCO_buy - TCO_rent (or
    TCO_buy - TCO_api: any rival's).

    EVPI = min(E buy, E rent) - E[min(buy, rent)] = min(E gap, 0) - E[min(gap, 0)]: what
    knowing every input before deciding would save on average. 0 when one option wins in
    every draw; never negative (rounding is clipped).
    """
    best = min(float(gap.mean()), 0.0)
    return max(0.0, best - float(np.minimum(gap, 0.0).mean())), best


def tornado(inputs: ModelInputs, level: float, versus: str = "rent") -> Tornado:
    """Each uncertain input at its P10 and at its P90 with every other at its median: the
    break-even utilisation against side ``versus`` (``"rent"``, ``"api"`` or a further side,
    :attr:`~costmodel.inputs.ModelInputs.further`) and the gap
    TCO_buy - TCO_<versus> at ``level`` at each end.

    All 2k + 1 cases (the last: every input at its median) go through the closed-form TCO
    lines at once. Rank correlations are not applied (one input moves at a time). Sorted by
    swing: each input's break-even swing |be(P90) - be(P10)| ("never" counted as 1) and gap
    swing |gap(P90) - gap(P10)| are divided by the largest of their kind among the inputs,
    and the larger of the two ratios orders the bars (ties by name).

    Nothing of the sampling enters it, so the inputs are keyed without their sampling
    settings and the cases and tornados of the last 32 are remembered (a service evaluates
    the same scenario with seed after seed).
    """
    unsampled = dataclasses.replace(
        inputs,
        samples=1,
        seed=0,
        method="random",
        correlations=(),
        target_halfwidth=None,
        max_samples=None,
    )
    return _tornado(unsampled, float(level), versus)


@lru_cache(maxsize=32)
def _cases(inputs: ModelInputs) -> tuple[tuple[str, ...], dict[str, tuple[float, float]], Lines]:
    """The uncertain inputs' names (sorted), their (P10, P90) and every side's TCO lines of
    the 2k + 1 cases: input i at its P10 in row 2i and its P90 in row 2i + 1, every other at
    its median, and all at their medians in the last row."""
    dists = inputs.distributions()
    names = sorted(name for name, d in dists.items() if not d.is_fixed)
    rows = 2 * len(names) + 1
    values: dict[str, float | np.ndarray] = {}
    ends: dict[str, tuple[float, float]] = {}
    for name, dist in dists.items():
        if dist.is_fixed:
            values[name] = dist.support()[0]
            continue
        p10, p50, p90 = (float(v) for v in dist.ppf(np.array(_TORNADO_Q)))
        column = np.full(rows, p50)
        i = names.index(name)
        column[2 * i], column[2 * i + 1] = p10, p90
        values[name], ends[name] = column, (p10, p90)
    return tuple(names), ends, further_lines(inputs, values, carbon.priced_lines(inputs, values))


@lru_cache(maxsize=32)
def _tornado(inputs: ModelInputs, level: float, versus: str) -> Tornado:
    """:func:`tornado` of inputs without sampling settings (a result for every draw count)."""
    names, ends, lines = _cases(inputs)
    rows = 2 * len(names) + 1
    rival = lines.rival(versus)
    if rival is None:
        raise ValueError(f"no {versus!r} side to set a tornado against")
    be = np.array(breakeven_utilisation(lines.buy, rival, rows), dtype=float)
    gap = np.broadcast_to(lines.buy.tco(level) - rival.tco(level), (rows,)).astype(float)
    capped = np.minimum(be, 1.0)  # "never" swings as far as u = 1
    be_swing = np.abs(capped[1:-1:2] - capped[0:-1:2])
    gap_swing = np.abs(gap[1:-1:2] - gap[0:-1:2])
    score = np.zeros(len(names))
    for swing in (be_swing, gap_swing):
        top = float(swing.max(initial=0.0))
        if top > 0:
            score = np.maximum(score, swing / top)
    order = sorted(range(len(names)), key=lambda i: (-score[i], names[i]))

    def never(x: float) -> float:
        return math.nan if math.isinf(x) else float(x)

    bars = tuple(
        TornadoBar(
            input=names[i],
            low=ends[names[i]][0],
            high=ends[names[i]][1],
            breakeven_at_low=never(be[2 * i]),
            breakeven_at_high=never(be[2 * i + 1]),
            gap_at_low=float(gap[2 * i]),
            gap_at_high=float(gap[2 * i + 1]),
        )
        for i in order
    )
    return Tornado(level, never(be[-1]), float(gap[-1]), bars)
