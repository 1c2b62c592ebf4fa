"""How a price moved: a least-squares line through the logarithm of the price against time, and
its chart.

With t_i the date of observation i in years since the first, y_i = ln(p_i) and n distinct dates,
the fit y = a + b t gives

    b = sum((t - t_mean)(y - y_mean)) / S_tt,     S_tt = sum((t - t_mean)^2)
    se(b) = sqrt(s^2 / S_tt),                     s^2 = sum(residual^2) / (n - 2)

b [1/year] is the continuous rate of change; the annual change is exp(b) - 1 and its standard
error, to first order (the delta method), exp(b) se(b). A standard error needs three dates or
more; one date gives no trend. Several observations of one date count once (the last one), so
that importing a file twice does not make the fit look surer than it is.

>>> import datetime as dt
>>> t = fit([dt.date(2022, 1, 1), dt.date(2026, 1, 1)], [10.0, 6.561])  # 1,461 days: 4 years
>>> round(t.annual_change, 6), t.annual_change_se  # 6.561 = 10 x 0.9^4
(-0.1, None)
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Trend", "fit", "suggestion", "write_history_chart"]

_DAYS_PER_YEAR = 365.25
#: The range of ``price_annual_change`` in a scenario [1/year].
_CHANGE_RANGE = (-0.99, 10.0)


@dataclass(frozen=True)
class Trend:
    """A fitted price trend.

    Attributes:
        first: the first date (t = 0). intercept: the fitted ln(price) there [ln USD].
        dates: distinct observation dates used [count]. span_years: first to last [year].
        rate, rate_se: slope of ln(price) against time and its standard error [1/year]
            (``rate_se`` None below three dates).
        annual_change, annual_change_se: exp(rate) - 1 and exp(rate) se(rate) [1/year].
    """

    first: dt.date
    intercept: float
    dates: int
    span_years: float
    rate: float
    rate_se: float | None
    annual_change: float
    annual_change_se: float | None

    def value_at(self, day: dt.date) -> float:
        """The fitted price on ``day`` [USD]: exp(a + b t)."""
        return math.exp(self.intercept + self.rate * (day - self.first).days / _DAYS_PER_YEAR)


def _distinct(
    dates: Sequence[dt.date], prices: Sequence[float]
) -> tuple[list[dt.date], np.ndarray, np.ndarray]:
    last: dict[dt.date, float] = {}
    for day, value in zip(dates, prices, strict=True):
        last[day] = value  # the last observation of a date wins
    days = sorted(last)
    t = np.array([(d - days[0]).days / _DAYS_PER_YEAR for d in days], dtype=float)
    return days, t, np.log(np.array([last[d] for d in days], dtype=float))


def fit(dates: Sequence[dt.date], prices: Sequence[float]) -> Trend | None:
    """The least-squares trend of ln(price) [USD] against date; ``None`` with fewer than two
    distinct dates.

    Raises:
        ValueError: a price that is not positive, or dates and prices of different lengths.
    """
    if any(not (p > 0) for p in prices):
        raise ValueError("prices must be positive to fit their logarithm")
    days, t, y = _distinct(dates, prices)
    n = len(t)
    if n < 2:
        return None
    dt_, dy = t - t.mean(), y - y.mean()
    s_tt = float(dt_ @ dt_)
    rate = float(dt_ @ dy) / s_tt
    se = None
    if n >= 3:
        residual = dy - rate * dt_
        se = math.sqrt(float(residual @ residual) / (n - 2) / s_tt)
    growth = math.exp(rate)
    intercept = float(y.mean()) - rate * float(t.mean())
    change_se = None if se is None else growth * se
    return Trend(days[0], intercept, n, float(t[-1]), rate, se, growth - 1.0, change_se)


def suggestion(trend: Trend, key: str = "rent.price_annual_change") -> str | None:
    """A scenario line that carries the fitted annual change and its uncertainty as a normal
    distribution (truncated to the key's range), or None without a standard error."""
    if trend.annual_change_se is None:
        return None
    low, high = _CHANGE_RANGE
    mean, sd = trend.annual_change, max(trend.annual_change_se, 1e-6)
    return f"{key}: {{dist: normal, mean: {mean:.4g}, sd: {sd:.3g}, low: {low:g}, high: {high:g}}}"


def write_history_chart(
    path: str | Path,
    series: Mapping[str, Sequence[tuple[dt.date, float]]],
    title: str,
) -> Path:
    """Draw each series (label -> (date, price [USD/h]) points) with its fitted trend, as PNG
    or SVG by the suffix of ``path``; returns the path written."""
    import matplotlib
    from matplotlib.figure import Figure

    out = Path(path)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise ValueError(f"{out}: a chart is written as .png or .svg")
    fig = Figure(figsize=(7.5, 4.2), dpi=120, layout="constrained")
    ax = fig.add_subplot()
    ax.grid(True, color="#e4e4e4", linewidth=0.5)
    for label, points in series.items():
        days, values = zip(*sorted(points), strict=True)
        (line,) = ax.plot(days, values, marker="o", lw=1.2, label=label)
        trend = fit(days, values)
        if trend is not None:
            fitted = [trend.value_at(d) for d in days]
            name = f"{label}: {trend.annual_change:+.1%}/year"
            ax.plot(days, fitted, ls="--", lw=0.9, color=line.get_color(), label=name)
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.set_title(title, fontsize=10)
    ax.set_ylabel("price [USD/h]")
    ax.legend(fontsize=7, frameon=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context({"svg.hashsalt": "costmodel"}):
        fig.savefig(out, format=fmt, metadata={"Date": None} if fmt == "svg" else {})
    return out
