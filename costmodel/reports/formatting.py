"""Readable text for numbers, shares and distributions, shared by the HTML and Markdown reports.

Every formatter accepts ``None`` (the contract's "no value") and returns a dash or "never".
Money is rounded to what a Monte Carlo estimate supports: four significant figures above
1,000 USD, whole dollars above 10 USD, cents below.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "DASH",
    "NEVER",
    "fmt_months",
    "fmt_number",
    "fmt_pct",
    "fmt_prob",
    "fmt_usd",
    "fmt_utilisation",
    "fmt_value",
]

DASH = "—"
NEVER = "never"


def _round_sig(x: float, digits: int) -> float:
    if x == 0:
        return 0.0
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def fmt_usd(x: float | None) -> str:
    """Money [USD] as "$52,350", "$640", "$3.06"; ``None`` -> "—"."""
    if x is None:
        return DASH
    sign = "-" if x < 0 else ""
    a = abs(x)
    if a >= 1000:
        return f"{sign}${_round_sig(a, 4):,.0f}"
    if a >= 10:
        return f"{sign}${a:,.0f}"
    return f"{sign}${a:,.2f}"


def fmt_utilisation(u: float | None, *, none: str = NEVER) -> str:
    """Utilisation [-] as a percentage, "35 %" or "7.1 %"; ``None`` -> "never"."""
    if u is None:
        return none
    pct = u * 100
    if abs(pct - round(pct)) < 1e-9:
        return f"{round(pct):d} %"
    return f"{pct:.1f} %"


def fmt_pct(p: float | None) -> str:
    """A share [-] as a whole percentage, "0 %" .. "100 %"; ``None`` -> "—"."""
    if p is None:
        return DASH
    return f"{p * 100:.0f} %"


def fmt_prob(p: float | None) -> str:
    """A probability [-] as a percentage that never rounds a small chance to 0 or 100 %."""
    if p is None:
        return DASH
    if 0 < p < 0.005:
        return "< 1 %"
    if 0.995 < p < 1:
        return "> 99 %"
    return f"{p * 100:.0f} %"


def fmt_months(t: float | None) -> str:
    """A duration [month] with one decimal; ``None`` -> "never" (no payback within the horizon)."""
    if t is None:
        return NEVER
    return f"{t:.1f}"


def fmt_number(x: Any, *, thousands: bool = True) -> str:
    """A plain number without false precision: "4", "1,500", "0.10", "0.035", "3.06".

    ``thousands=False`` drops the thousands separator (for comma-separated parameter lists).
    """
    sep = "," if thousands else ""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return f"{int(x):{sep}}"
    if abs(x) >= 1000:
        return f"{x:{sep}.0f}"
    text = f"{x:.4g}"
    if "e" not in text and abs(x) < 1:
        decimals = len(text.partition(".")[2])
        if decimals < 2:
            text = f"{x:.2f}"
    return text


_DIST_ARGS = {
    "uniform": ("Uniform", ("low", "high")),
    "triangular": ("Triangular", ("low", "mode", "high")),
    "pert": ("PERT", ("low", "mode", "high")),
}


def _fmt_group(values: list[Any]) -> list[str]:
    """Numbers that belong together with a shared number of decimals: "0.20, 0.80, 1.00"."""
    texts = [DASH if v is None else fmt_number(v, thousands=False) for v in values]
    decimals = max(
        (len(t.partition(".")[2]) for t in texts if "e" not in t and t != DASH), default=0
    )
    if decimals == 0:
        return texts
    return [
        f"{v:.{decimals}f}"
        if isinstance(v, int | float) and not isinstance(v, bool) and abs(v) < 1000
        else t
        for v, t in zip(values, texts, strict=True)
    ]


def _fmt_dist(d: Mapping[str, Any]) -> str:
    kind = str(d.get("dist", "")).lower()
    if kind in _DIST_ARGS and all(k in d for k in _DIST_ARGS[kind][1]):
        name, keys = _DIST_ARGS[kind]
        return f"{name}({', '.join(_fmt_group([d[k] for k in keys]))})"
    if kind == "normal" and "mean" in d and "sd" in d:
        low, high = d.get("low"), d.get("high")
        mean, sd, lo, hi = _fmt_group([d["mean"], d["sd"], low, high])
        text = f"Normal(mean {mean}, sd {sd})"
        if low is not None or high is not None:
            text += f" truncated to [{lo}, {hi}]"
        return text
    if kind == "lognormal":
        params = [k for k in ("median", "p90", "mean", "sd") if k in d]
        texts = _fmt_group([d[k] for k in params])
        return f"Lognormal({', '.join(f'{k} {t}' for k, t in zip(params, texts, strict=True))})"
    if kind == "discrete" and "values" in d:
        values = list(d["values"])
        weights = list(d.get("weights") or [1] * len(values))
        total = sum(weights)
        pairs = (
            f"{t} ({fmt_pct(w / total)})" for t, w in zip(_fmt_group(values), weights, strict=False)
        )
        return f"Discrete({', '.join(pairs)})"
    rest = ", ".join(f"{k} {fmt_value(v)}" for k, v in d.items() if k != "dist")
    return f"{d.get('dist', 'dist')}({rest})"


def fmt_value(v: Any) -> str:
    """An assumption's value: a number, a distribution such as "PERT(0.10, 0.15, 0.25)", or text."""
    if v is None:
        return DASH
    if isinstance(v, bool | int | float):
        return fmt_number(v)
    if isinstance(v, Mapping):
        if "dist" in v:
            return _fmt_dist(v)
        return "; ".join(f"{k}: {fmt_value(x)}" for k, x in v.items())
    if isinstance(v, list | tuple):
        return ", ".join(fmt_value(x) for x in v)
    return str(v)
