"""Each side's carbon inputs, resolved with its cost inputs at the side's own key paths.

Every carbon input a side block leaves out comes from one row of :data:`OWNED_CARBON` or
:data:`RENTED_CARBON` (:class:`scenarios.sources.Source`, as the cost inputs' defaults): the
owned build's grid is a catalog grid id, a number or a distribution (default: the United States
average, as the electricity price's default is); its embodied carbon is (N + spares) x the
GPU's figure + the platform tier's. A catalog instance takes its region's grid and PUE
(``cloud_regions.csv``), a power of n x TDP + the tier's platform power and an embodied share
of n x the GPU's figure + n/8 of the 8-GPU server's (EcoLogits' allocation of a cloud host to
the GPUs in use); an inline instance the default grid and the public-cloud PUE. Every value
goes into the assumptions with where it came from; errors name the key path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from costmodel.distributions import Distribution, Fixed
from costmodel.inputs import HostedCarbon, OwnedCarbon, RentedCarbon, input_fields
from costmodel.result import Assumption, Origin
from pricing import GPU, Catalog, CatalogError, PlatformTier
from pricing.carbon import CloudRegion, Embodied

from .distspec import to_spec
from .errors import ScenarioError
from .sources import Source, built, field_defaults

__all__ = [
    "DEFAULT_GRID",
    "GENERIC_GPU_KG",
    "HOST_GPUS",
    "INLINE_PUE",
    "OWNED_CARBON",
    "RENTED_CARBON",
    "SideCarbon",
    "gpu_kg",
    "hosted_carbon",
    "owned_carbon",
    "rented_carbon",
]

#: The owned build's grid, and an inline instance's, when the document names none: the US
#: average, like the default electricity price.
DEFAULT_GRID = "US"
#: Embodied carbon of an inline GPU [kg CO2e]: Cloud Carbon Footprint's figure per GPU card.
GENERIC_GPU_KG = 150.0
#: The PUE of an inline instance [-]: the public-cloud average (IDC, 2025).
INLINE_PUE = 1.25
#: The GPUs of the cloud host whose embodied carbon a rented instance's n GPUs take n of
#: (EcoLogits' allocation of a host to the GPUs in use) [GPUs].
HOST_GPUS = 8


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
            self.texts["gpu_kg"] = f"inline GPU {gpu.name!r} at {GENERIC_GPU_KG:g} kg (estimated)"
            return GENERIC_GPU_KG
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
        """n x the GPU's figure + n/8 of the 8-GPU server's (:data:`HOST_GPUS`) [kg CO2e]."""
        n, gpu = self.gpus, self.gpu_kg()
        host = self.catalog.platform_embodied(HOST_GPUS)
        self.texts["embodied"] = (
            f"{n} x {self.texts['gpu_kg']} + {n}/{HOST_GPUS} of the {HOST_GPUS}-GPU server's "
            f"{host.kg_co2e:g} kg{_est(host)}"
        )
        return n * gpu + n / HOST_GPUS * host.kg_co2e


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
        INLINE_PUE,
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


@dataclass(frozen=True)
class SideCarbon:
    """One side's carbon inputs resolved at its key path: the engine's inputs, its carbon keys
    as filled in (``block``, a grid as its catalog id) and their assumptions."""

    inputs: OwnedCarbon | RentedCarbon | HostedCarbon
    block: dict[str, Any]
    assumptions: tuple[Assumption, ...]


def _resolved(b: _Block) -> SideCarbon:
    if b.problems:
        raise ScenarioError(None, b.problems)
    return SideCarbon(b.inputs(), b.filled, tuple(b.notes))


def owned_carbon(
    block: Mapping[str, Any], path: str, gpu: GPU, catalog: Catalog, source: str = "scenario"
) -> SideCarbon:
    """The carbon inputs of the owned build of a validated ``block`` at key path ``path``, of
    ``block["gpu_count"]`` GPUs ``gpu`` (and its ``spare_gpus``); a given value's origin says
    ``source``. Raises :class:`ScenarioError` at ``path``'s keys for unknown grid ids, missing
    catalog figures and values the engine rejects, all at once."""
    c = _Site(catalog, gpu, block["gpu_count"], block.get("spare_gpus") or 0)
    return _resolved(_Block(path, block, OwnedCarbon, catalog, source).fill(OWNED_CARBON, c))


def rented_carbon(
    block: Mapping[str, Any],
    path: str,
    instance: str | None,
    gpu: GPU,
    gpu_count: int,
    catalog: Catalog,
    source: str = "scenario",
) -> SideCarbon:
    """The carbon inputs of a rented ``block`` at key path ``path``: the catalog ``instance``
    (``None``: inline) of ``gpu_count`` GPUs ``gpu``. Raises as :func:`owned_carbon`."""
    region = catalog.region(catalog.instance(instance)) if instance else None
    c = _Site(catalog, gpu, gpu_count, instance=instance or "", region=region)
    return _resolved(_Block(path, block, RentedCarbon, catalog, source).fill(RENTED_CARBON, c))


def hosted_carbon(
    block: Mapping[str, Any], path: str, source: str = "scenario"
) -> SideCarbon | None:
    """The carbon inputs of a hosted API's ``block`` at key path ``path`` where it gives them
    (``g_co2e_per_mtok``); ``None`` where it does not: its emissions are unknown, never 0.
    Raises :class:`ScenarioError` at the key for a value the engine rejects."""
    given = block.get("g_co2e_per_mtok")
    if given is None:
        return None
    inputs = built(HostedCarbon, path, {}, g_co2e_per_mtok=given)
    unit = input_fields(HostedCarbon)["g_co2e_per_mtok"].metadata["unit"]
    spec = to_spec(inputs.g_co2e_per_mtok)
    return SideCarbon(inputs, {}, (Assumption(f"{path}.g_co2e_per_mtok", spec, unit, source),))


def gpu_kg(catalog: Catalog, gpu: GPU) -> tuple[float, str]:
    """Embodied carbon of one ``gpu`` [kg CO2e] and where it comes from, in words."""
    site = _Site(catalog, gpu, 1)
    return site.gpu_kg(), site.texts["gpu_kg"]
