"""What the HTML and Markdown reports show, gathered once from a result.

Formatted strings only (see :mod:`costmodel.reports.formatting`); money in [USD] present value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .formatting import fmt_utilisation
from .tables import (
    assumption_rows,
    key_figures_table,
    per_utilisation_table,
    reproducibility,
    scenario_name,
    sensitivity_table,
    warning_rows,
)

__all__ = ["report_context"]


def _horizon(result: Mapping[str, Any]) -> str:
    scenario = result.get("scenario") or {}
    h = scenario.get("horizon_months")
    if h is None:
        h = len(result["cumulative_cost"]["months"]) - 1
    return f"{h} months"


def _facts(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Headline scenario facts that are present: horizon, discount rate, sides compared."""
    s = result.get("scenario") or {}
    facts = [("Horizon", _horizon(result))]
    if isinstance(s.get("discount_rate"), int | float):
        facts.append(("Discount rate", f"{s['discount_rate'] * 100:g} %/year"))
    if isinstance(s.get("tax_rate"), int | float) and s["tax_rate"]:
        facts.append(("Tax rate", f"{s['tax_rate'] * 100:g} %"))
    buy, rent = s.get("buy") or {}, s.get("rent") or {}
    if isinstance(buy.get("gpu"), str):
        facts.append(("Buy", f"{buy.get('gpu_count', '?')} × {buy['gpu']}"))
    elif isinstance(buy.get("gpu"), Mapping) and buy["gpu"].get("name"):
        facts.append(("Buy", f"{buy.get('gpu_count', '?')} × {buy['gpu']['name']}"))
    inst = rent.get("instance")
    inst_name = inst.get("name") if isinstance(inst, Mapping) else inst
    if inst_name:
        pricing = rent.get("pricing")
        facts.append(("Rent", f"{inst_name}" + (f" ({pricing})" if pricing else "")))
    return facts


def report_context(result: Mapping[str, Any], images: Mapping[str, str]) -> dict[str, Any]:
    """Everything the HTML and Markdown templates show; ``images`` maps chart name -> URI."""
    s = result.get("scenario") or {}
    return {
        "name": scenario_name(result),
        "description": s.get("description") or "",
        "facts": _facts(result),
        "horizon": _horizon(result),
        "verdict": result["verdict"],
        "key_figures": key_figures_table(result),
        "breakeven_p50": fmt_utilisation(result["breakeven_utilisation"]["p50"]),
        "cumulative_u": fmt_utilisation(result["cumulative_cost"]["utilisation"], none="?"),
        "warnings": warning_rows(result),
        "images": dict(images),
        "per_utilisation": per_utilisation_table(result),
        "drivers": sensitivity_table(result),
        "drivers_u": fmt_utilisation(
            (result.get("sensitivity") or {}).get("utilisation"), none="?"
        ),
        "assumptions": assumption_rows(result),
        "reproducibility": reproducibility(result),
    }
