"""The capacity chart of a plan that adds servers later (``own.add``), as an SVG document.

The best plan's owned capacity of each month 1..H against the work [units of work/month]: the
work's mean (the best plan's owned, reserved and burst work summed) with its P10–P90 band over
the draws, the mean owned capacity (it steps up where the added servers arrive, ramps where
the draws differ on the month), and the first month of service of the added servers: its P50 a
vertical line, its P10–P90 a shaded span. :func:`capacity_series` gives the numbers drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from costmodel.plan_result import PlanResult

from ..formatting import fmt_candidate, fmt_share
from .chart import Chart
from .colours import BUY, MARK, OTHER, RENT
from .plot import Axes, Axis, steps

__all__ = ["CapacitySeries", "capacity_chart", "capacity_series", "month_axes"]


def month_axes(months: int, ylabel: str) -> tuple[Axis, Axis]:
    """Months 1..``months`` on the x axis (month m spanning m - 1/2 to m + 1/2, whole ticks)
    and, from 0 up, an amount with its thousands grouped labelled ``ylabel``."""
    x = Axis("Month", low=0.5, high=months + 0.5, integer=True)
    return x, Axis(ylabel, lambda v: f"{v:,.0f}", low=0.0)


@dataclass(frozen=True, eq=False)
class CapacitySeries:
    """What the capacity chart draws, month m = 1..H: ``months``; the mean ``work`` W_m and its
    ``work_p10``, ``work_p90``, and the mean owned ``capacity`` C_m [units of work/month]; the
    added servers' first month of service ``arrival`` (P10, P50, P90) [month], each NaN where
    it lands on "never" (all three without an added purchase), and the share of draws
    ``never`` [-] in which nothing is added (1 without one)."""

    months: np.ndarray
    work: np.ndarray
    work_p10: np.ndarray
    work_p90: np.ndarray
    capacity: np.ndarray
    arrival: tuple[float, float, float]
    never: float


def capacity_series(result: PlanResult) -> CapacitySeries | None:
    """The series of the capacity chart of ``result``'s best plan; ``None`` for a plan
    without ``own.add`` (its result holds no capacity)."""
    split = result.work_split
    if split.capacity is None:
        return None
    work = np.asarray(split.owned) + np.asarray(split.reserved) + np.asarray(split.burst)
    add = result.best.add
    if add is None:
        arrival, never = (math.nan,) * 3, 1.0
    else:
        arrival, never = (add.month.p10, add.month.p50, add.month.p90), add.month.prob_never
    return CapacitySeries(
        np.arange(1, work.size + 1),
        work,
        np.asarray(split.demand_p10),
        np.asarray(split.demand_p90),
        np.asarray(split.capacity),
        arrival,
        never,
    )


def _arrival_label(s: CapacitySeries) -> str:
    low, mid, high = s.arrival
    spread = low != high and not (math.isnan(low) or math.isnan(high))
    text = f"added servers from month {mid:g}" + (f" ({low:g}–{high:g})" if spread else "")
    return text + (f", never {fmt_share(s.never)}" if s.never > 0 else "")


def capacity_chart(result: PlanResult) -> str | None:
    """The best plan's owned capacity against the work by month; SVG, ``None`` without
    ``own.add``."""
    s = capacity_series(result)
    if s is None:
        return None
    ax = Axes(*month_axes(s.months.size, "Work and owned capacity [the demand's unit/month]"))
    ax.band(s.months, s.work_p10, s.work_p90, RENT, label="work: P10–P90 of the draws")
    ax.line(s.months, s.work, RENT, width=1.8, label="work: mean")
    # Month m's capacity held from m - 1/2 to m + 1/2, stepping where the months meet.
    x, capacity = steps(np.append(s.months - 0.5, s.months[-1] + 0.5), s.capacity)
    ax.line(x, capacity, BUY, width=2.2, label="owned capacity: mean")
    low, mid, high = s.arrival
    if not (math.isnan(low) or math.isnan(high)) and high > low:
        ax.vspan(low - 0.5, high - 0.5, OTHER, opacity=0.25)
    if not math.isnan(mid):
        ax.vline(mid - 0.5, MARK, width=1.2, style="--", label=_arrival_label(s))
    best = fmt_candidate(result.best)
    title = f"Owned capacity against the work, best plan ({best})"
    desc = (
        f"Owned capacity of the best plan ({best}) against the work by month, with the month "
        f"the added servers arrive: {_arrival_label(s)}."
    )
    return Chart("capacity", title, desc, [ax]).svg()
