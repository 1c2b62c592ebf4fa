"""A fleet plan's three charts as PNG bytes, drawn like the scenario charts (:mod:`.charts`).

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
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from costmodel.plan_result import Candidate, PlanResult

from ..formatting import fmt_candidate, fmt_servers
from .capacity_chart import capacity_chart, capacity_series
from .charts import figure, legend, month_axes, png, usd_tick
from .colours import BUY, LAYERS, MARK, OTHER, RENT
from .layout import TITLE_SIZE
from .plan_tables import WORK_LAYERS

__all__ = ["PLAN_CHARTS", "plan_chart_names", "render_plan_charts", "servers_figure"]

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
    label = f"best: {fmt_candidate(best)}"
    ax.scatter([x], [y], marker="*", s=240, color=RENT, zorder=5, label=label)


def frontier_chart(result: PlanResult) -> bytes:
    """Mean against P90 cost of every candidate, the frontier highlighted; PNG bytes."""
    fig, ax = figure()
    cs = result.candidates
    ax.scatter(
        [c.cost.mean for c in cs], [c.cost.p90 for c in cs], s=16, color=OTHER, label="candidate"
    )
    front = sorted(result.frontier, key=lambda c: (c.cost.mean, c.cost.p90))
    fx, fy = [c.cost.mean for c in front], [c.cost.p90 for c in front]
    ax.plot(fx, fy, color=BUY, linewidth=2, marker="o", markersize=5, label="frontier")
    for c in front:
        ax.annotate(
            _point_label(c),
            (c.cost.mean, c.cost.p90),
            xytext=(5, 4),
            textcoords="offset points",
            fontsize=7,
            color=BUY,
        )
    cloud = result.all_cloud
    label = "all-cloud (rent everything)"
    ax.scatter([cloud.cost.mean], [cloud.cost.p90], marker="s", s=60, color=MARK, label=label)
    _star(ax, result.best.cost.mean, result.best.cost.p90, result.best)
    ax.xaxis.set_major_formatter(FuncFormatter(usd_tick))
    ax.yaxis.set_major_formatter(FuncFormatter(usd_tick))
    ax.set_xlabel("Mean cost [USD, present value]")
    ax.set_ylabel("P90 cost [USD, present value]")
    ax.set_title(
        "Cost versus risk: every candidate (labels: servers+reserved)",
        loc="left",
        fontsize=TITLE_SIZE,
    )
    legend(fig, ax)
    return png(fig)


def servers_figure(result: PlanResult) -> Figure:
    """Mean cost by server count, one line per reservation count, and the P10–P90 band of the
    best plan's reservation count only: the bands of all counts overlap into one blur."""
    fig, ax = figure()
    counts = sorted({c.instances for c in result.candidates})
    palette = colormaps["viridis"](np.linspace(0.0, 0.85, len(counts)))
    for k, color in zip(counts, palette, strict=True):
        line = sorted((c for c in result.candidates if c.instances == k), key=lambda c: c.servers)
        x = [c.servers for c in line]
        best = k == result.best.instances
        if best:
            ax.fill_between(
                x,
                [c.cost.p10 for c in line],
                [c.cost.p90 for c in line],
                color=color,
                alpha=0.18,
                linewidth=0,
                label=f"{k} reserved (as the best plan): P10–P90",
            )
        ax.plot(
            x,
            [c.cost.mean for c in line],
            color=color,
            linewidth=2.4 if best else 1.6,
            marker="o",
            markersize=4 if best else 3,
            label=f"{k} reserved: mean",
            zorder=3 if best else 2,
        )
    _star(ax, result.best.servers, result.best.cost.mean, result.best)
    ax.axhline(
        result.all_cloud.cost.mean,
        color=MARK,
        linestyle=":",
        linewidth=1.2,
        label="all-cloud mean",
    )
    servers = [c.servers for c in result.candidates]
    ax.set_xlim(min(servers) - 0.5, max(servers) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.yaxis.set_major_formatter(FuncFormatter(usd_tick))
    ax.set_xlabel("Owned servers [count]")
    ax.set_ylabel("Cost over the horizon [USD, present value]")
    ax.set_title("Cost by the number of owned servers", loc="left", fontsize=TITLE_SIZE)
    legend(fig, ax)
    return fig


def servers_chart(result: PlanResult) -> bytes:
    """:func:`servers_figure` as PNG bytes."""
    return png(servers_figure(result))


def work_split_chart(result: PlanResult) -> bytes:
    """The best plan's mean monthly work, stacked owned / reserved / burst; PNG bytes."""
    split = result.work_split
    h = len(split.owned)
    work = (split.owned, split.reserved, split.burst)
    layers = [(v, c, label) for v, c, (_, label) in zip(work, LAYERS, WORK_LAYERS, strict=True)]
    shown = [layer for layer in layers if np.any(layer[0] > 0)] or layers[:1]
    fig, ax = figure()
    # Month m spans m - 1/2 to m + 1/2: a step for each month, so even one month shows.
    edges = np.arange(h + 1) + 0.5
    ax.stackplot(
        edges,
        *(np.append(values, values[-1:]) for values, _, _ in shown),
        colors=[color for _, color, _ in shown],
        labels=[label for _, _, label in shown],
        alpha=0.85,
        linewidth=0,
        step="post",
    )
    month_axes(ax, h, "Work [reference GPU-hours/month]")
    ax.set_title(
        f"Where the work runs in the best plan ({fmt_candidate(result.best)}), mean of the draws",
        loc="left",
        fontsize=TITLE_SIZE,
    )
    legend(fig, ax)
    return png(fig)


def plan_chart_names(result: PlanResult) -> tuple[str, ...]:
    """The charts of ``result``: :data:`PLAN_CHARTS`, and ``capacity`` for a plan that adds
    servers later."""
    return PLAN_CHARTS + (() if capacity_series(result) is None else ("capacity",))


def render_plan_charts(result: PlanResult) -> dict[str, bytes]:
    """All plan charts as ``{name: PNG bytes}`` in the order of :data:`PLAN_CHARTS`, and for a
    plan that adds servers later the ``capacity`` chart (:mod:`.capacity_chart`)."""
    charts = {
        "frontier": frontier_chart(result),
        "cost_by_servers": servers_chart(result),
        "work_split": work_split_chart(result),
    }
    capacity = capacity_chart(result)
    return charts if capacity is None else charts | {"capacity": capacity}
