"""The report's tables, raw (for CSV and XLSX) and formatted (for HTML and Markdown).

Raw tables keep the result's floats untouched and ``None`` for nulls; formatted tables are lists
of strings made by :mod:`costmodel.reports.formatting`. Money in [USD] present value, utilisation
and probabilities as fractions [-], payback in [month], unit cost in [USD/reference GPU-hour].
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .formatting import (
    DASH,
    fmt_months,
    fmt_prob,
    fmt_usd,
    fmt_utilisation,
    fmt_value,
)

__all__ = [
    "Table",
    "assumption_rows",
    "cumulative_payback",
    "key_figures_table",
    "per_utilisation_columns",
    "per_utilisation_table",
    "reproducibility",
    "scenario_name",
    "sensitivity_table",
    "summary_items",
    "warning_rows",
]

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Table:
    """Formatted cells; ``numeric[i]`` right-aligns column i, ``highlight[j]`` marks row j."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]
    highlight: tuple[bool, ...] = ()


def scenario_name(result: Mapping[str, Any]) -> str:
    """The scenario's name, or "unnamed scenario"."""
    scenario = result.get("scenario")
    name = scenario.get("name") if isinstance(scenario, Mapping) else None
    return str(name) if name else "unnamed scenario"


def sensitivity_table(result: Mapping[str, Any], top: int = 8) -> Table | None:
    """The inputs that move buy-minus-rent TCO most (Spearman rho), or None without any."""
    sens = result.get("sensitivity") or {}
    inputs = [r for r in sens.get("inputs") or [] if r.get("spearman")][:top]
    if not inputs:
        return None
    rows = tuple(
        (
            str(r["input"]),
            f"{r['spearman']:+.2f}",
            "makes buying dearer" if r["spearman"] > 0 else "makes buying cheaper",
        )
        for r in inputs
    )
    return Table(("Input", "Spearman ρ", "A higher value…"), rows, (False, True, False))


def per_utilisation_columns(result: Mapping[str, Any]) -> list[tuple[str, list[Any]]]:
    """The tidy per-utilisation table as ``(column name, values)`` pairs, one value per level."""
    cols: list[tuple[str, list[Any]]] = [("utilisation", list(result["utilisation"]))]
    for side in ("buy", "rent"):
        tco = result[f"{side}_tco"]
        cols += [(f"{side}_tco_{s}", list(tco[s])) for s in ("mean", "p10", "p50", "p90")]
    cols.append(("prob_buy_cheaper", list(result["prob_buy_cheaper"])))
    pb = result["payback_months"]
    cols += [(f"payback_months_{s}", list(pb[s])) for s in ("p10", "p50", "p90")]
    cols.append(("payback_prob_never", list(pb["prob_never"])))
    cpu = result["cost_per_reference_gpu_hour"]
    for side in ("buy", "rent"):
        cols += [
            (f"cost_per_ref_gpu_hour_{side}_{s}", list(cpu[side][s])) for s in ("p10", "p50", "p90")
        ]
    return cols


def per_utilisation_table(result: Mapping[str, Any]) -> Table:
    """The per-utilisation table a reader scans: TCO bands, P(buy cheaper), payback, unit cost.

    Rows where buying is cheaper in at least half of the draws are highlighted.
    """
    b, r = result["buy_tco"], result["rent_tco"]
    pb, cpu = result["payback_months"], result["cost_per_reference_gpu_hour"]
    headers = (
        "Utilisation",
        "Buy TCO P10",
        "Buy TCO P50",
        "Buy TCO P90",
        "Rent TCO P10",
        "Rent TCO P50",
        "Rent TCO P90",
        "P(buy cheaper)",
        "Payback P50 [months]",
        "Buy P50 [$/ref GPU-h]",
        "Rent P50 [$/ref GPU-h]",
    )
    rows = tuple(
        (
            fmt_utilisation(u, none=DASH),
            fmt_usd(b["p10"][i]),
            fmt_usd(b["p50"][i]),
            fmt_usd(b["p90"][i]),
            fmt_usd(r["p10"][i]),
            fmt_usd(r["p50"][i]),
            fmt_usd(r["p90"][i]),
            fmt_prob(result["prob_buy_cheaper"][i]),
            fmt_months(pb["p50"][i]),
            fmt_usd(cpu["buy"]["p50"][i]),
            fmt_usd(cpu["rent"]["p50"][i]),
        )
        for i, u in enumerate(result["utilisation"])
    )
    wins = tuple(p is not None and p >= 0.5 for p in result["prob_buy_cheaper"])
    return Table(headers, rows, (True,) * len(headers), wins)


def cumulative_payback(result: Mapping[str, Any]) -> tuple[float | None, ...] | None:
    """Payback P10/P50/P90 [month] at the cumulative-cost utilisation, if that level was run."""
    u = result["cumulative_cost"]["utilisation"]
    for i, level in enumerate(result["utilisation"]):
        if u is not None and abs(level - u) < 1e-9:
            pb = result["payback_months"]
            return (pb["p10"][i], pb["p50"][i], pb["p90"][i])
    return None


def key_figures_table(result: Mapping[str, Any]) -> Table:
    """Break-even utilisation percentiles and the shares of "always" and "never" draws."""
    be = result["breakeven_utilisation"]
    rows = [
        ("Break-even utilisation P10", fmt_utilisation(be["p10"])),
        ("Break-even utilisation P50", fmt_utilisation(be["p50"])),
        ("Break-even utilisation P90", fmt_utilisation(be["p90"])),
        ("Break-even utilisation mean (draws that break even)", fmt_utilisation(be["mean"])),
        ("Draws where buying wins even when idle", fmt_prob(be["prob_always"])),
        ("Draws where renting wins even at 100 %", fmt_prob(be["prob_never"])),
    ]
    payback = cumulative_payback(result)
    if payback is not None:
        u = fmt_utilisation(result["cumulative_cost"]["utilisation"])
        rows.append(
            (
                f"Payback at {u} utilisation P10 / P50 / P90 [months]",
                " / ".join(fmt_months(t) for t in payback),
            )
        )
    return Table(("Figure", "Value"), tuple(rows), (False, True))


def assumption_rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Assumptions with ``text`` (readable value) next to the raw ``value``."""
    out = []
    for a in result.get("assumptions") or []:
        out.append(
            {
                "key": str(a.get("key", "")),
                "value": a.get("value"),
                "text": fmt_value(a.get("value")),
                "unit": str(a.get("unit") or ""),
                "source": str(a.get("source") or ""),
            }
        )
    return out


def warning_rows(result: Mapping[str, Any]) -> list[dict[str, str]]:
    """Warnings, most severe first (error, warning, info), each with code, severity, message."""
    rows = [
        {
            "code": str(w.get("code", "")),
            "severity": str(w.get("severity", "info")).lower(),
            "message": str(w.get("message", "")),
        }
        for w in result.get("warnings") or []
    ]
    return sorted(rows, key=lambda w: _SEVERITY_ORDER.get(w["severity"], 3))


def reproducibility(result: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """What it takes to reproduce the run: seed, samples, method, catalog, scenario."""
    cat = result["catalog"]
    return [
        ("scenario", scenario_name(result)),
        ("seed", result["seed"]),
        ("samples", result["samples"]),
        ("method", result["method"]),
        ("catalog version", cat["version"]),
        ("catalog as of", cat["as_of"]),
        ("schema version", result["schema_version"]),
    ]


def summary_items(result: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The XLSX summary sheet: raw values (fractions [-], counts), ``None`` for null."""
    be = result["breakeven_utilisation"]
    items: list[tuple[str, Any]] = [("verdict", result["verdict"])]
    items += [(f"breakeven_utilisation_{k}", be[k]) for k in ("p10", "p50", "p90", "mean")]
    items += [
        ("breakeven_prob_always", be["prob_always"]),
        ("breakeven_prob_never", be["prob_never"]),
        ("seed", result["seed"]),
        ("samples", result["samples"]),
        ("method", result["method"]),
        ("catalog_version", result["catalog"]["version"]),
        ("catalog_as_of", result["catalog"]["as_of"]),
        ("scenario_name", scenario_name(result)),
        ("warnings_count", len(result["warnings"])),
    ]
    return items
