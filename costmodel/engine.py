"""The Monte Carlo orchestrator: sample inputs, evaluate the equations, summarise.

Each uncertain input is sampled once per draw and held for the whole horizon; fixed inputs stay
scalars. The TCO of each side is a line in utilisation (closed-form monthly sums), so break-even
and the TCO bands need no month axis; payback needs the cumulative cost by month, built one chunk
of draws at a time so that (draws x months) arrays stay a few tens of MB whatever the sample
count. Results are summarised level by level as mean, P10, P50 and P90 (linear interpolation
between order statistics, selected in place); "never" outcomes rank as +inf and a percentile that
lands on one is NaN in the :class:`~costmodel.result.Result`. The precision of the break-even
P50, the tornado and the value of information come from :mod:`costmodel.uncertainty`; with a
target precision the draws are doubled until it is met (:func:`_converge`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from . import carbon
from .cashflows import (
    HOURS_PER_MONTH,
    ApiDraws,
    BuyDraws,
    BuyLine,
    Gap,
    Lines,
    RentDraws,
    RentLine,
    Terms,
    Value,
    Workspace,
    cumulative_cost,
    gap,
    metered,
    rented_cumulative,
)
from .distributions import Distribution
from .inputs import MAX_SAMPLES, ModelInputs, throughput_error_pairs
from .outcomes import breakeven_utilisation, payback
from .result import (
    Availability,
    Bands,
    Carbon,
    Cheapest,
    Convergence,
    CumulativeCost,
    Driver,
    InputValue,
    Payback,
    Result,
    Rival,
    Sensitivity,
    UnitCost,
    ValueOfInformation,
    Versus,
    frozen_array,
)
from .sampling import Sample, Sampler, average_ranks, gaussian_copula, sample
from .sides import SIDES, by_month, further_lines
from .stats import (
    LevelBands,
    Paybacks,
    Reciprocals,
    RisingLine,
    centred,
    input_bins,
    input_ranks,
    pearson,
    percentiles,
    uncertain,
)
from .stats import breakeven as summarise_breakeven
from .uncertainty import (
    evppi,
    expected_value_of_information,
    halfwidth,
    mean_gap_se,
    mean_se,
    median_interval,
    tornado,
    wilson,
)

__all__ = [
    "CUMULATIVE_DRAWS",
    "Phases",
    "Progress",
    "Simulation",
    "draw",
    "simulate",
    "summarise",
]

#: Elements of one chunk's (draws x months) arrays, about: a few MB each, so that a chunk's
#: arrays stay near the processor's cache, in chunks of equal size (:func:`_chunk_draws`).
#: Measured on 1M draws x 60 months: 250,000-350,000 fastest, 10 % faster than 500,000; each
#: chunk costs some 0.5 ms of calls, so a sample of up to 1.5 times this is one chunk.
_CHUNK_ELEMENTS = 300_000
#: Draws used for the cumulative-cost-by-month summary (the first ones; the chart needs no more).
CUMULATIVE_DRAWS = 20_000

#: A callback given the share of a simulation done, from 0 to 1.
Progress = Callable[[float], None]


@dataclass
class Phases:
    """CPU seconds of each phase of an evaluation and, while ``tracemalloc`` traces, the peak
    of traced memory in it [byte] (numpy reports its arrays to tracemalloc).

    Phases: ``sample`` (percentiles and draws), ``lines`` (TCO lines and break-even),
    ``payback`` (cumulative cost by month), ``summary`` (bands, shares, sensitivity, precision,
    tornado, value of information); when the draws are doubled, ``sample`` and ``lines`` add up
    over the rounds.
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

    ``buy``, ``rent``: the TCO lines of each draw [USD]; ``paybacks`` each draw's payback
    months against each side bought against by name (``"rent"``, ``"api"``, further sides'),
    as the summary reads them (:class:`~costmodel.stats.Paybacks`), and ``payback`` [month]
    (U, S), inf = never, those against renting as an array; ``breakeven`` [-] (S,), inf =
    never; ``own_throughput`` [reference GPU-hours/hour], a float or (S,); ``cum_buy``,
    ``cum_rent`` [USD] month-major (H + 1, min(S, CUMULATIVE_DRAWS)) at
    ``report_utilisation`` (``cum_api`` the hosted API's, ``None`` without one); ``draws``
    every input by name (floats for fixed ones) and ``sample`` the ranks the sampler knew
    (its percentiles are let go once mapped to draws).
    ``inputs.samples`` is the number of draws made; ``initial_samples`` the number asked for
    (fewer when the draws were doubled toward ``inputs.target_halfwidth``). With a hosted API,
    ``api`` is its TCO line and ``payback_api`` (U, S), ``breakeven_api`` (S,) those of buying
    against it; all three are ``None`` without one. ``availability`` [-] is the share of the
    owned GPUs up, a float or (S,) (1.0 without downtime). ``carbon`` holds every side's
    emissions line [kg CO2e] (``None`` without carbon inputs). Each further side
    (:attr:`ModelInputs.further`) has its TCO line, break-even, payback and cumulative cost
    by name in ``further``, ``breakeven_further``, ``payback_further`` and ``cum_further``.
    """

    inputs: ModelInputs
    draws: dict[str, Value]
    sample: Sample
    buy: BuyLine
    rent: RentLine
    paybacks: Mapping[str, Paybacks]
    breakeven: np.ndarray
    own_throughput: Value
    report_utilisation: float
    cum_buy: np.ndarray
    cum_rent: np.ndarray
    initial_samples: int = 0
    api: RentLine | None = None
    breakeven_api: np.ndarray | None = None
    availability: Value = 1.0
    carbon: carbon.Emissions | None = None
    cum_api: np.ndarray | None = None
    further: Mapping[str, RentLine] = field(default_factory=dict)
    breakeven_further: Mapping[str, np.ndarray] = field(default_factory=dict)
    cum_further: Mapping[str, np.ndarray] = field(default_factory=dict)

    @functools.cached_property
    def payback(self) -> np.ndarray:
        """Each draw's payback month against renting [month] (U, S), inf = never."""
        return self.paybacks["rent"].months()

    @functools.cached_property
    def payback_api(self) -> np.ndarray | None:
        """Each draw's payback month against the hosted API [month] (U, S), or ``None``."""
        return self.paybacks["api"].months() if "api" in self.paybacks else None

    @functools.cached_property
    def payback_further(self) -> dict[str, np.ndarray]:
        """Each draw's payback month against each further side [month] (U, S), by name."""
        return {side: self.paybacks[side].months() for side in self.further}

    def buy_tco(self, u: float) -> np.ndarray:
        """TCO_buy [USD] of every draw at utilisation ``u``, a new ``(S,)`` array."""
        return _per_draw(self.buy.tco(u), self.inputs.samples)

    def rent_tco(self, u: float) -> np.ndarray:
        """TCO_rent [USD] of every draw at utilisation ``u``, a new ``(S,)`` array."""
        return _per_draw(self.rent.tco(u), self.inputs.samples)

    def cumulative(self) -> dict[str, np.ndarray]:
        """Every side's cumulative cost by month [USD] by side name (``cum_buy``, ...)."""
        out = {"buy": self.cum_buy, "rent": self.cum_rent}
        out = out if self.cum_api is None else {**out, "api": self.cum_api}
        return {**out, **self.cum_further}

    def lines(self) -> dict[str, BuyLine | RentLine]:
        """Every side's TCO line by side name (``buy``, ``rent`` and, with one, ``api``)."""
        out: dict[str, BuyLine | RentLine] = {"buy": self.buy, "rent": self.rent}
        out = out if self.api is None else {**out, "api": self.api}
        return {**out, **self.further}


def _per_draw(x: Value, draws: int) -> np.ndarray:
    """A writable ``(draws,)`` float array of ``x`` (a float is repeated)."""
    out = np.empty(draws)
    out[...] = x
    return out


def draw(inputs: ModelInputs, sampler: Sampler | None = None) -> tuple[dict[str, Value], Sample]:
    """Every input's draws by name, and the ranks the sampler knows (the percentiles are let
    go once mapped). A fixed input (a point mass, such as a discrete with one non-zero weight)
    is its one value, a float, without going through ppf. ``sampler``, when given, holds the
    percentiles (a sample that can grow); else they are drawn afresh. The correlations are
    imposed on the independent percentiles, draw by draw, through a Gaussian copula
    (:func:`~costmodel.sampling.gaussian_copula`), those given and the estimated throughputs'
    errors' with one another (:func:`~costmodel.inputs.throughput_error_pairs`)."""
    dists = inputs.distributions()
    if sampler is None:
        drawn = sample(uncertain(inputs), inputs.samples, inputs.seed, inputs.method)
    else:
        drawn = sampler.sample
    pairs = inputs.correlations
    drawn = gaussian_copula(drawn, (*pairs, *throughput_error_pairs(dists, pairs)))
    values: dict[str, Value] = {}
    for name, dist in dists.items():  # each percentile array is let go once mapped
        values[name] = dist.ppf(drawn.q.pop(name)) if name in drawn.q else dist.support()[0]
    return values, Sample({}, drawn.ranks, drawn.blocks)


def _report_level(inputs: ModelInputs) -> float:
    if inputs.report_utilisation is not None:
        return inputs.report_utilisation
    grid = np.asarray(inputs.utilisation)
    return float(grid[np.argmin(np.abs(grid - 0.5))])


def _rows(x: Value, rows: slice) -> Value:
    return x[rows] if np.ndim(x) else x


def _lines(inputs: ModelInputs, values: dict[str, Value]) -> tuple[Lines, dict[str, np.ndarray]]:
    """The TCO lines of the draws ``values`` (a carbon price folded in) and each draw's
    break-even utilisation against each rival side: ``"rent"``, with a hosted API ``"api"``,
    and each further side by name."""
    lines = further_lines(inputs, values, carbon.priced_lines(inputs, values))
    rivals = {"rent": lines.rent} if lines.api is None else {"rent": lines.rent, "api": lines.api}
    rivals |= lines.further
    s = inputs.samples
    return lines, {
        side: np.array(breakeven_utilisation(lines.buy, line, s)) for side, line in rivals.items()
    }


def _converge(
    inputs: ModelInputs, phases: Phases
) -> tuple[ModelInputs, dict[str, Value], Sample, Lines, dict[str, np.ndarray]]:
    """Draw, and double the draws while the 95 % interval of a break-even P50 (against
    renting, or against a hosted API) is wider than ``inputs.target_halfwidth`` and doubling
    stays within the cap (``max_samples``, never below ``samples``). Each round keeps every
    draw made (:class:`Sampler`), imposes the correlations again (draw by draw for
    ``random``, which leaves the earlier draws as they were; on the whole sample otherwise)
    and re-evaluates only the TCO lines and break-evens; payback and the summaries are left
    for the final sample. Returns the inputs with the number of draws made, with the draws,
    ranks, lines and break-evens of the final round."""
    target = inputs.target_halfwidth
    cap = max(inputs.max_samples or MAX_SAMPLES, inputs.samples)
    sampler = Sampler(uncertain(inputs), inputs.samples, inputs.seed, inputs.method)
    while True:
        values, drawn = draw(inputs, sampler)
        phases.mark("sample")
        lines, breakevens = _lines(inputs, values)
        widest = max(
            halfwidth(*median_interval(np.array(be), drawn.blocks)) for be in breakevens.values()
        )
        phases.mark("lines")
        if widest <= target or 2 * inputs.samples > cap:
            return inputs, values, drawn, lines, breakevens
        sampler.double()
        inputs = dataclasses.replace(inputs, samples=sampler.n)


def simulate(
    inputs: ModelInputs, progress: Progress | None = None, phases: Phases | None = None
) -> Simulation:
    """Sample every input and evaluate every draw at every utilisation level.

    ``progress``, when given, is called with the share of the work done, from 0 to 1;
    ``phases`` records the time and memory of each phase. With ``inputs.target_halfwidth``
    the draws are doubled until the break-even P50s are that precise (see :func:`_converge`);
    the simulation's ``inputs.samples`` is then the number of draws made.
    """
    phases = phases or Phases()
    phases.start()
    initial = inputs.samples
    if inputs.target_halfwidth is None:
        values, drawn = draw(inputs)
        phases.mark("sample")
        lines, breakevens = _lines(inputs, values)
        phases.mark("lines")
    else:
        inputs, values, drawn, lines, breakevens = _converge(inputs, phases)
    terms = Terms(inputs.horizon_months, inputs.discount_rate, inputs.tax_rate)
    t_own = lines.own
    levels = np.asarray(inputs.utilisation, dtype=float)
    paid = _paybacks(inputs, values, lines, terms, levels, progress)
    level = _report_level(inputs)
    cum = _cumulative_draws(inputs, values, lines, terms, level)
    phases.mark("payback")
    return Simulation(
        inputs=inputs,
        draws=values,
        sample=drawn,
        buy=lines.buy,
        rent=lines.rent,
        paybacks=paid,
        breakeven=breakevens["rent"],
        own_throughput=t_own,
        report_utilisation=level,
        cum_buy=cum["buy"],
        cum_rent=cum["rent"],
        cum_api=cum.get("api"),
        initial_samples=initial,
        api=lines.api,
        breakeven_api=breakevens.get("api"),
        availability=lines.availability,
        carbon=carbon.emissions(inputs, values, lines),
        further=lines.further,
        breakeven_further={name: breakevens[name] for name in lines.further},
        cum_further={name: cum[name] for name in lines.further},
    )


def _cumulative_draws(
    inputs: ModelInputs, values: dict[str, Value], lines: Lines, terms: Terms, level: float
) -> dict[str, np.ndarray]:
    """Every side's cumulative cost by month 0..H [USD] at utilisation ``level``, month-major
    ``(H + 1, min(S, CUMULATIVE_DRAWS))`` by side name, of the first draws, carbon's price in."""
    head = slice(0, min(inputs.samples, CUMULATIVE_DRAWS))
    part = {k: _rows(v, head) for k, v in values.items()}
    bp, rp = BuyDraws.sampled(inputs.buy, part), RentDraws.sampled(inputs.rent, part)
    own_head, inst_head = _rows(lines.own, head), _rows(lines.instance, head)
    cum_buy, cum_rent = cumulative_cost(bp, rp, own_head, inst_head, terms, head.stop, level)
    out = {"buy": cum_buy, "rent": cum_rent}
    if inputs.api is not None:
        ap = ApiDraws.sampled(inputs.api, part).as_rented()
        out["api"] = rented_cumulative(ap, own_head, 1.0, terms, head.stop, level)
    carbon.priced_cumulative(
        cum_buy, cum_rent, inputs, part, own_head, inst_head, terms, level, out.get("api")
    )
    for name, obj in inputs.further:
        kind = SIDES[name]
        fixed, per_u = by_month(kind, kind.drawn(obj, part, name), own_head, terms, head.stop)
        out[name] = np.array(np.broadcast_to(fixed + level * per_u, cum_buy.shape))
    return out


def _paybacks(
    inputs: ModelInputs,
    values: dict[str, Value],
    lines: Lines,
    terms: Terms,
    levels: np.ndarray,
    progress: Progress | None,
) -> dict[str, Paybacks]:
    """Each draw's payback month at every level against each side bought against, by name:
    ``"rent"``, with a hosted API ``"api"``, and each further side, one chunk of draws at a
    time (:func:`_side_payback`); ``progress`` is told the share of draws done after each
    chunk. Whether a reservation's kink bends the gap is decided on the whole sample, so a
    draw's months are the same whichever draws it is evaluated with (as :class:`Paybacks`
    needs to compute some again)."""
    s, chunk = inputs.samples, _chunk_draws(inputs)
    rivals = {"rent": lines.rent} if lines.api is None else {"rent": lines.rent, "api": lines.api}
    kinked = {side: bool(np.any(np.asarray(line.kink) > 0)) for side, line in rivals.items()}
    sides = [*rivals, *(name for name, _ in inputs.further)]

    def again(side: str) -> Callable[[np.ndarray], np.ndarray]:
        """The months (U, k) against ``side`` of the draws of given indices, once more."""

        def months(draws: np.ndarray) -> np.ndarray:
            part = {k: _rows(v, draws) for k, v in values.items()}
            own, inst = _rows(lines.own, draws), _rows(lines.instance, draws)
            g = _side_payback(
                inputs, part, own, inst, terms, draws.size, side, kinked.get(side), Workspace()
            )
            return payback(g, levels)

        return months

    out = {
        side: Paybacks(levels.size, s, inputs.horizon_months, chunk, again(side)) for side in sides
    }
    work, buf = Workspace(), np.empty((levels.size, min(s, chunk)))
    for start in range(0, s, chunk):
        rows = slice(start, min(s, start + chunk))
        n = rows.stop - start
        part = {k: _rows(v, rows) for k, v in values.items()}
        own, inst = _rows(lines.own, rows), _rows(lines.instance, rows)
        for side in sides:
            g = _side_payback(inputs, part, own, inst, terms, n, side, kinked.get(side), work)
            out[side].put(rows, payback(g, levels, out=buf[:, :n]))
        if progress is not None:
            progress(rows.stop / s)
    return out


def _side_payback(
    inputs: ModelInputs,
    part: dict[str, Value],
    own: Value,
    inst: Value,
    terms: Terms,
    draws: int,
    side: str,
    kinked: bool | None,
    work: Workspace,
) -> Gap:
    """The cumulative gap by month of buying against ``side`` of the ``draws`` draws
    ``part`` (of throughputs ``own`` and ``inst``), carbon's price in: against renting, the
    hosted API, or a further side (buying's cumulative cost, against a side that costs
    nothing, less the side's own by month, :attr:`~costmodel.sides.Side.by_month`);
    ``kinked`` as ``any_kink`` of :func:`~costmodel.cashflows.gap`."""
    bp = BuyDraws.sampled(inputs.buy, part)
    if side == "rent":
        g = gap(bp, RentDraws.sampled(inputs.rent, part), own, inst, terms, draws, work, kinked)
        return carbon.priced_gap(g, inputs, part, own, inst, terms)
    if side == "api":
        ap = ApiDraws.sampled(inputs.api, part).as_rented()
        g = gap(bp, ap, own, 1.0, terms, draws, work, kinked)
        return carbon.priced_gap(g, inputs, part, own, inst, terms, against="api")
    kind, obj = SIDES[side], dict(inputs.further)[side]
    g = gap(bp, _NOTHING, own, 1.0, terms, draws, work)
    g = carbon.priced_gap(g, inputs, part, own, 1.0, terms, against=side)
    fixed, per_u = by_month(kind, kind.drawn(obj, part, side), own, terms, draws)
    np.subtract(g.net0, fixed[1:], out=g.net0)  # the gap's own buffers
    np.subtract(g.slope, per_u[1:], out=g.slope)
    return dataclasses.replace(g, capex=np.broadcast_to(g.capex - fixed[0], g.capex.shape))


def _chunk_draws(inputs: ModelInputs) -> int:
    """Draws per chunk of the (draws x months) arrays: the sample in chunks of equal size of
    about :data:`_CHUNK_ELEMENTS` elements (one chunk for a sample of up to 1.5 times that)."""
    s = inputs.samples
    chunks = max(1, round(s * inputs.horizon_months / _CHUNK_ELEMENTS))
    return -(-s // chunks)


#: A rented side that costs nothing: the gap of buying against it is buying's cumulative cost.
_NOTHING = metered(0.0, 0.0)


def _by_input(
    sim: Simulation, gaps: dict[str, tuple[np.ndarray, np.ndarray]], sens_u: float, voi_u: float
) -> dict[str, tuple[Sensitivity, ValueOfInformation]]:
    """What each uncertain input does to the answer against each rival side (``gaps`` by
    side: every draw's TCO_buy - TCO_<side> at ``sens_u`` and at ``voi_u``), from the inputs'
    ranks and bins (found once for every side):

    - Spearman rank correlation with the gap at ``sens_u``, sorted by strength; a positive
      value means that a higher input makes buying relatively dearer. Empty with fewer than
      10 draws or no uncertain input.
    - EVPPI of the choice between buying and that side from the gap at ``voi_u``, with
      floor(sqrt(n)) equal-count bins per input, largest first, each at most the EVPI.
    """
    dists = sim.inputs.distributions()
    names = sorted(name for name, d in dists.items() if not d.is_fixed)
    s = sim.inputs.samples
    ranked = bool(names) and s >= 10
    gap_ranks = {side: centred(average_ranks(g[0])) for side, g in gaps.items()} if ranked else {}
    evpi = {side: expected_value_of_information(g[1]) for side, g in gaps.items()}
    count = max(1, math.isqrt(s))
    drivers: dict[str, list[Driver]] = {side: [] for side in gaps}
    worth: dict[str, list[InputValue]] = {side: [] for side in gaps}
    for name in names:
        effects = _input_effects(sim, name, dists[name], count, gaps, gap_ranks, evpi)
        for side, (driver, value) in effects.items():
            if driver is not None:
                drivers[side].append(driver)
            worth[side].append(value)
    out = {}
    for side in gaps:
        drivers[side].sort(key=lambda r: (-abs(r.spearman), r.input))
        worth[side].sort(key=lambda v: (-v.evppi, v.input))
        out[side] = (
            Sensitivity(sens_u, f"buy_tco - {side}_tco", tuple(drivers[side])),
            ValueOfInformation(voi_u, evpi[side][0], count, tuple(worth[side])),
        )
    return out


def _input_effects(
    sim: Simulation,
    name: str,
    dist: Distribution,
    count: int,
    gaps: dict[str, tuple[np.ndarray, np.ndarray]],
    gap_ranks: dict[str, tuple[np.ndarray, float]],
    evpi: dict[str, tuple[float, float]],
) -> dict[str, tuple[Driver | None, InputValue]]:
    """Input ``name``'s Spearman correlation with each side's gap (``None`` without the gaps'
    centred ranks ``gap_ranks``) and its EVPPI against each side (:func:`_by_input`), from its
    ranks centred once and its ``count`` bins; these are let go on return, before the next
    input's are made."""
    ranks = input_ranks(sim, name, dist)  # a new array: centred in place once binned
    bins, k = input_bins(sim, name, ranks, count, dist)
    spread = centred(ranks) if gap_ranks else None
    out = {}
    for side, (_, voi_gap) in gaps.items():
        top, best = evpi[side]
        driver = None if spread is None else Driver(name, pearson(spread, gap_ranks[side]))
        out[side] = driver, InputValue(name, min(top, evppi(voi_gap, bins, k, best)))
    return out


def _gap_se(sim: Simulation, grid: np.ndarray, side: str) -> np.ndarray | None:
    """Standard errors [USD] of the mean gap TCO_buy - TCO_<side> per level in closed form,
    or ``None`` when the reservation's kink differs between draws (then they are taken level
    by level)."""
    other = sim.lines()[side]
    if np.ndim(other.kink):
        return None
    return mean_gap_se(
        sim.buy.at_zero,
        sim.buy.per_u - other.per_u,  # a priced carbon's per u moves with buy's
        other.at_zero,
        other.slope,
        float(other.kink),
        grid,
        sim.inputs.samples,
        sim.sample.blocks,
    )


def _convergence(
    sim: Simulation, breakeven: np.ndarray, gap_se: np.ndarray, prob: np.ndarray
) -> Convergence:
    """The precision of the run against one rival side, from every draw's ``breakeven``
    against it, the standard errors of the mean gap ``gap_se`` [USD] and P(buy cheaper)
    ``prob`` [-] per level: the break-even P50 interval (NaN for "never"), the standard
    errors and Wilson intervals of P(buy cheaper); whether the target half-width, when there
    is one, was met."""
    inputs, blocks = sim.inputs, sim.sample.blocks
    n = inputs.samples
    ci = median_interval(np.array(breakeven), blocks)
    width = halfwidth(*ci)
    target = inputs.target_halfwidth
    if uncertain(inputs) and n < 2:
        prob_se = np.full(prob.shape, math.nan)
    else:
        prob_se = np.sqrt(prob * (1.0 - prob) / n)
    return Convergence(
        samples=n,
        initial_samples=sim.initial_samples or n,
        target_halfwidth=target,
        max_samples=None if target is None else max(inputs.max_samples or MAX_SAMPLES, n),
        met=None if target is None else bool(width <= target),
        breakeven_p50_ci95=tuple(math.nan if math.isinf(x) else x for x in ci),
        breakeven_p50_halfwidth=width if math.isfinite(width) else math.nan,
        gap_mean_se=frozen_array(gap_se),
        prob_buy_cheaper_se=frozen_array(prob_se),
        prob_buy_cheaper_ci95=frozen_array(np.column_stack(wilson(np.rint(prob * n), n))),
        replicates=len(blocks) or None,
    )


def _cheapest(sides: Iterable[str], shares: Iterable[np.ndarray], n: int) -> Cheapest:
    """Each side's share of draws in which it is the cheapest per level [-], with its 95 %
    Wilson interval over ``n`` draws."""
    shares = {side: frozen_array(x) for side, x in zip(sides, shares, strict=True)}
    ci95 = {s: frozen_array(np.column_stack(wilson(np.rint(x * n), n))) for s, x in shares.items()}
    return Cheapest(shares, ci95)


def _tco_into(out: np.ndarray, at_zero: Value, slope: Value, u: Value) -> None:
    """``out = at_zero + slope * u`` without temporaries (each a float or an (S,) array)."""
    np.multiply(slope, u, out=out)
    out += at_zero


@dataclass(frozen=True)
class _Levels:
    """What the TCO lines give level by level (:func:`_level_bands`): every side's TCO bands
    [USD] and cost per unit of work [USD/unit], P(TCO_buy < TCO_rent) [-], the standard error
    of the mean gap TCO_buy - TCO_<side> [USD] per level and every draw's gap at the
    sensitivity level, by rival side (every side but buying); with a hosted API also
    P(TCO_buy < TCO_api) and the share of draws in which each side is the cheapest (``None``
    without one); P(TCO_buy < TCO_<side>) of each further side by name.
    """

    tco: dict[str, Bands]
    unit: UnitCost
    prob: np.ndarray
    gap_se: dict[str, np.ndarray]
    sens_gap: dict[str, np.ndarray]
    prob_api: np.ndarray | None = None
    cheapest: Cheapest | None = None
    prob_further: dict[str, np.ndarray] = field(default_factory=dict)


def _tco_at(line: BuyLine | RentLine, u: float | np.ndarray, out: np.ndarray) -> np.ndarray:
    """Every draw's TCO [USD] on ``line`` at utilisation ``u``, into ``out``: (S,) at one
    level, or (L, S) at a column (L, 1) of levels, the same numbers level by level."""
    if isinstance(line, BuyLine):
        _tco_into(out, line.at_zero, line.per_u, u)
    else:
        _tco_into(out, line.at_zero, line.slope, np.maximum(0.0, u - line.kink))
        if np.ndim(line.per_u) or line.per_u:  # a priced carbon (costmodel.carbon)
            out += np.multiply(line.per_u, u)
    return out


def _mean_tcos(
    lines: dict[str, BuyLine | RentLine], grid: np.ndarray, skip: Iterable[str]
) -> dict[str, np.ndarray]:
    """The mean TCO [USD] over the draws of each side's line but those in ``skip`` at every
    level of ``grid``, from the means of its parts, in which it is linear (the same within
    rounding: one pass over the draws a part, not one a level); none for a line whose
    reservation's kink differs between draws (then taken level by level)."""
    out = {}
    for side, line in lines.items():
        if isinstance(line, BuyLine) and side not in skip:
            out[side] = np.mean(line.at_zero) + grid * np.mean(line.per_u)
        elif side not in skip and not np.ndim(line.kink):
            used = np.maximum(0.0, grid - float(line.kink))  # the use beyond a reservation
            slope, per_u = np.mean(line.slope), np.mean(line.per_u)
            out[side] = np.mean(line.at_zero) + used * slope + grid * per_u
    return out


def _cheapest_into(shares: np.ndarray, j: int, tco: list[np.ndarray], s: int) -> None:
    """Level ``j`` of ``shares`` (sides, levels): the share of draws in which each side of
    ``tco`` (buy, rent, then the others) is the cheapest, a tie going to the first."""
    if len(tco) == 3:  # buy, rent, api: two comparisons a draw
        b, r, a = tco
        buy = (b <= r) & (b <= a)
        rent = ~buy & (r <= a)
        n_buy, n_rent = np.count_nonzero(buy), np.count_nonzero(rent)
        shares[:, j] = (n_buy / s, n_rent / s, (s - n_buy - n_rent) / s)
        return
    best, first = tco[0].copy(), np.zeros(s, dtype=np.intp)
    for i, values in enumerate(tco[1:], start=1):
        cheaper = values < best
        first[cheaper] = i
        np.minimum(best, values, out=best)
    shares[:, j] = np.bincount(first, minlength=len(tco)) / s


def _proportional(lines: dict[str, BuyLine | RentLine], s: int) -> dict[str, LevelBands]:
    """The summary at u = 1 of each rent line through the origin (TCO(u) = (slope + per_u) * u
    in every draw: the hosted API's), whose bands at any u >= 0 are those times u."""
    out = {}
    for side, line in lines.items():
        if isinstance(line, RentLine) and not np.any(line.at_zero) and not np.any(line.kink):
            bands = LevelBands(1)
            bands.put(0, _per_draw(line.slope + line.per_u, s))
            out[side] = bands
    return out


def _sloped(
    lines: dict[str, BuyLine | RentLine], per_u: dict[str, LevelBands], spare: np.ndarray
) -> dict[str, RisingLine]:
    """The order statistics of the slopes of each rent line (not through the origin: those
    are ``per_u``'s) whose intercept and kink are the same in every draw, without a priced
    carbon's ``per_u``: TCO(u) = at_zero + slope * max(0, u - kink) keeps the order of the
    slopes at every u, so its percentiles come from one selection of them (in ``spare``, a
    free buffer of draws)."""
    out = {}
    for side, line in lines.items():
        same = not (np.ndim(line.at_zero) or np.ndim(line.per_u) or np.any(line.per_u))
        if isinstance(line, RentLine) and side not in per_u and same and not np.ndim(line.kink):
            spare[...] = line.slope
            out[side] = RisingLine.sloped(float(line.at_zero), spare)
    return out


def _sloped_percentiles(sloped: RisingLine, line: RentLine, u: float) -> dict[str, float] | None:
    """The percentiles of ``line``'s TCO at ``u`` from its slopes' order statistics, as
    :func:`_tco_at` evaluates it draw by draw; ``None`` where every draw's TCO is a zero
    whose sign the order of the slopes does not tell (the draws are summarised instead)."""
    x = float(np.maximum(0.0, u - line.kink))
    return None if x == 0.0 and line.at_zero == 0.0 else sloped.percentiles(x)


def _proportional_unit(
    lines: dict[str, BuyLine | RentLine],
    per_u: dict[str, LevelBands],
    own: Value,
    horizon: int,
    scratch: np.ndarray,
) -> dict[str, LevelBands]:
    """The cost per unit of work [USD/unit] of each side of ``per_u`` (a line through the
    origin) where the owned work differs between draws: TCO(u) / (u*730*H*T_own) is the same
    at every u > 0, so it is summarised once, at u = 1 (none with one amount of work)."""
    out = {}
    if not np.ndim(own):
        return out
    for side in per_u:
        bands = out[side] = LevelBands(1, mean=False)
        work = np.multiply(730.0 * horizon, own, out=scratch)  # units of work at u = 1
        bands.put(0, np.divide(_tco_at(lines[side], 1.0, np.empty(own.size)), work, out=scratch))
    return out


#: Elements of the blocks of levels whose costs per unit of work (or payback months) are
#: summarised at once.
_UNIT_BLOCK_ELEMENTS = 1_000_000


class _UnitRows:
    """Each draw's cost per unit of work, TCO(u) / (u*730*H*T_own) [USD/unit], of ``sides``
    at the levels u > 0 the caller gives it one by one (from the TCOs it has made for the
    level), into ``unit``: each draw's TCO(u) / (730*H*T_own), one product a draw with the
    reciprocal of its work made once, whose percentiles over u are those of the costs (a
    division by the same u > 0 keeps the order of the draws), for a block of levels selected
    in one call, or for each level at once where a side's block of two levels would not fit
    (then in ``spare``, a buffer of draws free while the caller's level is summarised)."""

    def __init__(
        self,
        sides: list[str],
        levels: int,
        own: np.ndarray,
        horizon: int,
        unit: dict[str, LevelBands],
        spare: np.ndarray,
    ) -> None:
        self.per_work, self.unit = np.multiply(own, 730.0 * horizon), unit  # work at u = 1
        np.divide(1.0, self.per_work, out=self.per_work)
        step = min(levels, _UNIT_BLOCK_ELEMENTS // (own.size * max(1, len(sides))))
        shared = spare.reshape(1, -1)
        self.block = {side: shared if step < 2 else np.empty((step, own.size)) for side in sides}
        self.levels: dict[str, list[tuple[int, float]]] = {side: [] for side in sides}

    def put(self, j: int, u: float, tco: dict[str, np.ndarray]) -> None:
        """Level ``j`` at utilisation ``u`` > 0 from every draw's TCO by side (not changed)."""
        for side, js in self.levels.items():
            np.multiply(tco[side], self.per_work, out=self.block[side][len(js)])
            js.append((j, u))
            if len(js) == len(self.block[side]):
                self.flush(side)

    def flush(self, side: str) -> None:
        """Select the percentiles of the levels of ``side`` held so far."""
        js = self.levels[side]
        if js:
            levels, u = (np.array(x) for x in zip(*js, strict=True))
            self.unit[side].put_percentiles(levels, percentiles(self.block[side][: len(js)]), u)
            js.clear()


def _level_bands(sim: Simulation, grid: np.ndarray, sens_level: int) -> _Levels:
    """Mean and percentiles of each side's TCO at every level of ``grid``, their cost per
    unit of work (NaN at u = 0), the share of draws where buying is cheaper (than renting and
    than the API) and the standard error of the mean gap (in closed form unless the
    reservation's kink varies), with the draws' gaps at level ``sens_level``. A buffer of draws
    per side is reused level after level (no page faults per level); where every level's TCOs
    fit a block (:data:`_UNIT_BLOCK_ELEMENTS`), they are summarised at once after the levels,
    one call a step for every level."""
    s, h = sim.inputs.samples, sim.inputs.horizon_months
    lines = sim.lines()
    per_u = _proportional(lines, s)
    means = _mean_tcos(lines, grid, per_u)
    tco = {side: LevelBands(grid.size, mean=side not in means) for side in lines}
    unit = {side: LevelBands(grid.size, mean=False) for side in lines}
    blocked = grid.size * s <= _UNIT_BLOCK_ELEMENTS
    rows = {side: np.empty((grid.size, s)) for side in lines if blocked and side not in per_u}
    for side, block in rows.items():  # every level in one call a step
        _tco_at(lines[side], grid[:, None], block)
    buf = {side: np.empty(s) for side in lines if side not in rows}
    prob, prob_api = np.empty(grid.size), np.empty(grid.size) if sim.api else None
    prob_further = {side: np.empty(grid.size) for side in sim.further}
    shares = np.empty((len(lines), grid.size)) if len(lines) > 2 else None
    rivals = [side for side in lines if side != "buy"]
    gap_se = {side: _gap_se(sim, grid, side) for side in rivals}
    per_level_se = [side for side in rivals if gap_se[side] is None]
    for side in per_level_se:
        gap_se[side] = np.empty(grid.size)
    scratch, own = np.empty(s), sim.own_throughput  # per-level gaps, each draw's work
    sloped = {} if blocked else _sloped(lines, per_u, scratch)
    unit_once = _proportional_unit(lines, per_u, own, h, scratch)
    per_draw = None  # work per draw: the percentiles of each draw's ratio
    if np.ndim(own):
        others = [side for side in lines if side not in unit_once]
        per_draw = _UnitRows(others, int(np.count_nonzero(grid > 0)), own, h, unit, scratch)
    for j, u in enumerate(grid):
        at = {
            side: rows[side][j] if side in rows else _tco_at(line, u, buf[side])
            for side, line in lines.items()
        }
        b = at["buy"]
        prob[j] = np.count_nonzero(b < at["rent"]) / s
        for side in per_level_se:
            gap_se[side][j] = mean_se(np.subtract(b, at[side], out=scratch), sim.sample.blocks)
        if j == sens_level:
            sens_gap = {side: b - at[side] for side in rivals}
        if prob_api is not None:
            prob_api[j] = np.count_nonzero(b < at["api"]) / s
        for side, p in prob_further.items():
            p[j] = np.count_nonzero(b < at[side]) / s
        if shares is not None:
            _cheapest_into(shares, j, list(at.values()), s)
        if per_draw is not None and u > 0:  # before the TCOs are reordered
            per_draw.put(j, u, at)
        for side, values in at.items():
            if side in unit_once and u > 0:  # the same at every u > 0
                unit[side].times(j, unit_once[side], 1.0)
            q = _sloped_percentiles(sloped[side], lines[side], u) if side in sloped else None
            if side in per_u:
                tco[side].times(j, per_u[side], float(u))
            elif side not in rows:
                tco[side].put(j, values, q=q)
    for side in per_draw.levels if per_draw is not None else ():
        per_draw.flush(side)
    for side, block in rows.items():
        tco[side].put_rows(block)
    for side, mean in means.items():  # the others' made level by level
        tco[side].mean = mean
    _over_one_work(unit, tco, grid, own, h)
    return _Levels(
        tco={side: bands.bands() for side, bands in tco.items()},
        unit=UnitCost(sim.inputs.unit, {side: bands.bands() for side, bands in unit.items()}),
        prob=frozen_array(prob),
        gap_se=gap_se,
        sens_gap=sens_gap,
        prob_api=None if prob_api is None else frozen_array(prob_api),
        cheapest=None if shares is None else _cheapest(lines, shares, sim.inputs.samples),
        prob_further={side: frozen_array(p) for side, p in prob_further.items()},
    )


def _over_one_work(
    unit: dict[str, LevelBands], tco: dict[str, LevelBands], grid: np.ndarray, own: Value, h: int
) -> None:
    """Each side's cost per unit of work [USD/unit] at the levels where every draw does the
    same work (one throughput ``own``, or u = 0): its TCO's percentiles over it (NaN at 0)."""
    for j, u in enumerate(grid):
        if not np.ndim(own) or u == 0:
            work = float(np.max(u * 730.0 * h * np.asarray(own)))
            for side, bands in tco.items():
                unit[side].scaled(j, bands, work)


def _payback_months(paid: Paybacks) -> Payback:
    """Percentiles of the payback month at every level [month] (NaN where they land on
    "never") and the share of draws that do not pay back within the horizon."""
    q, never = paid.summary()
    return Payback(*(frozen_array(q[k]) for k in ("p10", "p50", "p90")), frozen_array(never))


def _cumulative(sim: Simulation) -> CumulativeCost:
    """Percentiles by month of each side's cumulative cost at the report utilisation."""
    return CumulativeCost(
        utilisation=sim.report_utilisation,
        months=frozen_array(np.arange(sim.inputs.horizon_months + 1)),
        sides={side: LevelBands.of_rows(np.array(cum)) for side, cum in sim.cumulative().items()},
    )


def _sensitivity(
    sim: Simulation, grid: np.ndarray, sens_level: int, sens_gap: dict[str, np.ndarray]
) -> dict[str, tuple[Sensitivity, ValueOfInformation]]:
    """:func:`_by_input` against each rival side with the gap at the sensitivity level and,
    for the value of information, at the report utilisation (the same draws when the grid
    holds it)."""
    level, lines = sim.report_utilisation, sim.lines()
    gaps = {}
    for side, at_sens in sens_gap.items():
        if grid[sens_level] == level:
            gaps[side] = at_sens, at_sens
        else:
            buy = _per_draw(sim.buy.tco(level), sim.inputs.samples)
            gaps[side] = at_sens, buy - lines[side].tco(level)
    return _by_input(sim, gaps, float(grid[sens_level]), level)


def _rivals(
    sim: Simulation,
    levels: _Levels,
    by_side: dict[str, tuple[Sensitivity, ValueOfInformation]],
) -> tuple[Rival, ...]:
    """The uncertainty figures against each rival side but renting (the top-level ones), in
    the question's order: a hosted API's and each further side's, with its break-even, gap
    and P(buy cheaper than it)."""
    against = {} if sim.api is None else {"api": (sim.breakeven_api, levels.prob_api)}
    against |= {
        side: (sim.breakeven_further[side], levels.prob_further[side]) for side in sim.further
    }
    out = []
    for side, (breakeven, prob) in against.items():
        sens, voi = by_side[side]
        t = tornado(sim.inputs, sim.report_utilisation, side)
        c = _convergence(sim, breakeven, levels.gap_se[side], prob)
        out.append(Rival(side, sens, t, voi, c))
    return tuple(out)


def summarise(sim: Simulation, phases: Phases | None = None) -> Result:
    """Mean and percentiles of every outcome per utilisation level: the TCO bands, break-even,
    payback, the cumulative cost by month, sensitivity and the value of information, and the
    precision of the run (its convergence); with a hosted API also its TCO, break-even and
    payback against it and the share of draws in which each side is the cheapest."""
    phases = phases or Phases()
    phases.start()
    inputs = sim.inputs
    grid = frozen_array(inputs.utilisation)
    sens_level = int(np.argmin(np.abs(grid - sim.report_utilisation)))
    levels = _level_bands(sim, grid, sens_level)
    payback_months = _payback_months(sim.paybacks["rent"])
    breakeven = summarise_breakeven(sim.breakeven)
    by_side = _sensitivity(sim, grid, sens_level, levels.sens_gap)
    sensitivity, voi = by_side["rent"]
    result = Result(
        utilisation=grid,
        buy_tco=levels.tco["buy"],
        rent_tco=levels.tco["rent"],
        prob_buy_cheaper=levels.prob,
        breakeven_utilisation=breakeven,
        payback_months=payback_months,
        cost_per_unit=levels.unit,
        cumulative_cost=_cumulative(sim),
        sensitivity=sensitivity,
        convergence=_convergence(sim, sim.breakeven, levels.gap_se["rent"], levels.prob),
        tornado=tornado(inputs, sim.report_utilisation),
        value_of_information=voi,
        seed=inputs.seed,
        samples=inputs.samples,
        method=inputs.method,
        availability=_availability(sim),
        carbon=None if sim.carbon is None else _carbon(sim.carbon, inputs, sim.own_throughput),
        rivals=_rivals(sim, levels, by_side),
        versus=_versus(sim, levels),
        cheapest_share=levels.cheapest,
        **_api_outcomes(sim, levels),
    )
    phases.mark("summary")
    return result


def _availability(sim: Simulation) -> Availability | None:
    """Mean and percentiles of the owned GPUs' availability over the draws [-]; ``None`` for
    a build without downtime (every repair_days 0)."""
    if sim.inputs.buy.repair_days.support()[1] == 0.0:
        return None
    values = _per_draw(sim.availability, sim.inputs.samples)
    return Availability(float(values.mean()), **percentiles(values))


def _api_outcomes(sim: Simulation, levels: _Levels) -> dict[str, object]:
    """The result's fields of buying against a hosted API; none without one."""
    if sim.api is None:
        return {}
    return {
        "api_tco": levels.tco["api"],
        "prob_buy_cheaper_than_api": levels.prob_api,
        "breakeven_vs_api": summarise_breakeven(sim.breakeven_api),
        "payback_vs_api_months": _payback_months(sim.paybacks["api"]),
    }


def _versus(sim: Simulation, levels: _Levels) -> dict[str, Versus]:
    """Buying against each further side: its TCO bands, P(buy cheaper), break-even and
    payback."""
    return {
        side: Versus(
            tco=levels.tco[side],
            prob_buy_cheaper=levels.prob_further[side],
            breakeven=summarise_breakeven(sim.breakeven_further[side]),
            payback=_payback_months(sim.paybacks[side]),
        )
        for side in sim.further
    }


def _carbon_level(
    t: LevelBands,
    g: LevelBands,
    j: int,
    kg: np.ndarray,
    work: np.ndarray,
    q: dict[str, float] | None = None,
    per_draw: bool | None = None,
) -> None:
    """Level ``j`` of the emissions ``kg`` [kg CO2e] of every draw into ``t`` [t CO2e] and,
    over ``work`` [units of work] (a 0-d array, or one per draw, then overwritten), into ``g``
    [g CO2e/unit]; ``q``, when given, holds the percentiles of ``kg``; ``per_draw``, when
    given, whether ``work`` is an array above 0 in every draw (else looked at)."""
    if per_draw is None:
        per_draw = work.ndim > 0 and bool(np.all(work > 0))
    if per_draw:  # work per draw: the percentiles of each draw's ratio
        g.put(j, np.divide(kg, work, out=work), scale=1.0 / carbon.G_PER_KG)
    t.put(j, kg, scale=carbon.KG_PER_TONNE, q=q)
    if not per_draw:  # [t] / [units/1e6] = [g/unit]
        g.scaled(j, t, float(np.max(work)) / 1e6)


def _carbon_rows(
    t: LevelBands,
    g: LevelBands,
    line: carbon.CarbonLine,
    grid: np.ndarray,
    full: np.ndarray,
    rising: RisingLine | None,
    buffers: tuple[np.ndarray, np.ndarray],
) -> None:
    """Every level of ``grid`` of the emissions of the draws on ``line`` [kg CO2e] into ``t``
    [t CO2e] and, over each draw's work at u = 1 ``full`` (a 0-d array, or (S,)) times u, into
    ``g`` [g CO2e/unit], with two free buffers of the S draws. The mean at u is mean(at_zero)
    + u * mean(per_u) (the same within rounding); the percentiles of the emissions come from
    ``rising`` when given, else from every draw's, and those over the work from each draw's
    at_zero/work / u + per_u/work, both ratios made once: at every level a product and a sum a
    draw, where the work is above 0 in every draw (else the emissions' percentiles over the
    most work). The levels' draws are selected in blocks of levels x draws
    (:data:`_UNIT_BLOCK_ELEMENTS`)."""
    s = buffers[0].size
    at_zero = np.broadcast_to(line.at_zero, (s,))
    per_u = np.broadcast_to(line.per_u, (s,))
    t.mean[:] = (float(np.mean(at_zero)) + grid * float(np.mean(per_u))) / carbon.KG_PER_TONNE
    if rising is not None:
        for j, u in enumerate(grid):
            t.put_percentiles(j, rising.percentiles(float(u)), scale=carbon.KG_PER_TONNE)
    else:
        for levels, rows in _level_rows(grid, at_zero, per_u, 1.0):
            t.put_percentiles(levels, percentiles(rows), scale=carbon.KG_PER_TONNE)
    per_draw = grid * float(full.min()) > 0 if full.ndim else np.zeros(grid.size, dtype=bool)
    if per_draw.any():  # the work above 0 in every draw: each draw's ratio
        fixed, rate = (
            np.divide(x, full, out=b) for x, b in zip((at_zero, per_u), buffers, strict=True)
        )
        for levels, rows in _level_rows(grid[per_draw], rate, fixed, -1.0):
            for name, q in percentiles(rows).items():
                g.q[name][np.flatnonzero(per_draw)[levels]] = q * carbon.G_PER_KG
    for j in np.flatnonzero(~per_draw):  # [t] / [units/1e6] = [g/unit]
        g.scaled(j, t, float(np.max(grid[j] * full)) / 1e6)


def _level_rows(
    grid: np.ndarray, first: np.ndarray, second: np.ndarray, power: float
) -> Iterator[tuple[slice, np.ndarray]]:
    """``first + second * u**power`` (levels, S) for each block of the levels ``grid`` of
    at most :data:`_UNIT_BLOCK_ELEMENTS` (one level at least), in one buffer, with the
    block's slice of ``grid``."""
    step = max(1, min(grid.size, _UNIT_BLOCK_ELEMENTS // first.size))
    buf = np.empty((step, first.size))
    for start in range(0, grid.size, step):
        levels = slice(start, min(grid.size, start + step))
        rows = buf[: levels.stop - start]
        np.multiply(second, grid[levels, None] ** power, out=rows)
        rows += first
        yield levels, rows


def _per_draw_line(line: carbon.CarbonLine) -> bool:
    """Whether ``line``'s emissions differ between draws."""
    return bool(np.ndim(line.at_zero) or np.ndim(line.per_u))


def _kg_into(out: np.ndarray, line: carbon.CarbonLine, u: float) -> np.ndarray:
    """Every draw's emissions [kg CO2e] on ``line`` at utilisation ``u``, into ``out``."""
    np.multiply(line.per_u, u, out=out)
    out += line.at_zero
    return out


def _carbon(e: carbon.Emissions, inputs: ModelInputs, own: Value) -> Carbon:
    """Each side's emissions per level of ``inputs.utilisation`` [t CO2e] (mean and
    percentiles) and per unit of work [g CO2e/unit]: kg*1000/(u*730*H*T_own), T_own = ``own``
    [units of work/hour], NaN at u = 0; an API of unknown emissions is named in ``unknown``.
    A line through the origin (renting, the API) is summarised once, at u = 1: its bands at u
    are those times u, and per unit of work the same at every u > 0."""
    grid, s = np.asarray(inputs.utilisation, dtype=float), inputs.samples
    sides = {"buy": e.buy, "rent": e.rent, **({"api": e.api} if e.api is not None else {})}
    tonnes = {side: LevelBands(grid.size) for side in sides}
    per = {side: LevelBands(grid.size, mean=False) for side in sides}
    origin = [k for k, x in sides.items() if not np.any(x.at_zero)]
    same = [k for k, x in sides.items() if k not in origin and not _per_draw_line(x)]
    rising = {  # a line per draw whose ends rise together: its percentiles from one sort
        k: RisingLine.of(*(np.broadcast_to(v, (s,)) for v in (x.at_zero, x.per_u)))
        for k, x in sides.items()
        if k not in origin and k not in same
    }  # before the buffers below (a million draws: 8 MB each)
    kg, scratch = np.empty(s), np.empty(s)  # each draw's emissions and work at a level
    full = HOURS_PER_MONTH * inputs.horizon_months * np.asarray(own, dtype=float)  # at u = 1

    def work(u: float) -> np.ndarray:
        return u * full if full.ndim == 0 else np.multiply(u, full, out=scratch)

    once = {}
    for side in origin:
        once[side] = LevelBands(1), LevelBands(1, mean=False)
        _carbon_level(*once[side], 0, _kg_into(kg, sides[side], 1.0), work(1.0))
    ratios = Reciprocals(full) if same and full.ndim and np.all(full > 0) else None
    # u * full > 0 in every draw where u * min(full) is (a product with u >= 0 is monotone)
    smallest = float(full.min()) if full.ndim else math.nan
    for side in rising:  # a line per draw
        _carbon_rows(tonnes[side], per[side], sides[side], grid, full, rising[side], (kg, scratch))
    for j, u in enumerate(grid):
        for side, line in sides.items():
            if side in rising:
                continue
            if side in once:
                t1, g1 = once[side]
                tonnes[side].times(j, t1, float(u))
                if u > 0:
                    per[side].times(j, g1, 1.0)
                else:
                    per[side].scaled(j, tonnes[side], 0.0)
            elif side in same and ratios is not None and u * ratios.smallest > 0:
                # the same emissions in every draw over each draw's work (after the loop)
                tonnes[side].put(j, _kg_into(kg, line, u), scale=carbon.KG_PER_TONNE)
            else:
                line_q = rising.get(side)
                q = None if line_q is None else line_q.percentiles(float(u))
                kg_u, per_draw = _kg_into(kg, line, u), bool(u * smallest > 0)
                _carbon_level(tonnes[side], per[side], j, kg_u, work(u), q, per_draw)
    if ratios is not None:  # the same emissions in every draw over each draw's work
        at = grid * ratios.smallest > 0
        for side in same:
            line = sides[side]
            g = ratios.percentiles(line.per_u * grid[at] + line.at_zero, grid[at])
            per[side].put_percentiles(at, g, scale=1.0 / carbon.G_PER_KG)  # every level at once
    bands = {side: b.bands() for side, b in tonnes.items()}
    unit = UnitCost(inputs.unit, {side: b.bands() for side, b in per.items()})
    unknown = ("api",) if inputs.api is not None and e.api is None else ()
    unknown += tuple(inputs.further_sides)
    return Carbon(sides=bands, per_unit=unit, unknown=unknown)
