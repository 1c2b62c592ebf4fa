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

__all__ = ["FleetSimulation", "simulate_plan", "summarise_plan", "work_split"]

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
class _Load:
    """A chunk's monthly work and the share of it a monthly capacity c serves.

    ``work`` W_m and ``swing`` a W_m, the daily swing of the load (``None`` for a flat load),
    are ``(H, n)`` [units of work/month]. With the load of :mod:`costmodel.load`, c serves
    W_m F(c / W_m) and leaves the excess W_m (1 - F) = a W_m h(z), z = (c - W_m) / (a W_m) and
    h(z) = (sqrt(1 - z^2) - z arccos z) / pi, where |c - W_m| < a W_m; elsewhere every hour
    is either served in full or capped, as for a flat load: the excess is max(W_m - c, 0).
    """

    work: np.ndarray
    swing: np.ndarray | None

    def excess(self, capacity: Value) -> np.ndarray:
        """The work above a capacity of ``capacity`` a month [units of work/month], (H, n)."""
        over = self.work - capacity
        out = np.maximum(over, 0.0)
        if self.swing is None:
            return out
        band = np.flatnonzero(np.abs(over) < self.swing)  # the arccos only where it is needed
        if band.size:
            swing = np.take(self.swing, band)
            z = np.take(over, band) / -swing  # (c - W_m) / (a W_m)
            np.put(out, band, swing * (np.sqrt(1.0 - z * z) - z * np.arccos(z)) / math.pi)
        return out

    def served(self, capacity: Value) -> tuple[np.ndarray, np.ndarray | None]:
        """The work a capacity of ``capacity`` a month serves and, for a daily peak, the work
        above it (``None`` for a flat load, where it costs less to take again than to keep)
        [units of work/month], each (H, n)."""
        if self.swing is None:
            return np.minimum(self.work, capacity), None
        above = self.excess(capacity)
        return self.work - above, above

    def split(self, owned: Value, reserved: Value) -> np.ndarray:
        """The work served by an ``owned`` capacity, then by a ``reserved`` one, and the rest,
        each month summed over the draws [units of work/month], (3, H)."""
        out = np.empty((3, self.work.shape[0]))
        if self.swing is None:
            a = np.minimum(self.work, owned)
            out[0] = a.sum(axis=1)
            b = np.minimum(self.work - a, reserved)
            out[1] = b.sum(axis=1)
            out[2] = (self.work - a - b).sum(axis=1)
            return out
        above = self.excess(owned)
        out[0] = (self.work - above).sum(axis=1)
        rest = self.excess(owned + reserved)
        out[1] = (above - rest).sum(axis=1)
        out[2] = rest.sum(axis=1)
        return out


@dataclass(frozen=True)
class _Chunk:
    """The month-major arrays and per-draw coefficients of a chunk of draws."""

    load: _Load  # W_m (H, n) [units of work/month] and its daily swing
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


def _swing(peak_to_mean: Value, work: np.ndarray) -> np.ndarray | None:
    """a W_m, a = k - 1 per draw, (H, n); ``None`` for a flat load (k fixed at 1)."""
    amplitude = np.asarray(peak_to_mean, dtype=float) - 1.0
    if not amplitude.ndim and amplitude == 0.0:
        return None
    return amplitude * work


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
    return _Chunk(
        load=_Load(work, _swing(values["demand.peak_to_mean"], work)),
        energy=energy,
        burst=_discounted_growth(burst.price_annual_change, d),
        server_capacity=HOURS_PER_MONTH * t_srv,
        instance_capacity=reserved,
        server_cost=buy_line(own, Terms(h, rate, tau)).at_zero,
        instance_cost=instance_cost,
        k_owned=(1.0 - tau) * busy_energy_month(own) / (HOURS_PER_MONTH * t_srv),
        k_burst=(1.0 - tau) * burst.price_usd_per_hour * (1.0 + overhead) / t_burst,
        pool=_Pool(
            own.gpu_count,
            own.gpu_annual_failure_rate,
            own.repair_days,
            inputs.spare_share,
            spare_cost(own, Terms(h, rate, tau)) if inputs.spare_share else 0.0,
        ),
        emits=fleet_emissions(
            inputs.carbon if emits else None,
            values,
            own,
            (t_srv, t_res, t_burst),
            1.0 + overhead,
            (d, tau),
        ),
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


def _emitted(e: FleetEmissions, months: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """The kg (and their priced present value) of ``months`` of work done at the emissions
    per unit ``rows`` [kg/unit], (R, n); zeros where they are unknown (``None``)."""
    if rows is None:
        return np.zeros((e.owned.shape[0], months.shape[1]))
    return weighted_rows(rows, months)


def _cloud(c: _Chunk, out: _Out, rows: slice, total: np.ndarray) -> None:
    work = c.load.work
    out.cloud[rows] = c.k_burst * weighted_sum(c.burst, work)
    e = c.emits
    if e is None:
        return
    out.work[rows] = total
    kg = _emitted(e, work, e.burst)
    out.cloud_carbon[rows] = kg[0]
    if e.price is not None:
        out.cloud[rows] += e.price * kg[1]


def _fill_chunk(c: _Chunk, inputs: PlanInputs, out: _Out, rows: slice) -> None:
    """Every candidate's outcomes for the draws ``rows`` of chunk ``c``."""
    s_lo, s_hi = inputs.servers
    k_lo, k_hi = inputs.instances
    h, n = inputs.horizon_months, rows.stop - rows.start
    work = c.load.work
    total = work.sum(axis=0)
    _cloud(c, out, rows, total)
    tally = None if c.emits is None else Tally.of(c.emits, work, c.burst, c.k_burst)
    j = 0
    for s in range(s_lo, s_hi + 1):
        capacity, k_owned, pool_cost, kept = c.owned(s)
        owned, above = c.load.served(capacity)  # A_m, and O_m at K = 0 (or None)
        owned_total = owned.sum(axis=0)
        fixed = s * c.server_cost + k_owned * weighted_sum(c.energy, owned)
        if np.any(pool_cost):  # one per draw when the spares' inputs are drawn
            fixed = fixed + pool_cost
        out.up[j : j + k_hi - k_lo + 1] += np.sum(kept) if np.ndim(kept) else kept * n
        with np.errstate(divide="ignore", invalid="ignore"):  # shares, clipped to rounding
            share_s = np.clip(np.where(total > 0, owned_total / total, 0.0), 0.0, 1.0)
            util_s = np.clip(owned_total / (h * capacity), 0.0, 1.0) if s else 0.0 * total
        if tally is not None:  # the kg of S servers, and beside reservations of W_m - A_m
            kg_alone, kg_beside = tally.servers(s, c.pool.spares(s), owned, kept)
        for k in range(k_lo, k_hi + 1):
            if k == 0 and above is not None:
                rest, above = above, None
            else:
                rest = c.load.excess(capacity + k * np.asarray(c.instance_capacity))  # O_m
            out.share[j, rows], out.util[j, rows] = share_s, util_s
            cost = fixed + k * c.instance_cost
            if tally is None:
                out.cost[j, rows] = cost + c.k_burst * weighted_sum(c.burst, rest)
            else:
                kg = kg_beside if k else kg_alone
                out.cost[j, rows], out.carbon[j, rows] = tally.candidate(cost, rest, k > 0, kg)
            j += 1


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


def _fill_staged(c: _Chunk, inputs: PlanInputs, out: _Out, rows: slice, first: int) -> None:
    """Every staged candidate's outcomes for the draws ``rows`` of chunk ``c``: they follow
    the ``first`` candidates that add nothing, in (S0, K, S1, trigger) order."""
    add = inputs.add
    s_lo, s_hi = inputs.servers
    k_lo, k_hi = inputs.instances
    counts, triggers = add.counts, add.triggers
    h, work = inputs.horizon_months, c.load.work
    total = work.sum(axis=0)
    months = np.arange(1, h + 1)[:, None]
    tally = None if c.emits is None else Tally.of(c.emits, work, c.burst, c.k_burst)
    for s0 in range(s_lo, s_hi + 1):
        cap0, k0, pool_cost, up0 = c.owned(s0)
        for t, trigger in enumerate(triggers):
            bought = _bought(c, add, cap0, trigger)
            start = bought + add.lead_time_months + 1
            later = months >= start  # (H, n): the added servers are in service
            for i, s1 in enumerate(counts):
                cap1, k1, up1 = c.grown(s0, s1)
                capacity = np.where(later, cap1, cap0)
                owned, above = c.load.served(capacity)
                cohort = c.cohort.priced(s1, c.pool.spares(s1), bought, start, c.price_change)
                fixed = (
                    s0 * c.server_cost
                    + pool_cost
                    + weighted_sum(c.energy, owned * np.where(later, k1, k0))
                    + cohort
                )
                owned_total = owned.sum(axis=0)
                held = capacity.sum(axis=0) if capacity.ndim == 2 else h * capacity
                with np.errstate(divide="ignore", invalid="ignore"):
                    share = np.clip(np.where(total > 0, owned_total / total, 0.0), 0.0, 1.0)
                    util = np.clip(np.where(held > 0, owned_total / held, 0.0), 0.0, 1.0)
                up = np.where(later, up1, up0).mean(axis=0)
                if tally is not None:  # the kg of the servers, alone and beside reservations
                    per_up = np.where(later, 1.0 / np.asarray(up1), 1.0 / np.asarray(up0))
                    first_pool, added_pool = (s0, c.pool.spares(s0)), (s1, c.pool.spares(s1))
                    kgs = tally.staged(first_pool, added_pool, owned, per_up, bought, start)
                for k in range(k_lo, k_hi + 1):
                    if k == 0 and above is not None:
                        rest, above = above, None
                    else:
                        rest = c.load.excess(capacity + k * np.asarray(c.instance_capacity))
                    j = ((s0 - s_lo) * (k_hi - k_lo + 1) + k - k_lo) * len(counts) + i
                    j = j * len(triggers) + t
                    cost = fixed + k * c.instance_cost
                    if tally is None:
                        out.cost[first + j, rows] = cost + c.k_burst * weighted_sum(c.burst, rest)
                    else:
                        out.cost[first + j, rows], out.carbon[first + j, rows] = tally.candidate(
                            cost, rest, k > 0, kgs[k > 0]
                        )
                    out.share[first + j, rows], out.util[first + j, rows] = share, util
                    out.up[first + j] += up.sum()
                    out.start[j, rows] = np.where(start <= h, start, np.inf)


def simulate_plan(inputs: PlanInputs, progress: Progress | None = None) -> FleetSimulation:
    """Sample every input once and evaluate every candidate on the same draws; the carbon
    inputs of an unpriced carbon are drawn on their own streams (:func:`carbon_values`).

    ``progress``, when given, is told the share of the draws done after each chunk of them,
    rising to 1 (:func:`summarise_plan` is not counted: it takes a few per cent of the time).
    """
    values, drawn = draw(inputs)
    apart = carbon_values(inputs)
    grid = _grid(inputs)
    pairs = int(np.count_nonzero(grid.added == 0))
    n, h = inputs.samples, inputs.horizon_months
    out = _out(inputs, grid.servers.size, grid.servers.size - pairs)
    step = max(1, _CHUNK_ELEMENTS // h)
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        part = {k: _rows(v, rows) for k, v in {**values, **apart}.items()}
        chunk = _chunk(inputs, part, rows.stop - start)
        _fill_chunk(chunk, inputs, out, rows)
        if inputs.add is not None:
            _fill_staged(chunk, inputs, out, rows, pairs)
        if progress is not None:
            progress(rows.stop / n)
    downtime = inputs.own.repair_days.support()[1] > 0.0
    c = inputs.carbon
    unknown = ("burst.api",) if c is not None and c.burst is None and c.api is None else ()
    return FleetSimulation(
        inputs, grid.servers, grid.instances, out.cost, out.share, out.util, out.cloud, values,
        drawn,
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
    n, h = inputs.samples, inputs.horizon_months
    sums = np.zeros((4, h))  # owned, reserved and burst work, owned capacity
    step = max(1, _CHUNK_ELEMENTS // h)
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        c = _chunk(inputs, {k: _rows(v, rows) for k, v in values.items()}, rows.stop - start, False)
        owned = c.owned(servers)[0]
        if added:
            bought = _bought(c, inputs.add, owned, trigger)
            later = np.arange(1, h + 1)[:, None] >= bought + inputs.add.lead_time_months + 1
            owned = np.where(later, c.grown(servers, added)[0], owned)
        sums[:3] += c.load.split(owned, instances * np.asarray(c.instance_capacity))
        sums[3] += np.broadcast_to(owned, (h, rows.stop - start)).sum(axis=1)
    mean = sums / n
    if sim.start is None:  # no candidate adds servers
        return WorkSplit(owned=mean[0], reserved=mean[1], burst=mean[2])
    low, high = work_band(values[f"demand.{inputs.demand.work_field}"],
                          values["demand.annual_growth"], h)  # fmt: skip
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


def _ranked(sim: FleetSimulation, objective: np.ndarray) -> list[int]:
    """The candidates by the objective [USD], ties going to fewer first servers, then fewer
    added, fewer reservations and the lower trigger (or earlier month)."""
    trigger = np.nan_to_num(sim.trigger, nan=-1.0) if sim.trigger is not None else None
    if sim.start is None:
        return np.lexsort((sim.instances, sim.servers, objective)).tolist()
    keys = (trigger, sim.instances, sim.added, sim.servers, objective)
    return np.lexsort(keys).tolist()


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


def summarise_plan(sim: FleetSimulation) -> PlanResult:
    """Every candidate's cost statistics, the best by the objective with its P50 saving
    against all-cloud, the frontier and all-cloud."""
    inputs = sim.inputs
    cloud = sim.cloud
    stats = row_stats(sim.cost)
    known = sim.carbon is not None
    carbon = _carbon_stats(sim.carbon, sim.work) if known else [None] * sim.servers.size
    candidates = _candidates(sim, stats, carbon)
    order = _ranked(sim, stats[inputs.objective])
    best_index = order[0]
    best = candidates[best_index]
    cloud_stats = {k: float(v[0]) for k, v in row_stats(cloud[None, :]).items()}
    up = None if sim.availability is None else 1.0  # no servers: nothing is missing
    cloud_carbon = _carbon_stats(sim.cloud_carbon[None, :], sim.work)[0] if known else None
    all_cloud = Candidate(0, 0, CostStats(**cloud_stats), 0.0, 0.0, 0.0, up, cloud_carbon)
    on_frontier = frontier(stats["mean"], stats["p90"])
    repeats = None if sim.start is None else _duplicates(stats, order)
    if repeats is not None:
        on_frontier &= ~repeats
    on_frontier = on_frontier.tolist()
    green = None
    if known:  # the candidates no other beats on both mean cost and mean emissions
        kept = frontier(stats["mean"], np.array([c.mean for c in carbon]), ties=True)
        kept = (kept if repeats is None else kept & ~repeats).tolist()
        green = tuple(c for c, k in zip(candidates, kept, strict=True) if k)
    return PlanResult(
        candidates=tuple(candidates),
        best=best,
        frontier=tuple(c for c, kept in zip(candidates, on_frontier, strict=True) if kept),
        all_cloud=all_cloud,
        objective=inputs.objective,
        work_split=work_split(sim, *_plan_of(sim, best_index)),
        saving=_saving(sim, best),
        value_of_information=_choice(sim, order),
        precision=_precision(sim, order, stats[inputs.objective]),
        carbon_frontier=green,
        carbon_unknown=sim.carbon_unknown,
        staging_saving=None if sim.start is None else _staging_saving(sim, order),
        seed=inputs.seed,
        samples=inputs.samples,
        method=inputs.method,
    )
