"""Fleet plans (``kind: plan``): resolve a validated plan against a catalog, key and evaluate it.

A plan's ``own`` block is a scenario's ``buy`` (per server), ``reserve`` and ``burst`` are
scenario ``rent`` blocks, so each is resolved by the scenario resolver: ``own`` with ``burst``,
and ``own`` with ``reserve``. Every default and its origin is kept under the plan's own key
paths (``own.pue``, ``burst.price_usd_per_hour``, ...) in ``assumptions``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from costmodel.distributions import Distribution, Fixed
from costmodel.fleet import saving, simulate_plan, summarise_plan
from costmodel.inputs import Demand, InputError, PlanInputs, input_fields
from costmodel.plan_result import PlanResult
from costmodel.present.verdict import plan_verdict
from costmodel.result import Advice, Assumption, CatalogRef
from pricing import Catalog

from .advice import advise
from .distspec import to_spec
from .errors import ScenarioError
from .resolve import Keyed, Resolved, resolve, with_sampling
from .schema import BurstSchema, ReserveSchema

__all__ = ["Plan", "evaluate_plan", "resolve_plan"]

#: Engine input names that differ from the plan's key paths.
_PLAN_PATH = {
    "samples": "simulation.samples",
    "seed": "simulation.seed",
    "method": "simulation.method",
    "servers.min": "own.servers.min",
    "servers.max": "own.servers.max",
    "servers": "own.servers",
    "instances.min": "reserve.instances.min",
    "instances.max": "reserve.instances.max",
    "instances": "reserve.instances",
}


@dataclass(frozen=True)
class Plan(Keyed):
    """A validated plan resolved against a catalog, ready to evaluate.

    ``document`` is the plan with every default filled in (itself a valid plan).
    """

    source: str
    inputs: PlanInputs
    document: dict[str, Any]
    assumptions: tuple[Assumption, ...]
    warnings: tuple[Advice, ...]
    catalog: Catalog

    @property
    def name(self) -> str:
        return self.document["name"]

    @property
    def samples(self) -> int:
        return self.inputs.samples

    @property
    def seed(self) -> int:
        return self.inputs.seed

    def max_draws(self, samples: int | None = None) -> int:
        """The most draws an evaluation makes [draw]: ``samples``, else the plan's (a plan does
        not double its draws toward a target)."""
        return samples or self.samples


def _renamed(path: str, sides: Mapping[str, str]) -> str:
    head, _, rest = path.partition(".")
    return f"{sides[head]}.{rest}" if head in sides and rest else sides.get(path, path)


def _as_scenario(data: Mapping[str, Any], rent: Mapping[str, Any]) -> dict[str, Any]:
    """The rent-versus-buy scenario of ``own`` against one rented block of the plan."""
    buy = {k: v for k, v in data["own"].items() if k != "servers"}
    rented = {k: v for k, v in rent.items() if k != "instances"}
    return {
        "version": 1,
        "name": data["name"],
        "description": "",
        "horizon_months": data["horizon_months"],
        "discount_rate": data["discount_rate"],
        "tax_rate": data["tax_rate"],
        "utilisation": [1.0],
        "report_utilisation": None,
        "simulation": data["simulation"],
        "workload": data["workload"],
        "buy": buy,
        "rent": {"committed_instances": None, **rented},
        "correlations": [],
    }


def _resolve_side(
    data: Mapping[str, Any], side: str, catalog: Catalog
) -> tuple[Resolved, tuple[Advice, ...]]:
    sides = {"buy": "own", "rent": side}
    try:
        resolved = resolve(_as_scenario(data, data[side]), "", catalog)
    except ScenarioError as exc:
        errors = [{**e, "path": _renamed(e["path"], sides)} for e in exc.errors]
        raise ScenarioError(None, errors) from None
    return resolved, advise(resolved)


def _assumptions(resolved: Resolved, sides: Mapping[str, str], rent: type) -> list[Assumption]:
    """The resolved inputs of the plan's blocks under their plan key paths; of the rented
    block only the keys that ``rent`` (the reserve or burst schema) declares."""
    out = []
    for a in resolved.assumptions:
        side, name = a.key.split(".")
        if side in sides and (side == "buy" or name in rent._declared_fields):
            out.append(dataclasses.replace(a, key=_renamed(a.key, sides)))
    return out


def _demand(data: Mapping[str, Any]) -> tuple[Demand, list[Assumption]]:
    given = data["demand"]
    growth = given["annual_growth"]
    values: dict[str, Distribution] = {
        "reference_gpu_hours_per_month": given["reference_gpu_hours_per_month"],
        "annual_growth": growth if growth is not None else Fixed(0.0),
    }
    units = {name: f.metadata["unit"] for name, f in input_fields(Demand).items()}
    origins = {"annual_growth": "plan" if growth is not None else "default: no growth"}
    notes = [
        Assumption(f"demand.{k}", to_spec(v), units[k], origins.get(k, "plan"))
        for k, v in values.items()
    ]
    return Demand(**values), notes


def _kept(document: Mapping[str, Any], schema: type) -> dict[str, Any]:
    """The keys of a resolved ``rent`` block that ``schema`` (reserve or burst) declares."""
    return {k: document[k] for k in schema._declared_fields if k in document}


def resolve_plan(data: Mapping[str, Any], source: str, catalog: Catalog) -> Plan:
    """Fill catalog defaults into a schema-validated plan and build the engine inputs.

    Raises :class:`ScenarioError` naming the plan's key paths for unknown catalog ids, missing
    catalog figures (a burst at spot pricing on an instance without a spot price) and inputs the
    engine rejects.
    """
    try:
        burst, advice = _resolve_side(data, "burst", catalog)
        reserve = _resolve_side(data, "reserve", catalog) if data["reserve"] else None
        demand, notes = _demand(data)
        sim = data["simulation"]
        inputs = PlanInputs(
            horizon_months=data["horizon_months"],
            demand=demand,
            own=burst.inputs.buy,
            burst=burst.inputs.rent,
            servers=(data["own"]["servers"]["min"], data["own"]["servers"]["max"]),
            reserve=reserve[0].inputs.rent if reserve else None,
            instances=(
                (data["reserve"]["instances"]["min"], data["reserve"]["instances"]["max"])
                if reserve
                else (0, 0)
            ),
            discount_rate=data["discount_rate"],
            tax_rate=data["tax_rate"],
            samples=sim["samples"],
            seed=sim["seed"],
            method=sim["method"],
            correlations=tuple(tuple(x) for x in data["correlations"]),
            objective=data["objective"],
        )
    except ScenarioError as exc:
        raise ScenarioError(source, exc.errors) from None
    except InputError as exc:
        path = _PLAN_PATH.get(exc.path, exc.path)
        raise ScenarioError(source, [{"path": path, "message": exc.message}]) from None
    assumptions = notes + _assumptions(burst, {"buy": "own", "rent": "burst"}, BurstSchema)
    warnings = list(advice)
    document = {
        **{k: data[k] for k in ("version", "kind", "name", "description")},
        **{k: burst.scenario[k] for k in ("horizon_months", "discount_rate", "tax_rate")},
        "simulation": burst.scenario["simulation"],
        "workload": burst.scenario["workload"],
        "demand": {k: to_spec(getattr(demand, k)) for k in input_fields(Demand)},
        "own": {**burst.scenario["buy"], "servers": dict(data["own"]["servers"])},
        "reserve": None,
        "burst": _kept(burst.scenario["rent"], BurstSchema),
        "objective": data["objective"],
        "correlations": [list(c) for c in data["correlations"]],
    }
    if reserve:
        resolved, more = reserve
        assumptions += _assumptions(resolved, {"rent": "reserve"}, ReserveSchema)
        warnings += [w for w in more if w not in warnings]
        document["reserve"] = {
            **_kept(resolved.scenario["rent"], ReserveSchema),
            "instances": dict(data["reserve"]["instances"]),
        }
    return Plan(source, inputs, document, tuple(assumptions), tuple(warnings), catalog)


def evaluate_plan(plan: Plan, *, samples: int | None = None, seed: int | None = None) -> PlanResult:
    """Evaluate every candidate of ``plan``; ``samples`` and ``seed`` override its
    ``simulation`` block."""
    changes = {k: v for k, v in (("samples", samples), ("seed", seed)) if v is not None}
    inputs = dataclasses.replace(plan.inputs, **changes) if changes else plan.inputs
    sim = simulate_plan(inputs)
    result = summarise_plan(sim)
    document = with_sampling(plan.document, inputs.samples, inputs.seed)
    reserve = (inputs.instances[1], "reserve.instances.max") if inputs.reserve else None
    edges = ((inputs.servers[1], "own.servers.max"), reserve)
    return dataclasses.replace(
        result,
        verdict=plan_verdict(result, saving(sim, result.best), inputs.burst.pricing, edges),
        scenario=document,
        catalog=CatalogRef(plan.catalog.version, plan.catalog.as_of),
        warnings=plan.warnings,
        assumptions=plan.assumptions,
    )
