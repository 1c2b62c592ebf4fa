"""Resolve a validated scenario against the catalog into frozen engine inputs.

Every input left out of the scenario is filled from the catalog (GPU price, TDP and idle draw,
platform tier, interconnect scaling, instance prices, throughput) or from a documented default
(:data:`DEFAULTS`), and each value's origin is recorded as an assumption so that reports can show
where every number came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from costmodel.distributions import Distribution, Fixed
from costmodel.inputs import BuyInputs, InputError, ModelInputs, RentInputs
from pricing import GPU, CatalogError, load_catalog, relative_throughput

from .errors import ScenarioError
from .schema import BuySchema, RentSchema

__all__ = ["DEFAULTS", "Resolved", "resolve"]

#: Inputs with no catalog figure: (value, source). Neutral where no public figure exists.
DEFAULTS: dict[str, tuple[float, str]] = {
    "buy.setup_usd": (0.0, "default: no setup cost"),
    "buy.electricity_usd_per_kwh": (
        0.1252,
        "default: US commercial average, March 2023 (EIA via shrinkthatfootprint.com)",
    ),
    "buy.electricity_annual_change": (0.0, "default: flat electricity price"),
    "buy.pue": (1.0, "default: office or home, no facility overhead"),
    "buy.hosting_usd_per_kw_month": (0.0, "default: no colocation fee"),
    "buy.maintenance_rate": (0.0, "default: no maintenance contract"),
    "buy.gpu_annual_failure_rate": (0.0, "default: no GPU replacements"),
    "buy.admin_usd_per_month": (0.0, "default: no administration cost"),
    "buy.resale_annual_decay": (
        0.2,
        "default: 20 %/year, between the 12 and 24 %/year of used GeForce prices "
        "(Dettmers 2020, reference facts section 5)",
    ),
    "buy.thermal_derate": (1.0, "default: cooling keeps full speed"),
    "rent.price_annual_change": (0.0, "default: flat cloud prices"),
    "rent.spot_interruption_overhead": (0.0, "default: no work redone"),
    "rent.storage_usd_per_month": (0.0, "default: no storage cost"),
    "rent.egress_usd_per_month": (0.0, "default: no egress cost"),
    "rent.admin_usd_per_month": (0.0, "default: no administration cost"),
}


@dataclass(frozen=True)
class Resolved:
    """Engine inputs plus what reports and warnings need to know about the hardware."""

    inputs: ModelInputs
    scenario: dict[str, Any]
    assumptions: tuple[dict[str, Any], ...]
    buy_gpu: GPU
    rent_gpu: GPU
    reference_gpu: GPU
    platform: Any
    interconnect: str
    buy_measured: bool
    rent_measured: bool


class _Problems:
    def __init__(self) -> None:
        self.errors: list[dict] = []

    def add(self, path: str, message: str) -> None:
        self.errors.append({"path": path, "message": message})


def _unit(side: str, name: str) -> str:
    schema = BuySchema if side == "buy" else RentSchema
    field = schema().fields.get(name)
    return field.metadata.get("unit", "") if field is not None else ""


def _gpu(ref: str | dict, path: str, problems: _Problems) -> GPU | None:
    if isinstance(ref, dict):
        return GPU.inline(**ref)
    try:
        return load_catalog().gpu(ref)
    except CatalogError as exc:
        problems.add(path, str(exc))
        return None


def _instance(ref: str | dict, path: str, problems: _Problems) -> dict | None:
    """An instance as a plain mapping: gpu (GPU), gpu_count, prices by model, interconnect."""
    if isinstance(ref, str):
        try:
            inst = load_catalog().instance(ref)
        except CatalogError as exc:
            problems.add(path, str(exc))
            return None
        gpu = _gpu(inst.gpu, path, problems)
        return {
            "id": inst.id,
            "gpu": gpu,
            "gpu_count": inst.gpu_count,
            "interconnect": inst.interconnect,
            "source": f"catalog: {inst.id} ({inst.region}, as of {inst.as_of})",
            "prices": {
                "on_demand": inst.on_demand_usd_per_hour,
                "spot": inst.spot_usd_per_hour,
                "reserved_1y": inst.reserved_1y_usd_per_hour,
                "reserved_3y": inst.reserved_3y_usd_per_hour,
            },
        }
    gpu = _gpu(ref["gpu"], f"{path}.gpu", problems)
    return {
        "id": None,
        "gpu": gpu,
        "gpu_count": ref["gpu_count"],
        "interconnect": ref.get("interconnect") or "pcie-x16",
        "source": f"scenario: inline instance {ref['name']!r}",
        "prices": {
            "on_demand": ref["on_demand_usd_per_hour"],
            "spot": ref.get("spot_usd_per_hour"),
            "reserved_1y": ref.get("reserved_1y_usd_per_hour"),
            "reserved_3y": ref.get("reserved_3y_usd_per_hour"),
        },
    }


def _throughput(gpu: GPU, ref: GPU, precision: str, path: str, problems: _Problems) -> float | None:
    try:
        return relative_throughput(gpu, ref, precision).value
    except (CatalogError, ValueError) as exc:
        problems.add(path, f"{exc}; give relative_throughput explicitly")
        return None


def _scaling(interconnect: str, count: int, path: str, problems: _Problems) -> Fixed | None:
    try:
        return Fixed(load_catalog().scaling_efficiency(interconnect, count))
    except CatalogError as exc:
        problems.add(path, str(exc))
        return None


def resolve(data: dict, source: str) -> Resolved:
    """Fill catalog defaults into a schema-validated scenario and build the engine inputs.

    Raises :class:`ScenarioError` naming the key path for unknown catalog ids, GPUs below
    ``workload.min_gpu_memory_gb``, missing catalog prices and inputs the engine rejects.
    """
    problems = _Problems()
    cat = load_catalog()
    buy, rent, work = dict(data["buy"]), dict(data["rent"]), data["workload"]
    chosen: dict[str, tuple[Any, str]] = {}

    def pick(side: str, name: str, given: Any, fallback: Any, origin: str) -> Any:
        key = f"{side}.{name}"
        if given is not None:
            chosen[key] = (given, "scenario")
            return given
        if key in DEFAULTS and fallback is None:
            value, origin = DEFAULTS[key]
            fallback = Fixed(value)
        chosen[key] = (fallback, origin)
        return fallback

    ref_gpu = _gpu(work["reference_gpu"], "workload.reference_gpu", problems)
    buy_gpu = _gpu(buy["gpu"], "buy.gpu", problems)
    inst = _instance(rent["instance"], "rent.instance", problems)
    rent_gpu = inst["gpu"] if inst else None
    min_mem = work.get("min_gpu_memory_gb")
    for gpu, path in ((buy_gpu, "buy.gpu"), (rent_gpu, "rent.instance")):
        if gpu is not None and min_mem is not None and gpu.memory_gb < min_mem:
            problems.add(
                path,
                f"{gpu.name} has {gpu.memory_gb:g} GB of memory, below "
                f"workload.min_gpu_memory_gb = {min_mem:g} GB",
            )
    n = buy["gpu_count"]
    try:
        tier = cat.platform_tier(n)
    except CatalogError as exc:
        tier = None
        problems.add("buy.gpu_count", str(exc))
    if problems.errors or buy_gpu is None or ref_gpu is None or inst is None or tier is None:
        raise ScenarioError(source, problems.errors)

    gpu_src = f"catalog: {buy_gpu.id}" if buy_gpu.id else "scenario: inline GPU"
    tier_src = f"catalog: platform tier {tier.name}"
    interconnect = buy.get("interconnect") or (
        "nvlink" if buy_gpu.cooling == "sxm" else tier.interconnect
    )
    precision = work["precision"]

    def price(value: float | None, path: str, what: str) -> Distribution | None:
        if value is None:
            problems.add(path, f"the catalog has no {what}; give {path} explicitly")
            return None
        return Fixed(value)

    gpu_price = buy["gpu_price_usd"] or price(
        buy_gpu.price_usd, "buy.gpu_price_usd", f"price for {buy_gpu.id}"
    )
    pick(
        "buy",
        "gpu_price_usd",
        buy["gpu_price_usd"],
        gpu_price,
        gpu_src + (" (estimated price)" if buy_gpu.price_estimated else ""),
    )
    pick("buy", "platform_price_usd", buy["platform_price_usd"], Fixed(tier.price_usd), tier_src)
    pick("buy", "gpu_power_w", buy["gpu_power_w"], Fixed(buy_gpu.tdp_w), gpu_src + " TDP")
    pick(
        "buy",
        "gpu_idle_w",
        buy["gpu_idle_w"],
        Fixed(buy_gpu.idle_w),
        gpu_src + (" idle (estimated)" if buy_gpu.idle_w_estimated else " idle"),
    )
    pick("buy", "platform_power_w", buy["platform_power_w"], Fixed(tier.power_w), tier_src)
    thr = buy["relative_throughput"]
    if thr is None:
        value = _throughput(buy_gpu, ref_gpu, precision, "buy.relative_throughput", problems)
        thr = Fixed(value) if value is not None else None
    pick(
        "buy",
        "relative_throughput",
        buy["relative_throughput"],
        thr,
        f"catalog: {precision} throughput of {buy_gpu.id or 'inline GPU'} relative to {ref_gpu.id}",
    )
    pick(
        "buy",
        "scaling_efficiency",
        buy["scaling_efficiency"],
        buy["scaling_efficiency"] or _scaling(interconnect, n, "buy.scaling_efficiency", problems),
        f"catalog: {interconnect} scaling, {n} GPUs",
    )
    for name in (
        "setup_usd",
        "electricity_usd_per_kwh",
        "electricity_annual_change",
        "pue",
        "hosting_usd_per_kw_month",
        "maintenance_rate",
        "gpu_annual_failure_rate",
        "admin_usd_per_month",
        "resale_annual_decay",
        "thermal_derate",
    ):
        pick("buy", name, buy[name], None, "")

    pricing = rent["pricing"]
    price_path = "rent.price_usd_per_hour"
    available = [k for k, v in inst["prices"].items() if v is not None]
    rent_price = rent["price_usd_per_hour"]
    if rent_price is None:
        if inst["prices"][pricing] is None:
            problems.add(
                price_path,
                f"{inst['id'] or 'the inline instance'} has no {pricing} "
                f"price; give {price_path} or choose pricing from: {', '.join(available)}",
            )
        else:
            rent_price = Fixed(inst["prices"][pricing])
    pick(
        "rent",
        "price_usd_per_hour",
        rent["price_usd_per_hour"],
        rent_price,
        f"{inst['source']}, {pricing}",
    )
    od = rent["on_demand_price_usd_per_hour"]
    if pricing.startswith("reserved"):
        od = od or Fixed(inst["prices"]["on_demand"])
        pick(
            "rent",
            "on_demand_price_usd_per_hour",
            rent["on_demand_price_usd_per_hour"],
            od,
            f"{inst['source']}, on_demand",
        )
    rthr = rent["relative_throughput"]
    if rthr is None:
        value = _throughput(rent_gpu, ref_gpu, precision, "rent.relative_throughput", problems)
        rthr = Fixed(value) if value is not None else None
    pick(
        "rent",
        "relative_throughput",
        rent["relative_throughput"],
        rthr,
        f"catalog: {precision} throughput of {rent_gpu.id or 'inline GPU'} "
        f"relative to {ref_gpu.id}",
    )
    pick(
        "rent",
        "scaling_efficiency",
        rent["scaling_efficiency"],
        rent["scaling_efficiency"]
        or _scaling(inst["interconnect"], inst["gpu_count"], "rent.scaling_efficiency", problems),
        f"catalog: {inst['interconnect']} scaling, {inst['gpu_count']} GPUs",
    )
    for name in (
        "price_annual_change",
        "spot_interruption_overhead",
        "storage_usd_per_month",
        "egress_usd_per_month",
        "admin_usd_per_month",
    ):
        pick("rent", name, rent[name], None, "")
    if problems.errors:
        raise ScenarioError(source, problems.errors)

    values = {key: value for key, (value, _) in chosen.items()}
    sim = data["simulation"]
    try:
        inputs = ModelInputs(
            horizon_months=data["horizon_months"],
            discount_rate=data["discount_rate"],
            tax_rate=data["tax_rate"],
            utilisation=tuple(data["utilisation"]),
            report_utilisation=data["report_utilisation"],
            samples=sim["samples"],
            seed=sim["seed"],
            method=sim["method"],
            correlations=tuple(tuple(c) for c in data["correlations"]),
            buy=BuyInputs(
                gpu_count=n,
                powered_when_idle=buy["powered_when_idle"],
                depreciation=buy["depreciation"],
                depreciation_years=buy["depreciation_years"],
                **{k[4:]: v for k, v in values.items() if k.startswith("buy.")},
            ),
            rent=RentInputs(
                gpu_count=inst["gpu_count"],
                pricing=pricing,
                committed_instances=rent["committed_instances"],
                **{k[5:]: v for k, v in values.items() if k.startswith("rent.")},
            ),
        )
    except InputError as exc:
        path, _, message = str(exc).partition(": ")
        raise ScenarioError(source, [{"path": path, "message": message}]) from None

    scenario = {
        "version": data["version"],
        "name": data["name"],
        "description": data["description"],
        "horizon_months": data["horizon_months"],
        "discount_rate": data["discount_rate"],
        "tax_rate": data["tax_rate"],
        "utilisation": list(data["utilisation"]),
        "report_utilisation": data["report_utilisation"],
        "simulation": dict(sim),
        "workload": dict(work),
        "buy": {
            "gpu": buy["gpu"],
            "gpu_count": n,
            "interconnect": interconnect,
            "powered_when_idle": buy["powered_when_idle"],
            "depreciation": buy["depreciation"],
            "depreciation_years": buy["depreciation_years"],
            **{k[4:]: v.to_spec() for k, v in values.items() if k.startswith("buy.")},
        },
        "rent": {
            "instance": rent["instance"],
            "pricing": pricing,
            "committed_instances": rent["committed_instances"],
            **{k[5:]: v.to_spec() for k, v in values.items() if k.startswith("rent.")},
        },
        "correlations": [list(c) for c in data["correlations"]],
    }
    assumptions = tuple(
        {"key": key, "value": value.to_spec(), "unit": _unit(*key.split(".", 1)), "source": origin}
        for key, (value, origin) in chosen.items()
    )
    return Resolved(
        inputs=inputs,
        scenario=scenario,
        assumptions=assumptions,
        buy_gpu=buy_gpu,
        rent_gpu=rent_gpu,
        reference_gpu=ref_gpu,
        platform=tier,
        interconnect=interconnect,
        buy_measured=precision in buy_gpu.measured and precision in ref_gpu.measured,
        rent_measured=precision in rent_gpu.measured and precision in ref_gpu.measured,
    )
