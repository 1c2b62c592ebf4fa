"""What ``costmodel run`` and ``costmodel catalog`` print: tables that fit the terminal.

Tables are drawn at the terminal's width (``COLUMNS`` when output is not a terminal, else 80)
on a rich console, or on a :class:`cli.plain.PlainConsole` that draws the same text without
rich; when a table is wider, its least important columns are dropped first. Text is plain (no
colour) unless the output is a terminal.
"""

from __future__ import annotations

import csv
import io
import json
import textwrap
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING

from cli.plain import PlainConsole, PlainTable
from costmodel.sides import side as side_of
from costmodel.units import unit as unit_of
from present.answer import Answer
from present.formatting import (
    fmt_grams,
    fmt_months,
    fmt_number,
    fmt_servers,
    fmt_share,
    fmt_tonnes,
    fmt_unit_cost,
    fmt_usd,
    fmt_utilisation,
    missing,
)
from present.wording import Wording, words_of
from pricing.text import counted

if TYPE_CHECKING:
    from rich.console import Console as RichConsole
    from rich.table import Table

    from costmodel.plan_result import PlanResult
    from costmodel.result import Breakeven, Result, Tornado
    from pricing import Catalog
    from scenarios.compare import Comparison
    from scenarios.library import Example

    Console = RichConsole | PlainConsole

__all__ = [
    "Column",
    "catalog_csv",
    "catalog_items",
    "catalog_json",
    "print_grids",
    "compare_csv",
    "fitted_table",
    "print_catalog",
    "print_compare",
    "print_examples",
    "print_plan",
    "print_result",
]


@dataclass(frozen=True)
class Column:
    """A column: ``priority`` 0 is never dropped; higher numbers are dropped first."""

    header: str
    cells: Sequence[str]
    priority: int = 0
    numeric: bool = True
    wrap: bool = False


def fitted_table(columns: Sequence[Column], console: Console) -> Table | PlainTable:
    """A table of ``columns`` without the lowest-priority ones that would not fit."""
    for limit in sorted({c.priority for c in columns}, reverse=True):
        kept = [c for c in columns if c.priority <= limit]
        if isinstance(console, PlainConsole):
            table, width = _plain_table(kept)
        else:
            table, width = _rich_table(kept, console)
        if width <= console.width:
            return table
    return table  # the narrowest: rich wraps what still does not fit


def _rows(columns: Sequence[Column]) -> zip:
    return zip(*(c.cells for c in columns), strict=True)


def _plain_table(columns: Sequence[Column]) -> tuple[PlainTable, int]:
    """The table of ``columns`` in plain text, and its width [cell]."""
    table = PlainTable()
    for c in columns:
        table.add_column(c.header, right=c.numeric)
    for row in _rows(columns):
        table.add_row(*row)
    return table, table.width


def _rich_table(columns: Sequence[Column], console: RichConsole) -> tuple[Table, int]:
    """The rich table of ``columns``, and its width unwrapped [cell]."""
    from rich import box
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for c in columns:
        justify = "right" if c.numeric else "left"
        table.add_column(Text(c.header), justify=justify, no_wrap=not c.wrap)
    for row in _rows(columns):
        table.add_row(*(Text(cell) for cell in row))
    unclamped = console.options.update_width(1_000_000)
    return table, Measurement.get(console, unclamped, table).maximum


def _band(low: float, high: float) -> str:
    return f"{fmt_usd(low)}–{fmt_usd(high)}"


def _heading(result: Answer, console: Console) -> None:
    cat = result.catalog
    console.print(  # the name is the user's text: "[red]" or ":smile:" in it stay as written
        f"{result.name}  (samples {result.samples:,}, seed {result.seed}, "
        f"{result.method}, catalog {cat.version if cat else '?'})",
        style="bold",
        markup=False,
        emoji=False,
        highlight=False,
    )
    console.print()
    console.print(result.verdict, highlight=False)
    console.print()


def _warnings(result: Answer, console: Console) -> None:
    if result.warnings:
        console.print()
        console.print("Warnings:")
        for w in result.warnings:
            text = textwrap.fill(
                f"[{w.severity}] {w.code}: {w.message}",
                width=console.width,
                initial_indent="  ",
                subsequent_indent="    ",
                break_long_words=False,
                break_on_hyphens=False,
            )
            console.print(text, highlight=False, markup=False)


def _precision(result: Result, words: Wording, console: Console) -> None:
    """One line on the precision of the break-even P50 (and one on that of the break-even
    against each other side weighed: a hosted API, a further side), then the three largest
    tornado swings (against renting, and against each of those) and what knowing the inputs
    would save (nothing for results stored before these existed)."""
    from present.reports.uncertainty import rival_words
    from present.verdict import precision_text

    lines = [precision_text(result), *(precision_text(result, r.versus) for r in result.rivals)]
    if lines[0] is not None:
        console.print()
    for text in filter(None, lines):
        console.print(text, highlight=False)
    if result.tornado is not None:
        _swings(result.tornado, "rent", "", console)
    for rival in result.rivals:
        short, prose = rival_words(rival.versus)
        _swings(rival.tornado, short, f" against {prose}", console)
    if words.value_of_information:
        console.print()
    for text in words.value_of_information:
        console.print(text, highlight=False)


def _swings(t: Tornado, rival: str, against: str, console: Console) -> None:
    """The three largest swings of tornado ``t`` against side ``rival`` (its label in the gap
    column; ``against`` words the heading)."""
    if not t.inputs:
        return
    bars = t.inputs[:3]
    u = fmt_utilisation(t.utilisation, none="?")
    columns = [
        Column("Input", [b.input for b in bars], numeric=False),
        Column("P10 → P90", [f"{fmt_number(b.low)} → {fmt_number(b.high)}" for b in bars], 2),
        Column(
            "Break-even",
            [
                f"{fmt_utilisation(b.breakeven_at_low)} → {fmt_utilisation(b.breakeven_at_high)}"
                for b in bars
            ],
        ),
        Column(
            f"Buy − {rival} at {u}",
            [f"{fmt_usd(b.gap_at_low)} → {fmt_usd(b.gap_at_high)}" for b in bars],
            1,
        ),
    ]
    console.print()
    console.print(
        f"Largest swings{against} (each input from P10 to P90, the others at their medians):",
        highlight=False,
    )
    console.print(fitted_table(columns, console))


def _breakeven_line(label: str, be: Breakeven, console: Console) -> None:
    console.print(
        f"{label}  P10 {fmt_utilisation(be.p10)}  P50 {fmt_utilisation(be.p50)}  "
        f"P90 {fmt_utilisation(be.p90)}",
        highlight=False,
    )


def _emissions(result: Result, console: Console) -> None:
    """Each side's P50 emissions and per unit of work at the report utilisation, when it was
    run; "unknown" for an API without emission figures."""
    j, c = result.level(result.cumulative_cost.utilisation), result.carbon
    if j is None or c is None:
        return
    parts = []
    for side in result.sides:
        bands, per, name = c.get(side), c.per_unit.get(side), side_of(side).option
        if bands is None:
            parts.append(f"{name} unknown")
            continue
        grams = (
            "" if per is None else f" ({fmt_grams(per.p50[j])} per {unit_of(result.unit).words})"
        )
        parts.append(f"{name} {fmt_tonnes(bands.p50[j])}{grams}")
    u = fmt_utilisation(result.cumulative_cost.utilisation)
    console.print(f"Emissions at {u} utilisation (P50, CO2e): {', '.join(parts)}", highlight=False)


def _level_columns(result: Result) -> list[Column]:
    """The per-utilisation table's columns: TCO bands, P(buy cheaper), payback; with a hosted
    API also its TCO and P(buy cheaper than the API)."""
    buy, rent, pay = result.buy_tco, result.rent_tco, result.payback_months
    levels = range(len(result.utilisation))
    columns = [
        Column("Utili-\nsation", [fmt_utilisation(u) for u in result.utilisation]),
        Column("Buy TCO\nP50 [USD]", [fmt_usd(buy.p50[j]) for j in levels]),
        Column("Buy\nP10–P90", [_band(buy.p10[j], buy.p90[j]) for j in levels], priority=2),
        Column("Rent TCO\nP50 [USD]", [fmt_usd(rent.p50[j]) for j in levels]),
        Column("Rent\nP10–P90", [_band(rent.p10[j], rent.p90[j]) for j in levels], priority=2),
    ]
    for side in result.sides[2:]:  # the API and any further side
        tco, label = result.tco(side), side_of(side).label
        columns.append(Column(f"{label} TCO\nP50 [USD]", [fmt_usd(tco.p50[j]) for j in levels]))
    columns.append(Column("P(buy\ncheaper)", [fmt_share(p) for p in result.prob_buy_cheaper]))
    if result.prob_buy_cheaper_than_api is not None:
        shares = [fmt_share(p) for p in result.prob_buy_cheaper_than_api]
        columns.append(Column("P(buy <\nAPI)", shares, priority=1))
    for side, v in result.versus.items():
        shares = [fmt_share(p) for p in v.prob_buy_cheaper]
        columns.append(Column(f"P(buy <\n{side_of(side).label})", shares, priority=1))
    columns.append(
        Column("Payback P50\n[months]", [fmt_months(pay.p50[j]) for j in levels], priority=1)
    )
    return columns


def print_result(result: Answer[Result], console: Console) -> None:
    """Verdict, break-even (against the API too, with one), the per-utilisation table, the
    cost per unit of work, its precision and the largest swings, notes and warnings (of an
    engine result alone, without name or warnings)."""
    result = Answer.of(result)
    _heading(result, console)
    words = words_of(result)
    _breakeven_line("Break-even utilisation", result.breakeven_utilisation, console)
    if result.breakeven_vs_api is not None:
        _breakeven_line("Break-even vs the API ", result.breakeven_vs_api, console)
    for text in words.shares:
        console.print(text, highlight=False)
    for side, v in result.versus.items():
        _breakeven_line(f"Break-even vs {side_of(side).doing}", v.breakeven, console)
    console.print()
    console.print(fitted_table(_level_columns(result), console))
    if words.cost:
        console.print()
        console.print(words.cost, highlight=False)
    _emissions(result, console)
    _precision(result, words, console)
    if words.payback_note:
        console.print()
        console.print(words.payback_note, highlight=False)
    _warnings(result, console)


#: Priority of a plan's optional columns by its objective: the column that holds the objective
#: (the mean; the P90 at the end of the P10–P90 band; the CVaR95) is never dropped, and for a
#: P90 or CVaR95 objective the other measure of risk goes last.
_OBJECTIVE_PRIORITY = {
    "mean": {"mean": 0, "band": 2, "cvar95": 3, "share": 1, "util": 2},
    "p90": {"mean": 3, "band": 0, "cvar95": 1, "share": 2, "util": 3},
    "cvar95": {"mean": 3, "band": 1, "cvar95": 0, "share": 2, "util": 3},
}


def print_plan(result: Answer[PlanResult], console: Console, top: int = 0) -> None:
    """Verdict, then the candidates (the best and the frontier marked: with ``top`` N, the
    best N by the objective and the frontiers, every one with 0), how precisely the draws tell
    the best from the runner-up, the value of information and warnings."""
    result = Answer.of(result)
    _heading(result, console)
    best = result.best.key
    frontier = {c.key for c in result.frontier}
    green = {c.key for c in result.carbon_frontier or ()}
    shown = _shown(result, top, frontier | green)
    rows = [result.all_cloud] if result.candidate(0, 0) is None else []
    rows += shown

    def mark(c) -> str:
        role = "best" if c.key == best else "frontier" if c.key in frontier else ""
        return ", ".join(filter(None, (role, "carbon" if c.key in green else "")))

    rank = _OBJECTIVE_PRIORITY.get(result.objective, _OBJECTIVE_PRIORITY["mean"])
    columns = [
        Column("Servers", [fmt_servers(c, "m") for c in rows]),
        *([_added_column(rows)] if result.stages else []),
        Column("Reserved", [str(c.instances) for c in rows]),
        Column("Cost P50\n[USD]", [fmt_usd(c.cost.p50) for c in rows]),
        Column("Mean\n[USD]", [fmt_usd(c.cost.mean) for c in rows], rank["mean"]),
        Column("P10–P90\n[USD]", [_band(c.cost.p10, c.cost.p90) for c in rows], rank["band"]),
        Column("CVaR95\n[USD]", [fmt_usd(c.cost.cvar95) for c in rows], rank["cvar95"]),
        Column("Owned\nshare", [fmt_share(c.share_owned) for c in rows], rank["share"]),
        Column("Owned\nutil.", [fmt_share(c.owned_utilisation) for c in rows], rank["util"]),
        Column(
            "P(cheaper\nthan cloud)",
            [fmt_share(c.prob_cheaper_than_cloud) for c in rows],
            1 if result.counts_carbon else 0,  # a plan that counts carbon keeps that first
        ),
        *([_carbon_column(rows)] if result.counts_carbon else []),
        Column("", [mark(c) for c in rows], numeric=False),
    ]
    carbon = "; carbon: no other is cheaper and lower-carbon" if green else ""
    console.print(
        f"Candidates (best by the {result.objective} cost; frontier: no other is cheaper on "
        f"both mean and P90{carbon}):",
        highlight=False,
    )
    console.print(fitted_table(columns, console))
    if len(shown) < len(result.candidates):
        console.print(
            f"{len(shown):,} of {len(result.candidates):,} candidates shown: the best {top} by "
            f"the {result.objective} cost and the frontier; --top 0 shows every one, and the "
            "JSON (--format json) holds them all.",
            highlight=False,
        )
    from present.reports.uncertainty import plan_voi_sentence
    from present.verdict import plan_precision_text

    precision = plan_precision_text(result)
    if precision:
        console.print(precision, highlight=False)
    sentence = plan_voi_sentence(result)
    if sentence:
        console.print()
        console.print(sentence, highlight=False)
    _warnings(result, console)


def _shown(result: Answer[PlanResult], top: int, marked: set) -> list:
    """The candidates the table shows, in the result's order: with ``top`` N, the best N by
    the objective (ties to the earlier) and those whose key is ``marked`` (the frontiers);
    every one with 0."""
    candidates = list(result.candidates)
    if not top or top >= len(candidates):
        return candidates
    cost = [getattr(c.cost, result.objective) for c in candidates]
    ranked = sorted(range(len(candidates)), key=cost.__getitem__)
    keep = set(ranked[:top]) | {i for i, c in enumerate(candidates) if c.key in marked}
    return [c for i, c in enumerate(candidates) if i in keep]


def _added_column(rows: list) -> Column:
    """The median first month of service of the servers added ("m22"; "never" when the
    median draw adds nothing; blank for a candidate that adds nothing)."""
    cells = [
        "" if c.add is None else "never" if missing(c.add.month.p50) else f"m{c.add.month.p50:.0f}"
        for c in rows
    ]
    return Column("Added\nfrom P50", cells, 1)


def _carbon_column(rows: list) -> Column:
    """The candidates' mean emissions [t CO2e]; "unknown" where they are not known. Never
    dropped: carbon is part of the question of a plan that counts it."""
    cells = ["unknown" if c.carbon is None else f"{c.carbon.mean:,.1f}" for c in rows]
    return Column("Carbon\n[t CO2e]", cells)


def _number(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def catalog_items(
    catalog: Catalog, table: str, provider: str | None = None, tier: str | None = None
) -> list:
    """The rows of ``table`` (``"gpus"`` or ``"instances"``), in catalog order, kept to the
    instances of ``provider`` and/or ``tier``; for ``"gpus"`` the filters keep the GPUs those
    instances carry. Both filters are already-checked lowercase names."""
    insts = [
        i
        for i in catalog.instances.values()
        if (provider is None or i.provider == provider) and (tier is None or i.tier == tier)
    ]
    if table == "instances":
        return insts
    if provider is None and tier is None:
        return list(catalog.gpus.values())
    used = {i.gpu for i in insts}
    return [g for g in catalog.gpus.values() if g.id in used]


def _gpu_record(g) -> dict:
    rec = {f.name: getattr(g, f.name) for f in fields(g) if f.name != "measured"}
    rec["measured_fp32"] = g.measured.get("fp32")
    rec["measured_fp16"] = g.measured.get("fp16")
    rec["estimated_fields"] = list(g.estimated_fields)
    return rec


def _instance_record(i) -> dict:
    rec = {f.name: getattr(i, f.name) for f in fields(i) if f.name != "history"}
    rec["estimated_fields"] = list(i.estimated_fields)
    rec["history"] = [asdict(h) for h in i.history]
    return rec


def _grid_record(g) -> dict:
    rec = {f.name: getattr(g, f.name) for f in fields(g)}
    rec["estimated_fields"] = list(g.estimated_fields)
    return rec


#: Each catalog table's record of one row (every field, for JSON and CSV).
_RECORDS = {"gpus": _gpu_record, "instances": _instance_record, "grids": _grid_record}


def catalog_json(catalog: Catalog, table: str, items: Sequence) -> str:
    """``{"version", "as_of", "table", "items": [...]}``; every field of each row, ``null``
    where unknown, with its source and price history (instances)."""
    record = _RECORDS[table]
    doc = {
        "version": catalog.version,
        "as_of": catalog.as_of,
        "table": table,
        "items": [record(x) for x in items],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def catalog_csv(table: str, items: Sequence) -> str:
    """The rows as CSV with the columns of the data file (history left out); empty cells for
    unknown values, ``;`` between estimated field names."""
    record = _RECORDS[table]
    rows = [record(x) for x in items]
    for r in rows:
        r.pop("history", None)
        r["estimated_fields"] = ";".join(r["estimated_fields"])
    out = io.StringIO()
    header = list(rows[0]) if rows else []
    writer = csv.DictWriter(out, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if v is None else v for k, v in r.items()} for r in rows)
    return out.getvalue()


def print_catalog(
    catalog: Catalog, table: str, console: Console, items: Sequence | None = None
) -> None:
    """The GPU or instance catalog (or ``items`` of it) as a table, then its version."""
    if table == "gpus":
        gpus = list(catalog.gpus.values()) if items is None else list(items)
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
        note = "; * estimated price; FP16 = dense tensor peak with FP32 accumulate"
    else:
        insts = list(catalog.instances.values()) if items is None else list(items)
        columns = [
            # the prices are what the listing is for: they are dropped last
            Column("id", [i.id for i in insts], numeric=False),
            Column("tier", [i.tier for i in insts], priority=3, numeric=False),
            Column("gpu", [i.gpu for i in insts], priority=2, numeric=False),
            Column("GPUs", [str(i.gpu_count) for i in insts]),
            Column(
                "on-demand\n[USD/h]", [_number(i.on_demand_usd_per_hour, ",.3f") for i in insts]
            ),
            Column(
                "1y\n[USD/h]",
                [_number(i.reserved_1y_usd_per_hour, ",.3f") for i in insts],
                priority=1,
            ),
            Column(
                "3y\n[USD/h]",
                [_number(i.reserved_3y_usd_per_hour, ",.3f") for i in insts],
                priority=1,
            ),
            Column(
                "spot\n[USD/h]", [_number(i.spot_usd_per_hour, ",.3f") for i in insts], priority=1
            ),
            Column("region", [i.region for i in insts], priority=4, numeric=False),
            Column("as of", [str(i.as_of) for i in insts], priority=3, numeric=False),
        ]
        note = ""
    console.print(fitted_table(columns, console))
    shown = len(gpus if table == "gpus" else insts)
    total = len(catalog.gpus if table == "gpus" else catalog.instances)
    count = f"{shown} of {total} {table}" if shown != total else f"{total} {table}"
    console.print(
        f"catalog {catalog.version} (as of {catalog.as_of}), {count}{note}", highlight=False
    )


def print_grids(catalog: Catalog, console: Console) -> None:
    """The grid carbon intensities: id, kind, name, gCO2e/kWh, year and basis, then the
    catalog version."""
    grids = list(catalog.grids.values())
    columns = [
        Column("id", [g.id for g in grids], numeric=False),
        Column("kind", [g.kind.replace("_", " ") for g in grids], priority=2, numeric=False),
        Column("name", [g.name for g in grids], priority=1, numeric=False, wrap=True),
        Column(
            "gCO2e\n/kWh", [f"{g.g_co2e_per_kwh:g}" + ("*" if g.estimated else "") for g in grids]
        ),
        Column("year", [str(g.year) for g in grids], priority=3),
        Column("basis", [g.basis for g in grids], numeric=False),
    ]
    console.print(fitted_table(columns, console))
    console.print(
        f"catalog {catalog.version} (as of {catalog.as_of}), {len(grids)} grids; * derived or "
        "mapped by the catalog; lifecycle counts upstream fuel and plant building, operational "
        "only what the plants emit",
        highlight=False,
    )


def print_examples(examples: Sequence[Example], console: Console) -> None:
    """The shipped examples: name, kind and description, then how to run one."""
    columns = [
        Column("name", [e.name for e in examples], numeric=False),
        Column("kind", [e.kind for e in examples], numeric=False),
        Column("description", [e.description for e in examples], numeric=False, wrap=True),
    ]
    console.print(fitted_table(columns, console))
    console.print(
        "Run one from any folder: 'costmodel run NAME' (a scenario) or 'costmodel plan NAME' "
        "(a plan).",
        highlight=False,
    )


# ---------------------------------------------------------------------------------------------
# costmodel compare


def print_compare(result: Comparison, console: Console, limit: int | None = None) -> None:
    """Every option (or the ``limit`` cheapest) ranked by P50 cost per unit of work, then the
    cheapest option of each side, their break-evens and what was left out."""
    from scenarios.compare.wording import estimated, from_peaks, wording

    words = wording(result)
    shown = list(result.options if limit is None else result.options[:limit])
    console.print(words.heading, style="bold", markup=False, emoji=False, highlight=False)
    console.print()
    console.print(fitted_table(_compare_columns(result, shown), console))
    if any(from_peaks(o) for o in shown):
        console.print(words.peaks_note, highlight=False)
    caveats = sorted({c for o in shown if o.source for c in o.source.caveats})
    if caveats:
        console.print(f"{_DIFFERS} measured under other conditions than asked: "
                      f"{'; '.join(caveats)}", markup=False, highlight=False)  # fmt: skip
    if any(estimated(o) for o in shown):
        console.print(words.estimated_note, markup=False, highlight=False)
    if any(o.carbon is None for o in shown):
        console.print(words.unknown_carbon_note, highlight=False)
    if limit is not None and len(result.options) > limit:
        console.print(f"({len(result.options) - limit} more; --top 0 shows all)")
    console.print()
    for line in words.summary:
        console.print(line, highlight=False)
    if words.left_out:
        console.print(words.left_out, highlight=False)
    if words.carbon_note:
        console.print(words.carbon_note, markup=False, highlight=False)
    notes = [counted(len(result.options), "option")]
    if result.request.min_memory_gb is not None:
        notes.append(f"{result.left_out_by_min_memory} left out by --min-memory")
    if result.ruled_out:
        notes.append(f"{len(result.ruled_out)} ruled out (see --format json)")
    if any(o.price_origin == "prices" for o in shown):
        notes.append("* price from your prices file")
    console.print("; ".join(notes), highlight=False)


def _option_price(o) -> str:
    """An option's price, labelled: per GPU (owned), per instance-hour (rented) or per M
    tokens (API)."""
    if o.side == "buy":
        text = f"{fmt_usd(o.price_usd)}/GPU"
    else:
        text = f"{fmt_unit_cost(o.price_usd)}/{'h' if o.side == 'rent' else 'M'}"
    return text + ("*" if o.price_origin == "prices" else "")


def _compare_columns(result: Comparison, shown: list) -> list[Column]:
    """The columns of the ranking; by model, with each option's speed and source."""
    from scenarios.compare.wording import from_peaks, option_name, pricing_name

    unit = "USD" if result.model is None else "USD/M tokens"
    columns = [
        Column("#", [str(i) for i in range(1, len(shown) + 1)]),
        Column(
            "Option",
            [option_name(o) + (" †" if from_peaks(o) else "") + _differs(o) for o in shown],
            numeric=False,
        ),
        Column("Pricing", [pricing_name(o) for o in shown], numeric=False),
        Column(f"P50\n[{unit}]", [fmt_unit_cost(o.cost.p50) for o in shown]),
        Column(
            f"P10–P90\n[{unit}]",
            [f"{fmt_unit_cost(o.cost.p10)}–{fmt_unit_cost(o.cost.p90)}" for o in shown],
            priority=2,
        ),
        Column(
            "CO2e\nP50",
            [fmt_grams(o.carbon and o.carbon.p50) for o in shown],
            priority=0 if result.request.sort == "carbon" else 1,
        ),
        Column("Price", [_option_price(o) for o in shown], priority=2),
    ]
    if result.model is not None:
        speeds = [_speed(o) for o in shown]
        columns.append(Column("Tokens/s\nper GPU", speeds, priority=2))
    columns.append(
        Column(
            "Warnings",
            [", ".join(w.code for w in o.warnings if w.severity != "info") for o in shown],
            priority=3,
            numeric=False,
            wrap=True,
        )
    )
    if result.model is not None:
        sources = [_cited(o.source) if o.source else "" for o in shown]
        columns.append(Column("Source", sources, priority=4, numeric=False))
    return columns


#: The mark of a throughput measured under other conditions than the question's.
_DIFFERS = "‡"


def _differs(o) -> str:
    """The mark of an option whose throughput was measured under other conditions than asked,
    or estimated."""
    from scenarios.compare.wording import ESTIMATED, estimated

    if estimated(o):
        return f" {ESTIMATED}"
    return f" {_DIFFERS}" if o.source and o.source.caveats else ""


#: How the speed column marks a throughput by its origin.
_SPEED_MARKS = {"yours": " yours", "estimated": " est."}


def _speed(o) -> str:
    """An option's tokens/s per GPU, ``yours`` when from the user's serving file, ``est.``
    when estimated."""
    if not o.tokens_per_s_per_gpu:
        return ""
    mark = _SPEED_MARKS.get(o.source.origin, "") if o.source else ""
    return f"{fmt_number(o.tokens_per_s_per_gpu)}{mark}"


def _cited(c) -> str:
    """A citation in the table: its origin, the row's conditions, id and date."""
    if c.origin == "published":
        return f"{c.id} ({c.as_of})"
    return f"{c.origin}: {c.conditions}; {c.id} ({c.as_of})"


#: Columns of ``costmodel compare --format csv``, and the columns a comparison by model adds.
COMPARE_COLUMNS = (
    "rank", "id", "catalog_id", "side", "pricing", "gpu", "gpu_count", "cost_p10", "cost_p50",
    "cost_p90", "price_usd", "price_source", "warnings",
)  # fmt: skip
SERVING_COLUMNS = (
    "unit", "tokens_per_s_per_gpu", "source_id", "source_as_of", "source", "source_origin",
    "source_conditions", "source_caveats", "source_sigma",
)  # fmt: skip
#: The last columns: each option's emissions [g CO2e/unit of work], empty when not known.
CARBON_COLUMNS = ("carbon_g_p10", "carbon_g_p50", "carbon_g_p90")


def compare_csv(result: Comparison) -> str:
    """One row per option in the ranking's order, ``id`` unique (the option's
    :attr:`~scenarios.compare.result.Option.key`) and ``catalog_id`` the catalog's: costs
    [USD/unit of work] to 6 significant
    figures, warnings as ``;``-separated codes; by model also the unit (``million_tokens``),
    the serving throughput [tokens/s per GPU] and the serving row, estimate (its lognormal
    sigma [-] in ``source_sigma``) or API offer each option rests on (an API has no GPU:
    empty cells); last the emissions [g CO2e/unit of work] (empty when not known). Text
    cells never start a formula."""
    from present.formatting import text_cell

    by_model = result.model is not None
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COMPARE_COLUMNS + (SERVING_COLUMNS if by_model else ()) + CARBON_COLUMNS)
    for rank, o in enumerate(result.options, start=1):
        row = [
            rank,
            text_cell(o.key),
            text_cell(o.id),
            o.side,
            o.pricing,
            text_cell(o.gpu),
            o.gpu_count,
            *(f"{v:.6g}" for v in (o.cost.p10, o.cost.p50, o.cost.p90)),
            f"{o.price_usd:.6g}",
            text_cell(o.price_source),
            ";".join(w.code for w in o.warnings),
        ]
        if by_model:
            speed = o.tokens_per_s_per_gpu
            c = o.source
            cited = (
                (c.id, c.as_of, c.source, c.origin, c.conditions, ";".join(c.caveats))
                if c
                else ("",) * 6
            )
            sigma = "" if c is None or c.sigma is None else f"{c.sigma:.6g}"
            row += [result.unit, "" if speed is None else f"{speed:.6g}", *map(text_cell, cited)]
            row.append(sigma)
        g = o.carbon
        row += ("",) * 3 if g is None else [f"{v:.6g}" for v in (g.p10, g.p50, g.p90)]
        writer.writerow(row)
    return out.getvalue()
