"""The report's tables, formatted (for HTML, Markdown and the terminal) from a
:class:`~costmodel.result.Result`, and the parts every report shares (assumptions, warnings,
reproducibility), which a :class:`~costmodel.plan_result.PlanResult` has too.

Money in [USD] present value, utilisation and probabilities as fractions [-] (shown as
percentages), payback in [month], unit cost in [USD/reference GPU-hour].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...plan_result import PlanResult
from ...result import Advice, Result
from ..formatting import DASH, fmt_months, fmt_share, fmt_usd, fmt_utilisation, fmt_value, missing

__all__ = [
    "Table",
    "assumption_rows",
    "cumulative_payback",
    "key_figures_table",
    "per_utilisation_table",
    "reproducibility",
    "run_items",
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


def scenario_name(result: Result | PlanResult) -> str:
    """The scenario's (or plan's) name, or "unnamed scenario"."""
    return result.name or "unnamed scenario"


def sensitivity_table(result: Result, top: int = 8) -> Table | None:
    """The inputs that move buy-minus-rent TCO most (Spearman rho), or None without any."""
    inputs = [d for d in result.sensitivity.inputs if d.spearman][:top]
    if not inputs:
        return None
    rows = tuple(
        (
            d.input,
            f"{d.spearman:+.2f}",
            "makes buying dearer" if d.spearman > 0 else "makes buying cheaper",
        )
        for d in inputs
    )
    return Table(("Input", "Spearman ρ", "A higher value…"), rows, (False, True, False))


def per_utilisation_table(result: Result) -> Table:
    """The per-utilisation table a reader scans: TCO bands, P(buy cheaper), payback, unit cost.

    Rows where buying is cheaper in at least half of the draws are highlighted.
    """
    b, r = result.buy_tco, result.rent_tco
    pb, cpu = result.payback_months, result.cost_per_unit
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
            fmt_usd(b.p10[i]),
            fmt_usd(b.p50[i]),
            fmt_usd(b.p90[i]),
            fmt_usd(r.p10[i]),
            fmt_usd(r.p50[i]),
            fmt_usd(r.p90[i]),
            fmt_share(result.prob_buy_cheaper[i]),
            fmt_months(pb.p50[i]),
            fmt_usd(cpu.buy.p50[i]),
            fmt_usd(cpu.rent.p50[i]),
        )
        for i, u in enumerate(result.utilisation)
    )
    wins = tuple(bool(p >= 0.5) for p in result.prob_buy_cheaper)
    return Table(headers, rows, (True,) * len(headers), wins)


def cumulative_payback(result: Result) -> tuple[float, float, float] | None:
    """Payback P10/P50/P90 [month] at the cumulative-cost utilisation, if that level was run."""
    i = result.level(result.cumulative_cost.utilisation)
    if i is None:
        return None
    pb = result.payback_months
    return (float(pb.p10[i]), float(pb.p50[i]), float(pb.p90[i]))


def key_figures_table(result: Result) -> Table:
    """Break-even utilisation percentiles and the shares of "always" and "never" draws."""
    be = result.breakeven_utilisation
    rows = [
        ("Break-even utilisation P10", fmt_utilisation(be.p10)),
        ("Break-even utilisation P50", fmt_utilisation(be.p50)),
        ("Break-even utilisation P90", fmt_utilisation(be.p90)),
        ("Break-even utilisation mean (draws that break even)", fmt_utilisation(be.mean)),
        ("Draws where buying wins even when idle", fmt_share(be.prob_always)),
        ("Draws where renting wins even at 100 %", fmt_share(be.prob_never)),
    ]
    payback = cumulative_payback(result)
    if payback is not None:
        u = fmt_utilisation(result.cumulative_cost.utilisation)
        rows.append(
            (
                f"Payback at {u} utilisation P10 / P50 / P90 [months]",
                " / ".join(fmt_months(t) for t in payback),
            )
        )
    return Table(("Figure", "Value"), tuple(rows), (False, True))


def assumption_rows(result: Result | PlanResult) -> list[dict[str, Any]]:
    """Assumptions with ``text`` (readable value) next to the raw ``value``."""
    return [
        {
            "key": a.key,
            "value": a.value,
            "text": fmt_value(a.value),
            "unit": a.unit,
            "source": a.source,
        }
        for a in result.assumptions
    ]


def warning_rows(result: Result | PlanResult) -> list[Advice]:
    """Warnings, most severe first (error, warning, info)."""
    return sorted(result.warnings, key=lambda w: _SEVERITY_ORDER.get(w.severity, 3))


def reproducibility(result: Result | PlanResult) -> list[tuple[str, Any]]:
    """What it takes to reproduce the run: seed, samples, method, catalog, scenario."""
    cat = result.catalog
    return [
        ("scenario", scenario_name(result)),
        ("seed", result.seed),
        ("samples", result.samples),
        ("method", result.method),
        ("catalog version", cat.version if cat else DASH),
        ("catalog as of", cat.as_of if cat else DASH),
        ("schema version", result.schema_version),
    ]


def summary_items(result: Result) -> list[tuple[str, Any]]:
    """The XLSX summary sheet: raw values (fractions [-], counts), ``None`` for no value."""
    be = result.breakeven_utilisation
    items: list[tuple[str, Any]] = [("verdict", result.verdict)]
    items += [
        (f"breakeven_utilisation_{k}", None if missing(getattr(be, k)) else getattr(be, k))
        for k in ("p10", "p50", "p90", "mean")
    ]
    items += [
        ("breakeven_prob_always", be.prob_always),
        ("breakeven_prob_never", be.prob_never),
    ]
    return items + run_items(result)


def run_items(result: Result | PlanResult) -> list[tuple[str, Any]]:
    """The XLSX summary sheet's closing rows: how the run was made, its name, its warnings."""
    cat = result.catalog
    return [
        ("seed", result.seed),
        ("samples", result.samples),
        ("method", result.method),
        ("catalog_version", cat.version if cat else None),
        ("catalog_as_of", cat.as_of if cat else None),
        ("scenario_name", scenario_name(result)),
        ("warnings_count", len(result.warnings)),
    ]
