"""What the reports say about how sure the answer is and what would change it, from a
:class:`~costmodel.result.Result`'s ``convergence``, ``tornado`` and ``value_of_information``:
formatted tables and sentences for HTML and Markdown, raw rows for the XLSX workbook. Results
stored before these fields existed get ``None`` (and the reports leave the sections out).

Money in [USD] present value, utilisation as a fraction [-] shown as a percentage.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from costmodel.plan_result import PlanResult
from costmodel.result import Column, Quantity, Result, Tornado
from costmodel.sides import SIDES
from costmodel.sides import side as side_of

from ..formatting import fmt_mix, fmt_number, fmt_usd, fmt_utilisation, missing
from ..verdict import precision_text
from .tables import Table

__all__ = [
    "INPUT_LABELS",
    "rival_tornado",
    "rival_voi_sentence",
    "rival_words",
    "TORNADO_HEADER",
    "plan_voi_sentence",
    "tornado_rows",
    "tornado_table",
    "uncertainty_context",
    "uncertainty_items",
    "voi_sentence",
    "voi_table",
    "worth_naming",
]

#: How the reports name each input in prose.
INPUT_LABELS = {
    "buy.gpu_price_usd": "the GPU price",
    "buy.platform_price_usd": "the platform price",
    "buy.setup_usd": "the setup cost",
    "buy.gpu_power_w": "the GPUs' busy power draw",
    "buy.gpu_idle_w": "the GPUs' idle power draw",
    "buy.platform_power_w": "the platform's power draw",
    "buy.electricity_usd_per_kwh": "the electricity price",
    "buy.electricity_annual_change": "the electricity price trend",
    "buy.pue": "the cooling overhead (PUE)",
    "buy.hosting_usd_per_kw_month": "the colocation price",
    "buy.maintenance_rate": "the maintenance rate",
    "buy.gpu_annual_failure_rate": "the GPU failure rate",
    "buy.admin_usd_per_month": "the cost of running the build",
    "buy.resale_annual_decay": "the resale value",
    "buy.relative_throughput": "the owned GPUs' speed",
    "buy.tokens_per_s_per_gpu": "the owned GPUs' serving speed",
    "buy.scaling_efficiency": "the build's multi-GPU scaling",
    "buy.thermal_derate": "the build's thermal throttling",
    "rent.price_usd_per_hour": "the cloud price",
    "rent.on_demand_price_usd_per_hour": "the on-demand price above the reservation",
    "rent.price_annual_change": "the cloud price trend",
    "rent.spot_interruption_overhead": "the spot interruption overhead",
    "rent.storage_usd_per_month": "the cloud storage cost",
    "rent.egress_usd_per_month": "the egress cost",
    "rent.admin_usd_per_month": "the cost of running the cloud side",
    "rent.relative_throughput": "the instances' speed",
    "rent.tokens_per_s_per_gpu": "the instances' serving speed",
    "rent.scaling_efficiency": "the instances' multi-GPU scaling",
    "demand.reference_gpu_hours_per_month": "the work in month 1",
    "demand.million_tokens_per_month": "the tokens in month 1",
    "demand.annual_growth": "the growth of the work",
    "demand.peak_to_mean": "the daily peak",
    "api.input_usd_per_mtok": "the API's input price",
    "api.output_usd_per_mtok": "the API's output price",
    "api.cached_input_share": "the share of cached input",
    "api.cached_input_usd_per_mtok": "the API's cached input price",
    "api.price_annual_change": "the API's price trend",
}
#: A plan's blocks, by the scenario side whose inputs they take.
_PLAN_SIDES = {"own": ("buy", "the owned servers'"), "reserve": ("rent", "the reservation's"),
               "burst": ("rent", "the burst instances'")}  # fmt: skip
#: Inputs a supplier can quote.
_QUOTED = {
    "buy.gpu_price_usd",
    "buy.platform_price_usd",
    "buy.setup_usd",
    "buy.electricity_usd_per_kwh",
    "buy.hosting_usd_per_kw_month",
    "rent.price_usd_per_hour",
    "rent.on_demand_price_usd_per_hour",
    "rent.storage_usd_per_month",
    "rent.egress_usd_per_month",
}


def _label(name: str) -> str:
    """How prose names input ``name`` (a plan's ``own.pue`` reads as ``buy.pue`` does; an
    input of a further registered side by its field's text: "the dedicated server's fee a
    month")."""
    if name.startswith("burst.api."):  # a plan's API burst reads as a scenario's API
        return INPUT_LABELS.get(name.removeprefix("burst."), name)
    side, _, key = name.partition(".")
    if side in _PLAN_SIDES:
        as_side, owner = _PLAN_SIDES[side]
        label = INPUT_LABELS.get(f"{as_side}.{key}")
        if label is None:
            return name
        return label if side == "own" else f"{owner} {label.removeprefix('the ')}"
    if name not in INPUT_LABELS and side in SIDES and side not in ("buy", "rent", "api"):
        text = next(
            (f.metadata.get("text") for f in fields(SIDES[side].inputs) if f.name == key), None
        )
        return f"{SIDES[side].doing}'s {text}" if text else name
    return INPUT_LABELS.get(name, name)


def rival_words(versus: str) -> tuple[str, str]:
    """How the tables and sentences name rival side ``versus``: its short name (``"rent"``,
    ``"API"``: the registered side's ``option``) and its name in prose (``"renting"``, ``"the
    API"``: its ``doing``)."""
    record = side_of(versus)
    return record.option, record.doing


def rival_tornado(result: Result, versus: str = "rent") -> Tornado | None:
    """The tornado of buying against side ``versus``; None without one (no such side, or a
    result stored before tornados existed)."""
    if versus == "rent":
        return result.tornado
    rival = result.rival(versus)
    return None if rival is None else rival.tornado


def tornado_table(result: Result, top: int = 10, versus: str = "rent") -> Table | None:
    """The largest ``top`` swings against side ``versus``: each input from its P10 to its P90,
    the break-even and the buy - rent (or buy - <versus>) gap at each end; None without
    tornado inputs."""
    t = rival_tornado(result, versus)
    if t is None or not t.inputs:
        return None
    u = fmt_utilisation(t.utilisation, none="?")
    rows = tuple(
        (
            bar.input,
            f"{fmt_number(bar.low)} → {fmt_number(bar.high)}",
            f"{fmt_utilisation(bar.breakeven_at_low)} → {fmt_utilisation(bar.breakeven_at_high)}",
            f"{fmt_usd(bar.gap_at_low)} → {fmt_usd(bar.gap_at_high)}",
        )
        for bar in t.inputs[:top]
    )
    headers = (
        "Uncertain input",
        "P10 → P90",
        "Break-even",
        f"Buy − {rival_words(versus)[0]} at {u}",
    )
    return Table(headers, rows, (False, True, True, True))


#: The share of the EVPI below which an input's EVPPI is the estimate's noise, not named.
NOISE = 0.01


def worth_naming(voi: Any) -> list:
    """The inputs of value of information ``voi`` worth naming (EVPPI at least :data:`NOISE`
    of the EVPI), largest first: what the sentences, the tables and the page name."""
    return [v for v in voi.by_input if v.evppi >= NOISE * voi.evpi]


def voi_sentence(result: Result) -> str | None:
    """The value of information in words: "Getting a firm quote for the cloud price is worth
    up to $X; the electricity price is worth $Y." None without ``value_of_information``."""
    voi = result.value_of_information
    if voi is None:
        return None
    u = fmt_utilisation(voi.utilisation, none="?")
    if voi.evpi <= 0:
        return (
            f"At {u} utilisation the same option is cheaper in every draw: no quote or study "
            "would change the decision."
        )
    text = (
        f"At {u} utilisation, knowing every uncertain input before deciding would save "
        f"{fmt_usd(voi.evpi)} on average."
    )
    worth = worth_naming(voi)[:2]
    if not worth:
        return text
    first = worth[0]
    verb = "Getting a firm quote for" if first.input in _QUOTED else "Pinning down"
    text += f" {verb} {_label(first.input)} is worth up to {fmt_usd(first.evppi)}"
    if len(worth) > 1:
        text += f"; {_label(worth[1].input)} is worth {fmt_usd(worth[1].evppi)}"
    return text + "."


def plan_voi_sentence(result: PlanResult) -> str | None:
    """The plan's value of information in words: what knowing the inputs before choosing
    between its two best candidates would save. None with a single candidate."""
    voi = result.value_of_information
    if voi is None:
        return None
    pair = " and ".join(fmt_mix(c) for c in (voi.first, voi.second))
    if voi.evpi <= 0:
        return f"Between {pair}, the same one is cheaper in every draw: no study would change it."
    text = (
        f"Between {pair}, knowing every uncertain input before choosing would save "
        f"{fmt_usd(voi.evpi)} on average."
    )
    worth = worth_naming(voi)[:2]
    if worth:
        said = "; ".join(
            f"{_label(v.input)} alone is worth up to {fmt_usd(v.evppi)}" for v in worth
        )
        text += f" {said[0].upper()}{said[1:]}."
    return text


def voi_table(result: Result, top: int = 8) -> Table | None:
    """The inputs most worth knowing exactly (EVPPI [USD]), largest first; None without any."""
    voi = result.value_of_information
    if voi is None or voi.evpi <= 0:
        return None
    rows = tuple((v.input, _label(v.input), fmt_usd(v.evppi)) for v in worth_naming(voi)[:top])
    if not rows:
        return None
    headers = ("Uncertain input", "What it is", "Worth knowing exactly, up to")
    return Table(headers, rows, (False, False, True))


def rival_voi_sentence(result: Result, versus: str) -> str | None:
    """The value of information of choosing between buying and side ``versus`` (one of the
    result's ``rivals``: a hosted API, a further side), in words; None without that side."""
    rival = result.rival(versus)
    if rival is None:
        return None
    voi = rival.value_of_information
    u = fmt_utilisation(voi.utilisation, none="?")
    words = rival_words(versus)[1]
    if voi.evpi <= 0:
        return f"Of buying and {words}, the same one is cheaper in every draw at {u} utilisation."
    text = (
        f"Between buying and {words} at {u} utilisation, knowing every uncertain input first "
        f"would save {fmt_usd(voi.evpi)} on average"
    )
    worth = worth_naming(voi)
    if not worth:
        return text + "."
    return text + f"; {_label(worth[0].input)} alone is worth up to {fmt_usd(worth[0].evppi)}."


def uncertainty_context(result: Result) -> dict[str, Any]:
    """The report templates' variables for precision, tornado and value of information:
    ``precision`` and ``voi_sentence`` (text or None), ``tornado`` and ``voi`` (tables or
    None), ``tornado_u`` (the tornado's utilisation); and ``rivals``, one entry for each side
    buying is weighed against beside renting (a hosted API, each further side), in the
    result's order: its ``side``, its ``short`` name and its ``words`` in prose, its
    ``precision``, ``tornado`` (a table) and ``voi_sentence`` (each None where it has none) and
    the name of its tornado ``chart`` (``tornado_<side>``)."""
    t = result.tornado
    rivals = [
        {
            "side": r.versus,
            "short": rival_words(r.versus)[0],
            "words": rival_words(r.versus)[1],
            "precision": precision_text(result, r.versus),
            "tornado": tornado_table(result, versus=r.versus),
            "chart": f"tornado_{r.versus}",
            "voi_sentence": rival_voi_sentence(result, r.versus),
        }
        for r in result.rivals
    ]
    return {
        "precision": precision_text(result),
        "tornado": tornado_table(result),
        "tornado_u": fmt_utilisation(t.utilisation, none="?") if t is not None else "?",
        "voi_sentence": voi_sentence(result),
        "voi": voi_table(result),
        "rivals": rivals,
    }


def tornado_rows(result: Result, versus: str = "rent") -> list[tuple[Any, ...]]:
    """The XLSX ``tornado`` (or ``tornado_vs_<versus>``) sheet's rows against side ``versus`` (raw
    numbers, None for "never"), largest swing first, with each input's EVPPI [USD] where
    known."""
    t = rival_tornado(result, versus)
    if t is None:
        return []
    voi = (
        result.value_of_information
        if versus == "rent"
        else result.rival(versus).value_of_information
    )
    evppi = {v.input: v.evppi for v in voi.by_input} if voi is not None else {}
    return [
        (
            bar.input,
            bar.low,
            bar.high,
            bar.breakeven_at_low,
            bar.breakeven_at_high,
            bar.gap_at_low,
            bar.gap_at_high,
            t.utilisation,
            evppi.get(bar.input),
        )
        for bar in t.inputs
    ]


#: The XLSX ``tornado`` sheet's header.
TORNADO_HEADER = (
    Column("input", ()),
    Column("low_p10", ()),
    Column("high_p90", ()),
    Column("breakeven_utilisation_at_low", (), Quantity.SHARE),
    Column("breakeven_utilisation_at_high", (), Quantity.SHARE),
    Column("gap_cost_at_low", (), Quantity.USD),
    Column("gap_cost_at_high", (), Quantity.USD),
    Column("utilisation", (), Quantity.SHARE),
    Column("evppi_cost_usd", (), Quantity.USD),
)


def uncertainty_items(result: Result) -> list[Column]:
    """The XLSX summary sheet's rows on precision and the value of information (raw values;
    none for results stored before these existed)."""
    items: list[Column] = []
    c, SHARE = result.convergence, Quantity.SHARE
    if c is not None:
        lo, hi = c.breakeven_p50_ci95
        items += [
            Column("breakeven_utilisation_p50_ci95_low", None if missing(lo) else lo, SHARE),
            Column("breakeven_utilisation_p50_ci95_high", None if missing(hi) else hi, SHARE),
            Column("samples_asked", c.initial_samples),
        ]
        if c.met is not None:
            items.append(Column("target_halfwidth_met", c.met))
    if result.value_of_information is not None:
        items.append(Column("evpi_cost_usd", result.value_of_information.evpi, Quantity.USD))
    for rival in result.rivals:
        evpi = rival.value_of_information.evpi
        items.append(Column(f"evpi_vs_{rival.versus}_cost_usd", evpi, Quantity.USD))
    return items
