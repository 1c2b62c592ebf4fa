"""A fleet plan's charts as SVG documents, drawn like the scenario charts (:mod:`.charts`).

- ``frontier``: every candidate at (mean cost, P90 cost) [USD, present value]; the frontier
  (no other candidate is cheaper on both) connected, the best and all-cloud marked.
- ``cost_by_servers``: mean cost [USD] by owned servers [count], one line per reservation count,
  in distinct colours, with the P10–P90 band of the best plan's reservation count; all-cloud's
  mean as a dotted reference line.
- ``work_split``: the best plan's mean work [reference GPU-hours/month] of each month 1..H,
  stacked by where it runs: owned, reserved, burst.
"""

from __future__ import annotations

import numpy as np

from costmodel.plan_result import Candidate, PlanResult

from ..formatting import fmt_candidate, fmt_servers
from .capacity_chart import capacity_chart, capacity_series, month_axes
from .chart import Chart
from .charts import usd_tick
from .colours import BUY, LAYERS, MARK, OTHER, RENT, ramp
from .plan_tables import WORK_LAYERS
from .plot import Axes, Axis, steps

__all__ = [
    "PLAN_CHARTS",
    "frontier_chart",
    "plan_chart_names",
    "render_plan_charts",
    "servers_chart",
    "work_split_chart",
]

PLAN_CHARTS = ("frontier", "cost_by_servers", "work_split")


def _point_label(c: Candidate) -> str:
    """A frontier point's label, servers+reserved: "5+0", or "3+0 (+ 2 at 90 %)" for a
    candidate that adds 2 servers when the work passes 90 % of the first 3 servers' capacity."""
    label = f"{c.servers}+{c.instances}"
    if c.add is None:
        return label
    return f"{label} ({fmt_servers(c)[len(str(c.servers)) :].strip()})"


def _star(ax: Axes, x: float, y: float, best: Candidate) -> None:
    """The best candidate, a star at (x, y)."""
    ax.scatter([x], [y], RENT, shape="*", size=15.5, label=f"best: {fmt_candidate(best)}")


def frontier_chart(result: PlanResult) -> str:
    """Mean against P90 cost of every candidate, the frontier highlighted; SVG."""
    ax = Axes(
        Axis("Mean cost [USD, present value]", usd_tick),
        Axis("P90 cost [USD, present value]", usd_tick),
    )
    cs = result.candidates
    ax.scatter([c.cost.mean for c in cs], [c.cost.p90 for c in cs], OTHER, label="candidate")
    front = sorted(result.frontier, key=lambda c: (c.cost.mean, c.cost.p90))
    fx, fy = [c.cost.mean for c in front], [c.cost.p90 for c in front]
    ax.line(fx, fy, BUY, marker_="o", size=5.0, label="frontier")
    for c in front:
        ax.text(c.cost.mean, c.cost.p90, _point_label(c), BUY, size=7.0, dx=5.0, dy=4.0)
    cloud = result.all_cloud
    label = "all-cloud (rent everything)"
    ax.scatter([cloud.cost.mean], [cloud.cost.p90], MARK, shape="s", size=7.7, label=label)
    _star(ax, result.best.cost.mean, result.best.cost.p90, result.best)
    best = fmt_candidate(result.best)
    desc = f"Mean against P90 cost of every candidate, the frontier connected; best plan {best}."
    title = "Cost versus risk: every candidate (labels: servers+reserved)"
    return Chart("frontier", title, desc, [ax]).svg()


def servers_chart(result: PlanResult) -> str:
    """Mean cost by server count, one line per reservation count, and the P10–P90 band of the
    best plan's reservation count only (the bands of all counts overlap into one blur); SVG."""
    servers = [c.servers for c in result.candidates]
    ax = Axes(
        Axis(
            "Owned servers [count]", low=min(servers) - 0.5, high=max(servers) + 0.5, integer=True
        ),
        Axis("Cost over the horizon [USD, present value]", usd_tick),
    )
    counts = sorted({c.instances for c in result.candidates})
    for k, colour in zip(counts, ramp(len(counts)), strict=True):
        line = sorted((c for c in result.candidates if c.instances == k), key=lambda c: c.servers)
        x = [c.servers for c in line]
        best = k == result.best.instances
        if best:
            label = f"{k} reserved (as the best plan): P10–P90"
            lo, hi = [c.cost.p10 for c in line], [c.cost.p90 for c in line]
            ax.band(x, lo, hi, colour, label=label)
        ax.line(
            x,
            [c.cost.mean for c in line],
            colour,
            width=2.4 if best else 1.6,
            marker_="o",
            size=4.0 if best else 3.0,
            label=f"{k} reserved: mean",
        )
    _star(ax, result.best.servers, result.best.cost.mean, result.best)
    ax.hline(result.all_cloud.cost.mean, MARK, width=1.2, style=":", label="all-cloud mean")
    desc = "Mean cost by the number of owned servers, one line per number of reserved instances."
    return Chart("cost_by_servers", "Cost by the number of owned servers", desc, [ax]).svg()


def work_split_chart(result: PlanResult) -> str:
    """The best plan's mean monthly work, stacked owned / reserved / burst; SVG."""
    split = result.work_split
    h = len(split.owned)
    work = (split.owned, split.reserved, split.burst)
    layers = [(v, c, label) for v, c, (_, label) in zip(work, LAYERS, WORK_LAYERS, strict=True)]
    shown = [layer for layer in layers if np.any(layer[0] > 0)] or layers[:1]
    ax = Axes(*month_axes(h, "Work [reference GPU-hours/month]"))
    # Month m spans m - 1/2 to m + 1/2: a step for each month, so even one month shows.
    edges = np.arange(h + 1) + 0.5
    below = np.zeros(h)
    for values, colour, label in shown:
        above = below + np.asarray(values, float)
        x, lo = steps(edges, below)
        ax.band(x, lo, steps(edges, above)[1], colour, opacity=0.85, label=label)
        below = above
    best = fmt_candidate(result.best)
    title = f"Where the work runs in the best plan ({best}), mean of the draws"
    desc = f"Monthly work of the best plan ({best}) on owned servers, reserved and burst instances."
    return Chart("work_split", title, desc, [ax]).svg()


def plan_chart_names(result: PlanResult) -> tuple[str, ...]:
    """The charts of ``result``: :data:`PLAN_CHARTS`, and ``capacity`` for a plan that adds
    servers later."""
    return PLAN_CHARTS + (() if capacity_series(result) is None else ("capacity",))


def render_plan_charts(result: PlanResult) -> dict[str, str]:
    """All plan charts as ``{name: SVG document}`` in the order of :data:`PLAN_CHARTS`, and for
    a plan that adds servers later the ``capacity`` chart (:mod:`.capacity_chart`)."""
    charts = {
        "frontier": frontier_chart(result),
        "cost_by_servers": servers_chart(result),
        "work_split": work_split_chart(result),
    }
    capacity = capacity_chart(result)
    return charts if capacity is None else charts | {"capacity": capacity}
