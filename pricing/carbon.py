"""Frozen records of the carbon catalogs: grid carbon intensity, embodied carbon, cloud regions.

Every record validates its own types, units and ranges in ``__post_init__`` and raises
:class:`~pricing.errors.CatalogError` naming the offending column; the CSV loaders add the file
name and row id. Intensities are grams of CO2-equivalent per kWh [gCO2e/kWh], embodied carbon
kilograms of CO2-equivalent [kg CO2e], PUE a ratio [-]. ``data/NOTES.md`` says where each
figure comes from and on which basis (lifecycle or operational) it is counted.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .errors import CatalogError
from .vocabulary import CARBON_LIMITS

__all__ = [
    "EMBODIED_KINDS",
    "GRID_BASES",
    "GRID_KINDS",
    "CloudRegion",
    "Embodied",
    "GridIntensity",
]

#: Kinds of grid row: a country (ISO 3166-1 alpha-2, or an aggregate such as ``WORLD``), a US
#: eGRID subregion, or a cloud provider's region (``aws/us-east-1``).
GRID_KINDS: tuple[str, ...] = ("country", "us_subregion", "cloud_region")
#: What a grid intensity counts: ``lifecycle`` (generation plus upstream fuel and supply chain)
#: or ``operational`` (combustion at the plant only, location-based).
GRID_BASES: tuple[str, ...] = ("lifecycle", "operational")
#: Kinds of embodied-carbon row: one GPU (by catalog GPU id) or one platform tier (by its GPU
#: count): everything of a build but the GPUs.
EMBODIED_KINDS: tuple[str, ...] = ("gpu", "platform")

_GRID_IDS = {
    "country": re.compile(r"^([A-Z]{2}|WORLD|EU27)$"),
    "us_subregion": re.compile(r"^([A-Z]{4}|US-AVG)$"),
    "cloud_region": re.compile(r"^[a-z0-9-]+/[a-z0-9-]+$"),
}


def _number(value: float, column: str) -> None:
    bound = CARBON_LIMITS[column]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CatalogError(f"expected a finite number, got {value!r}", column=column)
    if bound.integer and not isinstance(value, int):
        raise CatalogError(f"expected an integer, got {value!r}", column=column)
    problem = bound.problem(value)
    if problem:
        raise CatalogError(problem, column=column)


def _text(value: str, column: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise CatalogError("must be non-empty text", column=column)


def _choice(value: str, column: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise CatalogError(
            f"unknown {column} {value!r}; valid: {', '.join(choices)}", column=column
        )


def _estimated(names: tuple[str, ...], allowed: tuple[str, ...]) -> None:
    for name in names:
        if name not in allowed:
            raise CatalogError(
                f"unknown field {name!r} in estimated_fields; valid: {', '.join(allowed)}",
                column="estimated_fields",
            )


@dataclass(frozen=True)
class GridIntensity:
    """The carbon intensity of the electricity of one grid.

    Attributes:
        id: ``"US"`` (a country, ISO 3166-1 alpha-2; ``WORLD`` and ``EU27`` are aggregates),
            ``"CAMX"`` (a US eGRID subregion; ``US-AVG`` the US average) or ``"aws/us-east-1"``
            (a cloud region). Lookups are case-insensitive.
        kind: one of :data:`GRID_KINDS`. name: display name.
        g_co2e_per_kwh: intensity [gCO2e/kWh]. year: the year the figure describes [year].
        basis: ``"lifecycle" | "operational"`` (:data:`GRID_BASES`).
        source, note: citation and remarks. estimated_fields: ``("g_co2e_per_kwh",)`` when the
            figure is derived or mapped by this catalog rather than read from the source.
    """

    id: str
    kind: str
    name: str
    g_co2e_per_kwh: float
    year: int
    basis: str
    source: str
    note: str = ""
    estimated_fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _choice(self.kind, "kind", GRID_KINDS)
        if not isinstance(self.id, str) or not _GRID_IDS[self.kind].match(self.id):
            raise CatalogError(
                f"invalid {self.kind} id {self.id!r} (pattern {_GRID_IDS[self.kind].pattern})",
                column="id",
            )
        _text(self.name, "name")
        _number(self.g_co2e_per_kwh, "g_co2e_per_kwh")
        _number(self.year, "year")
        _choice(self.basis, "basis", GRID_BASES)
        _text(self.source, "source")
        object.__setattr__(self, "estimated_fields", tuple(self.estimated_fields))
        _estimated(self.estimated_fields, ("g_co2e_per_kwh",))

    @property
    def estimated(self) -> bool:
        """Whether the figure is this catalog's derivation or mapping, not the source's."""
        return bool(self.estimated_fields)


@dataclass(frozen=True)
class Embodied:
    """The embodied (manufacturing) carbon of one GPU or one platform tier.

    Attributes:
        kind: ``"gpu" | "platform"`` (:data:`EMBODIED_KINDS`). id: the catalog GPU id, or the
            tier's GPU count as text (``"8"``).
        kg_co2e: embodied carbon [kg CO2e] of one GPU, or of the tier's platform without GPUs.
        boundary: what the figure covers (cradle-to-gate, card or baseboard share, host parts).
        source, note: citation and derivation. estimated_fields: ``("kg_co2e",)`` when the
            figure is an estimate or derived by this catalog (``note`` says how).
    """

    kind: str
    id: str
    kg_co2e: float
    boundary: str
    source: str
    note: str = ""
    estimated_fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _choice(self.kind, "kind", EMBODIED_KINDS)
        _text(self.id, "id")
        _number(self.kg_co2e, "kg_co2e")
        _text(self.boundary, "boundary")
        _text(self.source, "source")
        object.__setattr__(self, "estimated_fields", tuple(self.estimated_fields))
        _estimated(self.estimated_fields, ("kg_co2e",))

    @property
    def estimated(self) -> bool:
        """Whether the figure is an estimate (see ``note``)."""
        return bool(self.estimated_fields)


@dataclass(frozen=True)
class CloudRegion:
    """Where a provider's instances of one catalog region run: its grid and its PUE.

    Attributes:
        provider: lowercase provider key. region: the instances' ``region`` as the instance
            table spells it (``"us-east-1"``, ``"East US"``, ``"US (multi-region)"``).
        grid: the id of the grid row whose intensity applies.
        pue: the provider's published power usage effectiveness there [-], in [1, 3].
        source, note: citations and remarks. estimated_fields: ``grid`` when the region is
            mapped to a wider grid than its own, ``pue`` when no figure of the provider is
            published (``note`` says what stands in).
    """

    provider: str
    region: str
    grid: str
    pue: float
    source: str
    note: str = ""
    estimated_fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for column in ("provider", "region", "grid", "source"):
            _text(getattr(self, column), column)
        _number(self.pue, "pue")
        object.__setattr__(self, "estimated_fields", tuple(self.estimated_fields))
        _estimated(self.estimated_fields, ("grid", "pue"))

    @property
    def key(self) -> tuple[str, str]:
        """``(provider, region)``: how an instance finds its region."""
        return (self.provider, self.region)
