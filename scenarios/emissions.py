"""The carbon inputs of a scenario (:func:`emitting`) or a plan (:func:`plan_emitting`), put
together from its sides', which are resolved with their cost inputs in one pass
(:mod:`scenarios.sidecarbon`), and the question's ``carbon`` block (a price, service lives).

An API's emissions are known only where the document gives them. Every value goes into the
assumptions with where it came from; errors name the key path. A plan's server has no spares
of its own (the fleet pools them): each pooled spare is the GPU's figure, an assumption of its
own (``own.spare_gpu_kg_co2e``) when the plan pools spares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from costmodel.distributions import Fixed
from costmodel.inputs import (
    CarbonInputs,
    HostedCarbon,
    OwnedCarbon,
    PlanCarbon,
    RentedCarbon,
    input_fields,
)
from costmodel.result import Advice, Assumption, Origin
from pricing import Catalog

from .distspec import to_spec
from .sidecarbon import gpu_kg, owned_carbon, rented_carbon
from .sides import Hosted, Owned, Rented
from .sources import built

__all__ = [
    "Emitting",
    "emitting",
    "plan_emitting",
    "side_carbon",
]


@dataclass(frozen=True)
class Emitting:
    """The carbon inputs of a scenario or a plan, each side's carbon keys as filled in
    (``blocks``, by block path, for the resolved document), their assumptions and the advice
    about them."""

    inputs: CarbonInputs | PlanCarbon
    blocks: dict[str, dict[str, Any]]
    assumptions: tuple[Assumption, ...]
    advice: tuple[Advice, ...]


def _priced(block: Mapping[str, Any], source: str) -> tuple[dict[str, Any], list[Assumption]]:
    """The ``carbon`` block with its price filled in, and the price's assumption."""
    block = dict(block)
    given = block.get("usd_per_tonne") is not None
    price = block["usd_per_tonne"] if given else Fixed(0.0)
    block["usd_per_tonne"] = price
    where = source if given else "default: no carbon price"
    origin = Origin.GIVEN if given else Origin.DEFAULT
    return block, [
        Assumption("carbon.usd_per_tonne", to_spec(price), "[USD/t CO2e]", where, origin)
    ]


def _advice(path: str, api: Hosted | None, known: bool, priced: bool) -> tuple[Advice, ...]:
    if api is None or known:
        return ()
    message = f"the API's emissions are unknown: give {path}.g_co2e_per_mtok to count them"
    if priced:
        message += "; until then the carbon price is not added to the API's cost"
    return (Advice("api_carbon_unknown", "warning" if priced else "info", message, path),)


def _hosted(api: Hosted | None) -> tuple[HostedCarbon | None, tuple[Assumption, ...]]:
    """The API's carbon inputs where the document gives them (else unknown: ``None``)."""
    if api is None or api.carbon is None:
        return None, ()
    return api.carbon.inputs, api.carbon.assumptions


def _spare(catalog: Catalog, own: Owned) -> tuple[float, list[Assumption]]:
    """The embodied carbon of one pooled spare GPU [kg CO2e], the GPU's catalog figure, and its
    assumption when the plan pools spares (``own.spare_share`` above 0)."""
    kg, how = gpu_kg(catalog, own.gpu)
    if not own.block.get("spare_share"):
        return kg, []
    unit = input_fields(PlanCarbon)["spare_gpu_kg_co2e"].metadata["unit"]
    text = f"catalog: {how} for each pooled spare GPU (own.embodied_kg_co2e is one server's)"
    return kg, [Assumption("own.spare_gpu_kg_co2e", kg, unit, text, Origin.CATALOG)]


def _lives(block: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("usd_per_tonne", "service_life_years", "provider_service_life_years")
    return {k: block[k] for k in keys}


def emitting(data: Mapping[str, Any], sides: tuple) -> Emitting:
    """The carbon inputs of a validated scenario whose sides ``(buy, rent, api)`` are
    resolved with their carbon inputs (:func:`scenarios.sides.owned` with ``carbon``).
    Raises :class:`ScenarioError` at the key paths of values the engine rejects."""
    buy, rent, api = sides
    block, notes = _priced(data.get("carbon") or {}, "scenario")
    hosted, api_notes = _hosted(api)
    own, rented = buy.carbon, rent.carbon
    inputs = CarbonInputs(buy=own.inputs, rent=rented.inputs, api=hosted, **_lives(block))
    return Emitting(
        inputs=inputs,
        blocks={"buy": own.block, "rent": rented.block, "carbon": block},
        assumptions=(*own.assumptions, *rented.assumptions, *notes, *api_notes),
        advice=_advice("api", api, hosted is not None, inputs.priced),
    )


def plan_emitting(
    data: Mapping[str, Any], catalog: Catalog, own: Owned, reserve: Rented | None, burst: Any
) -> Emitting:
    """The carbon inputs of a validated plan whose sides are resolved with their carbon
    inputs: the server ``own``, the ``reserve`` (``None`` without one) and the ``burst``
    (:class:`Rented`, or :class:`Hosted` at ``burst.api``), at the plan's key paths;
    ``data["carbon"]`` is the plan's ``carbon`` block with its defaults. Raises as
    :func:`emitting`."""
    api = burst if isinstance(burst, Hosted) else None
    sides = [s for s in (own, reserve, None if api else burst) if s is not None]
    block, notes = _priced(data["carbon"], "plan")
    hosted, api_notes = _hosted(api)
    spare, spare_notes = _spare(catalog, own)
    by_path = {s.path: s.carbon.inputs for s in sides}
    inputs = built(
        PlanCarbon,
        "carbon",
        {},
        own=by_path["own"],
        reserve=by_path.get("reserve"),
        burst=by_path.get("burst"),
        api=hosted,
        spare_gpu_kg_co2e=spare,
        **_lives(block),
    )
    side_notes = (a for s in sides for a in s.carbon.assumptions)
    return Emitting(
        inputs=inputs,
        blocks={**{s.path: s.carbon.block for s in sides}, "carbon": block},
        assumptions=(*side_notes, *spare_notes, *notes, *api_notes),
        advice=_advice("burst.api", api, hosted is not None, inputs.priced),
    )


def side_carbon(
    side: Owned | Rented, catalog: Catalog, grid: str | None = None
) -> OwnedCarbon | RentedCarbon:
    """One side's carbon inputs resolved alone, as a scenario's are: an owned build on ``grid``
    (a catalog grid id, as if its block gave ``grid``; ``None``: its block's or the default),
    a rented instance on its region's grid and PUE. Raises :class:`ScenarioError` at the key
    paths of unknown grid ids, missing catalog figures and values the engine rejects."""
    if isinstance(side, Owned):
        block = side.block if grid is None else {**side.block, "grid": grid}
        return owned_carbon(block, side.path, side.gpu, catalog).inputs
    offer = side.offer
    return rented_carbon(
        side.block, side.path, offer.id, offer.gpu, offer.gpu_count, catalog
    ).inputs
