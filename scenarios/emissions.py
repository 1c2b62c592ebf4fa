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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from costmodel.distributions import Distribution, Fixed
from costmodel.inputs import (
    CarbonInputs,
    HostedCarbon,
    OwnedCarbon,
    PlanCarbon,
    RentedCarbon,
    input_fields,
)
from costmodel.result import Advice, Assumption, Origin
from pricing import GPU, Catalog, CatalogError, PlatformTier
from pricing.carbon import CloudRegion, Embodied

from .distspec import to_spec
from .errors import ScenarioError
from .sides import Hosted, Owned, Rented, Source, built, field_defaults

__all__ = [
    "DEFAULT_GRID",
    "OWNED_CARBON",
    "RENTED_CARBON",
    "Emitting",
    "emitting",
    "plan_emitting",
    "side_carbon",
]

#: The owned build's grid, and an inline instance's, when the document names none: the US
#: average, like the default electricity price.
DEFAULT_GRID = "US"
#: Embodied carbon of an inline GPU [kg CO2e]: Cloud Carbon Footprint's figure per GPU card.
_GENERIC_GPU_KG = 150.0


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
class _Site:
    """What the default of a left-out carbon input of one side may depend on: the catalog, the
    GPU and how many (``gpus``, with ``spares`` more for embodied carbon), the instance's
    region (``None`` for an owned build or an inline instance) and the words each default's
    value left for its origin (``texts``)."""

    catalog: Catalog
    gpu: GPU
    gpus: int
    spares: int = 0
    instance: str = ""
    region: CloudRegion | None = None
    texts: dict[str, str] = field(default_factory=dict)

    def labels(self) -> dict[str, str]:
        """Values of the placeholders of the carbon rows' origin templates."""
        r = self.region
        where = f"{self.instance} in {r.provider} {r.region}" if r else ""
        pue = " (estimated)" if r and "pue" in r.estimated_fields else ""
        return {**self.texts, "where": where, "pue_note": pue}

    def gpu_kg(self) -> float:
        """Embodied carbon of one GPU [kg CO2e] (its words in ``texts["gpu_kg"]``)."""
        gpu = self.gpu
        if gpu.is_inline:
            self.texts["gpu_kg"] = f"inline GPU {gpu.name!r} at {_GENERIC_GPU_KG:g} kg (estimated)"
            return _GENERIC_GPU_KG
        row = self.catalog.gpu_embodied(gpu.id)
        self.texts["gpu_kg"] = f"{gpu.id} at {row.kg_co2e:g} kg{_est(row)}"
        return row.kg_co2e

    def hosts(self, gpu: GPU | None = None) -> tuple[int, PlatformTier, str]:
        """The platform tier of the side's GPUs (of ``gpu``'s form factor, when given): the
        smallest that holds them, else as many of the largest as it takes (count, tier, words)."""
        try:
            return 1, self.catalog.platform_tier(self.gpus, gpu), ""
        except CatalogError:
            largest = self.catalog.platform_tier(self.catalog.tier_counts[-1], gpu)
            count = -(-self.gpus // largest.gpu_count)
            return count, largest, f"{count} x "

    def owned_embodied(self) -> float:
        """(N + spares) x the GPU's figure + the platform tier's [kg CO2e]."""
        n, gpu = self.gpus + self.spares, self.gpu_kg()
        count, tier, times = self.hosts(self.gpu)
        host = self.catalog.platform_embodied(tier.gpu_count)
        self.texts["embodied"] = (
            f"{n} x {self.texts['gpu_kg']} + {times}platform tier {tier.name} "
            f"{host.kg_co2e:g} kg{_est(host)}"
        )
        return n * gpu + count * host.kg_co2e

    def rented_power(self) -> float:
        """n x TDP + the tier's platform power [kW]."""
        n, (count, tier, times) = self.gpus, self.hosts()
        gpu = f"{self.gpu.id} {self.gpu.tdp_w:g} W TDP"
        self.texts["power"] = f"{n} x {gpu} + {times}platform tier {tier.name} {tier.power_w:g} W"
        return (n * self.gpu.tdp_w + count * tier.power_w) / 1000.0

    def rented_embodied(self) -> float:
        """n x the GPU's figure + n/8 of the 8-GPU server's [kg CO2e]."""
        n, gpu = self.gpus, self.gpu_kg()
        host = self.catalog.platform_embodied(8)
        self.texts["embodied"] = (
            f"{n} x {self.texts['gpu_kg']} + {n}/8 of the 8-GPU server's "
            f"{host.kg_co2e:g} kg{_est(host)}"
        )
        return n * gpu + n / 8 * host.kg_co2e


def _inline(c: _Site) -> bool:
    return c.region is None


def _regional(c: _Site) -> bool:
    return c.region is not None


#: Every carbon input an owned block may leave out, in the order of the result's assumptions.
OWNED_CARBON: tuple[Source, ...] = (
    Source(
        "grid",
        lambda c: DEFAULT_GRID,
        "default: the US average, as for the electricity price",
        kind=Origin.DEFAULT,
    ),
    *field_defaults(OwnedCarbon),
    Source("embodied_kg_co2e", _Site.owned_embodied, "catalog: {embodied}"),
)

#: Every carbon input a rented block may leave out, in the order of the result's assumptions:
#: a catalog instance's region's grid and PUE, an inline instance's defaults.
RENTED_CARBON: tuple[Source, ...] = (
    Source(
        "grid",
        lambda c: DEFAULT_GRID,
        "default: an inline instance names no region",
        applies=_inline,
        kind=Origin.DEFAULT,
    ),
    Source(
        "pue",
        1.25,
        "default: the public-cloud average (IDC, 2025)",
        applies=_inline,
        kind=Origin.DEFAULT,
    ),
    Source("grid", lambda c: c.region.grid, "catalog: {where}", applies=_regional),
    Source(
        "pue",
        lambda c: c.region.pue,
        "catalog: the PUE of {where}{pue_note}",
        applies=_regional,
    ),
    *field_defaults(RentedCarbon),
    Source("power_kw", _Site.rented_power, "catalog: {power}"),
    Source("embodied_kg_co2e", _Site.rented_embodied, "catalog: {embodied}"),
)


@dataclass
class _Block:
    """One block's carbon keys being filled: given or defaulted, each with its assumption."""

    path: str
    block: Mapping[str, Any]
    cls: type
    catalog: Catalog
    source: str  # what a given value's origin says: "scenario" or "plan"
    values: dict[str, Distribution] = field(default_factory=dict)
    filled: dict[str, Any] = field(default_factory=dict)
    notes: list[Assumption] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)

    def fill(self, table: tuple[Source, ...], c: _Site) -> _Block:
        """Every row of ``table`` that applies, as the block gives it or by its default: a grid
        id resolves to its intensity, a catalog gap is a problem at the key."""
        for src in table:
            if src.applies(c):
                self._take(src, c)
        return self

    def _take(self, src: Source, c: _Site) -> None:
        given = self.block.get(src.key)
        where = f"{self.path}.{src.key}"
        try:
            if given is not None:
                value, origin = given, self.source
            else:
                value = src.resolve(c)
                origin = src.origin.format(**c.labels())
            number = self._grid(value) if isinstance(value, str) else value
        except CatalogError as exc:
            self.problems.append({"path": where, "message": f"{exc.problem}; give {where}"})
            return
        if isinstance(value, str):
            origin = f"{origin}: {_grid_text(self.catalog, value)}"
        dist = number if isinstance(number, Distribution) else Fixed(float(number))
        self.values[src.key] = dist
        self.filled[src.key] = value if isinstance(value, str) else dist
        kind = Origin.GIVEN if given is not None else src.kind
        unit = input_fields(self.cls)[src.key].metadata["unit"]
        self.notes.append(Assumption(where, to_spec(dist), unit, origin, kind))

    def _grid(self, grid_id: str) -> float:
        return self.catalog.grid(grid_id).g_co2e_per_kwh

    def inputs(self) -> Any:
        """The side's carbon inputs; a value the engine rejects is named at the block's key."""
        return built(self.cls, self.path, {}, **self.values)


def _grid_text(catalog: Catalog, grid_id: str) -> str:
    g = catalog.grid(grid_id)
    est = ", estimated" if g.estimated else ""
    return f"grid {g.id}, {g.name} ({g.g_co2e_per_kwh:g} g/kWh, {g.year}, {g.basis}{est})"


def _est(row: Embodied) -> str:
    return " (estimated)" if row.estimated else ""


def _owned(o: Owned, catalog: Catalog, source: str = "scenario") -> _Block:
    spares = o.block.get("spare_gpus") or 0
    c = _Site(catalog, o.gpu, o.inputs.gpu_count, spares)
    return _Block(o.path, o.block, OwnedCarbon, catalog, source).fill(OWNED_CARBON, c)


def _rented(r: Rented, catalog: Catalog, source: str = "scenario") -> _Block:
    offer = r.offer
    region = catalog.region(catalog.instance(offer.id)) if offer.id else None
    c = _Site(catalog, offer.gpu, offer.gpu_count, instance=offer.id or "", region=region)
    return _Block(r.path, r.block, RentedCarbon, catalog, source).fill(RENTED_CARBON, c)


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
    hosted = built(HostedCarbon, api.path, {}, g_co2e_per_mtok=api.block["g_co2e_per_mtok"])
    spec = to_spec(hosted.g_co2e_per_mtok)
    where = f"{api.path}.g_co2e_per_mtok"
    return hosted, [Assumption(where, spec, "[gCO2e/M tokens]", source)]


def _spare(catalog: Catalog, own: Owned) -> tuple[float, list[Assumption]]:
    """The embodied carbon of one pooled spare GPU [kg CO2e], the GPU's catalog figure, and its
    assumption when the plan pools spares (``own.spare_share`` above 0)."""
    site = _Site(catalog, own.gpu, own.inputs.gpu_count)
    kg = site.gpu_kg()
    if not own.block.get("spare_share"):
        return kg, []
    unit = input_fields(PlanCarbon)["spare_gpu_kg_co2e"].metadata["unit"]
    each = "for each pooled spare GPU (own.embodied_kg_co2e is one server's)"
    text = f"catalog: {site.texts['gpu_kg']} {each}"
    return kg, [Assumption("own.spare_gpu_kg_co2e", kg, unit, text, Origin.CATALOG)]


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
        buy=owned.inputs(),
        rent=rented.inputs(),
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
    by_path = {b.path: b.inputs() for b in sides}
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
    return b.inputs()
