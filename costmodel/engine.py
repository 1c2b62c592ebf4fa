"""The Monte Carlo orchestrator: sample inputs, evaluate the equations, summarise.

Each uncertain input is sampled once per draw and held for the whole horizon. Draws are evaluated
in chunks so that (draws x months) arrays stay a few tens of MB whatever the sample count; the
chunking does not change any number. Results are summarised as mean, P10, P50 and P90 (linear
interpolation between order statistics); "never" outcomes rank as +inf and a percentile that
lands on one is NaN in the :class:`~costmodel.result.Result`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .cashflows import BuyFlows, RentFlows, buy_flows, rent_flows, throughput
from .inputs import ModelInputs
from .outcomes import Cumulative, breakeven_utilisation
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
from .sampling import induce_rank_correlation, percentiles
from .verdict import verdict

__all__ = ["Simulation", "simulate", "summarise", "CUMULATIVE_DRAWS"]

_CHUNK_ELEMENTS = 2_000_000
#: Draws used for the cumulative-cost-by-month summary (the first ones; the chart needs no more).
CUMULATIVE_DRAWS = 20_000
_QUANTILES = {"p10": 0.10, "p50": 0.50, "p90": 0.90}


@dataclass(frozen=True)
class Simulation:
    """Per-draw outcomes. Shapes: S draws, U utilisation levels, H months.

    buy_tco, rent_tco [USD] (S, U); payback [month] (S, U), inf = never; breakeven [-] (S,),
    inf = never; own_throughput [reference GPU-hours/hour] (S,); cum_buy, cum_rent [USD]
    (min(S, CUMULATIVE_DRAWS), H + 1) at ``report_utilisation``.
    """

    inputs: ModelInputs
    draws: dict[str, np.ndarray]
    buy_tco: np.ndarray
    rent_tco: np.ndarray
    payback: np.ndarray
    breakeven: np.ndarray
    own_throughput: np.ndarray
    report_utilisation: float
    cum_buy: np.ndarray
    cum_rent: np.ndarray


def _draw(inputs: ModelInputs) -> dict[str, np.ndarray]:
    dists = inputs.distributions()
    uncertain = sorted(name for name, d in dists.items() if not d.is_fixed)
    q = percentiles(uncertain, inputs.samples, inputs.seed, inputs.method)
    q = induce_rank_correlation(q, inputs.correlations, inputs.seed)
    # A fixed input (a point mass, such as a discrete with one non-zero weight) takes its one
    # value without going through ppf.
    return {
        name: dist.ppf(q[name]) if name in q else np.full(inputs.samples, dist.support()[0])
        for name, dist in dists.items()
    }


def _flows(inputs: ModelInputs, x: dict[str, np.ndarray]) -> tuple[BuyFlows, RentFlows, np.ndarray]:
    buy, rent = inputs.buy, inputs.rent
    bx = {k[4:]: v for k, v in x.items() if k.startswith("buy.")}
    rx = {k[5:]: v for k, v in x.items() if k.startswith("rent.")}
    t_own = throughput(
        buy.gpu_count, bx["relative_throughput"], bx["scaling_efficiency"], bx["thermal_derate"]
    )
    t_inst = throughput(rent.gpu_count, rx["relative_throughput"], rx["scaling_efficiency"])
    common = {
        "horizon": inputs.horizon_months,
        "discount_rate": inputs.discount_rate,
        "tax_rate": inputs.tax_rate,
    }
    bf = buy_flows(
        bx,
        gpu_count=buy.gpu_count,
        powered_when_idle=buy.powered_when_idle,
        depreciation=buy.depreciation,
        depreciation_years=buy.depreciation_years,
        **common,
    )
    rf = rent_flows(
        rx,
        pricing=rent.pricing,
        own_throughput=t_own,
        instance_throughput=t_inst,
        committed_instances=rent.committed_instances,
        **common,
    )
    return bf, rf, t_own


def _report_level(inputs: ModelInputs) -> float:
    if inputs.report_utilisation is not None:
        return inputs.report_utilisation
    grid = np.asarray(inputs.utilisation)
    return float(grid[np.argmin(np.abs(grid - 0.5))])


def simulate(inputs: ModelInputs) -> Simulation:
    """Sample every input and evaluate every draw at every utilisation level."""
    x = _draw(inputs)
    s, grid = inputs.samples, inputs.utilisation
    buy_tco, rent_tco, payback = (np.empty((s, len(grid))) for _ in range(3))
    breakeven, t_own = np.empty(s), np.empty(s)
    chunk = max(1, _CHUNK_ELEMENTS // inputs.horizon_months)
    level = _report_level(inputs)
    head = min(s, CUMULATIVE_DRAWS)
    cum_buy = cum_rent = None
    for start in range(0, s, chunk):
        rows = slice(start, min(s, start + chunk))
        bf, rf, t_own[rows] = _flows(inputs, {k: v[rows] for k, v in x.items()})
        breakeven[rows] = breakeven_utilisation(bf, rf)
        buy_tco[rows] = bf.tco(np.asarray(grid))
        rent_tco[rows] = rf.tco(np.asarray(grid))
        cumulative = Cumulative(bf, rf)
        for j, u in enumerate(grid):
            payback[rows, j] = cumulative.payback(u)
        if start == 0 and rows.stop >= head:  # the first chunk holds the summarised draws
            cum_buy, cum_rent = (c[:head] for c in cumulative.costs(level))
    if cum_buy is None:
        bf, rf, _ = _flows(inputs, {k: v[:head] for k, v in x.items()})
        cum_buy, cum_rent = Cumulative(bf, rf).costs(level)
    return Simulation(
        inputs=inputs,
        draws=x,
        buy_tco=buy_tco,
        rent_tco=rent_tco,
        payback=payback,
        breakeven=breakeven,
        own_throughput=t_own,
        report_utilisation=level,
        cum_buy=cum_buy,
        cum_rent=cum_rent,
    )


def _quantiles(values: np.ndarray) -> dict[str, np.ndarray]:
    """P10/P50/P90 along axis 0 by linear interpolation between order statistics.

    One partial sort serves all three. A percentile that touches +inf (or NaN) is NaN.
    """
    n = values.shape[0]
    pos = {k: q * (n - 1) for k, q in _QUANTILES.items()}
    kth = sorted(
        {i for p in pos.values() for i in (int(np.floor(p)), min(int(np.floor(p)) + 1, n - 1))}
    )
    # partition along the contiguous axis: draws last
    ordered = np.moveaxis(
        np.partition(np.ascontiguousarray(np.moveaxis(values, 0, -1)), kth), -1, 0
    )
    out = {}
    for k, p in pos.items():
        lo, frac = int(np.floor(p)), p - np.floor(p)
        low = ordered[lo]
        if frac == 0.0:
            out[k] = np.where(np.isfinite(low), low, np.nan)
            continue
        high = ordered[min(lo + 1, n - 1)]
        with np.errstate(invalid="ignore"):
            v = low + frac * (high - low)
        out[k] = np.where(np.isfinite(v), v, np.nan)
    return out


def _bands(values: np.ndarray, mean: bool = True) -> Bands:
    q = {k: frozen_array(v) for k, v in _quantiles(values).items()}
    return Bands(**q, mean=frozen_array(values.mean(axis=0)) if mean else None)


def _sensitivity(sim: Simulation) -> Sensitivity:
    """Spearman rank correlation of each uncertain input with TCO_buy - TCO_rent.

    At the utilisation level nearest the report utilisation; sorted by strength. A positive
    value means that a higher input makes buying relatively dearer. Empty with fewer than 10
    draws or no uncertain input.
    """
    grid = np.asarray(sim.inputs.utilisation)
    j = int(np.argmin(np.abs(grid - sim.report_utilisation)))
    names = sorted(n for n, d in sim.inputs.distributions().items() if not d.is_fixed)
    rows: list[Driver] = []
    if names and sim.inputs.samples >= 10:
        gap = sim.buy_tco[:, j] - sim.rent_tco[:, j]
        data = np.column_stack([gap, *(sim.draws[n] for n in names)])
        with np.errstate(invalid="ignore", divide="ignore"):  # a constant column gives NaN
            rho = np.corrcoef(stats.rankdata(data, axis=0), rowvar=False)[0, 1:]
        rows = [
            Driver(n, float(r) if np.isfinite(r) else 0.0) for n, r in zip(names, rho, strict=True)
        ]
        rows.sort(key=lambda r: (-abs(r.spearman), r.input))
    return Sensitivity(float(grid[j]), "buy_tco - rent_tco", tuple(rows))


def summarise(sim: Simulation) -> Result:
    """Mean and percentiles of every outcome per utilisation level, with the verdict."""
    inputs = sim.inputs
    grid = frozen_array(inputs.utilisation)
    finite = np.isfinite(sim.breakeven)
    be = _quantiles(sim.breakeven)
    breakeven = Breakeven(
        mean=float(sim.breakeven[finite].mean()) if finite.any() else math.nan,
        p10=float(be["p10"]),
        p50=float(be["p50"]),
        p90=float(be["p90"]),
        prob_always=float(np.mean(sim.breakeven == 0.0)),
        prob_never=float(np.mean(~finite)),
    )
    pb = _quantiles(sim.payback)
    payback = Payback(
        **{k: frozen_array(v) for k, v in pb.items()},
        prob_never=frozen_array(np.mean(~np.isfinite(sim.payback), axis=0)),
    )
    hours = grid[None, :] * 730.0 * inputs.horizon_months * sim.own_throughput[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_hour = Sides(
            *(
                _bands(np.where(hours > 0, tco / hours, np.nan), mean=False)
                for tco in (sim.buy_tco, sim.rent_tco)
            )
        )
    prob = frozen_array(np.mean(sim.buy_tco < sim.rent_tco, axis=0))
    return Result(
        utilisation=grid,
        buy_tco=_bands(sim.buy_tco),
        rent_tco=_bands(sim.rent_tco),
        prob_buy_cheaper=prob,
        breakeven_utilisation=breakeven,
        payback_months=payback,
        cost_per_reference_gpu_hour=per_hour,
        cumulative_cost=CumulativeCost(
            utilisation=sim.report_utilisation,
            months=frozen_array(np.arange(inputs.horizon_months + 1)),
            buy=_bands(sim.cum_buy, mean=False),
            rent=_bands(sim.cum_rent, mean=False),
        ),
        sensitivity=_sensitivity(sim),
        verdict=verdict(breakeven, grid, prob, payback, sim.report_utilisation),
        seed=inputs.seed,
        samples=inputs.samples,
        method=inputs.method,
    )
