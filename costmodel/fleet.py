"""Fleet planning: the cost of every mix of owned servers and reserved instances, the rest of a
growing, uncertain demand going to on-demand or spot burst instances or to a hosted API.

Per draw, candidate (S servers, K reserved instances) and month m = 1..H, with T_srv, T_res and
T_burst the throughput [units of work/hour] of one server and one instance (the unit is the
demand's: reference GPU-hours, or millions of tokens):

- work W_m = W_1 (1 + g_w)^((m-1)/12), owned capacity C = 730 S T_srv A(S), reserved
  V = 730 K T_res, with A(S) the share of the fleet's S N GPUs in service (1 without downtime:
  :func:`costmodel.downtime.availability` with the pooled spares s = ceil(spare_share S N));
- within the month the load is a daily sinusoid of peak-to-mean ratio k (:mod:`costmodel.load`),
  so a capacity of c a month serves W_m F(c / W_m), a = k - 1: owned work A_m = W_m F(C / W_m),
  A_m + B_m = W_m F((C + V) / W_m), burst O_m = W_m - A_m - B_m (served in that order; with
  k = 1, A_m = min(W_m, C) and B_m = min(W_m - A_m, V)); owned utilisation u_m = A_m / C;
- cost = S * TCO_buy(0) + s * TCO_spare + K * R_res + (1 - tau) sum_m d_m
  [k_A (1 + g_e)^((m-1)/12) A_m / A(S) + k_O (1 + g_b)^((m-1)/12) O_m].

TCO_buy(0) is one server's TCO of the rent-versus-buy model at zero utilisation (capex, idle
power, fixed costs, tax shield, resale, paid as its financing says); TCO_spare what one spare
GPU adds to it (:func:`~costmodel.cashflows.spare_cost`); the power that grows with
utilisation costs k_A = kW_per_u 730 PUE e / (730 T_srv) per unit of work of every GPU, so
owned energy follows each month's own utilisation u_m = A_m / C (GPUs in repair are counted in
the power, as in the rent-versus-buy model). R_res = (1 - tau) 730 p_res
sum_m d_m (1 + g_res)^((m-1)/12) over the months to the end of the term running at H (a
reservation is owed to its end, as in the rent-versus-buy model). k_O = p_burst (1 + spot
overhead) / T_burst; an API burst is an "instance" of one M tokens an hour at the blended price
p_api (no overhead), so k_O = p_api and g_b its price change. Every candidate is evaluated on
the same draws (common random numbers), so differences between candidates are not noise.

A plan that counts carbon (``inputs.carbon``) adds each candidate's emissions [kg CO2e], from
the same monthly work (:mod:`costmodel.fleet_carbon`; I [gCO2e/kWh], g_* the grids' annual
changes, L, L_p the service lives [year], months of 730 h):

- owned operational = sum_m [S kW_idle 730 + kW_per_u A_m / (T_srv A(S))] PUE I_own
  (1 + g_I)^((m-1)/12) / 1000: the power the cost charges (spares on the shelf draw none);
- owned embodied = (S E_own + s e_gpu) min(1, H / (12 L)), E_own one server's (N GPUs and the
  platform), e_gpu a pooled spare GPU's (servers added later count from their dates, as
  :mod:`costmodel.fleet_carbon` says);
- reserved = sum_m (B_m / T_res) [P PUE_p I (1 + g_r)^((m-1)/12) / 1000 + E_inst / (8760 L_p)]:
  the hours used, not the idle committed ones; burst the same with O_m (1 + spot overhead)
  / T_burst hours and the burst's own figures; an API burst O_m g_api / 1000 [M tokens x
  g/M tokens], unknown (every candidate's emissions ``None``) without g_api.

A carbon price p [USD/kg] adds p (S E_own + s e_gpu) min(1, H / (12 L)) at m = 0 (no tax, not
discounted) and (1 - tau) p sum_m d_m (operational_m + reserved_m + burst_m) to the cost; at
p = 0 no cost moves, and the carbon inputs are drawn on their own streams.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from pricing.vocabulary import RESERVATION_MONTHS

from .carbon import G_PER_KG, KG_PER_TONNE, carbon_values
from .cashflows import (
    HOURS_PER_MONTH,
    ApiDraws,
    BuyDraws,
    RentDraws,
    Terms,
    Value,
    busy_energy_month,
    buy_line,
    capacity,
    capacity_all_up,
    discount_factors,
    growth_sum,
    spare_cost,
    term_end,
)
from .downtime import availability
from .engine import Progress, draw
from .fleet_carbon import FleetEmissions, Tally, fleet_emissions, weighted_rows, weighted_sum
from .fleet_load import Above, Below, Months
from .inputs import Addition, ApiInputs, PlanInputs
from .plan_result import (
    Added,
    Candidate,
    CarbonStats,
    Choice,
    CostStats,
    PlanResult,
    Precision,
    ServiceMonth,
    StagingSaving,
    WorkSplit,
)
from .result import InputValue
from .sampling import Sample, stream
from .staging import Cohort, first_month_above, work_band
from .stats import (
    bootstrap_difference_se,
    frontier,
    input_bins,
    input_ranks,
    percentiles,
    row_stats,
    significant,
    uncertain,
)
from .uncertainty import evppi, expected_value_of_information, replicate_se, wilson

__all__ = [
    "BLOCK_BYTES",
    "FleetSimulation",
    "block_rows",
    "run_plan",
    "simulate_plan",
    "summarise_plan",
    "work_split",
]

#: Elements of one chunk's (months x draws) arrays.
_CHUNK_ELEMENTS = 2_000_000
#: The percentiles of a candidate's cost, as the engine's results give them.


@dataclass(frozen=True, eq=False)
class FleetSimulation:
    """Per-draw outcomes of every candidate. Shapes: C candidates, S draws.

    ``servers``, ``instances`` (C,) [count]; ``cost`` (C, S) [USD, present value];
    ``share_owned`` (C, S) [-], sum A_m / sum W_m; ``owned_utilisation`` (C, S) [-],
    sum A_m / (H C), 0 without servers; ``cloud`` (S,) [USD], the cost of S = K = 0; ``draws``
    every input by name and ``sample`` the ranks the sampler knew (:func:`work_split` gives a
    candidate's monthly work split from them); ``availability`` (C,) [-] the mean share of
    each candidate's GPUs in service, ``None`` without downtime. For a plan that counts carbon
    (``inputs.carbon``), ``carbon`` (C, S) and ``cloud_carbon`` (S,) [kg CO2e] are each
    candidate's and all-cloud's emissions per draw and ``work`` (S,) [units of work] the work
    of each draw over the horizon; ``carbon_unknown`` names the sides of unknown emissions (an
    API burst without ``g_co2e_per_mtok``), whose candidates' emissions are then ``None``.
    """

    inputs: PlanInputs
    servers: np.ndarray
    instances: np.ndarray
    cost: np.ndarray
    share_owned: np.ndarray
    owned_utilisation: np.ndarray
    cloud: np.ndarray
    draws: dict[str, Value]
    sample: Sample
    availability: np.ndarray | None = None
    carbon: np.ndarray | None = None
    cloud_carbon: np.ndarray | None = None
    work: np.ndarray | None = None
    carbon_unknown: tuple[str, ...] = ()
    added: np.ndarray | None = None
    trigger: np.ndarray | None = None
    start: np.ndarray | None = None


@dataclass(frozen=True)
class _Pool:
    """The fleet's downtime and pooled spares: ``gpus`` N per server, the failure rate
    ``afr`` [1/year] and ``repair_days`` [day] (floats or (n,)), the ``share`` [-] of the
    fleet's GPUs kept spare and what each spare adds to the cost, ``spare_cost`` [USD]."""

    gpus: int
    afr: Value
    repair_days: Value
    share: float
    spare_cost: Value

    def spares(self, servers: int) -> int:
        """s = ceil(share * S * N) [GPU], within rounding (0.05 * 160 GPUs is 8 spares)."""
        return max(0, math.ceil(self.share * servers * self.gpus - 1e-9))

    def availability(self, servers: int, added: int = 0) -> Value:
        """A(S) [-]: the share of the S servers' GPUs in service, their spares pooled; with
        ``added`` S1 servers bought later, of the S + S1 servers with both pools together."""
        n = (servers + added) * self.gpus
        spares = self.spares(servers) + self.spares(added)
        return availability(n, self.afr, self.repair_days, spares)


@dataclass(frozen=True)
class _Chunk:
    """The month-major arrays and per-draw coefficients of a chunk of draws."""

    load: Months  # W_m (H, n) [units of work/month], its daily swing, its sums
    energy: np.ndarray  # d_m (1 + g_e)^((m-1)/12), (H,) or (H, n)
    burst: np.ndarray  # d_m (1 + g_b)^((m-1)/12), (H,) or (H, n)
    server_capacity: Value  # 730 T_srv, every GPU in service [units of work/month]
    instance_capacity: Value  # 730 T_res, 0 without a reserve
    server_cost: Value  # TCO_buy(0) of one server [USD]
    instance_cost: Value  # R_res [USD]
    k_owned: Value  # (1 - tau) k_A [USD/unit of work, month-1 prices]
    k_burst: Value  # (1 - tau) k_O
    pool: _Pool  # downtime and the pooled spares
    emits: FleetEmissions | None  # the emissions per unit of work, None without carbon
    tally: Tally | None = None  # the emissions' sums, None without carbon
    cohort: Cohort | None = None  # one added server's terms, None without ``add``
    price_change: Value = 0.0  # g_hw, the added servers' price change [1/year]

    def owned(self, servers: int) -> tuple[Value, Value, Value, Value]:
        """For ``servers`` S: the owned capacity C = S 730 T_srv A(S) [units of work/month],
        the energy cost of a unit of owned work k_A / A(S), the spares' cost s TCO_spare [USD]
        and A(S) [-]."""
        up = self.pool.availability(servers)
        capacity = servers * np.asarray(self.server_capacity, dtype=float)
        spares = self.pool.spares(servers)
        pool_cost = spares * self.pool.spare_cost if spares else 0.0
        if np.ndim(up) == 0 and up == 1.0:
            return capacity, self.k_owned, pool_cost, up
        return capacity * up, self.k_owned / up, pool_cost, up

    def grown(self, servers: int, added: int) -> tuple[Value, Value, Value]:
        """For ``servers`` S0 and ``added`` S1 in service together: their capacity
        [units of work/month], the energy cost of a unit of owned work k_A / A [USD/unit] and
        A [-], both pools of spares together."""
        up = self.pool.availability(servers, added)
        capacity = (servers + added) * np.asarray(self.server_capacity, dtype=float)
        return capacity * up, self.k_owned / up, up


def _amplitude(peak_to_mean: Value) -> Value | None:
    """a = k - 1, the daily swing [-] (a float or per draw); ``None`` for a flat load."""
    amplitude = np.asarray(peak_to_mean, dtype=float) - 1.0
    if not amplitude.ndim and amplitude == 0.0:
        return None
    return amplitude


def _discounted_growth(annual_change: Value, d: np.ndarray) -> np.ndarray:
    """d_m (1 + g)^((m - 1)/12) for m = 1..H: ``(H,)`` for a fixed g, else ``(H, n)``."""
    g = np.asarray(annual_change, dtype=float)
    months = np.arange(d.size) / 12.0
    if g.ndim:
        return (1.0 + g) ** months[:, None] * d[:, None]
    return (1.0 + float(g)) ** months * d


def _chunk(inputs: PlanInputs, values: dict[str, Value], n: int, emits: bool = True) -> _Chunk:
    """The chunk of ``n`` draws ``values``; its emissions only when ``emits`` (and the plan
    counts carbon: then ``values`` holds the carbon inputs)."""
    h, rate, tau = inputs.horizon_months, inputs.discount_rate, inputs.tax_rate
    d = discount_factors(rate, h)
    own = BuyDraws.sampled(inputs.own, values, "own")
    t_srv = capacity_all_up(own)
    if isinstance(inputs.burst, ApiInputs):
        burst = ApiDraws.sampled(inputs.burst, values, inputs.burst_side).as_rented()
    else:
        burst = RentDraws.sampled(inputs.burst, values, "burst")
    t_burst = capacity(burst)
    overhead = burst.spot_interruption_overhead if burst.pricing == "spot" else 0.0
    if inputs.reserve is None:
        reserved, instance_cost, t_res = 0.0, 0.0, None
    else:
        res = RentDraws.sampled(inputs.reserve, values, "reserve")
        t_res = capacity(res)
        reserved = HOURS_PER_MONTH * t_res
        end = term_end(RESERVATION_MONTHS[res.pricing], h)
        owed = growth_sum(res.price_annual_change, rate, end)
        instance_cost = (1.0 - tau) * HOURS_PER_MONTH * res.price_usd_per_hour * owed
    growth = np.asarray(values["demand.annual_growth"], dtype=float)
    work = np.empty((h, n))  # W_m = W_1 (1 + g_w)^((m - 1)/12), month-major
    work[...] = (1.0 + growth) ** (np.arange(h)[:, None] / 12.0)
    work *= values[f"demand.{inputs.demand.work_field}"]
    energy = _discounted_growth(own.electricity_annual_change, d)
    burst_d = _discounted_growth(burst.price_annual_change, d)
    k_burst = (1.0 - tau) * burst.price_usd_per_hour * (1.0 + overhead) / t_burst
    emitted = fleet_emissions(
        inputs.carbon if emits else None, values, own, (t_srv, t_res, t_burst), 1.0 + overhead,
        (d, tau),
    )  # fmt: skip
    return _Chunk(
        load=Months.of(work, growth, _amplitude(values["demand.peak_to_mean"])),
        energy=energy,
        burst=burst_d,
        server_capacity=HOURS_PER_MONTH * t_srv,
        instance_capacity=reserved,
        server_cost=buy_line(own, Terms(h, rate, tau)).at_zero,
        instance_cost=instance_cost,
        k_owned=(1.0 - tau) * busy_energy_month(own) / (HOURS_PER_MONTH * t_srv),
        k_burst=k_burst,
        pool=_Pool(
            own.gpu_count,
            own.gpu_annual_failure_rate,
            own.repair_days,
            inputs.spare_share,
            spare_cost(own, Terms(h, rate, tau)) if inputs.spare_share else 0.0,
        ),
        emits=emitted,
        tally=None if emitted is None else Tally.of(emitted, work, burst_d, k_burst),
        cohort=None if inputs.add is None else Cohort.of(own, h, rate, tau, energy),
        price_change=values.get("own.add.price_annual_change", 0.0),
    )


def _rows(x: Value, rows: slice) -> Value:
    return x[rows] if np.ndim(x) else x


@dataclass(frozen=True)
class _Out:
    """The per-draw outcomes being filled, chunk by chunk (see :class:`FleetSimulation`)."""

    cost: np.ndarray
    share: np.ndarray
    util: np.ndarray
    cloud: np.ndarray
    up: np.ndarray
    carbon: np.ndarray | None
    cloud_carbon: np.ndarray | None
    work: np.ndarray | None
    start: np.ndarray | None  # (staged candidates, n): first month of service, inf = never


def _out(inputs: PlanInputs, candidates: int, staged: int) -> _Out:
    n = inputs.samples
    counted = inputs.carbon is not None
    return _Out(
        *(np.empty((candidates, n)) for _ in range(3)),
        np.empty(n),
        np.zeros(candidates),  # sum over the draws of each candidate's A(S)
        np.empty((candidates, n)) if counted else None,
        np.empty(n) if counted else None,
        np.empty(n) if counted else None,
        np.empty((staged, n)) if staged else None,
    )


def _cloud(c: _Chunk, out: _Out, rows: slice, total: np.ndarray) -> None:
    """All-cloud's cost and emissions for the draws ``rows``: the burst of a capacity of 0,
    summed as every candidate's burst is, so that (0, 0) costs what all-cloud does."""
    nothing = Above(c.load, 0.0)
    out.cloud[rows] = c.k_burst * weighted_sum(c.burst, nothing)
    e = c.emits
    if e is None:
        return
    out.work[rows] = total
    if e.burst is None:  # unknown: zeros
        kg = np.zeros((e.owned.shape[0], total.size))
    else:
        kg = weighted_rows(e.burst, nothing)
    out.cloud_carbon[rows] = kg[0]
    if e.price is not None:
        out.cloud[rows] += e.price * kg[1]


def _shares(owned: np.ndarray, total: np.ndarray, held: Value) -> tuple[np.ndarray, np.ndarray]:
    """The owned share sum A_m / sum W_m and utilisation sum A_m / sum C_m per draw [-], from
    the ``owned`` and ``total`` work and the capacity ``held`` over the months, clipped to
    rounding (0 where there is no work, or no capacity)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.clip(np.where(total > 0, owned / total, 0.0), 0.0, 1.0)
        util = np.clip(np.where(np.asarray(held) > 0, owned / held, 0.0), 0.0, 1.0)
    return share, util


def _fill_chunk(c: _Chunk, inputs: PlanInputs, out: _Out, rows: slice, grid: _Grid) -> None:
    """The outcomes of ``grid``'s candidates that add nothing later, for the draws ``rows`` of
    chunk ``c``: per server count S, its owned work in closed form, then the burst of every
    reservation count K at once (:mod:`costmodel.fleet_load`)."""
    h, n = inputs.horizon_months, rows.stop - rows.start
    load = c.load
    total = Above(load, 0.0).sum()
    _cloud(c, out, rows, total)
    tally = c.tally
    instance = np.asarray(c.instance_capacity, dtype=float)
    plain = grid.added == 0
    for s in np.unique(grid.servers[plain]).tolist():
        at = np.flatnonzero(plain & (grid.servers == s))
        ks = grid.instances[at][:, None]
        capacity, k_owned, pool_cost, kept = c.owned(s)
        owned = Below(load, capacity)  # A_m
        fixed = s * c.server_cost + k_owned * weighted_sum(c.energy, owned)
        if np.any(pool_cost):  # one per draw when the spares' inputs are drawn
            fixed = fixed + pool_cost
        out.up[at] += np.sum(kept) if np.ndim(kept) else kept * n
        out.share[at, rows], out.util[at, rows] = _shares(owned.sum(), total, h * capacity)
        cost = fixed + ks * c.instance_cost
        if tally is None:
            rest = Above(load, capacity + ks * instance)  # O_m of every K
            out.cost[at, rows] = cost + c.k_burst * weighted_sum(c.burst, rest)
            continue
        kg = tally.servers(s, c.pool.spares(s), owned, kept)  # alone, beside reservations

        def rests(k: np.ndarray, capacity=capacity) -> list[Above]:  # O_m of each K
            return [Above(load, capacity + k * instance)]

        _with_carbon(tally, out, (at, rows), ks, cost, rests, kg)


def _with_carbon(tally, out: _Out, where: tuple, ks: np.ndarray, cost, rests, kg) -> None:
    """The cost [USD] and kg of the candidates ``where`` (their indices, the draws' rows) with
    reservation counts ``ks`` (K, 1), from their ``cost`` without burst, ``rests(k)`` their
    burst work O_m in closed form (by part of the horizon) and ``kg`` their servers' kg alone
    and beside reservations (:meth:`~costmodel.fleet_carbon.Tally.servers`)."""
    at, rows = where
    for beside in (False, True):
        some = (ks[:, 0] > 0) == beside
        if some.any():
            out.cost[at[some], rows], out.carbon[at[some], rows] = tally.candidate(
                cost[some] if np.ndim(cost) == 2 else cost, rests(ks[some]), beside, kg[beside]
            )


@dataclass(frozen=True)
class _Grid:
    """The candidates, one entry each (C,): ``servers`` S0, ``instances`` K, ``added`` S1 and
    ``trigger`` (a share theta, or a month for ``at_month``; NaN when nothing is added). The
    (S0, K) pairs come first, in section 8's order, then the staged ones by (S0, K, S1,
    trigger)."""

    servers: np.ndarray
    instances: np.ndarray
    added: np.ndarray
    trigger: np.ndarray


def _grid(inputs: PlanInputs) -> _Grid:
    s_lo, s_hi = inputs.servers
    k_lo, k_hi = inputs.instances
    s = np.arange(s_lo, s_hi + 1)
    k = np.arange(k_lo, k_hi + 1)
    servers, instances = np.repeat(s, k.size), np.tile(k, s.size)
    added, trigger = np.zeros(servers.size, dtype=int), np.full(servers.size, np.nan)
    add = inputs.add
    if add is None or not add.counts:
        return _Grid(servers, instances, added, trigger)
    per_pair = len(add.counts) * len(add.triggers)
    more = _Grid(
        np.repeat(servers, per_pair),
        np.repeat(instances, per_pair),
        np.tile(np.repeat(add.counts, len(add.triggers)), servers.size),
        np.tile(np.asarray(add.triggers, dtype=float), servers.size * len(add.counts)),
    )
    return _Grid(
        *(np.concatenate((a, b)) for a, b in zip(
            (servers, instances, added, trigger),
            (more.servers, more.instances, more.added, more.trigger),
            strict=True,
        ))
    )  # fmt: skip


def _bought(c: _Chunk, add: Addition, capacity: Value, trigger: float) -> np.ndarray:
    """The month a [month] each draw buys the added servers: the first whose work passes
    ``trigger`` times the first servers' ``capacity``, or the trigger itself for ``at_month``;
    H + 1 where none does."""
    if add.by_month:
        return np.full(c.load.work.shape[1], int(trigger))
    return first_month_above(c.load.work, trigger * np.asarray(capacity))


def _fill_staged(c: _Chunk, inputs: PlanInputs, out: _Out, rows: slice, grid: _Grid) -> None:
    """The outcomes of ``grid``'s candidates that add servers later, for the draws ``rows`` of
    chunk ``c``: per (S0, trigger, S1), the months before the added servers serve and those
    after each summed in closed form, then the burst of every K at once."""
    add, h = inputs.add, inputs.horizon_months
    load = c.load
    total = Above(load, 0.0).sum()
    instance = np.asarray(c.instance_capacity, dtype=float)
    staged = grid.added > 0
    place = np.cumsum(staged) - 1  # each staged candidate's row of ``out.start``
    tally = c.tally
    for s0 in np.unique(grid.servers[staged]).tolist():
        cap0, k0, pool_cost, up0 = c.owned(s0)
        mine = staged & (grid.servers == s0)
        for trigger in np.unique(grid.trigger[mine]).tolist():
            bought = _bought(c, add, cap0, trigger)
            start = bought + add.lead_time_months + 1
            split = np.clip(start - 1, 0, h)  # months before the added servers serve
            spans = load.span(0, split), load.span(split, h)
            for s1 in np.unique(grid.added[mine & (grid.trigger == trigger)]).tolist():
                at = np.flatnonzero(mine & (grid.trigger == trigger) & (grid.added == s1))
                ks = grid.instances[at][:, None]
                cap1, k1, up1 = c.grown(s0, s1)
                before, after = Below(load, cap0, spans[0]), Below(load, cap1, spans[1])
                cohort = c.cohort.priced(s1, c.pool.spares(s1), bought, start, c.price_change)
                energy = k0 * weighted_sum(c.energy, before) + k1 * weighted_sum(c.energy, after)
                fixed = s0 * c.server_cost + pool_cost + energy + cohort
                held = split * cap0 + (h - split) * cap1
                shares = _shares(before.sum() + after.sum(), total, held)
                parts = ((cap0, spans[0]), (cap1, spans[1]))

                def rests(k: np.ndarray, parts=parts) -> list[Above]:  # O_m of each K, by part
                    return [Above(load, cap + k * instance, span) for cap, span in parts]

                cost = fixed + ks * c.instance_cost
                if tally is None:
                    burst = sum(weighted_sum(c.burst, r) for r in rests(ks))
                    out.cost[at, rows] = cost + c.k_burst * burst
                else:
                    kg = tally.staged(
                        (s0, c.pool.spares(s0)),
                        (s1, c.pool.spares(s1)),
                        ((before, up0), (after, up1)),
                        bought,
                        start,
                    )
                    _with_carbon(tally, out, (at, rows), ks, cost, rests, kg)
                out.share[at, rows], out.util[at, rows] = shares
                out.up[at] += np.sum((split * up0 + (h - split) * up1) / h)
                out.start[place[at], rows] = np.where(start <= h, start, np.inf)


@dataclass(frozen=True, eq=False)
class _Sampled:
    """Every input drawn once: ``values`` by name, the ranks the sampler knew (``sample``)
    and the carbon inputs drawn on their own streams (``apart``)."""

    values: dict[str, Value]
    sample: Sample
    apart: dict[str, Value]
    kept: dict[int, _Chunk] = dataclasses.field(default_factory=dict)

    def chunk(self, inputs: PlanInputs, rows: slice) -> _Chunk:
        """The chunk of the draws ``rows``; kept for the next block of candidates when it
        holds every draw (one chunk: no more memory than one block's evaluation holds)."""
        found = self.kept.get(rows.start)
        if found is not None:
            return found
        part = {k: _rows(v, rows) for k, v in {**self.values, **self.apart}.items()}
        chunk = _chunk(inputs, part, rows.stop - rows.start)
        if rows.start == 0 and rows.stop == inputs.samples:
            self.kept[0] = chunk
        return chunk


def _sampled(inputs: PlanInputs) -> _Sampled:
    values, drawn = draw(inputs)
    return _Sampled(values, drawn, carbon_values(inputs))


def _take(grid: _Grid, index: np.ndarray) -> _Grid:
    """The candidates ``index`` of ``grid``, in that order."""
    return _Grid(grid.servers[index], grid.instances[index], grid.added[index], grid.trigger[index])


def simulate_plan(inputs: PlanInputs, progress: Progress | None = None) -> FleetSimulation:
    """Sample every input once and evaluate every candidate on the same draws; the carbon
    inputs of an unpriced carbon are drawn on their own streams (:func:`carbon_values`).

    ``progress``, when given, is told the share of the draws done after each chunk of them,
    rising to 1 (:func:`summarise_plan` is not counted: it takes a few per cent of the time).
    Every candidate's outcome over every draw is held at once: :func:`run_plan` evaluates
    them block by block instead.
    """
    return _simulate(inputs, _grid(inputs), _sampled(inputs), progress)


def _simulate(
    inputs: PlanInputs, grid: _Grid, sampled: _Sampled, progress: Progress | None = None
) -> FleetSimulation:
    """The candidates ``grid`` (those that add servers later after the others) on the draws
    ``sampled``, chunk of draws by chunk."""
    staged = int(np.count_nonzero(grid.added))
    n, h = inputs.samples, inputs.horizon_months
    out = _out(inputs, grid.servers.size, staged)
    step = max(1, _CHUNK_ELEMENTS // h)
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        chunk = sampled.chunk(inputs, rows)
        _fill_chunk(chunk, inputs, out, rows, grid)
        if staged:
            _fill_staged(chunk, inputs, out, rows, grid)
        if progress is not None:
            progress(rows.stop / n)
    downtime = inputs.own.repair_days.support()[1] > 0.0
    c = inputs.carbon
    unknown = ("burst.api",) if c is not None and c.burst is None and c.api is None else ()
    return FleetSimulation(
        inputs, grid.servers, grid.instances, out.cost, out.share, out.util, out.cloud,
        sampled.values, sampled.sample,
        availability=out.up / n if downtime else None,
        carbon=None if unknown else out.carbon,
        cloud_carbon=None if unknown else out.cloud_carbon,
        work=out.work,
        carbon_unknown=unknown,
        added=grid.added,
        trigger=grid.trigger,
        start=out.start,
    )  # fmt: skip


def work_split(
    sim: FleetSimulation, servers: int, instances: int, added: int = 0, trigger: float = 0.0
) -> WorkSplit:
    """Mean owned, reserved and burst work [units of work/month] of each month for the
    candidate (``servers``, ``instances``), which adds ``added`` servers at ``trigger`` (a
    share of the first servers' capacity, or a month for ``at_month``); for a plan with
    ``own.add``, also its mean owned capacity and the P10 and P90 of each month's work."""
    inputs, values = sim.inputs, sim.draws

    def chunk(rows: slice) -> _Chunk:  # without emissions: the split needs none
        part = {k: _rows(v, rows) for k, v in values.items()}
        return _chunk(inputs, part, rows.stop - rows.start, False)

    return _split(inputs, chunk, (servers, instances, added, trigger), values)


def _split(
    inputs: PlanInputs, chunk_of, plan: tuple[int, int, int, float], draws: dict[str, Value]
) -> WorkSplit:
    """:func:`work_split` of ``plan`` (servers, instances, added, trigger) over the chunks of
    draws ``chunk_of(rows)`` gives, ``draws`` the plan's drawn inputs (for the work's band)."""
    servers, instances, added, trigger = plan
    n, h = inputs.samples, inputs.horizon_months
    sums = np.zeros((4, h))  # owned, reserved and burst work, owned capacity
    step = max(1, _CHUNK_ELEMENTS // h)
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        c = chunk_of(rows)
        owned = c.owned(servers)[0]
        if added:
            bought = _bought(c, inputs.add, owned, trigger)
            later = np.arange(1, h + 1)[:, None] >= bought + inputs.add.lead_time_months + 1
            owned = np.where(later, c.grown(servers, added)[0], owned)
        sums[:3] += c.load.split(owned, instances * np.asarray(c.instance_capacity))
        sums[3] += np.broadcast_to(owned, (h, rows.stop - start)).sum(axis=1)
    mean = sums / n
    if inputs.add is None or not inputs.add.counts:  # no candidate adds servers
        return WorkSplit(owned=mean[0], reserved=mean[1], burst=mean[2])
    low, high = work_band(draws[f"demand.{inputs.demand.work_field}"],
                          draws["demand.annual_growth"], h)  # fmt: skip
    return WorkSplit(mean[0], mean[1], mean[2], mean[3], low, high)


def _pair(sim: FleetSimulation, j: int) -> tuple:
    """Candidate ``j`` as the value of information and the precision name it: (servers,
    instances), and for one that adds servers later (servers, instances, added,
    when_demand_above, at_month), the trigger's other form ``None``."""
    pair = (int(sim.servers[j]), int(sim.instances[j]))
    if sim.added is None or not sim.added[j]:
        return pair
    trigger = float(sim.trigger[j])
    by_month = sim.inputs.add.by_month
    return (
        *pair,
        int(sim.added[j]),
        None if by_month else trigger,
        int(trigger) if by_month else None,
    )


def _choice(sim: FleetSimulation, order: list[int]) -> Choice | None:
    """The value of information of choosing between the two best candidates (``order`` ranks
    the candidates by the objective): EVPI and single-input EVPPI of the per-draw cost
    difference, as for buy or rent; ``None`` with one candidate."""
    if len(order) < 2:
        return None
    first, second = order[0], order[1]
    gap = sim.cost[first] - sim.cost[second]
    evpi, best = expected_value_of_information(gap)
    count = max(1, math.isqrt(sim.inputs.samples))
    worth = []
    for name in uncertain(sim.inputs):
        bins, k = input_bins(sim, name, input_ranks(sim, name), count)
        worth.append(InputValue(name, min(evpi, evppi(gap, bins, k, best))))
    worth.sort(key=lambda v: (-v.evppi, v.input))
    pair = lambda j: _pair(sim, j)  # noqa: E731
    return Choice(pair(first), pair(second), evpi, count, tuple(worth))


#: The name keying the random stream of the bootstrap of :func:`_precision`.
_PRECISION_STREAM = "__plan_precision__"


def _precision(sim: FleetSimulation, order: list[int], objective: np.ndarray) -> Precision | None:
    """How far the draws tell the best candidate from the runner-up (``order`` ranks the
    candidates by the objective, whose value for each is ``objective`` [USD]); ``None`` with
    one candidate.

    The difference is objective(second) - objective(first) over the draws. Its standard error
    for the mean is s / sqrt(n), s the sample standard deviation (n - 1) of the per-draw
    difference; for a P90 or a CVaR95 the bootstrap of :func:`bootstrap_difference_se` on
    the stream keyed by the plan's seed and :data:`_PRECISION_STREAM`. Draws in replicates
    (``lhs`` and ``sobol`` with enough draws) give it from the difference in each replicate
    instead (:func:`~costmodel.uncertainty.replicate_se`). With a single draw it is 0 when
    every input is fixed, and unknown (NaN) otherwise.
    """
    if len(order) < 2:
        return None
    first, second = order[0], order[1]
    a, b = sim.cost[first], sim.cost[second]
    inputs, blocks = sim.inputs, sim.sample.blocks
    n = a.size
    if n < 2:
        se = math.nan if uncertain(inputs) else 0.0
    elif blocks:
        se = replicate_se(_block_differences(a, b, inputs.objective, blocks), blocks)
    elif inputs.objective == "mean":
        se = float(np.std(b - a, ddof=1)) / math.sqrt(n)
    else:
        rng = stream(inputs.seed, _PRECISION_STREAM)
        se = bootstrap_difference_se(a, b, inputs.objective, rng)
    pair = lambda j: _pair(sim, j)  # noqa: E731
    return Precision(
        first=pair(first),
        second=pair(second),
        objective=inputs.objective,
        difference=float(objective[second] - objective[first]),
        difference_se=se,
        prob_first_cheaper=float(np.count_nonzero(a < b)) / n,
        replicates=len(blocks) or None,
    )


def _block_differences(
    first: np.ndarray, second: np.ndarray, objective: str, blocks: tuple[int, ...]
) -> np.ndarray:
    """objective(``second``) - objective(``first``) [USD] in each replicate of sizes
    ``blocks`` (consecutive draws), the statistic as :func:`row_stats` computes it."""
    starts = np.cumsum((0, *blocks))
    return np.array(
        [
            np.diff(row_stats(np.vstack((first[lo:hi], second[lo:hi])))[objective])[0]
            for lo, hi in zip(starts[:-1], starts[1:], strict=True)
        ]
    )


def _carbon_stats(kg: np.ndarray, work: np.ndarray) -> list[CarbonStats]:
    """Each row's emissions of ``kg`` (rows x draws) [kg CO2e] in tonnes, and per unit of the
    draws' ``work`` [units of work]: 1000 g/kg x the mean kg / the mean work (NaN without any)."""
    stats = row_stats(kg)
    mean_work = float(work.mean())
    with np.errstate(divide="ignore", invalid="ignore"):
        per_unit = (G_PER_KG * stats["mean"] / mean_work).tolist() if mean_work > 0 else None
    t = {k: (stats[k] / KG_PER_TONNE).tolist() for k in ("mean", "p10", "p50", "p90")}
    per_unit = per_unit or [math.nan] * kg.shape[0]
    return [CarbonStats(*row) for row in zip(*t.values(), per_unit, strict=True)]


def _candidates(
    sim: FleetSimulation, stats: dict[str, np.ndarray], carbon: list[CarbonStats | None]
) -> list[Candidate]:
    """Every candidate's :class:`Candidate`, from the cost ``stats`` of every row at once and
    each candidate's ``carbon``."""
    n, n_candidates = sim.cloud.size, sim.servers.size
    cheaper = np.empty(n_candidates)
    step = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, cheaper.size, step):
        rows = slice(start, start + step)
        cheaper[rows] = np.count_nonzero(sim.cost[rows] < sim.cloud, axis=1) / n
    lo, hi = wilson(np.rint(cheaper * n), n)
    columns = (
        sim.servers.tolist(),
        sim.instances.tolist(),
        *(stats[name].tolist() for name in ("mean", "p10", "p50", "p90", "cvar95")),
        sim.share_owned.mean(axis=1).tolist(),
        sim.owned_utilisation.mean(axis=1).tolist(),
        cheaper.tolist(),
        [None] * n_candidates if sim.availability is None else sim.availability.tolist(),
        carbon,
        _additions(sim),
        zip(lo.tolist(), hi.tolist(), strict=True),
    )
    return [
        Candidate(s, k, CostStats(mean, p10, p50, p90, cvar), share, util, prob, up, kg, add, ci)
        for s, k, mean, p10, p50, p90, cvar, share, util, prob, up, kg, add, ci in zip(
            *columns, strict=True
        )
    ]


def _additions(sim: FleetSimulation) -> list[Added | None]:
    """Each candidate's later purchase: its count, trigger and first month of service over
    the draws (:class:`~costmodel.plan_result.ServiceMonth`); ``None`` where it adds nothing."""
    out: list[Added | None] = [None] * sim.servers.size
    if sim.start is None:
        return out
    first = sim.servers.size - sim.start.shape[0]
    adds = np.isfinite(sim.start)
    never = 1.0 - np.mean(adds, axis=1)
    count = adds.sum(axis=1)
    total = np.where(adds, sim.start, 0.0).sum(axis=1)
    mean = np.full(count.size, math.nan)  # the mean of the draws that add, NaN without any
    np.divide(total, count, out=mean, where=count > 0)
    pct = percentiles(sim.start.copy())
    by_month = sim.inputs.add.by_month
    for i in range(sim.start.shape[0]):
        j = first + i
        trigger = float(sim.trigger[j])
        month = ServiceMonth(
            float(mean[i]), float(pct["p10"][i]), float(pct["p50"][i]), float(pct["p90"][i]),
            float(never[i]),
        )  # fmt: skip
        out[j] = Added(
            int(sim.added[j]),
            None if by_month else trigger,
            int(trigger) if by_month else None,
            month,
        )
    return out


def _saving(sim: FleetSimulation, best: Candidate) -> float:
    """P50 over the draws of the share of the all-cloud cost that candidate ``best`` saves
    [-] (negative: dearer); NaN when some draw has no work (nothing to compare against)."""
    cloud = sim.cloud
    if not np.all(cloud > 0):
        return math.nan
    j = _index(sim, best)
    return percentiles(1.0 - sim.cost[j] / cloud)["p50"]


def _index(sim: FleetSimulation, c: Candidate) -> int:
    """The row of candidate ``c`` in the simulation."""
    added, trigger = (0, np.nan) if c.add is None else (c.add.servers, c.key[3])
    same = (sim.servers == c.servers) & (sim.instances == c.instances)
    if sim.added is not None:
        same &= sim.added == added
        same &= np.isnan(sim.trigger) if c.add is None else sim.trigger == trigger
    return int(np.flatnonzero(same)[0])


def _ranked(grid: _Grid, objective: np.ndarray) -> list[int]:
    """The candidates by the objective [USD], ties going to fewer first servers, then fewer
    added, fewer reservations and the lower trigger (or earlier month)."""
    if not grid.added.any():
        return np.lexsort((grid.instances, grid.servers, objective)).tolist()
    trigger = np.nan_to_num(grid.trigger, nan=-1.0)
    return np.lexsort((trigger, grid.instances, grid.added, grid.servers, objective)).tolist()


def _duplicates(stats: dict[str, np.ndarray], order: list[int]) -> np.ndarray:
    """Whether each candidate has the mean and P90 cost (to 12 significant digits) of one
    placed before it in ``order``: a later purchase that never happens repeats its plan."""
    seen: set[tuple[float, float]] = set()
    out = np.zeros(len(order), dtype=bool)
    mean, p90 = significant(stats["mean"]), significant(stats["p90"])
    for j in order:
        key = (float(mean[j]), float(p90[j]))
        out[j] = key in seen
        seen.add(key)
    return out


def _plan_of(sim: FleetSimulation, j: int) -> tuple[int, int, int, float]:
    """Candidate ``j`` as (servers, instances, added, trigger) for :func:`work_split`."""
    added = 0 if sim.added is None else int(sim.added[j])
    trigger = float(sim.trigger[j]) if added else 0.0
    return int(sim.servers[j]), int(sim.instances[j]), added, trigger


def _staging_saving(sim: FleetSimulation, order: list[int]) -> StagingSaving:
    """Per draw, the cost of the best candidate that adds nothing less that of the best
    [USD]: its mean, P10 and P90."""
    plain = next(j for j in order if sim.added[j] == 0)
    saved = sim.cost[plain] - sim.cost[order[0]]
    pct = percentiles(saved.copy())
    return StagingSaving(float(saved.mean()), float(pct["p10"]), float(pct["p90"]))


@dataclass(frozen=True)
class _Figures:
    """Every candidate's figures in the grid's order: its ``candidates`` record, the ``stats``
    of its cost (:func:`row_stats`, (C,) each) and its ``carbon`` (``None`` each when the
    emissions are not known)."""

    candidates: list[Candidate]
    stats: dict[str, np.ndarray]
    carbon: list[CarbonStats | None]

    @classmethod
    def of(cls, sim: FleetSimulation) -> _Figures:
        """The figures of the candidates of ``sim``."""
        stats = row_stats(sim.cost)
        known = sim.carbon is not None
        carbon = _carbon_stats(sim.carbon, sim.work) if known else [None] * sim.servers.size
        return cls(_candidates(sim, stats, carbon), stats, carbon)

    @classmethod
    def join(cls, parts: list[_Figures]) -> _Figures:
        """The figures of consecutive blocks of candidates, one after the other."""
        stats = {k: np.concatenate([p.stats[k] for p in parts]) for k in parts[0].stats}
        return cls(
            [c for p in parts for c in p.candidates], stats, [c for p in parts for c in p.carbon]
        )


def _subset(sim: FleetSimulation, picks: np.ndarray) -> FleetSimulation:
    """The candidates ``picks`` (in the simulation's order) of ``sim``."""
    staged = sim.added > 0
    start = None
    if sim.start is not None and staged[picks].any():
        start = sim.start[(np.cumsum(staged) - 1)[picks][staged[picks]]]
    rows = lambda x: None if x is None else x[picks]  # noqa: E731
    return dataclasses.replace(
        sim, servers=sim.servers[picks], instances=sim.instances[picks], cost=sim.cost[picks],
        share_owned=sim.share_owned[picks], owned_utilisation=sim.owned_utilisation[picks],
        availability=rows(sim.availability), carbon=rows(sim.carbon), added=sim.added[picks],
        trigger=sim.trigger[picks], start=start,
    )  # fmt: skip


def summarise_plan(sim: FleetSimulation) -> PlanResult:
    """Every candidate's cost statistics, the best by the objective with its P50 saving
    against all-cloud, the frontier and all-cloud."""
    grid = _Grid(sim.servers, sim.instances, sim.added, sim.trigger)
    rows = lambda picks: _subset(sim, picks)  # noqa: E731
    return _summary(sim.inputs, grid, _Figures.of(sim), rows, lambda plan: work_split(sim, *plan))


#: Bytes of the outcomes over every draw of one block of candidates, about the most
#: :func:`run_plan` holds at once beside one chunk of draws.
BLOCK_BYTES = 48 * 2**20


def block_rows(samples: int, *, carbon: bool = False, staged: bool = False) -> int:
    """The candidates of one block of :func:`run_plan` [count]: as many as hold their
    outcomes over ``samples`` draws (cost, owned share, utilisation, and the emissions when
    counting ``carbon``, the first month of service of ``staged`` candidates: 8 bytes each)
    in :data:`BLOCK_BYTES`, one at least."""
    per = 8 * (3 + carbon + staged)  # [byte/draw]
    return max(1, BLOCK_BYTES // (per * samples))


def run_plan(inputs: PlanInputs, progress: Progress | None = None) -> PlanResult:
    """:func:`summarise_plan` of :func:`simulate_plan`, block of candidates by block: each
    block's outcomes over every draw are reduced to its figures before the next is evaluated,
    so that memory stays within :data:`BLOCK_BYTES` whatever the candidates; the draws
    rows of the few candidates the summary compares are evaluated again at the end. The
    figures are those of :func:`summarise_plan` (the draws and each candidate's arithmetic are
    the same). ``progress`` is told the share of the work done, rising to 1."""
    sampled, grid = _sampled(inputs), _grid(inputs)
    size = grid.servers.size
    carbon, staged = inputs.carbon is not None, inputs.add is not None
    step = block_rows(inputs.samples, carbon=carbon, staged=staged)
    split = lambda plan: _split(  # noqa: E731
        inputs, lambda rows: sampled.chunk(inputs, rows), plan, sampled.values
    )
    if step >= size:  # one block: the summary reads its rows
        sim = _simulate(inputs, grid, sampled, progress)
        return _summary(inputs, grid, _Figures.of(sim), lambda picks: _subset(sim, picks), split)
    firsts = range(0, size, step)
    parts = []
    for b, first in enumerate(firsts):
        told = None if progress is None else _scaled(progress, b, len(firsts))
        block = _take(grid, np.arange(first, min(size, first + step)))
        parts.append(_Figures.of(_simulate(inputs, block, sampled, told)))
    rows = lambda picks: _simulate(inputs, _take(grid, picks), sampled)  # noqa: E731
    return _summary(inputs, grid, _Figures.join(parts), rows, split)


def _scaled(progress: Progress, block: int, blocks: int) -> Progress:
    """``progress`` told the share of the whole of a share of block ``block`` of ``blocks``."""
    return lambda share: progress((block + share) / blocks)


def _summary(inputs: PlanInputs, grid: _Grid, figures: _Figures, rows, split) -> PlanResult:
    """The plan's result from every candidate's ``figures``; ``rows(picks)`` simulates the
    candidates ``picks`` (grid indices, ascending) whose draws the summary compares (the best,
    the runner-up and the best that adds nothing later) and ``split(plan)`` gives a plan's
    :func:`work_split`."""
    stats, candidates, carbon = figures.stats, figures.candidates, figures.carbon
    order = _ranked(grid, stats[inputs.objective])
    stages = bool(grid.added.any())
    plain = next(j for j in order if grid.added[j] == 0) if stages else order[0]
    picks = sorted({*order[:2], plain})
    sim = rows(np.array(picks))
    local = [picks.index(j) for j in order[:2]] + [picks.index(plain)]  # rows of ``sim``
    best = candidates[order[0]]
    known = sim.carbon is not None
    cloud_stats = {k: float(v[0]) for k, v in row_stats(sim.cloud[None, :]).items()}
    up = None if sim.availability is None else 1.0  # no servers: nothing is missing
    cloud_carbon = _carbon_stats(sim.cloud_carbon[None, :], sim.work)[0] if known else None
    all_cloud = Candidate(0, 0, CostStats(**cloud_stats), 0.0, 0.0, 0.0, up, cloud_carbon)
    on_frontier = frontier(stats["mean"], stats["p90"])
    repeats = _duplicates(stats, order) if stages else None
    if repeats is not None:
        on_frontier &= ~repeats
    green = None
    if known:  # the candidates no other beats on both mean cost and mean emissions
        kept = frontier(stats["mean"], np.array([c.mean for c in carbon]), ties=True)
        kept = (kept if repeats is None else kept & ~repeats).tolist()
        green = tuple(c for c, k in zip(candidates, kept, strict=True) if k)
    return PlanResult(
        candidates=tuple(candidates),
        best=best,
        frontier=tuple(c for c, k in zip(candidates, on_frontier.tolist(), strict=True) if k),
        all_cloud=all_cloud,
        objective=inputs.objective,
        work_split=split(_plan_of(sim, local[0])),
        saving=_saving(sim, best),
        value_of_information=_choice(sim, local[: len(order[:2])]),
        precision=_precision(sim, local[: len(order[:2])], stats[inputs.objective][picks]),
        carbon_frontier=green,
        carbon_unknown=sim.carbon_unknown,
        staging_saving=_staging_saving(sim, [local[0], local[-1]]) if stages else None,
        seed=inputs.seed,
        samples=inputs.samples,
        method=inputs.method,
    )
