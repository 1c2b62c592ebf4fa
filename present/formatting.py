"""Readable text for money, shares, months and distributions: the one set of formatters used by
the command line, the verdict, the reports and the batch summary.

Every formatter accepts ``None`` and NaN ("no value") and returns a dash or "never". Money is
rounded to what a Monte Carlo estimate supports: four significant figures from 1,000 USD,
whole dollars from 10 USD, cents below. Shares are whole percentages, except that a share that
is not exactly 0 or 1 is never shown as "0 %" or "100 %" (0.9968 is "99.7 %"). Text bound for a
spreadsheet (the XLSX report, the batch ``summary.csv``) goes through :func:`text_cell`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from costmodel.units import unit as unit_of
from pricing.text import counted

__all__ = [
    "DASH",
    "NEVER",
    "fmt_candidate",
    "fmt_margin",
    "fmt_grams",
    "fmt_candidate",
    "fmt_mix",
    "fmt_servers",
    "fmt_months",
    "fmt_number",
    "fmt_per_unit",
    "fmt_share",
    "fmt_tonnes",
    "fmt_unit_cost",
    "fmt_usd",
    "fmt_usd_margin",
    "fmt_utilisation",
    "fmt_value",
    "missing",
    "slug",
    "text_cell",
]

DASH = "—"
NEVER = "never"
#: What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def missing(x: Any) -> bool:
    """True for ``None`` and NaN: the contract's "no value"."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def _round_sig(x: float, digits: int) -> float:
    if x == 0:
        return 0.0
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def fmt_usd(x: float | None) -> str:
    """Money [USD] as "$52,350", "$640", "$3.06"; no value -> "—"."""
    if missing(x):
        return DASH
    sign = "-" if x < 0 else ""
    a = abs(x)
    if a >= 1000:
        return f"{sign}${_round_sig(a, 4):,.0f}"
    if a >= 10:
        return f"{sign}${a:,.0f}"
    return f"{sign}${a:,.2f}"


def fmt_usd_margin(x: float | None, margin: float | None) -> str:
    """Money and its margin [USD], the margin to two significant figures and the money to the
    same place, or to the cent below $10 of margin: "$1,950 ± $610", "$123,456 ± $61",
    "$3.06 ± $0.12"; the money alone (:func:`fmt_usd`) when the margin has no value, "± $0"
    when it is 0."""
    if missing(x) or missing(margin) or not math.isfinite(margin):
        return fmt_usd(x)
    if margin == 0:
        return f"{fmt_usd(x)} ± $0"
    place = math.floor(math.log10(abs(margin))) - 1  # the margin's second significant digit
    if place < 0:
        place = -2
    decimals = -place if place < 0 else 0
    value, width = round(x, -place), round(abs(margin), -place)
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value):,.{decimals}f} ± ${width:,.{decimals}f}"


def fmt_share(p: float | None) -> str:
    """A share or probability [-] as a percentage: "35 %", "99.7 %", "> 99.9 %", "< 0.1 %".

    Whole percentages, with one decimal where rounding would show a share that is not exactly
    0 or 1 as "0 %" or "100 %"; no value -> "—".
    """
    if missing(p):
        return DASH
    pct = 100.0 * p
    whole = round(pct)
    if 0 < p < 1 and whole in (0, 100):
        if pct < 0.05:
            return "< 0.1 %"
        if pct > 99.95:
            return "> 99.9 %"
        return f"{pct:.1f} %"
    return f"{whole:.0f} %"


def fmt_utilisation(u: float | None, *, none: str = NEVER) -> str:
    """Utilisation [-] as a percentage, "35 %" or "7.1 %"; no value -> "never" (or ``none``)."""
    if missing(u):
        return none
    pct = u * 100
    if abs(pct - round(pct)) < 1e-9:
        return f"{round(pct):d} %"
    return f"{pct:.1f} %"


def _margin_decimals(margin: float) -> int:
    """Decimals of a percentage that show a margin [-] to its first significant digit (at
    least one)."""
    pct = abs(margin) * 100
    if not math.isfinite(pct) or pct == 0:
        return 1
    return max(1, -math.floor(math.log10(pct)))


def fmt_margin(u: float | None, margin: float | None) -> str:
    """A utilisation [-] and its margin as percentages, to the margin's first significant digit
    (at least one decimal): "36.2 % ± 0.4 %", "7.34 % ± 0.03 %"; the utilisation alone
    (:func:`fmt_utilisation`) when the margin has no value."""
    if missing(u) or missing(margin) or not math.isfinite(margin):
        return fmt_utilisation(u)
    d = _margin_decimals(margin)
    return f"{u * 100:.{d}f} % ± {margin * 100:.{d}f} %"


def fmt_unit_cost(x: float | None) -> str:
    """A cost per unit of work [USD] to three significant figures, trailing zeros kept so
    that a column reads alike: "$0.0689", "$2.40", "$0.540"."""
    if missing(x):
        return DASH
    return f"${_sig3(x)}" if x < 1000 else fmt_usd(x)


def fmt_per_unit(x: float | None, unit: str) -> str:
    """A cost per unit of work with its unit: "$0.33 per M tokens"; no value -> "—"."""
    return DASH if missing(x) else f"{fmt_unit_cost(x)} per {unit_of(unit).words}"


def fmt_tonnes(x: float | None) -> str:
    """Emissions [t CO2e] to three significant figures: "7.83 t", "12.0 t", "1,240 t", "0 t";
    no value (unknown) -> "unknown"."""
    return "unknown" if missing(x) else f"{_sig3(x)} t"


def fmt_grams(x: float | None) -> str:
    """Emissions per unit of work [g CO2e] to three significant figures: "349 g", "0.52 g";
    no value -> "—"."""
    return DASH if missing(x) else f"{_sig3(x)} g"


def _sig3(x: float) -> str:
    """Three significant figures, trailing zeros kept ("12.0", "0.520"), thousands grouped
    from 1,000 ("1,240"); 0 as "0"."""
    if x == 0:
        return "0"
    x = _round_sig(x, 3)
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:#.3g}"


def fmt_months(t: float | None) -> str:
    """A duration [month] with one decimal; no value -> "never" (not within the horizon)."""
    if missing(t):
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
    texts = [
        DASH if v is None else fmt_number(v, thousands=False) if _is_number(v) else fmt_value(v)
        for v in values
    ]
    decimals = max(
        (len(t.partition(".")[2]) for t in texts if "e" not in t and t != DASH), default=0
    )
    if decimals == 0:
        return texts
    return [
        f"{v:.{decimals}f}" if _is_number(v) and abs(v) < 1000 else t
        for v, t in zip(values, texts, strict=True)
    ]


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _truncation(d: Mapping[str, Any]) -> str:
    low, high = d.get("low"), d.get("high")
    if low is None and high is None:
        return ""
    lo, hi = _fmt_group([low, high])
    return f" truncated to [{lo}, {hi}]"


def _fmt_dist(d: Mapping[str, Any]) -> str:
    kind = str(d.get("dist", "")).lower()
    if kind in _DIST_ARGS and all(k in d for k in _DIST_ARGS[kind][1]):
        name, keys = _DIST_ARGS[kind]
        return f"{name}({', '.join(_fmt_group([d[k] for k in keys]))})"
    if kind == "normal" and "mean" in d and "sd" in d:
        mean, sd = _fmt_group([d["mean"], d["sd"]])
        return f"Normal(mean {mean}, sd {sd}){_truncation(d)}"
    if kind == "lognormal":
        params = [k for k in ("median", "p90", "mean", "sd") if k in d]
        texts = _fmt_group([d[k] for k in params])
        pairs = ", ".join(f"{k} {t}" for k, t in zip(params, texts, strict=True))
        return f"Lognormal({pairs}){_truncation(d)}"
    values, weights = d.get("values"), d.get("weights")
    if isinstance(values, list) and not weights:
        weights = [1] * len(values)
    weighed = isinstance(weights, list) and all(map(_is_number, weights)) and sum(weights) > 0
    if kind == "discrete" and isinstance(values, list) and weighed:
        total = sum(weights)
        pairs = (
            f"{t} ({fmt_share(w / total)})"
            for t, w in zip(_fmt_group(values), weights, strict=False)
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


def slug(name: str, *, default: str = "scenario", limit: int = 80) -> str:
    """A lowercase ASCII file stem for ``name``: ``[a-z0-9-]``, at most ``limit`` characters."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].rstrip("-")
    return text or default


def text_cell(value: Any) -> Any:
    """A spreadsheet cell (CSV or XLSX) that no spreadsheet runs as a formula.

    Text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
    ``'``, as OWASP advises; any other value, numbers included (``-0.5``), is returned as is.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def fmt_mix(pair: tuple) -> str:
    """A plan's candidate as its precision and value of information name it: (servers,
    instances) as "3 servers, 0 reserved"; with a later purchase, (servers, instances, added,
    when_demand_above, at_month) as "3 + 2 servers at 90 %, 0 reserved" or "3 + 2 servers in
    month 24, 0 reserved"."""
    servers, instances = pair[0], pair[1]
    if len(pair) > 2 and pair[2]:
        added, share, month = pair[2:5]
        when = f"in month {month}" if month is not None else f"at {fmt_share(share)}"
        return f"{servers} + {added} servers {when}, {instances} reserved"
    return f"{counted(servers, 'server')}, {instances} reserved"


def fmt_candidate(candidate: Any) -> str:
    """A plan candidate as charts and reports label it: "1 server, 0 reserved", or for one
    that adds servers later "3 + 2 servers at 90 %, 0 reserved" (as :func:`fmt_mix`)."""
    c, a = candidate, candidate.add
    later = () if a is None else (a.servers, a.when_demand_above, a.at_month)
    return fmt_mix((c.servers, c.instances, *later))


def fmt_candidate(candidate: Any) -> str:
    """A plan candidate as the reports' labels name it: "5 servers, 0 reserved", or for one
    that adds servers later as :func:`fmt_mix` does ("3 + 2 servers at 90 %, 0 reserved")."""
    a = candidate.add
    if a is None:
        return f"{candidate.servers} servers, {candidate.instances} reserved"
    pair = (candidate.servers, candidate.instances, a.servers, a.when_demand_above, a.at_month)
    return fmt_mix(pair)


def fmt_servers(candidate: Any, month: str = "month ") -> str:
    """A plan candidate's servers: "3", or for one that adds servers later "3 + 2 at 90 %"
    (when the work passes 90 % of the first servers' capacity) or "3 + 2 in month 24"
    (bought in month 24; ``month="m"`` writes "in m24", for narrow tables)."""
    a = candidate.add
    if a is None:
        return str(candidate.servers)
    if a.at_month is not None:
        return f"{candidate.servers} + {a.servers} in {month}{a.at_month}"
    return f"{candidate.servers} + {a.servers} at {fmt_share(a.when_demand_above)}"
