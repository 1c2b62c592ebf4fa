"""Each side's carbon inputs resolved once, from the document or the carbon catalogs: a
scenario's ``buy``, ``rent`` and ``api`` (:func:`emitting`), a plan's ``own``, ``reserve``,
``burst`` and ``burst.api`` (:func:`plan_emitting`), each at its own key paths.

The owned build's grid is a catalog grid id, a number or a distribution (default: the United
States average, as the electricity price's default is); its embodied carbon is (N + spares) x
the GPU's figure + the platform tier's. A catalog instance takes its region's grid and PUE
(``cloud_regions.csv``), a power of n x TDP + the tier's platform power and an embodied share
of n x the GPU's figure + n/8 of the 8-GPU server's (EcoLogits' allocation of a cloud host to
the GPUs in use). An API's emissions are known only where the document gives them. Every value
goes into the assumptions with where it came from; errors name the key path. A plan's server
has no spares of its own (the fleet pools them): each pooled spare is the GPU's figure, an
assumption of its own (``own.spare_gpu_kg_co2e``) when the plan pools spares.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from costmodel.distributions import Distribution, Fixed
from costmodel.inputs import (
    CarbonInputs,
    HostedCarbon,
    InputError,
    OwnedCarbon,
    PlanCarbon,
    RentedCarbon,
    input_fields,
)
from costmodel.result import Advice, Assumption, Origin
from pricing import GPU, Catalog, CatalogError, PlatformTier
from pricing.carbon import Embodied

from .distspec import to_spec
from .errors import ScenarioError
from .sides import Hosted, Owned, Rented

__all__ = [
    "DEFAULT_GRID",
    "GENERIC_GPU_KG",
    "INLINE_PUE",
    "Emitting",
    "emitting",
    "plan_emitting",
    "side_carbon",
]

#: The owned build's grid, and an inline instance's, when the document names none: the US
#: average, like the default electricity price.
DEFAULT_GRID = "US"
#: Embodied carbon of an inline GPU [kg CO2e]: Cloud Carbon Footprint's figure per GPU card.
GENERIC_GPU_KG = 150.0
#: PUE of an inline instance [-]: the public-cloud average (IDC, January 2025).
INLINE_PUE = 1.25


@dataclass(frozen=True)
class Emitting:
    """The carbon inputs of a scenario or a plan, each side's carbon keys as filled in
    (``blocks``, by block path, for the resolved document), their assumptions and the advice
    about them."""

    inputs: CarbonInputs | PlanCarbon
    blocks: dict[str, dict[str, Any]]
    assumptions: tuple[Assumption, ...]
    advice: tuple[Advice, ...]


@dataclass
class _Block:
    """One block's carbon keys being filled: given or defaulted, each with its assumption."""

    path: str
    block: Mapping[str, Any]
    cls: type
    catalog: Catalog
    values: dict[str, Distribution]
    filled: dict[str, Any]
    notes: list[Assumption]
    problems: list[dict]
    source: str  # what a given value's origin says: "scenario" or "plan"

    def take(
        self, key: str, default: Callable[[], tuple[Any, str]], kind: Origin = Origin.CATALOG
    ) -> None:
        """``key`` as the block gives it, else ``default()``: (value or grid id, origin);
        a grid id resolves to its intensity, a catalog gap is a problem at the key."""
        given = self.block.get(key)
        where = f"{self.path}.{key}"
        try:
            value, origin = (given, self.source) if given is not None else default()
            number = self._grid(value) if isinstance(value, str) else value
        except CatalogError as exc:
            self.problems.append({"path": where, "message": f"{exc.problem}; give {where}"})
            return
        if isinstance(value, str):
            origin = f"{origin}: {_grid_text(self.catalog, value)}"
        dist = number if isinstance(number, Distribution) else Fixed(float(number))
        self.values[key] = dist
        self.filled[key] = value if isinstance(value, str) else dist
        kind = Origin.GIVEN if given is not None else kind
        unit = input_fields(self.cls)[key].metadata["unit"]
        self.notes.append(Assumption(where, to_spec(dist), unit, origin, kind))

    def _grid(self, grid_id: str) -> float:
        return self.catalog.grid(grid_id).g_co2e_per_kwh


def _field_default(cls: type, key: str) -> Callable[[], tuple[float, str]]:
    """The engine field's own default and the reason written with it."""
    f = input_fields(cls)[key]
    return lambda: (f.default.support()[0], f"default: {f.metadata['origin']}")


def _grid_text(catalog: Catalog, grid_id: str) -> str:
    g = catalog.grid(grid_id)
    est = ", estimated" if g.estimated else ""
    return f"grid {g.id}, {g.name} ({g.g_co2e_per_kwh:g} g/kWh, {g.year}, {g.basis}{est})"


def _gpu_kg(catalog: Catalog, gpu: GPU) -> tuple[float, str]:
    """Embodied carbon of one GPU [kg CO2e] and where it comes from."""
    if gpu.is_inline:
        return GENERIC_GPU_KG, f"inline GPU {gpu.name!r} at {GENERIC_GPU_KG:g} kg (estimated)"
    row = catalog.gpu_embodied(gpu.id)
    return row.kg_co2e, f"{gpu.id} at {row.kg_co2e:g} kg{_est(row)}"


def _est(row: Embodied) -> str:
    return " (estimated)" if row.estimated else ""


def _hosts(catalog: Catalog, n: int, gpu: GPU | None = None) -> tuple[int, PlatformTier, str]:
    """The platform tier of ``n`` GPUs (of ``gpu``'s form factor, when given): the smallest
    that holds them, else as many of the largest as it takes (count, tier, words)."""
    try:
        return 1, catalog.platform_tier(n, gpu), ""
    except CatalogError:
        largest = catalog.platform_tier(catalog.tier_counts[-1], gpu)
        count = -(-n // largest.gpu_count)
        return count, largest, f"{count} x "


def _block(path: str, block: Mapping[str, Any], cls: type, catalog: Catalog, source: str) -> _Block:
    return _Block(path, block, cls, catalog, {}, {}, [], [], source)


def _owned(o: Owned, catalog: Catalog, source: str = "scenario") -> _Block:
    b = _block(o.path, o.block, OwnedCarbon, catalog, source)
    b.take(
        "grid",
        lambda: (DEFAULT_GRID, "default: the US average, as for the electricity price"),
        Origin.DEFAULT,
    )
    b.take("grid_annual_change", _field_default(OwnedCarbon, "grid_annual_change"), Origin.DEFAULT)

    def embodied() -> tuple[float, str]:
        n = o.inputs.gpu_count + (o.block.get("spare_gpus") or 0)
        gpu, how = _gpu_kg(catalog, o.gpu)
        count, tier, times = _hosts(catalog, o.inputs.gpu_count, o.gpu)
        host = catalog.platform_embodied(tier.gpu_count)
        text = f"{n} x {how} + {times}platform tier {tier.name} {host.kg_co2e:g} kg{_est(host)}"
        return n * gpu + count * host.kg_co2e, f"catalog: {text}"

    b.take("embodied_kg_co2e", embodied)
    return b


def _rented(r: Rented, catalog: Catalog, source: str = "scenario") -> _Block:
    b = _block(r.path, r.block, RentedCarbon, catalog, source)
    offer, n = r.offer, r.offer.gpu_count
    region = catalog.region(catalog.instance(offer.id)) if offer.id else None
    where = f"{offer.id} in {region.provider} {region.region}" if region else ""
    if region is None:
        b.take(
            "grid",
            lambda: (DEFAULT_GRID, "default: an inline instance names no region"),
            Origin.DEFAULT,
        )
        b.take(
            "pue",
            lambda: (INLINE_PUE, "default: the public-cloud average (IDC, 2025)"),
            Origin.DEFAULT,
        )
    else:
        b.take("grid", lambda: (region.grid, f"catalog: {where}"))
        est = " (estimated)" if "pue" in region.estimated_fields else ""
        b.take("pue", lambda: (region.pue, f"catalog: the PUE of {where}{est}"))
    b.take("grid_annual_change", _field_default(RentedCarbon, "grid_annual_change"), Origin.DEFAULT)

    def power() -> tuple[float, str]:
        count, tier, times = _hosts(catalog, n)
        gpu = f"{offer.gpu.id} {offer.gpu.tdp_w:g} W TDP"
        text = f"{n} x {gpu} + {times}platform tier {tier.name} {tier.power_w:g} W"
        return (n * offer.gpu.tdp_w + count * tier.power_w) / 1000.0, f"catalog: {text}"

    def embodied() -> tuple[float, str]:
        gpu, how = _gpu_kg(catalog, offer.gpu)
        host = catalog.platform_embodied(8)
        text = f"{n} x {how} + {n}/8 of the 8-GPU server's {host.kg_co2e:g} kg{_est(host)}"
        return n * gpu + n / 8 * host.kg_co2e, f"catalog: {text}"

    b.take("power_kw", power)
    b.take("embodied_kg_co2e", embodied)
    return b


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


def _hosted(api: Hosted | None, source: str) -> tuple[HostedCarbon | None, list[Assumption]]:
    """The API's carbon inputs where the document gives them (else unknown: ``None``)."""
    if api is None or api.block.get("g_co2e_per_mtok") is None:
        return None, []
    hosted = _built(HostedCarbon, api.path, {"g_co2e_per_mtok": api.block["g_co2e_per_mtok"]})
    spec = to_spec(hosted.g_co2e_per_mtok)
    where = f"{api.path}.g_co2e_per_mtok"
    return hosted, [Assumption(where, spec, "[gCO2e/M tokens]", source)]


def _spare(catalog: Catalog, own: Owned) -> tuple[float, list[Assumption]]:
    """The embodied carbon of one pooled spare GPU [kg CO2e], the GPU's catalog figure, and its
    assumption when the plan pools spares (``own.spare_share`` above 0)."""
    kg, how = _gpu_kg(catalog, own.gpu)
    if not own.block.get("spare_share"):
        return kg, []
    unit = input_fields(PlanCarbon)["spare_gpu_kg_co2e"].metadata["unit"]
    text = f"catalog: {how} for each pooled spare GPU (own.embodied_kg_co2e is one server's)"
    return kg, [Assumption("own.spare_gpu_kg_co2e", kg, unit, text, Origin.CATALOG)]


def _built(cls: type, path: str, values: Mapping[str, Any]) -> Any:
    """``cls(**values)``; a value it rejects (a catalog default out of range) is named at the
    side's own key path ``path``."""
    try:
        return cls(**values)
    except InputError as exc:
        key = f"{path}.{exc.path.partition('.')[2]}"
        raise ScenarioError(None, [{"path": key, "message": exc.message}]) from None


def _resolved(blocks: list[_Block]) -> None:
    problems = [p for b in blocks for p in b.problems]
    if problems:
        raise ScenarioError(None, problems)


def _lives(block: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("usd_per_tonne", "service_life_years", "provider_service_life_years")
    return {k: block[k] for k in keys}


def emitting(data: Mapping[str, Any], catalog: Catalog, sides: tuple) -> Emitting:
    """The carbon inputs of a validated scenario whose sides ``(buy, rent, api)`` are
    resolved. Raises :class:`ScenarioError` at the key paths of unknown grid ids, missing
    catalog figures and values the engine rejects, all at once."""
    buy, rent, api = sides
    owned, rented = _owned(buy, catalog), _rented(rent, catalog)
    _resolved([owned, rented])
    block, notes = _priced(data.get("carbon") or {}, "scenario")
    hosted, api_notes = _hosted(api, "scenario")
    inputs = CarbonInputs(
        buy=_built(OwnedCarbon, "buy", owned.values),
        rent=_built(RentedCarbon, "rent", rented.values),
        api=hosted,
        **_lives(block),
    )
    return Emitting(
        inputs=inputs,
        blocks={"buy": owned.filled, "rent": rented.filled, "carbon": block},
        assumptions=(*owned.notes, *rented.notes, *notes, *api_notes),
        advice=_advice("api", api, hosted is not None, inputs.priced),
    )


def plan_emitting(
    data: Mapping[str, Any], catalog: Catalog, own: Owned, reserve: Rented | None, burst: Any
) -> Emitting:
    """The carbon inputs of a validated plan whose sides are resolved: the server ``own``, the
    ``reserve`` (``None`` without one) and the ``burst`` (:class:`Rented`, or
    :class:`Hosted` at ``burst.api``), at the plan's key paths; ``data["carbon"]`` is the
    plan's ``carbon`` block with its defaults. Raises as :func:`emitting`."""
    sides = [_owned(own, catalog, "plan")]
    if reserve is not None:
        sides.append(_rented(reserve, catalog, "plan"))
    api = burst if isinstance(burst, Hosted) else None
    if api is None:
        sides.append(_rented(burst, catalog, "plan"))
    _resolved(sides)
    block, notes = _priced(data["carbon"], "plan")
    hosted, api_notes = _hosted(api, "plan")
    spare, spare_notes = _spare(catalog, own)
    by_path = {b.path: _built(b.cls, b.path, b.values) for b in sides}
    inputs = _built(
        PlanCarbon,
        "carbon",
        {
            "own": by_path["own"],
            "reserve": by_path.get("reserve"),
            "burst": by_path.get("burst"),
            "api": hosted,
            "spare_gpu_kg_co2e": spare,
            **_lives(block),
        },
    )
    return Emitting(
        inputs=inputs,
        blocks={**{b.path: b.filled for b in sides}, "carbon": block},
        assumptions=(*(a for b in sides for a in b.notes), *spare_notes, *notes, *api_notes),
        advice=_advice("burst.api", api, hosted is not None, inputs.priced),
    )


def side_carbon(
    side: Owned | Rented, catalog: Catalog, grid: str | None = None
) -> OwnedCarbon | RentedCarbon:
    """One side's carbon inputs resolved alone, as :func:`emitting` resolves a scenario's: an
    owned build on ``grid`` (a catalog grid id, as if its block gave ``grid``; ``None``: its
    block's or the default), a rented instance on its region's grid and PUE. Raises
    :class:`ScenarioError` at the key paths of unknown grid ids, missing catalog figures and
    values the engine rejects."""
    if isinstance(side, Owned):
        if grid is not None:
            side = dataclasses.replace(side, block={**side.block, "grid": grid})
        b = _owned(side, catalog)
    else:
        b = _rented(side, catalog)
    _resolved([b])
    return _built(b.cls, b.path, b.values)
