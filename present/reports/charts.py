"""The report's charts as PNG bytes, drawn headless with matplotlib's Agg canvas.

- ``breakeven``: TCO [USD, present value] of buying, renting and (inference with a hosted API)
  the API across utilisation [%], P50 lines with P10–P90 bands; each break-even P50 (against
  renting, against the API) as a vertical line, its P10–P90 shaded.
- ``prob_buy_cheaper``: P(buy cheaper) [%] across utilisation [%], against each rival.
- ``cumulative``: cumulative discounted cost [USD] of buying, renting and (with one) the API by
  month at one utilisation, with the payback month against renting (P50 line, P10–P90 shaded)
  where the curves cross.
- ``tornado`` (when the result has uncertain inputs): each input from its P10 to its P90 with
  the others at their medians, as bars of the break-even [%] and of buy − rent [USD];
  ``tornado_api`` the same against the hosted API (with one).

Figures are built with :class:`matplotlib.figure.Figure` (no pyplot state), so rendering is
safe in servers and threads. No value (NaN) is drawn as a gap. Each is laid out once around
its text (:mod:`.layout`), drawn once on the Agg canvas and written as a PNG of 256 colours
(:func:`png`).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, PercentFormatter
from PIL import Image

from costmodel.result import Bands, Breakeven, Result
from costmodel.sides import side as side_of

from ..formatting import fmt_months, fmt_utilisation, missing
from .colours import API, BUY, HIGH, LOW, MARK, side_colour
from .layout import TITLE_SIZE, fit
from .tables import cumulative_payback
from .uncertainty import RIVAL_WORDS, rival_tornado

__all__ = [
    "CHARTS",
    "breakeven_figure",
    "chart_names",
    "figure",
    "legend",
    "month_axes",
    "png",
    "render_charts",
    "usd_tick",
]

CHARTS = ("breakeven", "prob_buy_cheaper", "cumulative", "tornado", "tornado_api")
#: Most inputs the tornado chart shows.
TORNADO_BARS = 10
_DPI = 150
_SIZE = (8.0, 4.8)  # [inch]


def usd_tick(v: float, _pos: Any = None) -> str:
    """Axis money [USD]: "$12k", "$62.5k", "$1.25M", thousands or millions with the decimals
    (up to three) the value needs, so that a tick of a 2.5k step is not rounded."""
    a = abs(v)
    sign = "-" if v < 0 else ""
    for unit, suffix in ((1e6, "M"), (1e3, "k")):
        if a >= unit:
            digits = f"{a / unit:,.3f}".rstrip("0").rstrip(".")
            return f"{sign}${digits}{suffix}"
    return f"{sign}${a:,.0f}"


def figure() -> tuple[Figure, Axes]:
    """A one-axes chart on its Agg canvas, laid out by :func:`legend` (:mod:`.layout`)."""
    fig = Figure(figsize=_SIZE, dpi=_DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax


def legend(fig: Figure, ax: Axes) -> None:
    """``ax``'s legend below the axes, so it never hides data, in three columns; called last,
    it lays the figure out around its text (:func:`.layout.fit`)."""
    handles, labels = ax.get_legend_handles_labels()
    bottom = fit(fig, fig.axes, legend_rows=-(-len(labels) // 3), legend_size=8)
    fig.legend(
        handles,
        labels,
        loc="lower center",
        bbox_to_anchor=(0.5, bottom),
        borderaxespad=0,
        ncols=3,
        fontsize=8,
        frameon=False,
    )


def month_axes(ax: Axes, months: int, ylabel: str) -> None:
    """Months 1..``months`` on the x axis (month m spanning m - 1/2 to m + 1/2, whole ticks)
    and, from 0 up, an amount with its thousands grouped labelled ``ylabel``."""
    ax.set_xlim(0.5, months + 0.5)
    ax.set_ylim(bottom=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
    ax.set_xlabel("Month")
    ax.set_ylabel(ylabel)


def png(fig: Figure) -> bytes:
    """``fig`` as PNG bytes at its own resolution, drawn once on the Agg canvas.

    A chart holds a few colours and their anti-aliased edges, so its pixels are written with a
    palette of 256 colours (Pillow's fast octree): no pixel moves by more than a few levels of
    255, and the PNG is written in about half the time of full colour and is a quarter of its
    size, which every report embeds.
    """
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    size = canvas.get_width_height()
    pixels = Image.frombuffer("RGBA", size, canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    palette = pixels.convert("RGB").quantize(256, method=Image.Quantize.FASTOCTREE)
    buf = io.BytesIO()
    palette.save(buf, format="png", dpi=(fig.dpi, fig.dpi))
    return buf.getvalue()


def _band(ax: Axes, x: np.ndarray, bands: Bands, color: str, label: str) -> None:
    """P50 line with a P10–P90 band; no band when the draws agree (a deterministic run)."""
    lo, hi = bands.p10, bands.p90
    if np.nanmax(np.abs(hi - lo), initial=0.0) > 1e-9 * np.nanmax(np.abs(hi), initial=1.0):
        ax.fill_between(x, lo, hi, color=color, alpha=0.18, linewidth=0, label=f"{label} P10–P90")
    ax.plot(x, bands.p50, color=color, linewidth=2, label=f"{label} P50")


def _mark_span(
    ax: Axes,
    p10: float,
    p50: float,
    p90: float,
    right: float,
    label: str,
    fmt: Any,
    colour: str = MARK,
    style: str = "--",
) -> None:
    """Vertical P50 line and shaded P10–P90 span; a NaN P90 ("never") shades to ``right``."""
    if not missing(p10) and (missing(p90) or p90 - p10 > 1e-9 * max(1.0, abs(p90))):
        hi = right if missing(p90) else p90
        ax.axvspan(
            p10,
            hi,
            color=colour,
            alpha=0.08,
            linewidth=0,
            label=f"{label} P10–P90 ({fmt(p10)} – {fmt(p90)})",
        )
        for edge in (p10, p90):
            if not missing(edge):
                ax.axvline(edge, color=colour, linestyle=":", linewidth=0.9, alpha=0.7)
    if not missing(p50):
        ax.axvline(
            p50, color=colour, linestyle=style, linewidth=1.4, label=f"{label} P50 ({fmt(p50)})"
        )


@dataclass(frozen=True)
class _Rival:
    """A side buying is set against: its name in prose (``""`` when renting is the only one),
    P(buy cheaper) against it per level [-], the break-even against it, and the colour and
    line style that mark that break-even."""

    name: str
    prob: np.ndarray
    breakeven: Breakeven
    colour: str
    style: str

    @property
    def label(self) -> str:
        return "Break-even" + (f" vs {self.name}" if self.name else "")


def _rivals(result: Result) -> list[_Rival]:
    """Renting, and with a hosted API the API too, then any further side."""
    be, prob = result.breakeven_utilisation, result.prob_buy_cheaper
    further = [
        _Rival(side_of(side).doing, v.prob_buy_cheaper, v.breakeven, side_colour(side), ":")
        for side, v in result.versus.items()
    ]
    if result.api_tco is None and not further:
        return [_Rival("", prob, be, MARK, "--")]
    out = [_Rival("renting", prob, be, MARK, "--")]
    if result.api_tco is not None:
        be_api = result.breakeven_vs_api
        out.append(_Rival("the API", result.prob_buy_cheaper_than_api, be_api, API, "-."))
    return out + further


def _percent(p: float) -> str:
    """A percentage [%] as :func:`fmt_utilisation` writes its fraction."""
    return fmt_utilisation(p / 100)


def _mark_breakeven(ax: Axes, rival: _Rival, line: int) -> None:
    """The break-even against ``rival`` as a span, and a note on the ``line``-th line of the
    axes when its P50 is "never" or 0 %."""
    be = rival.breakeven
    ends = (be.p10 * 100, be.p50 * 100, be.p90 * 100)
    _mark_span(ax, *ends, 100.0, rival.label, _percent, rival.colour, rival.style)
    note = None
    if missing(be.p50):
        note = f"{rival.label} P50: never ({rival.name or 'renting'} is cheaper even at 100 %)"
    elif be.p50 == 0:
        note = f"{rival.label} P50: 0 % (buying is cheaper even when idle)"
    if note:
        y = 0.97 - 0.06 * line
        ax.text(0.02, y, note, transform=ax.transAxes, va="top", fontsize=9, color=rival.colour)


def breakeven_figure(result: Result) -> Figure:
    """TCO of each side across utilisation with the break-even (against renting, and against
    a hosted API) marked."""
    fig, ax = figure()
    x = result.utilisation * 100
    for side in result.sides:
        _band(ax, x, result.tco(side), side_colour(side), side_of(side).label)
    for line, rival in enumerate(_rivals(result)):
        _mark_breakeven(ax, rival, line)
    ax.set_xlim(0, 100)
    ax.xaxis.set_major_formatter(PercentFormatter(decimals=0))
    ax.yaxis.set_major_formatter(FuncFormatter(usd_tick))
    ax.set_xlabel("Utilisation of the owned GPUs [% of wall-clock hours]")
    ax.set_ylabel("Total cost of ownership [USD, present value]")
    sides = " vs ".join(side_of(s).option for s in result.sides)
    sides = sides[0].upper() + sides[1:]
    ax.set_title(f"{sides}: total cost over the horizon", loc="left", fontsize=TITLE_SIZE)
    legend(fig, ax)
    return fig


def prob_chart(result: Result) -> bytes:
    """Share of draws in which buying is cheaper (than renting, and than a hosted API), across
    utilisation; PNG bytes."""
    fig, ax = figure()
    x = result.utilisation * 100
    rivals = _rivals(result)
    for rival, colour in zip(rivals, (BUY, API, *(r.colour for r in rivals[2:])), strict=False):
        y = rival.prob * 100
        if colour == BUY:  # one shaded area: two would blur into each other
            ax.fill_between(x, 0, y, color=colour, alpha=0.12, linewidth=0)
        label = "P(buy cheaper" + (f" than {rival.name})" if rival.name else ")")
        ax.plot(x, y, color=colour, linewidth=2, marker="o", markersize=3.5, label=label)
    ax.axhline(50, color="#888888", linestyle=":", linewidth=1, label="even odds (50 %)")
    for rival in rivals:
        be50 = rival.breakeven.p50
        if not missing(be50):
            ax.axvline(
                be50 * 100,
                color=rival.colour,
                linestyle=rival.style,
                linewidth=1.4,
                label=f"{rival.label} P50 ({fmt_utilisation(be50)})",
            )
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.xaxis.set_major_formatter(PercentFormatter(decimals=0))
    ax.yaxis.set_major_formatter(PercentFormatter(decimals=0))
    ax.set_xlabel("Utilisation of the owned GPUs [% of wall-clock hours]")
    ax.set_ylabel("Share of draws where buying is cheaper [%]")
    ax.set_title("How sure: probability that buying is cheaper", loc="left", fontsize=TITLE_SIZE)
    legend(fig, ax)
    return png(fig)


def _crossing(months: np.ndarray, buy: np.ndarray, rent: np.ndarray) -> float:
    """First month [month] where the P50 curves cross, by linear interpolation; NaN if none."""
    diff = buy - rent
    idx = np.flatnonzero(diff <= 0)
    if idx.size == 0:
        return float("nan")
    k = int(idx[0])
    if k == 0:
        return float(months[0])
    d0, d1 = diff[k - 1], diff[k]
    return float(months[k - 1] + (months[k] - months[k - 1]) * d0 / (d0 - d1))


def cumulative_chart(result: Result) -> bytes:
    """Cumulative discounted cost by month at one utilisation, payback marked; PNG bytes."""
    cum = result.cumulative_cost
    fig, ax = figure()
    months = cum.months
    for side, bands in cum.items():
        running = " (capex + running cost)" if side == "buy" else ""
        _band(ax, months, bands, side_colour(side), side_of(side).label + running)
    right = float(np.nanmax(months)) if months.size else 1.0
    payback = cumulative_payback(result)
    if payback is None:
        nan = float("nan")
        payback = (nan, _crossing(months, cum["buy"].p50, cum["rent"].p50), nan)
    p10, p50, p90 = payback
    rival = "" if result.api_tco is None else " against renting"
    _mark_span(
        ax,
        p10,
        p50,
        p90,
        right,
        f"Payback{rival}",
        lambda t: fmt_months(t) + ("" if missing(t) else " mo"),
    )
    if not missing(p50):
        y = float(np.interp(p50, months, cum["rent"].p50))
        ax.plot([p50], [y], marker="o", color=MARK, markersize=6, zorder=5)
    else:
        ax.text(
            0.98,
            0.04,
            f"No payback{rival} within the horizon (P50)",
            transform=ax.transAxes,
            ha="right",
            fontsize=9,
            color=MARK,
        )
    ax.set_xlim(0, right)
    ax.yaxis.set_major_formatter(FuncFormatter(usd_tick))
    ax.set_xlabel("Month")
    ax.set_ylabel("Cumulative cost [USD, present value]")
    u = fmt_utilisation(cum.utilisation, none="?")
    ax.set_title(
        f"Payback: cumulative cost at {u} utilisation (no resale)", loc="left", fontsize=TITLE_SIZE
    )
    legend(fig, ax)
    return png(fig)


def _tornado_panel(ax: Axes, base: float, lows: list[float], highs: list[float]) -> None:
    """Bars from the median case ``base`` to each end (NaN: no bar), P10 and P90 coloured."""
    y = np.arange(len(lows))
    for ends, color, label in ((lows, LOW, "input at its P10"), (highs, HIGH, "input at its P90")):
        width = np.array(ends, dtype=float) - base
        ax.barh(y, np.nan_to_num(width), left=base, height=0.6, color=color, label=label)
    ax.axvline(base, color=MARK, linewidth=1.2)
    ax.grid(True, axis="x", color="#dddddd", linewidth=0.6)
    ax.grid(False, axis="y")


def tornado_chart(result: Result, versus: str = "rent") -> bytes | None:
    """Break-even and buy − rent (or buy − API, ``versus``) at the report utilisation, each
    uncertain input from its P10 to its P90 (largest swing on top); PNG bytes, or None without
    tornado inputs."""
    t = rival_tornado(result, versus)
    if t is None or not t.inputs:
        return None
    bars = t.inputs[:TORNADO_BARS]
    height = max(2.8, 1.3 + 0.42 * len(bars))
    fig = Figure(figsize=(_SIZE[0], height), dpi=_DPI)
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2, sharey=True)
    for ax in (left, right):
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    never = 100.0  # "never" is drawn at 100 %, the end of the range
    be = [
        [never if missing(v) else v * 100 for v in (b.breakeven_at_low, b.breakeven_at_high)]
        for b in bars
    ]
    base = never if missing(t.breakeven_at_median) else t.breakeven_at_median * 100
    _tornado_panel(left, base, [b[0] for b in be], [b[1] for b in be])
    _tornado_panel(
        right, t.gap_at_median, [b.gap_at_low for b in bars], [b.gap_at_high for b in bars]
    )
    left.set_yticks(np.arange(len(bars)), [b.input for b in bars], fontsize=8)
    left.invert_yaxis()
    left.xaxis.set_major_formatter(PercentFormatter(decimals=1))
    right.xaxis.set_major_formatter(FuncFormatter(usd_tick))
    short, words = RIVAL_WORDS[versus]
    against = "" if versus == "rent" else f" against {words}"
    left.set_xlabel(
        f"Break-even utilisation{against}\n(median case {fmt_utilisation(t.breakeven_at_median)})"
    )
    u = fmt_utilisation(t.utilisation, none="?")
    right.set_xlabel(f"Buy − {short} TCO at {u}\n[USD, present value]")
    fig.suptitle(
        f"What moves the answer{against}: each input from P10 to P90, the others at their medians",
        x=0.01,
        ha="left",
        fontsize=TITLE_SIZE,
    )
    legend(fig, right)
    return png(fig)


def chart_names(result: Result) -> tuple[str, ...]:
    """The charts of ``result`` in the order of :data:`CHARTS`: ``tornado`` only when the
    result has one with uncertain inputs, ``tornado_api`` when it has one against a hosted
    API."""
    tornados = []
    for name, versus in (("tornado", "rent"), ("tornado_api", "api")):
        t = rival_tornado(result, versus)
        if t is not None and t.inputs:
            tornados.append(name)
    return ("breakeven", "prob_buy_cheaper", "cumulative", *tornados)


def render_charts(result: Result) -> dict[str, bytes]:
    """All charts of ``result`` (:func:`chart_names`) as ``{name: PNG bytes}``."""
    draw = {
        "breakeven": lambda: png(breakeven_figure(result)),
        "prob_buy_cheaper": lambda: prob_chart(result),
        "cumulative": lambda: cumulative_chart(result),
        "tornado": lambda: tornado_chart(result, "rent"),
        "tornado_api": lambda: tornado_chart(result, "api"),
    }
    return {name: draw[name]() for name in chart_names(result)}
