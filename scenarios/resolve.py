"""Resolve a validated scenario against a catalog into frozen engine inputs.

Every input a scenario leaves out comes from one row of :data:`SOURCES`: the key, where its
value comes from (a catalog figure of the GPUs, the platform tier, the interconnect table or the
instance, or a documented constant) and the origin recorded in the result's ``assumptions``.
The same table writes the "default" column of the scenario format's key reference.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from costmodel.distributions import Distribution, Fixed
from costmodel.inputs import BuyInputs, InputError, ModelInputs, RentInputs, input_fields
from costmodel.result import Assumption
from pricing import (
    GPU,
    PRICING_MODELS,
    Catalog,
    CatalogError,
    Instance,
    PlatformTier,
    PriceEntry,
    Throughput,
    relative_throughput,
)

from .distspec import to_spec
from .errors import ScenarioError
from .schema import ScenarioSchema

__all__ = ["DOC_LABELS", "SOURCES", "Keyed", "Resolved", "Source", "resolve", "with_sampling"]


@dataclass(frozen=True)
class _Rented:
    """The rented instance, from the catalog or inline."""

    id: str | None
    name: str
    gpu: GPU
    gpu_count: int
    interconnect: str
    prices: Mapping[str, float | None]
    source: str


@dataclass(frozen=True)
class Context:
    """What the default of a left-out input may depend on."""

    catalog: Catalog
    precision: str
    reference: GPU
    buy_gpu: GPU
    gpu_count: int
    tier: PlatformTier | None
    interconnect: str
    rented: _Rented
    pricing: str
    throughput: dict[str, Throughput] = field(default_factory=dict)

    def relative_throughput(self, side: str) -> float:
        """Throughput of one GPU of ``side`` in reference GPUs; remembered for the origin."""
        gpu = self.buy_gpu if side == "buy" else self.rented.gpu
        self.throughput[side] = relative_throughput(gpu, self.reference, self.precision)
        return self.throughput[side].value

    def labels(self) -> dict[str, str]:
        """Values of the placeholders of :attr:`Source.origin` templates."""
        gpu, inst = self.buy_gpu, self.rented
        return {
            "buy_gpu": gpu.id if not gpu.id.startswith("inline:") else f"inline GPU {gpu.name!r}",
            "rent_gpu": inst.gpu.id,
            "reference_gpu": self.reference.id,
            "precision": self.precision,
            "price_note": " (estimated)" if gpu.price_estimated else "",
            "idle_note": " (estimated: 10 % of TDP)" if gpu.idle_w_estimated else "",
            "tier": self.tier.name if self.tier else "",
            "tiers": ", ".join(str(t.gpu_count) for t in self.catalog.tiers),
            "interconnect": self.interconnect,
            "gpu_count": str(self.gpu_count),
            "instance": inst.id or f"inline instance {inst.name!r}",
            "instance_source": inst.source,
            "instance_interconnect": inst.interconnect,
            "instance_gpu_count": str(inst.gpu_count),
            "pricing": self.pricing,
            "available": ", ".join(k for k, v in inst.prices.items() if v is not None),
            **{f"{side}_throughput": t.how for side, t in self.throughput.items()},
        }


@dataclass(frozen=True)
class Source:
    """Where input ``key`` comes from when a scenario leaves it out.

    ``value`` is a constant or a function of the :class:`Context` (``None``: the catalog has no
    figure, and ``missing`` says so); ``origin`` is a template filled from
    :meth:`Context.labels`; ``applies`` says whether the input exists in this scenario.
    ``price`` names the catalog price the value is, as ``(id, pricing)``, for a price the user
    may lay over the catalog (:mod:`pricing.prices`); the origin is then the user's.
    """

    key: str
    value: float | Callable[[Context], float | None]
    origin: str
    missing: str = ""
    applies: Callable[[Context], bool] = lambda c: True
    price: Callable[[Context], tuple[str, str] | None] | None = None

    def overlaid(self, c: Context) -> PriceEntry | None:
        """The user's price this default is, when the catalog carries one."""
        key = self.price(c) if self.price else None
        return c.catalog.overlay.get(key) if key else None

    def resolve(self, c: Context) -> float | None:
        """The default value in this context."""
        return self.value(c) if callable(self.value) else float(self.value)


_NO_TIER = "no platform tier of the catalog holds {gpu_count} GPUs (tiers: {tiers})"


def _reserved(c: Context) -> bool:
    return c.pricing.startswith("reserved")


#: Every input a scenario may leave out, in the order of the result's assumptions.
SOURCES: tuple[Source, ...] = (
    Source(
        "buy.gpu_price_usd",
        lambda c: c.buy_gpu.price_usd,
        "catalog: {buy_gpu} price{price_note}",
        missing="the catalog has no price for {buy_gpu}",
        price=lambda c: (c.buy_gpu.id, "purchase"),
    ),
    Source(
        "buy.platform_price_usd",
        lambda c: c.tier and c.tier.price_usd,
        "catalog: platform tier {tier}",
        missing=_NO_TIER,
    ),
    Source("buy.gpu_power_w", lambda c: c.buy_gpu.tdp_w, "catalog: {buy_gpu} TDP"),
    Source("buy.gpu_idle_w", lambda c: c.buy_gpu.idle_w, "catalog: {buy_gpu} idle draw{idle_note}"),
    Source(
        "buy.platform_power_w",
        lambda c: c.tier and c.tier.power_w,
        "catalog: platform tier {tier}",
        missing=_NO_TIER,
    ),
    Source(
        "buy.relative_throughput",
        lambda c: c.relative_throughput("buy"),
        "catalog: {precision} throughput of {buy_gpu} relative to {reference_gpu} "
        "({buy_throughput})",
    ),
    Source(
        "buy.scaling_efficiency",
        lambda c: c.catalog.scaling_efficiency(c.interconnect, c.gpu_count),
        "catalog: {interconnect} scaling, {gpu_count} GPUs",
    ),
    Source("buy.setup_usd", 0.0, "default: no setup cost"),
    Source(
        "buy.electricity_usd_per_kwh",
        0.1252,
        "default: US commercial average, March 2023 (EIA via shrinkthatfootprint.com)",
    ),
    Source("buy.electricity_annual_change", 0.0, "default: flat electricity price"),
    Source("buy.pue", 1.0, "default: office or home, no facility overhead"),
    Source("buy.hosting_usd_per_kw_month", 0.0, "default: no colocation fee"),
    Source("buy.maintenance_rate", 0.0, "default: no maintenance contract"),
    Source("buy.gpu_annual_failure_rate", 0.0, "default: no GPU replacements"),
    Source("buy.admin_usd_per_month", 0.0, "default: no administration cost"),
    Source(
        "buy.resale_annual_decay",
        0.2,
        "default: 20 %/year, between the 12 and 24 %/year lost by used GeForce cards "
        "(Dettmers 2020)",
    ),
    Source("buy.thermal_derate", 1.0, "default: cooling keeps full speed"),
    Source(
        "rent.price_usd_per_hour",
        lambda c: c.rented.prices[c.pricing],
        "{instance_source}, {pricing}",
        missing="{instance} has no {pricing} price; give it, or choose pricing from: {available}",
        price=lambda c: c.rented.id and (c.rented.id, c.pricing),
    ),
    Source(
        "rent.on_demand_price_usd_per_hour",
        lambda c: c.rented.prices["on_demand"],
        "{instance_source}, on_demand",
        applies=_reserved,
        price=lambda c: c.rented.id and (c.rented.id, "on_demand"),
    ),
    Source(
        "rent.relative_throughput",
        lambda c: c.relative_throughput("rent"),
        "catalog: {precision} throughput of {rent_gpu} relative to {reference_gpu} "
        "({rent_throughput})",
    ),
    Source(
        "rent.scaling_efficiency",
        lambda c: c.catalog.scaling_efficiency(c.rented.interconnect, c.rented.gpu_count),
        "catalog: {instance_interconnect} scaling, {instance_gpu_count} GPUs",
    ),
    Source("rent.price_annual_change", 0.0, "default: flat cloud prices"),
    Source("rent.spot_interruption_overhead", 0.0, "default: no work redone"),
    Source("rent.storage_usd_per_month", 0.0, "default: no storage cost"),
    Source("rent.egress_usd_per_month", 0.0, "default: no egress cost"),
    Source("rent.admin_usd_per_month", 0.0, "default: no administration cost"),
)

#: How the key reference reads each placeholder of an origin template.
DOC_LABELS: dict[str, str] = {
    "buy_gpu": "`buy.gpu`",
    "rent_gpu": "the instance's GPU",
    "reference_gpu": "`workload.reference_gpu`",
    "precision": "`workload.precision`",
    "price_note": "",
    "idle_note": " (10 % of TDP where no figure is sourced)",
    "tier": "for `buy.gpu_count`",
    "tiers": "",
    "interconnect": "`buy.interconnect`",
    "gpu_count": "`buy.gpu_count`",
    "instance": "`rent.instance`",
    "instance_source": "catalog: `rent.instance`",
    "instance_interconnect": "the instance's interconnect",
    "instance_gpu_count": "the instance's",
    "pricing": "`rent.pricing` price",
    "buy_throughput": "measured, else scaled or peak ratios",
    "rent_throughput": "measured, else scaled or peak ratios",
    "available": "",
}


@dataclass(frozen=True)
class Resolved:
    """Engine inputs plus what warnings and reports need to know about the hardware.

    ``throughput`` holds how each side's per-GPU throughput was obtained, for the sides whose
    throughput came from the catalog; ``prices`` the inputs whose value is the user's price
    laid over the catalog (:mod:`pricing.prices`), by key path.
    """

    inputs: ModelInputs
    scenario: dict[str, Any]
    assumptions: tuple[Assumption, ...]
    catalog: Catalog
    buy_gpu: GPU
    rent_gpu: GPU
    reference_gpu: GPU
    platform: PlatformTier | None
    interconnect: str
    throughput: Mapping[str, Throughput]
    prices: Mapping[str, PriceEntry] = field(default_factory=dict)


#: Engine input names that differ from the scenario's key paths.
_SCENARIO_PATH = {
    "samples": "simulation.samples",
    "seed": "simulation.seed",
    "method": "simulation.method",
    "target_halfwidth": "simulation.target_halfwidth",
    "max_samples": "simulation.max_samples",
    "rent.gpu_count": "rent.instance.gpu_count",
}


def _gpu(catalog: Catalog, ref: str | Mapping, path: str) -> GPU:
    if isinstance(ref, Mapping):
        return GPU.inline(**ref)
    try:
        return catalog.gpu(ref)
    except CatalogError as exc:
        raise exc.at(path) from None


def _instance(catalog: Catalog, ref: str | Mapping, path: str) -> _Rented:
    if isinstance(ref, str):
        try:
            inst: Instance = catalog.instance(ref)
        except CatalogError as exc:
            raise exc.at(path) from None
        return _Rented(
            id=inst.id,
            name=inst.name,
            gpu=catalog.gpu(inst.gpu),
            gpu_count=inst.gpu_count,
            interconnect=inst.interconnect,
            prices={p: getattr(inst, f"{p}_usd_per_hour") for p in PRICING_MODELS},
            source=f"catalog: {inst.id} ({inst.region}, as of {inst.as_of})",
        )
    return _Rented(
        id=None,
        name=ref["name"],
        gpu=_gpu(catalog, ref["gpu"], f"{path}.gpu"),
        gpu_count=ref["gpu_count"],
        interconnect=ref.get("interconnect") or "pcie-x16",
        prices={p: ref.get(f"{p}_usd_per_hour") for p in PRICING_MODELS},
        source=f"scenario: inline instance {ref['name']!r}",
    )


def _context(data: Mapping[str, Any], catalog: Catalog) -> Context:
    """Look up the catalog rows the scenario names; every failed lookup is reported at once."""
    buy, rent, work = data["buy"], data["rent"], data["workload"]
    problems: list[dict] = []
    found: dict[str, Any] = {}
    lookups = (
        ("reference", lambda: _gpu(catalog, work["reference_gpu"], "workload.reference_gpu")),
        ("buy_gpu", lambda: _gpu(catalog, buy["gpu"], "buy.gpu")),
        ("rented", lambda: _instance(catalog, rent["instance"], "rent.instance")),
    )
    for name, lookup in lookups:
        try:
            found[name] = lookup()
        except CatalogError as exc:
            problems.append({"path": exc.path or "", "message": exc.problem})
    try:
        tier = catalog.platform_tier(buy["gpu_count"])
    except CatalogError:  # more GPUs than the largest tier: its figures must be given
        tier = None
    least = work.get("min_gpu_memory_gb")
    for name, path in (("buy_gpu", "buy.gpu"), ("rented", "rent.instance")):
        gpu = found.get(name)
        gpu = gpu.gpu if isinstance(gpu, _Rented) else gpu
        if gpu is not None and least is not None and gpu.memory_gb < least:
            problems.append(
                {
                    "path": path,
                    "message": f"{gpu.name} has {gpu.memory_gb:g} GB of memory, below "
                    f"workload.min_gpu_memory_gb = {least:g} GB",
                }
            )
    if problems:
        raise ScenarioError(None, problems)
    gpu = found["buy_gpu"]
    default_link = tier.interconnect if tier else "pcie-x16"
    return Context(
        catalog=catalog,
        precision=work["precision"],
        reference=found["reference"],
        buy_gpu=gpu,
        gpu_count=buy["gpu_count"],
        tier=tier,
        interconnect=buy.get("interconnect")
        or ("nvlink" if gpu.cooling == "sxm" else default_link),
        rented=found["rented"],
        pricing=rent["pricing"],
    )


def _fill(
    data: Mapping[str, Any], c: Context
) -> tuple[dict[str, Distribution], dict[str, str], dict[str, PriceEntry]]:
    """Every input's distribution (given or default) and its origin, by engine name; and the
    defaults that are the user's prices laid over the catalog."""
    values: dict[str, Distribution] = {}
    origins: dict[str, str] = {}
    priced: dict[str, PriceEntry] = {}
    pending: list[tuple[Source, float | None]] = []
    problems: list[dict] = []
    for src in SOURCES:
        side, name = src.key.split(".")
        if not src.applies(c):
            continue
        given = data[side].get(name)
        if given is not None:
            values[src.key], origins[src.key] = given, "scenario"
            continue
        try:
            value = src.resolve(c)
        except CatalogError as exc:
            problems.append({"path": src.key, "message": f"{exc.problem}; give {src.key}"})
            continue
        pending.append((src, value))
    labels = c.labels()  # after the throughput lookups, whose descriptions it carries
    for src, value in pending:
        if value is None:
            message = src.missing.format(**labels)
            problems.append({"path": src.key, "message": f"{message}; give {src.key}"})
            continue
        entry = src.overlaid(c)
        if entry is not None:
            priced[src.key] = entry
        origin = entry.origin if entry is not None else src.origin.format(**labels)
        values[src.key], origins[src.key] = Fixed(float(value)), origin
    if problems:
        raise ScenarioError(None, problems)
    order = [src.key for src in SOURCES if src.key in values]
    return {k: values[k] for k in order}, {k: origins[k] for k in order}, priced


def _inputs(data: Mapping[str, Any], c: Context, values: dict[str, Distribution]) -> ModelInputs:
    buy, rent, sim = data["buy"], data["rent"], data["simulation"]

    def side(prefix: str) -> dict[str, Distribution]:
        return {k.removeprefix(prefix): v for k, v in values.items() if k.startswith(prefix)}

    try:
        return ModelInputs(
            horizon_months=data["horizon_months"],
            discount_rate=data["discount_rate"],
            tax_rate=data["tax_rate"],
            utilisation=tuple(data["utilisation"]),
            report_utilisation=data["report_utilisation"],
            samples=sim["samples"],
            seed=sim["seed"],
            method=sim["method"],
            target_halfwidth=sim.get("target_halfwidth"),
            max_samples=sim.get("max_samples"),
            correlations=tuple(tuple(x) for x in data["correlations"]),
            buy=BuyInputs(
                gpu_count=c.gpu_count,
                powered_when_idle=buy["powered_when_idle"],
                depreciation=buy["depreciation"],
                depreciation_years=buy["depreciation_years"],
                **side("buy."),
            ),
            rent=RentInputs(
                gpu_count=c.rented.gpu_count,
                pricing=c.pricing,
                committed_instances=rent["committed_instances"],
                **side("rent."),
            ),
        )
    except InputError as exc:
        path = _SCENARIO_PATH.get(exc.path, exc.path)
        raise ScenarioError(None, [{"path": path, "message": exc.message}]) from None


def resolve(data: Mapping[str, Any], source: str, catalog: Catalog) -> Resolved:
    """Fill catalog defaults into a schema-validated scenario and build the engine inputs.

    Raises :class:`ScenarioError` naming the key path for unknown catalog ids, GPUs below
    ``workload.min_gpu_memory_gb``, missing catalog figures and inputs the engine rejects.
    """
    try:
        c = _context(data, catalog)
        values, origins, priced = _fill(data, c)
        inputs = _inputs(data, c, values)
    except ScenarioError as exc:
        raise ScenarioError(source, exc.errors) from None
    units = {
        f"{side}.{name}": f.metadata.get("unit", "")
        for side, cls in (("buy", BuyInputs), ("rent", RentInputs))
        for name, f in input_fields(cls).items()
    }
    filled = {
        **data,
        "buy": {**data["buy"], "interconnect": c.interconnect},
        "rent": dict(data["rent"]),
    }
    for key, value in values.items():
        side, name = key.split(".")
        filled[side][name] = value
    schema = ScenarioSchema()
    return Resolved(
        inputs=inputs,
        scenario=schema.dump(filled),
        assumptions=tuple(
            Assumption(key, to_spec(value), units[key], origins[key])
            for key, value in values.items()
        ),
        catalog=catalog,
        buy_gpu=c.buy_gpu,
        rent_gpu=c.rented.gpu,
        reference_gpu=c.reference,
        platform=c.tier,
        interconnect=c.interconnect,
        throughput=dict(c.throughput),
        prices=priced,
    )


def with_sampling(document: Mapping[str, Any], samples: int, seed: int) -> dict[str, Any]:
    """A copy of a resolved document (scenario or plan) with ``samples`` and ``seed`` in its
    ``simulation`` block: the document a result of that many draws and that seed reports."""
    return {**document, "simulation": {**document["simulation"], "samples": samples, "seed": seed}}


class Keyed:
    """The cache key of a resolved document (a scenario or a plan, which give ``document``,
    ``catalog``, ``samples`` and ``seed``)."""

    def key(self, samples: int | None = None, seed: int | None = None) -> str:
        """SHA-256 of the resolved document with ``samples`` and ``seed`` (default: its own)
        and the catalog version: the cache key of its result."""
        doc = with_sampling(
            self.document,  # type: ignore[attr-defined]
            samples or self.samples,  # type: ignore[attr-defined]
            self.seed if seed is None else seed,  # type: ignore[attr-defined]
        )
        doc["catalog_version"] = self.catalog.version  # type: ignore[attr-defined]
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
