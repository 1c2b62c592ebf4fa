"""Fleet plans (``kind: plan``): resolve a validated plan against a catalog, key and evaluate it.

A plan is three sides resolved once each (:mod:`scenarios.sides`) at its own key paths: the
owned server at ``own``, the reserved instances at ``reserve`` (optional) and the burst instances
at ``burst`` (for inference work, perhaps a hosted API at ``burst.api``). Every default and its
origin is kept under those paths (``own.pue``,
``burst.price_usd_per_hour``, ...) in ``assumptions``. A plan counts carbon when it gives a
``carbon`` block or any side's carbon key (``own.grid``, ``burst.pue``, ...): then every side's
carbon inputs are resolved with its cost inputs, as a scenario's are
(:mod:`scenarios.sidecarbon`); without, the plan and its result are as they were before plans
counted carbon.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from costmodel.distributions import Distribution
from costmodel.engine import Progress
from costmodel.inputs import Addition, Demand, InputError, PlanInputs, input_fields
from costmodel.plan_result import PlanResult
from costmodel.result import Assumption, CatalogRef, Origin
from costmodel.units import unit as unit_of
from present.answer import Answer
from present.prebuilt import prebuilt
from present.verdict import plan_verdict
from pricing import Catalog, CatalogError

from .advice import Question, advise, close_call_advice
from .distspec import to_spec
from .emissions import Emitting, plan_emitting
from .errors import ScenarioError
from .resolve import Plan, with_sampling
from .schema import CARBON_KEYS, BurstSchema, CarbonPriceSchema, PlanSchema, ReserveSchema
from .sides import Hosted, Rented, Training, Work, gathered, hosted, owned, rented, work
from .userprices import scaled

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
    "spare_share": "own.spare_share",
}
#: The inputs a plan's reserved and burst blocks hold (rent extras are not planned).
_RESERVE = frozenset(ReserveSchema._declared_fields)
_BURST = frozenset(BurstSchema._declared_fields)


def _named_gpu_hours(block: Mapping[str, Any], w: Work) -> tuple[Distribution, str] | None:
    """Hours of ``demand.gpu`` a month as reference GPU-hours (the GPU's catalog throughput
    times its hours), with how; None when the demand is not given so."""
    hours = block.get("gpu_hours_per_month")
    if hours is None or not isinstance(w, Training):
        return None
    try:
        thr = w.per_gpu(w.catalog.gpu(block["gpu"]))
    except CatalogError as exc:
        raise ScenarioError(None, [{"path": "demand.gpu", "message": exc.problem}]) from None
    how = (
        f"plan: demand.gpu_hours_per_month of {block['gpu']} x its {w.precision} throughput "
        f"{thr.value:.4g} relative to {w.reference.id} ({thr.how})"
    )
    return scaled(hours, thr.value), how


def _demand(data: Mapping[str, Any], w: Work) -> tuple[Demand, list[Assumption]]:
    """The demand block with its defaults (from the engine's fields) and their assumptions: the
    work in the workload's unit (hours of a named GPU become reference GPU-hours), then each
    other key given or defaulted."""
    values: dict[str, Distribution] = {}
    notes = []
    named = _named_gpu_hours(data["demand"], w)
    amount = unit_of(w.unit).demand
    for name, f in input_fields(Demand).items():
        given = data["demand"].get(name)
        if name == amount and named is not None:
            values[name], origin = named[0], (named[1], Origin.GIVEN)
        elif given is not None:
            values[name], origin = given, ("plan", Origin.GIVEN)
        elif f.default is None:
            continue
        else:
            values[name], origin = f.default, (f"default: {f.metadata['origin']}", Origin.DEFAULT)
        notes.append(
            Assumption(f"demand.{name}", to_spec(values[name]), f.metadata["unit"], *origin)
        )
    work = values.pop(amount, None)
    return Demand(unit=w.unit, work_per_month=work, **values), notes


def _burst(block: Mapping[str, Any], w: Work, carbon: str | None) -> Rented | Hosted:
    """The burst side: its instances, or the hosted API at ``burst.api`` (each with its
    carbon inputs when ``carbon``)."""
    if block.get("api") is not None:
        return hosted(block["api"], "burst.api", w, carbon)
    return rented(block, "burst", w, _BURST, carbon)


def _pool(own: Mapping[str, Any]) -> tuple[dict[str, float], list[Assumption]]:
    """The fleet's pooled spares when the ``own`` block gives them (left out: none, and no
    assumption, as for plans written before spares were pooled)."""
    share = own.get("spare_share")
    if share is None:
        return {}, []
    unit = input_fields(PlanInputs)["spare_share"].metadata["unit"]
    return {"spare_share": share}, [Assumption("own.spare_share", share, unit, "plan")]


def _addition(own: Mapping[str, Any]) -> tuple[Addition | None, list[Assumption], dict]:
    """The later purchase of ``own.add`` with its defaults, their assumptions and the block
    filled in; ``None`` (and nothing) when the plan buys every server at month 0."""
    block = own.get("add")
    if block is None:
        return None, [], {}
    meta = input_fields(Addition)
    filled, notes = dict(block), []
    for name in ("lead_time_months", "price_annual_change"):
        f = meta[name]
        if block.get(name) is not None:
            origin = ("plan", Origin.GIVEN)
        else:
            filled[name] = f.default
            origin = (f"default: {f.metadata['origin']}", Origin.DEFAULT)
        value = filled[name]
        value = to_spec(value) if isinstance(value, Distribution) else value
        notes.append(Assumption(f"own.add.{name}", value, f.metadata["unit"], *origin))
    add = Addition(
        servers=(block["servers"]["min"], block["servers"]["max"]),
        when_demand_above=tuple(block.get("when_demand_above") or ()),
        at_month=tuple(block.get("at_month") or ()),
        lead_time_months=filled["lead_time_months"],
        price_annual_change=filled["price_annual_change"],
    )
    return add, notes, {"add": filled}


def _counts(block: Mapping[str, Any] | None, key: str) -> tuple[int, int]:
    return (block[key]["min"], block[key]["max"]) if block else (0, 0)


def _counts_carbon(data: Mapping[str, Any]) -> bool:
    """Whether the plan gives a ``carbon`` block or any side's carbon key."""
    burst = data["burst"]
    blocks = [(data["own"], CARBON_KEYS["buy"]), (data["reserve"] or {}, CARBON_KEYS["rent"])]
    blocks.append(
        (burst["api"], CARBON_KEYS["api"]) if burst.get("api") else (burst, CARBON_KEYS["rent"])
    )
    given = any(block.get(key) is not None for block, keys in blocks for key in keys)
    return given or data.get("carbon") is not None


def _emitting(
    data: Mapping[str, Any], catalog: Catalog, own: Any, reserve: Any, burst: Any
) -> Emitting | None:
    """The plan's carbon inputs, its ``carbon`` block's defaults filled in; ``None`` for a
    plan that counts no carbon."""
    if not _counts_carbon(data):
        return None
    block = data.get("carbon") or prebuilt(CarbonPriceSchema).load({})
    return plan_emitting({**data, "carbon": block}, catalog, own, reserve or None, burst)


def _blocks(own: Any, reserve: Any, burst: Any, emit: Emitting | None) -> dict[str, Any]:
    """The plan's side blocks with every default filled in, the carbon keys among them."""
    filled = {} if emit is None else emit.blocks
    blocks = {
        "own": {**own.block, **filled.get("own", {})},
        "reserve": {**reserve.block, **filled.get("reserve", {})} if reserve else None,
    }
    if isinstance(burst, Hosted):
        blocks["burst"] = {"api": burst.block}
    else:
        blocks["burst"] = {**burst.block, **filled.get("burst", {})}
    return blocks if emit is None else {**blocks, "carbon": filled["carbon"]}


def resolve_plan(data: Mapping[str, Any], source: str, catalog: Catalog) -> Plan:
    """Fill catalog defaults into a schema-validated plan and build the engine inputs.

    Raises :class:`ScenarioError` naming the plan's key paths for unknown catalog ids, missing
    catalog figures (a burst at spot pricing on an instance without a spot price) and inputs the
    engine rejects; every side's problems are reported together.
    """
    try:
        (w,) = gathered(lambda: work(data["workload"], catalog))
        carbon = "plan" if _counts_carbon(data) else None
        own, reserve, burst = gathered(
            lambda: owned(data["own"], "own", w, carbon),
            lambda: data["reserve"] and rented(data["reserve"], "reserve", w, _RESERVE, carbon),
            lambda: _burst(data["burst"], w, carbon),
        )
        emit = _emitting(data, catalog, own, reserve, burst)
        demand, notes = _demand(data, w)
        pool, pool_notes = _pool(data["own"])
        add, add_notes, add_block = _addition(data["own"])
        sim = data["simulation"]
        inputs = PlanInputs(
            horizon_months=data["horizon_months"],
            demand=demand,
            own=own.inputs,
            burst=burst.inputs,
            servers=_counts(data["own"], "servers"),
            reserve=reserve.inputs if reserve else None,
            instances=_counts(data["reserve"], "instances"),
            discount_rate=data["discount_rate"],
            tax_rate=data["tax_rate"],
            samples=sim["samples"],
            seed=sim["seed"],
            method=sim["method"],
            correlations=tuple(tuple(x) for x in data["correlations"]),
            objective=data["objective"],
            carbon=emit and emit.inputs,
            add=add,
            **pool,
        )
    except ScenarioError as exc:
        raise ScenarioError(source, exc.errors) from None
    except InputError as exc:
        path = _PLAN_PATH.get(exc.path, exc.path)
        raise ScenarioError(source, [{"path": path, "message": exc.message}]) from None
    sides = (own, reserve, burst) if reserve else (own, burst)
    assumptions = notes + [*own.assumptions, *pool_notes, *add_notes]
    assumptions += [a for side in (burst, reserve) if side for a in side.assumptions]
    assumptions += emit.assumptions if emit else ()
    blocks = _blocks(own, reserve, burst, emit)
    blocks["own"] |= add_block
    document = prebuilt(PlanSchema).dump({**data, "demand": demand.document(), **blocks})
    warnings = advise(Question(inputs.horizon_months, w, sides)) + (emit.advice if emit else ())
    return Plan(source, inputs, document, tuple(assumptions), warnings, catalog)


def _burst_words(inputs: PlanInputs) -> str:
    """How the verdict names the burst: by its pricing, or the API."""
    return "api" if inputs.burst_side == "burst.api" else inputs.burst.pricing


def evaluate_plan(
    plan: Plan,
    *,
    samples: int | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
) -> Answer[PlanResult]:
    """Evaluate every candidate of ``plan``; ``samples`` and ``seed`` override its
    ``simulation`` block and ``progress``, when given, is told the share of the draws done,
    from 0 to 1 (see :func:`~costmodel.fleet.simulate_plan`). The answer carries the plan's
    result with its document, catalog, warnings, assumptions and verdict."""
    changes = {k: v for k, v in (("samples", samples), ("seed", seed)) if v is not None}
    inputs = dataclasses.replace(plan.inputs, **changes) if changes else plan.inputs
    # imported here: a scenario's run needs no fleet engine, and every run imports this module
    from costmodel.fleet import run_plan

    result = run_plan(inputs, progress)
    document = with_sampling(plan.document, inputs.samples, inputs.seed)
    reserve = (inputs.instances[1], "reserve.instances.max") if inputs.reserve else None
    edges = ((inputs.servers[1], "own.servers.max"), reserve)
    return Answer(
        result,
        verdict=plan_verdict(result, _burst_words(inputs), edges),
        document=document,
        catalog=CatalogRef(plan.catalog.version, plan.catalog.as_of),
        warnings=plan.warnings
        + close_call_advice(
            result.precision, inputs.samples, getattr(result.best.cost, result.objective)
        ),
        assumptions=plan.assumptions,
    )
