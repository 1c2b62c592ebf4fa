"""What a result must hold before it can be rendered (DESIGN sec 5 plus the team additions).

Only the keys are checked here; values are the engine's business. Lists that the contract aligns
with ``utilisation`` must have its length, so every report row is complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ReportError", "check_result"]

_STATS = ("mean", "p10", "p50", "p90")
_BANDS = ("p10", "p50", "p90")

# key path -> required sub-keys (None: a leaf of any type)
_REQUIRED: dict[str, tuple[str, ...] | None] = {
    "schema_version": None,
    "scenario": None,
    "seed": None,
    "samples": None,
    "method": None,
    "catalog": ("version", "as_of"),
    "utilisation": None,
    "buy_tco": _STATS,
    "rent_tco": _STATS,
    "prob_buy_cheaper": None,
    "breakeven_utilisation": (*_STATS, "prob_always", "prob_never"),
    "payback_months": (*_BANDS, "prob_never"),
    "cost_per_reference_gpu_hour": ("buy", "rent"),
    "warnings": None,
    "verdict": None,
    "cumulative_cost": ("utilisation", "months", "buy", "rent"),
    "assumptions": None,
}

# lists that must be as long as result["utilisation"]
_ALIGNED = (
    *(("buy_tco", s) for s in _STATS),
    *(("rent_tco", s) for s in _STATS),
    ("prob_buy_cheaper",),
    *(("payback_months", s) for s in (*_BANDS, "prob_never")),
    *(("cost_per_reference_gpu_hour", side, s) for side in ("buy", "rent") for s in _BANDS),
)


class ReportError(ValueError):
    """A report cannot be produced: unknown format or a result that breaks the contract."""


def _get(result: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = result
    for key in path:
        node = node[key]
    return node


def check_result(result: Any) -> None:
    """Raise :class:`ReportError` naming every missing or misaligned key of ``result``."""
    if not isinstance(result, Mapping):
        raise ReportError(f"a result must be a mapping, not {type(result).__name__}")
    missing: list[str] = []
    for key, subkeys in _REQUIRED.items():
        if key not in result:
            missing.append(key)
        elif subkeys is not None:
            node = result[key]
            if not isinstance(node, Mapping):
                missing.extend(f"{key}.{sub}" for sub in subkeys)
            else:
                missing.extend(f"{key}.{sub}" for sub in subkeys if sub not in node)
    for side in ("buy", "rent"):
        for parent in ("cost_per_reference_gpu_hour", "cumulative_cost"):
            node = result.get(parent)
            if isinstance(node, Mapping) and side in node:
                sub = node[side] if isinstance(node[side], Mapping) else {}
                missing.extend(f"{parent}.{side}.{s}" for s in _BANDS if s not in sub)
    if missing:
        raise ReportError("result is missing required keys: " + ", ".join(missing))

    n = len(result["utilisation"])
    bad = [".".join(p) for p in _ALIGNED if len(_get(result, p)) != n]
    cum = result["cumulative_cost"]
    m = len(cum["months"])
    bad += [
        f"cumulative_cost.{side}.{s}"
        for side in ("buy", "rent")
        for s in _BANDS
        if len(cum[side][s]) != m
    ]
    if bad:
        raise ReportError(
            "result lists not aligned with utilisation (or cumulative_cost.months): "
            + ", ".join(bad)
        )
