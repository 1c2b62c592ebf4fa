"""The Monte Carlo orchestrator: sample inputs, evaluate the equations, summarise.

Each uncertain input is sampled once per draw and held for the whole horizon; fixed inputs stay
scalars. The TCO of each side is a line in utilisation (closed-form monthly sums), so break-even
and the TCO bands need no month axis; payback needs the cumulative cost by month, built one chunk
of draws at a time so that (draws x months) arrays stay a few tens of MB whatever the sample
count. Results are summarised level by level as mean, P10, P50 and P90 (linear interpolation
between order statistics, selected in place); "never" outcomes rank as +inf and a percentile that
lands on one is NaN in the :class:`~costmodel.result.Result`.
"""

from __future__ import annotations

import math
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .cashflows import (
    BuyDraws,
    BuyLine,
    RentDraws,
    RentLine,
    Terms,
    Value,
    Workspace,
    buy_line,
    cumulative_cost,
    gap,
    rent_line,
    throughput,
)
from .distributions import Discrete
from .inputs import ModelInputs
from .outcomes import breakeven_utilisation, payback
from .result import (
    Bands,
    Breakeven,
    CumulativeCost,
    Driver,
    Payback,
    Result,
    Sensitivity,
    Sides,
    frozen_array,
)
from .sampling import Sample, average_ranks, induce_rank_correlation, sample
from .verdict import verdict

__all__ = ["CUMULATIVE_DRAWS", "Phases", "Progress", "Simulation", "simulate", "summarise"]

#: Elements of one chunk's (draws x months) arrays.
_CHUNK_ELEMENTS = 2_000_000
#: Draws used for the cumulative-cost-by-month summary (the first ones; the chart needs no more).
CUMULATIVE_DRAWS = 20_000
_QUANTILES = (0.10, 0.50, 0.90)

#: A callback given the share of a simulation done, from 0 to 1.
Progress = Callable[[float], None]


@dataclass
class Phases:
    """CPU seconds of each phase of an evaluation and, while ``tracemalloc`` traces, the peak
    of traced memory in it [byte] (numpy reports its arrays to tracemalloc).

    Phases: ``sample`` (percentiles and draws), ``lines`` (TCO lines and break-even),
    ``payback`` (cumulative cost by month), ``summary`` (bands, shares, sensitivity).
    """

    seconds: dict[str, float] = field(default_factory=dict)
    peak_bytes: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.start()

    def start(self) -> None:
        """Start timing the next phase."""
        self._since = time.process_time()
        if tracemalloc.is_tracing():
            tracemalloc.reset_peak()

    def mark(self, name: str) -> None:
        """End phase ``name`` and start the next."""
        self.seconds[name] = self.seconds.get(name, 0.0) + time.process_time() - self._since
        if tracemalloc.is_tracing():
            peak = tracemalloc.get_traced_memory()[1]
            self.peak_bytes[name] = max(self.peak_bytes.get(name, 0), peak)
        self.start()


@dataclass(frozen=True, eq=False)
class Simulation:
    """Per-draw outcomes. Shapes: S draws, U utilisation levels, H months.

    ``buy``, ``rent``: the TCO lines of each draw [USD]; ``payback`` [month] (U, S), inf = never;
    ``breakeven`` [-] (S,), inf = never; ``own_throughput`` [reference GPU-hours/hour], a float
    or (S,); ``cum_buy``, ``cum_rent`` [USD] month-major (H + 1, min(S, CUMULATIVE_DRAWS)) at
    ``report_utilisation``; ``draws`` every input by name (floats for fixed ones) and ``sample``
    the ranks the sampler knew (its percentiles are let go once mapped to draws).
    """

    inputs: ModelInputs
    draws: dict[str, Value]
    sample: Sample
    buy: BuyLine
    rent: RentLine
    payback: np.ndarray
    breakeven: np.ndarray
    own_throughput: Value
    report_utilisation: float
    cum_buy: np.ndarray
    cum_rent: np.ndarray

    def buy_tco(self, u: float) -> np.ndarray:
        """TCO_buy [USD] of every draw at utilisation ``u``, a new ``(S,)`` array."""
        return _per_draw(self.buy.tco(u), self.inputs.samples)

    def rent_tco(self, u: float) -> np.ndarray:
        """TCO_rent [USD] of every draw at utilisation ``u``, a new ``(S,)`` array."""
        return _per_draw(self.rent.tco(u), self.inputs.samples)


def _per_draw(x: Value, draws: int) -> np.ndarray:
    """A writable ``(draws,)`` float array of ``x`` (a float is repeated)."""
    out = np.empty(draws)
    out[...] = x
    return out


def _draw(inputs: ModelInputs) -> tuple[dict[str, Value], Sample]:
    """Every input's draws by name, and the ranks the sampler knows (the percentiles are let
    go once mapped). A fixed input (a point mass, such as a discrete with one non-zero weight)
    is its one value, a float, without going through ppf."""
    dists = inputs.distributions()
    uncertain = sorted(name for name, d in dists.items() if not d.is_fixed)
    drawn = sample(uncertain, inputs.samples, inputs.seed, inputs.method)
    drawn = induce_rank_correlation(drawn, inputs.correlations, inputs.seed)
    values: dict[str, Value] = {}
    for name, dist in dists.items():  # each percentile array is let go once mapped
        values[name] = dist.ppf(drawn.q.pop(name)) if name in drawn.q else dist.support()[0]
    return values, Sample({}, drawn.ranks)


def _report_level(inputs: ModelInputs) -> float:
    if inputs.report_utilisation is not None:
        return inputs.report_utilisation
    grid = np.asarray(inputs.utilisation)
    return float(grid[np.argmin(np.abs(grid - 0.5))])


def _rows(x: Value, rows: slice) -> Value:
    return x[rows] if np.ndim(x) else x


def simulate(
    inputs: ModelInputs, progress: Progress | None = None, phases: Phases | None = None
) -> Simulation:
    """Sample every input and evaluate every draw at every utilisation level.

    ``progress``, when given, is called with the share of the work done, from 0 to 1;
    ``phases`` records the time and memory of each phase.
    """
    phases = phases or Phases()
    phases.start()
    values, drawn = _draw(inputs)
    phases.mark("sample")
    s, h = inputs.samples, inputs.horizon_months
    terms = Terms(h, inputs.discount_rate, inputs.tax_rate)
    b = BuyDraws.sampled(inputs.buy, values)
    r = RentDraws.sampled(inputs.rent, values)
    t_own = throughput(b.gpu_count, b.relative_throughput, b.scaling_efficiency, b.thermal_derate)
    t_inst = throughput(r.gpu_count, r.relative_throughput, r.scaling_efficiency)
    buy, rent = buy_line(b, terms), rent_line(r, t_own, t_inst, terms)
    breakeven = np.array(breakeven_utilisation(buy, rent, s))
    phases.mark("lines")
    levels = np.asarray(inputs.utilisation, dtype=float)
    paid = np.empty((levels.size, s))
    chunk = max(1, _CHUNK_ELEMENTS // h)
    work = Workspace()
    for start in range(0, s, chunk):
        rows = slice(start, min(s, start + chunk))
        part = {k: _rows(v, rows) for k, v in values.items()}
        bp, rp = BuyDraws.sampled(inputs.buy, part), RentDraws.sampled(inputs.rent, part)
        owed = gap(bp, rp, _rows(t_own, rows), _rows(t_inst, rows), terms, rows.stop - start, work)
        paid[:, rows] = payback(owed, levels)
        if progress is not None:
            progress(rows.stop / s)
    head = slice(0, min(s, CUMULATIVE_DRAWS))
    part = {k: _rows(v, head) for k, v in values.items()}
    bp, rp = BuyDraws.sampled(inputs.buy, part), RentDraws.sampled(inputs.rent, part)
    level = _report_level(inputs)
    cum_buy, cum_rent = cumulative_cost(
        bp, rp, _rows(t_own, head), _rows(t_inst, head), terms, head.stop, level
    )
    phases.mark("payback")
    return Simulation(
        inputs=inputs,
        draws=values,
        sample=drawn,
        buy=buy,
        rent=rent,
        payback=paid,
        breakeven=breakeven,
        own_throughput=t_own,
        report_utilisation=level,
        cum_buy=cum_buy,
        cum_rent=cum_rent,
    )


def _select(values: np.ndarray) -> dict[str, float]:
    """P10/P50/P90 by linear interpolation between order statistics, selected in place
    (``values`` is reordered): a partition at P50, then one in each half, and each upper
    neighbour the smallest value between its order statistic and the next. Same numbers as
    sorting, at about half the cost. A percentile that touches +inf (or NaN) is NaN."""
    n = values.shape[0]
    positions = [q * (n - 1) for q in _QUANTILES]
    low = [math.floor(p) for p in positions]
    if n < 16:  # too few to part: sorted, each neighbour is in place
        values.sort()
        bounds = [min(lo + 1, n - 1) for lo in low]
    else:
        values.partition(low[1])
        values[: low[1]].partition(low[0])
        values[low[1] + 1 :].partition(low[2] - low[1] - 1)
        bounds = [*low[1:], n - 1]  # the next order statistic in place, or the end
    out = {}
    for name, p, lo, bound in zip(("p10", "p50", "p90"), positions, low, bounds, strict=True):
        frac = p - lo
        v = float(values[lo])
        if frac != 0.0:  # NaN sorts last: the smallest non-NaN above, NaN only if all are
            v += frac * (float(np.fmin.reduce(values[lo + 1 : bound + 1])) - v)
        out[name] = v if math.isfinite(v) else math.nan
    return out


class _Bands:
    """Percentiles (and means) of one quantity, filled level by level."""

    def __init__(self, levels: int, mean: bool = True) -> None:
        self.q = {k: np.empty(levels) for k in ("p10", "p50", "p90")}
        self.mean = np.empty(levels) if mean else None

    def put(self, j: int, values: np.ndarray, scale: float = 1.0) -> None:
        """Level ``j`` from ``values`` (reordered in place), divided by ``scale``."""
        if self.mean is not None:
            self.mean[j] = values.mean() / scale
        for k, v in _select(values).items():
            self.q[k][j] = v / scale

    def bands(self) -> Bands:
        mean = None if self.mean is None else frozen_array(self.mean)
        return Bands(**{k: frozen_array(v) for k, v in self.q.items()}, mean=mean)

    @classmethod
    def of_rows(cls, values: np.ndarray) -> Bands:
        """The percentiles of each row of ``values`` (K x draws), without means; ``values`` is
        sorted row by row in place."""
        out = cls(values.shape[0], mean=False)
        for j, row in enumerate(values):
            out.put(j, row)
        return out.bands()


def _ranks(sim: Simulation, name: str) -> np.ndarray:
    """1-based ranks of input ``name``'s draws, from the sampler's ranks where it knows them."""
    values = np.asarray(sim.draws[name])
    known = sim.sample.ranks.get(name)
    if known is None:
        return average_ranks(values)
    if isinstance(sim.inputs.distributions()[name], Discrete):  # ties share their mean rank
        order = np.empty_like(known)
        order[known] = np.arange(known.size)
        return average_ranks(values, order)
    return known + 1.0


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    x = x - x.mean()
    y = y - y.mean()
    denom = math.sqrt(float(x @ x) * float(y @ y))
    return float(x @ y) / denom if denom > 0 else 0.0


def _sensitivity(sim: Simulation, gap: np.ndarray, level: float) -> Sensitivity:
    """Spearman rank correlation of each uncertain input with TCO_buy - TCO_rent at ``level``.

    Sorted by strength; a positive value means that a higher input makes buying relatively
    dearer. Empty with fewer than 10 draws or no uncertain input.
    """
    names = sorted(n for n, d in sim.inputs.distributions().items() if not d.is_fixed)
    rows: list[Driver] = []
    if names and sim.inputs.samples >= 10:
        gap_ranks = average_ranks(gap)
        rows = [Driver(n, _pearson(_ranks(sim, n), gap_ranks)) for n in names]
        rows.sort(key=lambda r: (-abs(r.spearman), r.input))
    return Sensitivity(level, "buy_tco - rent_tco", tuple(rows))


def _tco_into(out: np.ndarray, at_zero: Value, slope: Value, u: Value) -> None:
    """``out = at_zero + slope * u`` without temporaries (each a float or an (S,) array)."""
    np.multiply(slope, u, out=out)
    out += at_zero


def summarise(sim: Simulation, phases: Phases | None = None) -> Result:
    """Mean and percentiles of every outcome per utilisation level, with the verdict."""
    phases = phases or Phases()
    phases.start()
    inputs = sim.inputs
    s, h = inputs.samples, inputs.horizon_months
    grid = frozen_array(inputs.utilisation)
    u_count = grid.size
    sens_level = int(np.argmin(np.abs(grid - sim.report_utilisation)))
    buy, rent = _Bands(u_count), _Bands(u_count)
    unit_buy, unit_rent = _Bands(u_count, mean=False), _Bands(u_count, mean=False)
    pay = _Bands(u_count, mean=False)
    prob, never = np.empty(u_count), np.empty(u_count)
    fixed_throughput = np.ndim(sim.own_throughput) == 0
    sensitivity = None
    b, r, scratch = np.empty(s), np.empty(s), np.empty(s)  # reused: no page faults per level
    for j, u in enumerate(grid):
        _tco_into(b, sim.buy.at_zero, sim.buy.per_u, u)
        _tco_into(r, sim.rent.at_zero, sim.rent.slope, np.maximum(0.0, u - sim.rent.kink))
        prob[j] = np.count_nonzero(b < r) / s
        if j == sens_level:
            np.subtract(b, r, out=scratch)
            sensitivity = _sensitivity(sim, scratch, float(grid[j]))
        work = u * 730.0 * h * np.asarray(sim.own_throughput)  # reference GPU-hours
        if u == 0:
            for bands in (unit_buy, unit_rent):
                for q in bands.q.values():
                    q[j] = math.nan
        elif not fixed_throughput:
            unit_buy.put(j, np.divide(b, work, out=scratch))
            unit_rent.put(j, np.divide(r, work, out=scratch))
        buy.put(j, b)
        rent.put(j, r)
        if fixed_throughput and u > 0:
            for bands, tco in ((unit_buy, buy), (unit_rent, rent)):
                for k, q in bands.q.items():
                    q[j] = tco.q[k][j] / float(work)
        np.copyto(scratch, sim.payback[j])
        never[j] = np.count_nonzero(~np.isfinite(scratch)) / s
        pay.put(j, scratch)
    finite = np.isfinite(sim.breakeven)
    be = _select(np.array(sim.breakeven))
    breakeven = Breakeven(
        mean=float(sim.breakeven[finite].mean()) if finite.any() else math.nan,
        **be,
        prob_always=float(np.count_nonzero(sim.breakeven == 0.0) / s),
        prob_never=float(np.count_nonzero(~finite) / s),
    )
    payback_bands = pay.bands()
    payback_months = Payback(
        payback_bands.p10, payback_bands.p50, payback_bands.p90, frozen_array(never)
    )
    prob = frozen_array(prob)
    cumulative_cost = CumulativeCost(
        utilisation=sim.report_utilisation,
        months=frozen_array(np.arange(h + 1)),
        buy=_Bands.of_rows(np.array(sim.cum_buy)),
        rent=_Bands.of_rows(np.array(sim.cum_rent)),
    )
    phases.mark("summary")
    return Result(
        utilisation=grid,
        buy_tco=buy.bands(),
        rent_tco=rent.bands(),
        prob_buy_cheaper=prob,
        breakeven_utilisation=breakeven,
        payback_months=payback_months,
        cost_per_reference_gpu_hour=Sides(unit_buy.bands(), unit_rent.bands()),
        cumulative_cost=cumulative_cost,
        sensitivity=sensitivity,
        verdict=verdict(breakeven, grid, prob, payback_months, sim.report_utilisation),
        seed=inputs.seed,
        samples=inputs.samples,
        method=inputs.method,
    )
