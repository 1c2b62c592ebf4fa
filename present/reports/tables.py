"""The report's tables, formatted (for HTML, Markdown and the terminal) from a
:class:`~costmodel.result.Result`, and the parts every report shares (assumptions, warnings,
reproducibility), which a :class:`~costmodel.plan_result.PlanResult` has too.

Money in [USD] present value, utilisation and probabilities as fractions [-] (shown as
percentages), payback in [month], unit cost in [USD per unit of work] (a reference GPU-hour or
a million tokens, ``Result.unit``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from costmodel.result import Advice, Breakeven, Column, Payback, Quantity, Result
from costmodel.sides import side as side_of
from costmodel.units import unit as unit_of

from ..answer import Answer
from ..formatting import (
    DASH,
    fmt_grams,
    fmt_months,
    fmt_number,
    fmt_share,
    fmt_tonnes,
    fmt_unit_cost,
    fmt_usd,
    fmt_utilisation,
    fmt_value,
    missing,
)

__all__ = [
    "Table",
    "assumption_rows",
    "buy_wins",
    "carbon_note",
    "carbon_table",
    "cheapest",
    "cumulative_payback",
    "key_figures_table",
    "per_utilisation_table",
    "reproducibility",
    "run_items",
    "scenario_name",
    "sensitivity_table",
    "summary_items",
    "unit_cost_text",
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


def scenario_name(result: Answer) -> str:
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


def unit_cost_text(result: Result) -> Callable[[float | None], str]:
    """The formatter of the result's unit costs: as money (:func:`fmt_usd`) per reference
    GPU-hour, to three significant figures per M tokens (a tenth of a cent per million tokens
    tells the options apart; :func:`~present.formatting.fmt_per_unit` says it so)."""
    return fmt_unit_cost if unit_of(result.unit).fine else fmt_usd


def cheapest(result: Result, i: int) -> tuple[str, float]:
    """The side cheapest in most draws at level ``i`` and that share [-] (a tie goes to the
    first of buy, rent, api); needs a hosted API (``cheapest_share``)."""
    shares = {side: float(share[i]) for side, share in result.cheapest_share.items()}
    best = max(shares, key=lambda side: shares[side])
    return best, shares[best]


def buy_wins(result: Result) -> tuple[bool, ...]:
    """Per level: buying is cheaper than renting in at least half of the draws, or with a
    hosted API the cheapest of the three sides in at least half."""
    shares = (
        result.prob_buy_cheaper if result.cheapest_share is None else result.cheapest_share["buy"]
    )
    return tuple(bool(p >= 0.5) for p in shares)


def _api_columns(result: Result) -> list[tuple[str, list[str]]]:
    """P(buy cheaper than the API) and the cheapest option with its share of draws."""
    best = [cheapest(result, i) for i in range(len(result.utilisation))]
    return [
        ("P(buy cheaper than API)", [fmt_share(p) for p in result.prob_buy_cheaper_than_api]),
        ("Cheapest (share of draws)", [f"{side_of(s).option} {fmt_share(v)}" for s, v in best]),
    ]


def per_utilisation_table(result: Result) -> Table:
    """The per-utilisation table a reader scans: each side's TCO bands, P(buy cheaper), payback
    and each side's P50 unit cost; with a hosted API also P(buy cheaper than the API), the
    cheapest option with its share of draws and the payback against the API.

    Highlighted rows: where :func:`buy_wins`.
    """
    api = result.api_tco is not None
    cols = [("Utilisation", [fmt_utilisation(u, none=DASH) for u in result.utilisation])]
    for side in result.sides:
        bands = result.tco(side)
        cols += [
            (f"{side_of(side).label} TCO {s.upper()}", [fmt_usd(v) for v in getattr(bands, s)])
            for s in ("p10", "p50", "p90")
        ]
    vs = " than rent" if api else ""
    cols.append((f"P(buy cheaper{vs})", [fmt_share(p) for p in result.prob_buy_cheaper]))
    cols += _api_columns(result) if api else []
    cols += [
        (f"P(buy cheaper than {side_of(side).label})", [fmt_share(p) for p in v.prob_buy_cheaper])
        for side, v in result.versus.items()
    ]
    cols += [
        (f"{name} P50 [months]", [fmt_months(t) for t in pb.p50])
        for name, pb in _paybacks(result, short=True)
    ]
    unit, text = unit_of(result.unit).header, unit_cost_text(result)
    cols += [
        (f"{side_of(side).label} P50 [{unit}]", [text(v) for v in bands.p50])
        for side, bands in result.cost_per_unit.items()
    ]
    rows = tuple(zip(*(cells for _, cells in cols), strict=True))
    return Table(tuple(h for h, _ in cols), rows, (True,) * len(cols), buy_wins(result))


def carbon_table(result: Result) -> Table | None:
    """Each side's emissions over the horizon [t CO2e] (P50 and P10–P90) and per unit of work
    (P50) by utilisation level; "unknown" for an API without emission figures. ``None``
    without carbon figures."""
    c = result.carbon
    if c is None:
        return None
    cols = [("Utilisation", [fmt_utilisation(u, none=DASH) for u in result.utilisation])]
    for side in result.sides:
        bands = c.get(side)
        label = f"{side_of(side).label} [t CO2e]"
        if bands is None:
            cols.append((f"{label} P50", ["unknown"] * len(result.utilisation)))
            continue
        cols.append((f"{label} P50", [fmt_tonnes(v) for v in bands.p50]))
        spans = zip(bands.p10, bands.p90, strict=True)
        cols.append((f"{side_of(side).label} P10–P90", [f"{fmt_tonnes(a)} – {fmt_tonnes(b)}"
                                                       for a, b in spans]))  # fmt: skip
    unit = unit_of(result.unit).carbon_header
    for side in result.sides:
        bands = c.per_unit.get(side)
        cells = (
            [fmt_grams(v) for v in bands.p50] if bands else ["unknown"] * len(result.utilisation)
        )
        cols.append((f"{side_of(side).label} P50 [{unit}]", cells))
    rows = tuple(zip(*(cells for _, cells in cols), strict=True))
    return Table(tuple(h for h, _ in cols), rows, (True,) * len(cols))


def carbon_note(result: Answer[Result]) -> str:
    """What the emissions table counts, and whether carbon has a price in the costs."""
    block = result.document.get("carbon")
    years = block.get("service_life_years", 5) if isinstance(block, Mapping) else 5
    price = next((a.value for a in result.assumptions if a.key == "carbon.usd_per_tonne"), 0)
    life = f"{fmt_number(years)} years" if isinstance(years, int | float) else "its service life"
    priced = (
        f"A carbon price of {fmt_value(price)} USD/t CO2e is in the costs above."
        if price
        else "Carbon has no price here (carbon.usd_per_tonne): the costs above leave it out."
    )
    unknown = (
        " The API's emissions are unknown (api.g_co2e_per_mtok)." if result.carbon.unknown else ""
    )
    return (
        "Emissions over the horizon in tonnes of CO2e: the owned build's electricity at its "
        f"grid's intensity and PUE, plus its hardware's embodied carbon spread over {life}; "
        "the rented instance's electricity and embodied share for the hours used. Grid "
        "intensities are location-based, lifecycle or operational as each source counts them "
        f"(see the assumptions), with no renewable certificates subtracted. {priced}{unknown}"
    )


def _paybacks(result: Result, *, short: bool) -> list[tuple[str, Payback]]:
    """Each payback [month] with its name: "Payback" alone, or with more sides than renting
    the payback against each ("vs renting", "vs the API", ...; "vs rent", "vs API" when
    ``short``)."""
    rivals = result.sides[1:]
    if len(rivals) == 1:
        return [("Payback", result.payback_months)]
    return [
        (
            f"Payback vs {side_of(s).option if short else side_of(s).doing}",
            result.against(s).payback,
        )
        for s in rivals
    ]


def cumulative_payback(
    result: Result, payback: Payback | None = None
) -> tuple[float, float, float] | None:
    """Payback P10/P50/P90 [month] at the cumulative-cost utilisation, if that level was run:
    against renting, or ``payback`` (the payback against the API)."""
    i = result.level(result.cumulative_cost.utilisation)
    if i is None:
        return None
    pb = result.payback_months if payback is None else payback
    return (float(pb.p10[i]), float(pb.p50[i]), float(pb.p90[i]))


def _breakeven_rows(be: Breakeven, label: str) -> list[tuple[str, str]]:
    """A break-even's percentiles and mean [-] (its "always" and "never" shares are a sentence
    of :mod:`present.wording`)."""
    return [
        (f"{label} P10", fmt_utilisation(be.p10)),
        (f"{label} P50", fmt_utilisation(be.p50)),
        (f"{label} P90", fmt_utilisation(be.p90)),
        (f"{label} mean (draws that break even)", fmt_utilisation(be.mean)),
    ]


def _at_report_level(result: Result) -> list[tuple[str, str]]:
    """Payback (against each rival) and, in a unit other than reference GPU-hours, each
    side's unit cost P10 / P50 / P90 at the report utilisation, when that level was run."""
    i = result.level(result.cumulative_cost.utilisation)
    if i is None:
        return []
    u = fmt_utilisation(result.cumulative_cost.utilisation)
    rows = [
        (f"{name} at {u} utilisation P10 / P50 / P90 [months]",
         " / ".join(fmt_months(t) for t in cumulative_payback(result, pb)))
        for name, pb in _paybacks(result, short=False)
    ]  # fmt: skip
    if not unit_of(result.unit).fine:
        return rows
    words, text = unit_of(result.unit).words, unit_cost_text(result)
    for side, bands in result.cost_per_unit.items():
        costs = " / ".join(text(getattr(bands, s)[i]) for s in ("p10", "p50", "p90"))
        rows.append(
            (f"{side_of(side).label} cost per {words} at {u} utilisation P10 / P50 / P90", costs)
        )
    return rows


def key_figures_table(result: Result) -> Table:
    """Break-even utilisation percentiles and mean (with more sides than renting: against
    each, "vs renting", "vs the API", ...), then the figures at the report utilisation
    (:func:`_at_report_level`)."""
    rivals = result.sides[1:]
    if len(rivals) == 1:
        rows = _breakeven_rows(result.breakeven_utilisation, "Break-even utilisation")
    else:
        rows = [
            row
            for s in rivals
            for row in _breakeven_rows(
                result.against(s).breakeven, f"Break-even utilisation vs {side_of(s).doing}"
            )
        ]
    rows += _at_report_level(result)
    return Table(("Figure", "Value"), tuple(rows), (False, True))


def assumption_rows(result: Answer) -> list[dict[str, Any]]:
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


def warning_rows(result: Answer) -> list[Advice]:
    """Warnings, most severe first (error, warning, info)."""
    return sorted(result.warnings, key=lambda w: _SEVERITY_ORDER.get(w.severity, 3))


def reproducibility(result: Answer) -> list[tuple[str, Any]]:
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


def _breakeven_items(stem: str, be: Breakeven) -> list[Column]:
    """``<stem>_p10`` .. ``_mean``, ``<stem>_prob_always``, ``_prob_never`` [-] (``None``:
    never) of a break-even."""
    values = [(k, getattr(be, k)) for k in ("p10", "p50", "p90", "mean")]
    items = [Column(f"{stem}_{k}", None if missing(v) else v, Quantity.SHARE) for k, v in values]
    stem = "breakeven" if stem == "breakeven_utilisation" else stem
    return items + [
        Column(f"{stem}_prob_always", be.prob_always, Quantity.SHARE),
        Column(f"{stem}_prob_never", be.prob_never, Quantity.SHARE),
    ]


def summary_items(result: Answer[Result]) -> list[Column]:
    """The XLSX summary sheet: raw values (fractions [-], counts), ``None`` for no value; also
    the break-even against each side beyond renting (``breakeven_vs_api_...``,
    ``breakeven_vs_<side>_...``)."""
    items = [Column("verdict", result.verdict)]
    items += _breakeven_items("breakeven_utilisation", result.breakeven_utilisation)
    for s in result.sides[2:]:
        items += _breakeven_items(f"breakeven_vs_{s}", result.against(s).breakeven)
    return items + run_items(result)


def run_items(result: Answer) -> list[Column]:
    """The XLSX summary sheet's closing rows: how the run was made, its name, its warnings."""
    cat = result.catalog
    return [
        Column("seed", result.seed),
        Column("samples", result.samples),
        Column("method", result.method),
        Column("catalog_version", cat.version if cat else None),
        Column("catalog_as_of", cat.as_of if cat else None),
        Column("scenario_name", scenario_name(result)),
        Column("warnings_count", len(result.warnings)),
    ]
