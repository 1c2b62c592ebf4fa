"""The report's charts as SVG documents (:mod:`.chart`), written directly from the result.

- ``breakeven``: TCO [USD, present value] of buying, renting and (inference with a hosted API)
  the API across utilisation [%], P50 lines with P10–P90 bands; each break-even P50 (against
  renting, against the API) as a vertical line, its P10–P90 shaded.
- ``prob_buy_cheaper``: P(buy cheaper) [%] across utilisation [%], against each rival.
- ``cumulative``: cumulative discounted cost [USD] of buying, renting and (with one) the API by
  month at one utilisation, with the payback month against renting (P50 line, P10–P90 shaded)
  where the curves cross.
- ``tornado`` (when the result has uncertain inputs): each input from its P10 to its P90 with
  the others at their medians, as bars of the break-even [%] and of buy − rent [USD];
  ``tornado_<side>`` the same against each further side weighed (``tornado_api`` against a
  hosted API).

No value (NaN) is drawn as a gap. Each chart's ``<desc>`` says what it shows in words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from costmodel.result import Bands, Breakeven, Result
from costmodel.sides import side as side_of

from ..formatting import fmt_months, fmt_utilisation, missing
from .chart import Chart
from .colours import BUY, HIGH, LOW, MARK, side_colour
from .plot import Axes, Axis
from .tables import cumulative_payback
from .uncertainty import rival_tornado, rival_words

__all__ = ["CHARTS", "chart_names", "render_charts", "usd_tick"]

#: The charts of a result, in order (then ``tornado_<side>`` of each rival: :func:`chart_names`).
CHARTS = ("breakeven", "prob_buy_cheaper", "cumulative", "tornado")
#: Most inputs the tornado chart shows.
TORNADO_BARS = 10
_UTILISATION = "Utilisation of the owned GPUs [% of wall-clock hours]"


def usd_tick(v: float) -> str:
    """Axis money [USD]: "$12k", "$62.5k", "$1.25M", thousands or millions with the decimals
    (up to three) the value needs, so that a tick of a 2.5k step is not rounded."""
    a = abs(v)
    sign = "-" if v < 0 else ""
    for unit, suffix in ((1e6, "M"), (1e3, "k")):
        if a >= unit:
            digits = f"{a / unit:,.3f}".rstrip("0").rstrip(".")
            return f"{sign}${digits}{suffix}"
    return f"{sign}${a:,.0f}"


def percent(decimals: int = 0) -> Callable[[float], str]:
    """A tick label of a percentage [%]: ``50%`` (``12.5%`` with one decimal)."""
    return lambda v: f"{v:.{decimals}f}%"


def _band(ax: Axes, x: np.ndarray, bands: Bands, colour: str, label: str) -> None:
    """P50 line with a P10–P90 band; no band when the draws agree (a deterministic run)."""
    lo, hi = bands.p10, bands.p90
    if np.nanmax(np.abs(hi - lo), initial=0.0) > 1e-9 * np.nanmax(np.abs(hi), initial=1.0):
        ax.band(x, lo, hi, colour, label=f"{label} P10–P90")
    ax.line(x, bands.p50, colour, label=f"{label} P50")


def _mark_span(
    ax: Axes,
    ends: tuple[float, float, float],
    right: float,
    label: str,
    fmt: Callable[[float], str],
    colour: str = MARK,
    style: str = "--",
) -> None:
    """Vertical P50 line and shaded P10–P90 span of ``ends`` (P10, P50, P90); a NaN P90
    ("never") shades to ``right``."""
    p10, p50, p90 = ends
    if not missing(p10) and (missing(p90) or p90 - p10 > 1e-9 * max(1.0, abs(p90))):
        hi = right if missing(p90) else p90
        span = f"{label} P10–P90 ({fmt(p10)} – {fmt(p90)})"
        ax.vspan(p10, hi, colour, opacity=0.08, label=span)
        for edge in (p10, p90):
            if not missing(edge):
                ax.vline(edge, colour, width=0.9, style=":", opacity=0.7)
    if not missing(p50):
        ax.vline(p50, colour, style=style, label=f"{label} P50 ({fmt(p50)})")


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


#: How the break-even against a side is drawn: renting's dashed in the marks' grey (its TCO
#: band is already in its colour), the API's dash-dotted and any other side's dotted, each in
#: the side's colour.
_STYLES = {"rent": "--", "api": "-."}


def _rivals(result: Result) -> list[_Rival]:
    """Every side buying is set against, in the result's order (renting, a hosted API, then
    any further side); renting unnamed when it is the only one."""
    rivals = result.sides[1:]
    out = []
    for side in rivals:
        v = result.against(side)
        name = "" if len(rivals) == 1 else side_of(side).doing
        colour = MARK if side == "rent" else side_colour(side)
        out.append(_Rival(name, v.prob_buy_cheaper, v.breakeven, colour, _STYLES.get(side, ":")))
    return out


def _percent(p: float) -> str:
    """A percentage [%] as :func:`fmt_utilisation` writes its fraction."""
    return fmt_utilisation(p / 100)


def _mark_breakeven(ax: Axes, rival: _Rival, line: int) -> None:
    """The break-even against ``rival`` as a span, and a note on the ``line``-th line of the
    axes when its P50 is "never" or 0 %."""
    be = rival.breakeven
    ends = (be.p10 * 100, be.p50 * 100, be.p90 * 100)
    _mark_span(ax, ends, 100.0, rival.label, _percent, rival.colour, rival.style)
    note = None
    if missing(be.p50):
        note = f"{rival.label} P50: never ({rival.name or 'renting'} is cheaper even at 100 %)"
    elif be.p50 == 0:
        note = f"{rival.label} P50: 0 % (buying is cheaper even when idle)"
    if note:
        ax.text(0.02, 0.97 - 0.06 * line, note, rival.colour, dy=-9, fraction=True)


def _breakevens(rivals: list[_Rival]) -> str:
    """Each break-even P50 in words, for a chart's description."""
    return "; ".join(f"{r.label} P50 {fmt_utilisation(r.breakeven.p50)}" for r in rivals)


def breakeven_chart(result: Result) -> str:
    """TCO of each side across utilisation with the break-even (against renting, and against
    a hosted API) marked; SVG."""
    y = Axis("Total cost of ownership [USD, present value]", usd_tick)
    ax = Axes(Axis(_UTILISATION, percent(), 0.0, 100.0), y)
    x = result.utilisation * 100
    for side in result.sides:
        _band(ax, x, result.tco(side), side_colour(side), side_of(side).label)
    rivals = _rivals(result)
    for line, rival in enumerate(rivals):
        _mark_breakeven(ax, rival, line)
    sides = " vs ".join(side_of(s).option for s in result.sides)
    sides = sides[0].upper() + sides[1:]
    desc = (
        f"Total cost of ownership of {sides.lower()} across utilisation, P50 lines with P10 to "
        f"P90 bands; {_breakevens(rivals)}."
    )
    return Chart("breakeven", f"{sides}: total cost over the horizon", desc, [ax]).svg()


def prob_chart(result: Result) -> str:
    """Share of draws in which buying is cheaper (than renting, and than a hosted API), across
    utilisation; SVG."""
    y = Axis("Share of draws where buying is cheaper [%]", percent(), 0.0, 100.0)
    ax = Axes(Axis(_UTILISATION, percent(), 0.0, 100.0), y)
    x = result.utilisation * 100
    rivals = _rivals(result)
    for i, rival in enumerate(rivals):
        p = rival.prob * 100
        colour = BUY if i == 0 else rival.colour  # against renting: buying's own chance
        if i == 0:  # one shaded area: two would blur into each other
            ax.band(x, np.zeros_like(p), p, colour, opacity=0.12)
        label = "P(buy cheaper" + (f" than {rival.name})" if rival.name else ")")
        ax.line(x, p, colour, marker_="o", label=label)
    ax.hline(50, "#888888", style=":", label="even odds (50 %)")
    for rival in rivals:
        be50 = rival.breakeven.p50
        if not missing(be50):
            label = f"{rival.label} P50 ({fmt_utilisation(be50)})"
            ax.vline(be50 * 100, rival.colour, style=rival.style, label=label)
    desc = f"Probability that buying is cheaper, by utilisation; {_breakevens(rivals)}."
    return Chart(
        "prob_buy_cheaper", "How sure: probability that buying is cheaper", desc, [ax]
    ).svg()


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


def _in_months(t: float) -> str:
    return fmt_months(t) + ("" if missing(t) else " mo")


def cumulative_chart(result: Result) -> str:
    """Cumulative discounted cost by month at one utilisation, payback marked; SVG."""
    cum = result.cumulative_cost
    months = cum.months
    right = float(np.nanmax(months)) if months.size else 1.0
    y = Axis("Cumulative cost [USD, present value]", usd_tick)
    ax = Axes(Axis("Month", low=0.0, high=right), y)
    for side, bands in cum.items():
        running = " (capex + running cost)" if side == "buy" else ""
        _band(ax, months, bands, side_colour(side), side_of(side).label + running)
    payback = cumulative_payback(result)
    if payback is None:
        nan = float("nan")
        payback = (nan, _crossing(months, cum["buy"].p50, cum["rent"].p50), nan)
    rival = "" if result.api_tco is None else " against renting"
    _mark_span(ax, payback, right, f"Payback{rival}", _in_months)
    p50 = payback[1]
    if not missing(p50):
        ax.scatter([p50], [np.interp(p50, months, cum["rent"].p50)], MARK, size=6.0)
    else:
        note = f"No payback{rival} within the horizon (P50)"
        ax.text(0.98, 0.04, note, MARK, anchor="end", fraction=True)
    u = fmt_utilisation(cum.utilisation, none="?")
    desc = (
        f"Cumulative discounted cost by month at {u} utilisation; payback{rival} P50 "
        f"{_in_months(p50)}."
    )
    title = f"Payback: cumulative cost at {u} utilisation (no resale)"
    return Chart("cumulative", title, desc, [ax]).svg()


def _tornado_panel(ax: Axes, base: float, lows: list[float], highs: list[float]) -> None:
    """Bars from the median case ``base`` to each end (NaN: no bar), P10 and P90 coloured."""
    rows = np.arange(len(lows))
    for ends, colour, label in ((lows, LOW, "input at its P10"), (highs, HIGH, "input at its P90")):
        ax.barh(rows, np.full(len(rows), base), np.asarray(ends, float), colour, label=label)
    ax.vline(base, MARK, width=1.2)


def tornado_chart(result: Result, versus: str = "rent") -> str | None:
    """Break-even and buy − rent (or buy − <side>, ``versus``) at the report utilisation, each
    uncertain input from its P10 to its P90 (largest swing on top); SVG, or None without
    tornado inputs."""
    t = rival_tornado(result, versus)
    if t is None or not t.inputs:
        return None
    bars = t.inputs[:TORNADO_BARS]
    never = 100.0  # "never" is drawn at 100 %, the end of the range
    be = [
        [never if missing(v) else v * 100 for v in (b.breakeven_at_low, b.breakeven_at_high)]
        for b in bars
    ]
    base = never if missing(t.breakeven_at_median) else t.breakeven_at_median * 100
    short, words = rival_words(versus)
    against = "" if versus == "rent" else f" against {words}"
    u = fmt_utilisation(t.utilisation, none="?")
    names = [b.input for b in bars]
    median = fmt_utilisation(t.breakeven_at_median)
    left = Axes(
        Axis(f"Break-even utilisation{against}\n(median case {median})", percent(1)),
        Axis(names=names, size=8.0, grid=False),
    )
    right = Axes(
        Axis(f"Buy − {short} TCO at {u}\n[USD, present value]", usd_tick),
        Axis(names=names, shown=False, grid=False),
    )
    _tornado_panel(left, base, [b[0] for b in be], [b[1] for b in be])
    _tornado_panel(
        right, t.gap_at_median, [b.gap_at_low for b in bars], [b.gap_at_high for b in bars]
    )
    title = (
        f"What moves the answer{against}: each input from P10 to P90, the others at their medians"
    )
    desc = (
        f"Tornado chart: break-even utilisation{against} and buy minus {short} cost at {u} "
        f"utilisation as each uncertain input moves from its P10 to its P90, largest swing "
        f"first: {', '.join(names)}."
    )
    height = max(2.8, 1.3 + 0.42 * len(bars)) * 72
    return Chart(f"tornado-{versus}", title, desc, [left, right], height).svg()


def _tornados(result: Result) -> dict[str, str]:
    """The name of each tornado chart of ``result`` (``tornado`` against renting, then
    ``tornado_<side>`` against each rival, in the result's order) by the side it is against,
    only where that tornado has uncertain inputs."""
    sides = ["rent", *(r.versus for r in result.rivals)]
    out = {}
    for versus in sides:
        t = rival_tornado(result, versus)
        if t is not None and t.inputs:
            out[versus] = "tornado" if versus == "rent" else f"tornado_{versus}"
    return out


def chart_names(result: Result) -> tuple[str, ...]:
    """The charts of ``result``: those of :data:`CHARTS`, ``tornado`` only when the result has
    one with uncertain inputs, then ``tornado_<side>`` for each rival side with one."""
    return ("breakeven", "prob_buy_cheaper", "cumulative", *_tornados(result).values())


def render_charts(result: Result) -> dict[str, str]:
    """All charts of ``result`` (:func:`chart_names`) as ``{name: SVG document}``."""
    draw: dict[str, Callable[[], str | None]] = {
        "breakeven": lambda: breakeven_chart(result),
        "prob_buy_cheaper": lambda: prob_chart(result),
        "cumulative": lambda: cumulative_chart(result),
    }
    for versus, name in _tornados(result).items():
        draw[name] = lambda versus=versus: tornado_chart(result, versus)
    return {name: draw[name]() or "" for name in chart_names(result)}
