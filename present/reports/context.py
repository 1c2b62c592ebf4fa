"""What the HTML and Markdown reports show, gathered once from a result: a rent-versus-buy
:class:`~costmodel.result.Result` or a fleet :class:`~costmodel.plan_result.PlanResult`.

Formatted strings only (see :mod:`present.formatting`); money in [USD] present value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costmodel.plan_result import PlanResult
from costmodel.result import Result
from costmodel.units import unit as unit_of

from ..answer import Answer
from ..formatting import fmt_candidate, fmt_number, fmt_utilisation
from ..verdict import plan_precision_text
from ..wording import Wording, words_of
from .plan_tables import best_plan_table, candidates_table
from .tables import (
    assumption_rows,
    carbon_note,
    carbon_table,
    key_figures_table,
    per_utilisation_table,
    reproducibility,
    scenario_name,
    sensitivity_table,
    warning_rows,
)
from .uncertainty import plan_voi_sentence, uncertainty_context

__all__ = ["plan_context", "report_context"]


def _label(entry: Any) -> Any:
    """The name of a catalog entry given by id or inline (a mapping with a ``name``)."""
    return entry.get("name") if isinstance(entry, Mapping) else entry


def _rate(value: Any, unit: str) -> str:
    """A rate [1/year or 1/month] as a percentage in ``unit``; a distribution by its range."""
    if isinstance(value, int | float):
        return f"{value * 100:g} {unit}"
    ends = [value.get(k) for k in ("low", "high")] if isinstance(value, Mapping) else []
    if all(isinstance(x, int | float) for x in ends) and ends:
        return f"{ends[0] * 100:g}–{ends[1] * 100:g} {unit}"
    return f"an uncertain {unit} rate"


def _owned_label(buy: Mapping[str, Any], result: Result) -> str | None:
    """The owned GPU's name, with the spares, the financing when it is not cash and the share
    of GPUs in service when there is downtime; ``None`` without a GPU."""
    name = _label(buy.get("gpu"))
    spares, paid = buy.get("spare_gpus"), buy.get("financing")
    if not name:
        return None
    if isinstance(spares, int) and spares:
        name = f"{name} + {spares} spare"
    if isinstance(paid, Mapping) and paid.get("kind") in ("loan", "lease"):
        months = paid.get("term_months", "?")
        if paid["kind"] == "lease":
            name += f", leased at {_rate(paid.get('monthly_rate'), '%/month')} for {months} months"
        else:
            down = paid.get("down_payment_share")
            down_text = f", {down * 100:g} % down" if isinstance(down, int | float) and down else ""
            name += f", a {months}-month loan at {_rate(paid.get('rate'), '%/year')}{down_text}"
    if result.availability is not None:
        name += f", {result.availability.p50 * 100:.5g} % of GPUs in service"
    return name


def _terms(s: Mapping[str, Any], months: int) -> list[tuple[str, str]]:
    """Horizon [month], discount rate [1/year] and tax rate [-] (when not zero)."""
    facts = [("Horizon", f"{months} months")]
    if isinstance(s.get("discount_rate"), int | float):
        facts.append(("Discount rate", f"{s['discount_rate'] * 100:g} %/year"))
    if isinstance(s.get("tax_rate"), int | float) and s["tax_rate"]:
        facts.append(("Tax rate", f"{s['tax_rate'] * 100:g} %"))
    return facts


def _rented(label: str, block: Any, extra: str = "") -> list[tuple[str, str]]:
    """``label: instance (pricing)extra`` for a rented block that names an instance."""
    block = block if isinstance(block, Mapping) else {}
    name = _label(block.get("instance"))
    if not name:
        return []
    pricing = block.get("pricing")
    return [(label, f"{name}" + (f" ({pricing})" if pricing else "") + extra)]


def _workload(block: Any) -> list[tuple[str, str]]:
    """``Serving: model (precision), I in / O out tokens per request`` for inference work."""
    block = block if isinstance(block, Mapping) else {}
    if block.get("kind") != "inference":
        return []
    text = str(_label(block.get("model")) or "?")
    if block.get("precision"):
        text += f" ({block['precision']})"
    shape = [block.get(k) for k in ("input_tokens", "output_tokens")]
    if all(isinstance(n, int | float) for n in shape):
        text += f", {fmt_number(shape[0])} in / {fmt_number(shape[1])} out tokens per request"
    return [("Serving", text)]


def _api(block: Any) -> list[tuple[str, str]]:
    """``API: model`` for a hosted API given by catalog id or inline with a name."""
    name = _label(block.get("model")) if isinstance(block, Mapping) else None
    return [("API", str(name))] if name else []


def _facts(result: Answer[Result]) -> list[tuple[str, str]]:
    """Headline scenario facts that are present: horizon, discount rate, the work served (for
    inference), the sides compared."""
    s = result.document
    facts = _terms(s, len(result.cumulative_cost.months) - 1) + _workload(s.get("workload"))
    buy = s.get("buy") if isinstance(s.get("buy"), Mapping) else {}
    gpu_name = _owned_label(buy, result)
    if gpu_name:
        facts.append(("Buy", f"{buy.get('gpu_count', '?')} × {gpu_name}"))
    return facts + _rented("Rent", s.get("rent")) + _api(s.get("api"))


def _span(block: Any, key: str) -> str:
    """The text ``, <min>–<max> <key>`` of a plan's candidate range, or ``""``."""
    span = block.get(key) if isinstance(block, Mapping) else None
    if not isinstance(span, Mapping):
        return ""
    return f", {span.get('min', '?')}–{span.get('max', '?')} {key}"


def _plan_facts(result: Answer[PlanResult]) -> list[tuple[str, str]]:
    """Headline plan facts that are present: horizon, rates, the owned server, the rented
    instances and the candidate ranges."""
    s = result.document
    facts = _terms(s, len(result.work_split.owned))
    own = s.get("own") or {}
    gpu_name = _label(own.get("gpu"))
    if gpu_name:
        per_server = f"{own.get('gpu_count', '?')} × {gpu_name} per server"
        facts.append(("Own", per_server + _span(own, "servers")))
    facts += _rented("Reserve", s.get("reserve"), _span(s.get("reserve"), "instances"))
    return facts + _rented("Burst", s.get("burst"))


def _common(result: Answer, images: Mapping[str, str]) -> dict[str, Any]:
    """What every report shows: name, description, verdict, warnings, charts, assumptions."""
    return {
        "name": scenario_name(result),
        "description": result.document.get("description") or "",
        "verdict": result.verdict,
        "warnings": warning_rows(result),
        "images": dict(images),
        "assumptions": assumption_rows(result),
        "reproducibility": reproducibility(result),
    }


#: What the report says of the sides it compares: with renting alone, or with a hosted API.
_WORDS = {
    False: {
        "heading": "Rent or buy GPU compute",
        "kicker": "Rent-versus-buy GPU cost report",
        "sides_text": "buying and renting",
        "highlight_note": "buying is cheaper in at least half of the draws",
    },
    True: {
        "heading": "Buy, rent or pay per token",
        "kicker": "Buy, rent or API: GPU serving cost report",
        "sides_text": "buying, renting and the API",
        "highlight_note": "buying is the cheapest of the three options in at least half of "
        "the draws",
    },
}


def _figure_notes(words: Wording) -> list[str]:
    """The sentences under the key figures: how often buying wins or loses whatever the
    utilisation, the cost per unit of work at the report utilisation, the payback note."""
    return [text for text in (*words.shares, words.cost, words.payback_note) if text]


def report_context(result: Answer[Result], images: Mapping[str, str]) -> dict[str, Any]:
    """Everything the HTML and Markdown templates show; ``images`` maps chart name -> inline SVG
    (HTML) or image URI (Markdown)."""
    api = result.api_tco is not None
    return {
        **_common(result, images),
        **_WORDS[api],
        "api": api,
        "unit_note": unit_of(result.unit).note,
        "facts": _facts(result),
        "horizon": f"{len(result.cumulative_cost.months) - 1} months",
        "key_figures": key_figures_table(result),
        "figure_notes": _figure_notes(words_of(result)),
        "breakeven_p50": fmt_utilisation(result.breakeven_utilisation.p50),
        "breakeven_api_p50": fmt_utilisation(result.breakeven_vs_api.p50) if api else "",
        "cumulative_u": fmt_utilisation(result.cumulative_cost.utilisation, none="?"),
        "per_utilisation": per_utilisation_table(result),
        "carbon": carbon_table(result),
        "carbon_note": carbon_note(result) if result.carbon else "",
        "drivers": sensitivity_table(result),
        "drivers_u": fmt_utilisation(result.sensitivity.utilisation, none="?"),
        **uncertainty_context(result),
    }


def plan_context(result: Answer[PlanResult], images: Mapping[str, str]) -> dict[str, Any]:
    """Everything the plan templates show; ``images`` maps chart name -> inline SVG
    (HTML) or image URI (Markdown)."""
    best = result.best
    return {
        **_common(result, images),
        "facts": _plan_facts(result),
        "horizon": f"{len(result.work_split.owned)} months",
        "best_plan": best_plan_table(result),
        "best_label": fmt_candidate(best),
        "candidates": candidates_table(result),
        "precision": plan_precision_text(result),
        "voi_sentence": plan_voi_sentence(result),
    }
