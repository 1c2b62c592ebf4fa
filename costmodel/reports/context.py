"""What the HTML and Markdown reports show, gathered once from a result.

Formatted strings only (see :mod:`costmodel.formatting`); money in [USD] present value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..formatting import fmt_utilisation
from ..result import Result
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


def _facts(result: Result) -> list[tuple[str, str]]:
    """Headline scenario facts that are present: horizon, discount rate, sides compared."""
    s = result.scenario
    facts = [("Horizon", f"{len(result.cumulative_cost.months) - 1} months")]
    if isinstance(s.get("discount_rate"), int | float):
        facts.append(("Discount rate", f"{s['discount_rate'] * 100:g} %/year"))
    if isinstance(s.get("tax_rate"), int | float) and s["tax_rate"]:
        facts.append(("Tax rate", f"{s['tax_rate'] * 100:g} %"))
    buy, rent = s.get("buy") or {}, s.get("rent") or {}
    gpu = buy.get("gpu")
    gpu_name = gpu.get("name") if isinstance(gpu, Mapping) else gpu
    if gpu_name:
        facts.append(("Buy", f"{buy.get('gpu_count', '?')} × {gpu_name}"))
    inst = rent.get("instance")
    inst_name = inst.get("name") if isinstance(inst, Mapping) else inst
    if inst_name:
        pricing = rent.get("pricing")
        facts.append(("Rent", f"{inst_name}" + (f" ({pricing})" if pricing else "")))
    return facts


def report_context(result: Result, images: Mapping[str, str]) -> dict[str, Any]:
    """Everything the HTML and Markdown templates show; ``images`` maps chart name -> URI."""
    return {
        "name": scenario_name(result),
        "description": result.scenario.get("description") or "",
        "facts": _facts(result),
        "horizon": f"{len(result.cumulative_cost.months) - 1} months",
        "verdict": result.verdict,
        "key_figures": key_figures_table(result),
        "breakeven_p50": fmt_utilisation(result.breakeven_utilisation.p50),
        "cumulative_u": fmt_utilisation(result.cumulative_cost.utilisation, none="?"),
        "warnings": warning_rows(result),
        "images": dict(images),
        "per_utilisation": per_utilisation_table(result),
        "drivers": sensitivity_table(result),
        "drivers_u": fmt_utilisation(result.sensitivity.utilisation, none="?"),
        "assumptions": assumption_rows(result),
        "reproducibility": reproducibility(result),
    }
