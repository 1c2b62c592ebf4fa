"""What ``costmodel run`` and ``costmodel catalog`` print: tables that fit the terminal.

Tables are drawn with rich at the terminal's width (``COLUMNS`` when output is not a
terminal, else 80); when a table is wider, its least important columns are dropped first. Text
is plain (no colour) unless the output is a terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from costmodel.formatting import fmt_months, fmt_share, fmt_usd, fmt_utilisation, missing

if TYPE_CHECKING:
    from costmodel.plan_result import PlanResult
    from costmodel.result import Result
    from pricing import Catalog

__all__ = ["Column", "print_catalog", "print_plan", "print_result", "fitted_table"]


@dataclass(frozen=True)
class Column:
    """A column: ``priority`` 0 is never dropped; higher numbers are dropped first."""

    header: str
    cells: Sequence[str]
    priority: int = 0
    numeric: bool = True
    wrap: bool = False


def fitted_table(columns: Sequence[Column], console: Console) -> Table:
    """A table of ``columns`` without the lowest-priority ones that would not fit."""
    for limit in sorted({c.priority for c in columns}, reverse=True):
        kept = [c for c in columns if c.priority <= limit]
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for c in kept:
            justify = "right" if c.numeric else "left"
            table.add_column(Text(c.header), justify=justify, no_wrap=not c.wrap)
        for row in zip(*(c.cells for c in kept), strict=True):
            table.add_row(*(Text(cell) for cell in row))
        unclamped = console.options.update_width(1_000_000)
        if Measurement.get(console, unclamped, table).maximum <= console.width:
            return table
    return table  # the narrowest: rich wraps what still does not fit


def _band(low: float, high: float) -> str:
    return f"{fmt_usd(low)}–{fmt_usd(high)}"


def _heading(result: Result | PlanResult, console: Console) -> None:
    cat = result.catalog
    console.print(
        f"[bold]{result.name}[/bold]  (samples {result.samples:,}, seed {result.seed}, "
        f"{result.method}, catalog {cat.version if cat else '?'})",
        highlight=False,
    )
    console.print()
    console.print(result.verdict, highlight=False)
    console.print()


def _warnings(result: Result | PlanResult, console: Console) -> None:
    if result.warnings:
        console.print()
        console.print("Warnings:")
        for w in result.warnings:
            console.print(f"  [{w.severity}] {w.code}: {w.message}", highlight=False, markup=False)


def print_result(result: Result, console: Console) -> None:
    """Verdict, break-even, the per-utilisation table, notes and warnings."""
    be = result.breakeven_utilisation
    _heading(result, console)
    console.print(
        f"Break-even utilisation  P10 {fmt_utilisation(be.p10)}  P50 {fmt_utilisation(be.p50)}  "
        f"P90 {fmt_utilisation(be.p90)}  (buying always cheaper in {fmt_share(be.prob_always)} "
        f"of draws, never in {fmt_share(be.prob_never)})",
        highlight=False,
    )
    buy, rent, pay = result.buy_tco, result.rent_tco, result.payback_months
    levels = range(len(result.utilisation))
    columns = [
        Column("Utili-\nsation", [fmt_utilisation(u) for u in result.utilisation]),
        Column("Buy TCO\nP50 [USD]", [fmt_usd(buy.p50[j]) for j in levels]),
        Column("Buy\nP10–P90", [_band(buy.p10[j], buy.p90[j]) for j in levels], priority=2),
        Column("Rent TCO\nP50 [USD]", [fmt_usd(rent.p50[j]) for j in levels]),
        Column("Rent\nP10–P90", [_band(rent.p10[j], rent.p90[j]) for j in levels], priority=2),
        Column("P(buy\ncheaper)", [fmt_share(p) for p in result.prob_buy_cheaper]),
        Column("Payback P50\n[months]", [fmt_months(pay.p50[j]) for j in levels], priority=1),
    ]
    console.print()
    console.print(fitted_table(columns, console))
    cheaper_without_payback = any(
        missing(float(pay.p50[j])) and result.prob_buy_cheaper[j] >= 0.5 for j in levels
    )
    if cheaper_without_payback:
        console.print()
        console.print(
            "Payback counts no resale: buying can cost less over the horizon (its TCO credits "
            'resale) and still not pay back in cash within it (payback "never").',
            highlight=False,
        )
    _warnings(result, console)


def print_plan(result: PlanResult, console: Console) -> None:
    """Verdict, then every candidate (the best and the frontier marked), and warnings."""
    _heading(result, console)
    best = (result.best.servers, result.best.instances)
    frontier = {(c.servers, c.instances) for c in result.frontier}
    rows = [result.all_cloud] if result.candidate(0, 0) is None else []
    rows += list(result.candidates)

    def mark(c) -> str:
        key = (c.servers, c.instances)
        return "best" if key == best else "frontier" if key in frontier else ""

    columns = [
        Column("Servers", [str(c.servers) for c in rows]),
        Column("Reserved", [str(c.instances) for c in rows]),
        Column("Cost P50\n[USD]", [fmt_usd(c.cost.p50) for c in rows]),
        Column("Mean\n[USD]", [fmt_usd(c.cost.mean) for c in rows], priority=1),
        Column("P10–P90\n[USD]", [_band(c.cost.p10, c.cost.p90) for c in rows], priority=2),
        Column("CVaR95\n[USD]", [fmt_usd(c.cost.cvar95) for c in rows], priority=3),
        Column("Owned\nshare", [fmt_share(c.share_owned) for c in rows], priority=1),
        Column("Owned\nutil.", [fmt_share(c.owned_utilisation) for c in rows], priority=2),
        Column("P(cheaper\nthan cloud)", [fmt_share(c.prob_cheaper_than_cloud) for c in rows]),
        Column("", [mark(c) for c in rows], numeric=False),
    ]
    console.print(
        f"Candidates (best by the {result.objective} cost; frontier: no other is cheaper on "
        "both mean and P90):",
        highlight=False,
    )
    console.print(fitted_table(columns, console))
    _warnings(result, console)


def _number(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def print_catalog(catalog: Catalog, table: str, console: Console) -> None:
    """The GPU or instance catalog as a table, then its version."""
    if table == "gpus":
        gpus = list(catalog.gpus.values())
        columns = [
            Column("id", [g.id for g in gpus], numeric=False),
            Column("name", [g.name for g in gpus], priority=2, numeric=False, wrap=True),
            Column("memory\n[GB]", [f"{g.memory_gb:g}" for g in gpus]),
            Column("TDP\n[W]", [f"{g.tdp_w:g}" for g in gpus]),
            Column(
                "price\n[USD]",
                [_number(g.price_usd, ",.0f") + ("*" if g.price_estimated else "") for g in gpus],
            ),
            Column("FP32\n[TFLOPS]", [_number(g.fp32_tflops, "g") for g in gpus], priority=1),
            Column("FP16\n[TFLOPS]", [_number(g.fp16_tflops, "g") for g in gpus], priority=1),
            Column(
                "fp16 vs\nV100",
                [_number(g.measured.get("fp16"), ".2f") for g in gpus],
            ),
        ]
        note = "; * estimated price"
    else:
        insts = list(catalog.instances.values())
        columns = [
            Column("id", [i.id for i in insts], numeric=False),
            Column("gpu", [i.gpu for i in insts], priority=1, numeric=False),
            Column("GPUs", [str(i.gpu_count) for i in insts]),
            Column(
                "on-demand\n[USD/h]", [_number(i.on_demand_usd_per_hour, ",.3f") for i in insts]
            ),
            Column(
                "1y\n[USD/h]",
                [_number(i.reserved_1y_usd_per_hour, ",.3f") for i in insts],
                priority=2,
            ),
            Column(
                "3y\n[USD/h]",
                [_number(i.reserved_3y_usd_per_hour, ",.3f") for i in insts],
                priority=2,
            ),
            Column(
                "spot\n[USD/h]", [_number(i.spot_usd_per_hour, ",.3f") for i in insts], priority=2
            ),
            Column("region", [i.region for i in insts], priority=3, numeric=False),
            Column("as of", [str(i.as_of) for i in insts], priority=3, numeric=False),
        ]
        note = ""
    console.print(fitted_table(columns, console))
    console.print(f"catalog {catalog.version} (as of {catalog.as_of}){note}", highlight=False)
