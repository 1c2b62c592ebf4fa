"""Frozen, validated engine inputs.

The engine never sees YAML, JSON or HTTP: a caller builds these from numbers and
:class:`~costmodel.distributions.Distribution` objects. Every numeric field carries its unit,
a one-line description and its valid range in the field's metadata (``unit``, ``text``,
``bound``); the inputs validate themselves against them, and the scenario schema reads the same
metadata, so each range is written once. Every uncertain input is named in sampling by
``"<side>.<field>"`` (``"buy.pue"``), which keys its random stream.

Conventions: months m = 1..H of 730 hours, cash flows at month ends, capex at m = 0, discount
factor (1 + r)^(-m/12) for a nominal annual rate r, an annual change g applied as
(1 + g)^((m - 1)/12) in month m. Money in USD; costs are positive numbers.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, ClassVar

from pricing.vocabulary import (
    CARBON_LIMITS,
    GPU_LIMITS,
    INSTANCE_LIMITS,
    PLATFORM_LIMITS,
    PRICING_MODELS,
    RESERVED_PRICINGS,
    Bound,
    written,
)

from .distributions import Distribution, Fixed
from .sampling import METHODS
from .units import MTOK_PER_GPU_HOUR, PER_GPU_HOUR, UNITS, rates
from .units import unit as unit_of

__all__ = [
    "Addition",
    "ApiInputs",
    "BuyInputs",
    "CarbonInputs",
    "DEPRECIATION_METHODS",
    "Demand",
    "FINANCING_KEYS",
    "FINANCING_KINDS",
    "Financing",
    "financing_problems",
    "InputError",
    "MAX_FLEET",
    "MAX_HORIZON",
    "MAX_TRIGGER",
    "MAX_TRIGGERS",
    "MAX_LEVELS",
    "MAX_SAMPLES",
    "MIN_UTILISATION",
    "MTOK_PER_GPU_HOUR",
    "ModelInputs",
    "OBJECTIVES",
    "OwnedCarbon",
    "HostedCarbon",
    "PlanCarbon",
    "PlanInputs",
    "RentInputs",
    "RentedCarbon",
    "THROUGHPUT_ERROR_BOUND",
    "THROUGHPUT_ERROR_RHO",
    "UNITS",
    "UTILISATION",
    "input_fields",
    "throughput_error_pairs",
]

DEPRECIATION_METHODS = ("straight_line", "macrs5")
#: Most utilisation levels one evaluation takes [-].
MAX_LEVELS = 101
#: Most Monte Carlo draws one evaluation takes [draw].
MAX_SAMPLES = 1_000_000
#: The smallest utilisation above 0 [-]. The cost per reference GPU-hour at u is
#: TCO(u) / (u * 730 * H * T), which overflows floating point for u as small as 1e-310; a
#: millionth of the hours (2.6 s a month) is far below any real use and keeps it in range.
MIN_UTILISATION = 1e-6


class InputError(ValueError):
    """An engine input outside its valid range.

    ``path`` names the input as the engine does (``"buy.pue"``, ``"horizon_months"``,
    ``"correlations[0]"``); ``message`` says what is wrong, without the path.
    """

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


def _input(
    unit: str,
    text: str,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    default: Any = MISSING,
    low_open: bool = False,
    integer: bool = False,
    bound: Bound | None = None,
    dist: bool = True,
    origin: str = "",
) -> Any:
    """A dataclass field with its unit, description, valid range and whether it takes a
    distribution (``dist``) as metadata. A number given as the ``default`` of a distribution
    field is a :class:`Fixed`; ``origin`` says in words why the default is what it is (the
    default of a document that leaves the input out, with that origin in its assumptions)."""
    if bound is None:
        bound = Bound(low, high, unit, low_open=low_open, integer=integer)
    meta = {"unit": unit, "text": text, "bound": bound, "dist": dist, "origin": origin}
    if dist and isinstance(default, int | float):
        default = Fixed(float(default))
    return field(metadata=meta) if default is MISSING else field(default=default, metadata=meta)


def _choice(text: str, choices: tuple[str, ...], *, default: Any = MISSING) -> Any:
    meta = {"text": text, "choices": choices}
    return field(metadata=meta) if default is MISSING else field(default=default, metadata=meta)


def _validate(obj: Any, prefix: str) -> None:
    """Check every field of ``obj`` against its ``bound`` or ``choices`` metadata."""
    for f in fields(obj):
        value, path = getattr(obj, f.name), f"{prefix}{f.name}"
        choices = f.metadata.get("choices")
        if value is None:
            continue
        if choices is not None and value not in choices:
            raise InputError(path, f"unknown value {value!r}; valid: {', '.join(choices)}")
        bound: Bound | None = f.metadata.get("bound")
        if bound is not None:
            _check_bound(value, path, bound)


def _check_bound(value: Any, path: str, bound: Bound) -> None:
    """Check a number, a tuple of them or a distribution's support against ``bound``."""
    if isinstance(value, Distribution):
        lo, hi = value.support()
        if bound.problem(lo) or bound.problem(hi):
            raise InputError(
                path,
                f"values must lie in {bound.text()}, but the distribution spans "
                f"[{written(lo)}, {written(hi)}]",
            )
        return
    for item in value if isinstance(value, tuple) else (value,):
        if bound.integer and (isinstance(item, bool) or not isinstance(item, int)):
            raise InputError(path, f"must be an integer, got {item!r}")
        problem = bound.problem(item)
        if problem:
            raise InputError(path, problem)


#: Shares of throughput kept (scaling, cooling): at least 1 %, so that costs cannot overflow.
_SHARE_KEPT = Bound(0.01, 1, "[-]")


def _rate(unit_id: str) -> Any:
    """One GPU's rate in the terms of unit ``unit_id`` (:class:`~costmodel.units.Unit`),
    optional: a side gives its throughput in one unit's rate."""
    u = UNITS[unit_id]
    return _input(u.rate_unit, u.rate_text, bound=u.rate_bound, default=None)


def _throughput_error() -> Any:
    """The factor an estimated per-GPU throughput is multiplied by: its error (1: exact)."""
    return _input(
        "[-]",
        "factor on the per-GPU throughput: an estimated throughput's error (lognormal, median 1)",
        bound=THROUGHPUT_ERROR_BOUND,
        default=1.0,
    )


#: The range of a throughput error [-]: a factor of 100 either way (an estimate's lognormal,
#: sigma 0.5, leaves it with a probability below 1e-19).
THROUGHPUT_ERROR_BOUND = Bound(0.01, 100, "[-]")
#: Spearman correlation of the throughput errors of two sides of one question [-]: the errors
#: of one model's estimates cluster (the calibration over- or under-predicts a model as a whole).
THROUGHPUT_ERROR_RHO = 0.5


def throughput_error_pairs(
    dists: Mapping[str, Distribution], given: Collection[tuple] = ()
) -> tuple[tuple[str, str, float], ...]:
    """The correlations the engine adds between the uncertain throughput errors among ``dists``
    (input name -> distribution, the ``"<side>.throughput_error"`` ones read): each pair at
    :data:`THROUGHPUT_ERROR_RHO`, except a pair the ``given`` correlations name (either order)."""
    names = [
        name
        for name, dist in dists.items()
        if name.endswith(".throughput_error") and not dist.is_fixed
    ]
    named = {frozenset(pair[:2]) for pair in given}
    return tuple(
        (a, b, THROUGHPUT_ERROR_RHO)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if frozenset((a, b)) not in named
    )


def _one_throughput(side: Any, prefix: str) -> None:
    """A side's per-GPU throughput is given once, in one unit's rate (:func:`units.rates`)."""
    names = [n for n in rates() if hasattr(side, n)]
    given = [n for n in names if getattr(side, n) is not None]
    if len(given) != 1:
        raise InputError(
            f"{prefix}{names[0]}",
            f"give exactly one of {' and '.join(names)}, got " + (" and ".join(given) or "neither"),
        )


def _other_rates(sides: dict[str, Any], unit_id: str, needs: str) -> None:
    """No side gives its throughput in another unit's rate than ``unit_id``'s; ``needs`` says
    what the question would need for it."""
    own = (UNITS[unit_id].rate, PER_GPU_HOUR)
    for name, side in sides.items():
        for rate in rates():
            if rate not in own and side is not None and getattr(side, rate, None) is not None:
                other = next(u for u in UNITS.values() if u.rate == rate)
                raise InputError(
                    f"{name}.{rate}", f"counts {other.words}: {needs.format(unit=other)}"
                )


#: How the owned hardware is paid for.
FINANCING_KINDS = ("cash", "loan", "lease")
#: The keys of each kind of financing besides ``kind``, and those it cannot do without.
FINANCING_KEYS: dict[str, tuple[str, ...]] = {
    "cash": (),
    "loan": ("rate", "term_months", "down_payment_share"),
    "lease": ("monthly_rate", "term_months"),
}
_FINANCING_REQUIRED = {
    "cash": (),
    "loan": ("rate", "term_months"),
    "lease": ("monthly_rate", "term_months"),
}


@dataclass(frozen=True, kw_only=True)
class Financing:
    """How the owned hardware is paid for: ``cash`` at m = 0; a ``loan`` of the capex less a
    down payment, amortised over ``term_months`` at ``rate``; or an operating ``lease`` of the
    hardware at ``monthly_rate`` of its price a month for ``term_months`` (which must cover the
    horizon). Each field's unit, description and range are in its metadata; a kind's keys are
    :data:`FINANCING_KEYS`. Inputs are named in sampling ``"buy.financing.<field>"``.
    """

    kind: str = _choice("how the hardware is paid for", FINANCING_KINDS, default="cash")
    rate: Distribution | None = _input(
        "[1/year]", "loan: nominal annual interest rate, rate/12 a month", 0, 1, default=None
    )
    term_months: int | None = _input(
        "[month]",
        "loan or lease: months of payments",
        1,
        360,
        integer=True,
        default=None,
        dist=False,
    )
    down_payment_share: float = _input(
        "[-]",
        "loan: share of the capex paid at m = 0",
        0,
        1,
        default=0.0,
        dist=False,
        origin="no down payment",
    )
    monthly_rate: Distribution | None = _input(
        "[1/month]",
        "lease: payment a month as a share of the hardware price",
        0,
        1,
        default=None,
    )

    def __post_init__(self) -> None:
        _validate(self, "buy.financing.")
        given = [f.name for f in fields(self) if getattr(self, f.name) != f.default]
        for key, message in financing_problems(self.kind, given):
            raise InputError(f"buy.financing.{key}", message)


def financing_problems(kind: str, given: Collection[str]) -> list[tuple[str, str]]:
    """What is wrong with financing of ``kind`` given the keys ``given``: (key, message) for
    each key the kind requires that is not given, and each key of another kind that is."""
    out = [(k, f"required for a {kind}") for k in _FINANCING_REQUIRED[kind] if k not in given]
    for key in given:
        if key != "kind" and key not in FINANCING_KEYS[kind]:
            users = [other for other, keys in FINANCING_KEYS.items() if key in keys]
            out.append((key, f"only for a {' or '.join(users)}, not for {kind}"))
    return out


#: Cash: the default financing.
CASH = Financing()


@dataclass(frozen=True, kw_only=True)
class BuyInputs:
    """The owned build: N GPUs in a platform, powered, hosted, maintained and resold.

    Each field's unit, description, range and default are in its metadata (see
    :func:`input_fields`); fields are keyword-only.
    """

    gpu_count: int = _input(
        "[GPU]", "GPUs in the build", bound=INSTANCE_LIMITS["gpu_count"], dist=False
    )
    gpu_price_usd: Distribution = _input(
        "[USD/GPU]", "price of one GPU", bound=GPU_LIMITS["price_usd"]
    )
    platform_price_usd: Distribution = _input(
        "[USD]",
        "CPU, board, RAM, PSU, chassis and storage",
        bound=PLATFORM_LIMITS["price_usd"],
    )
    gpu_power_w: Distribution = _input(
        "[W/GPU]", "draw of one busy GPU", 0, GPU_LIMITS["tdp_w"].high
    )
    gpu_idle_w: Distribution = _input(
        "[W/GPU]", "draw of one idle GPU", 0, GPU_LIMITS["tdp_w"].high
    )
    platform_power_w: Distribution = _input(
        "[W]", "host draw without the GPUs", bound=PLATFORM_LIMITS["power_w"]
    )
    relative_throughput: Distribution | None = _rate("reference_gpu_hour")
    tokens_per_s_per_gpu: Distribution | None = _rate("million_tokens")
    throughput_error: Distribution = _throughput_error()
    scaling_efficiency: Distribution = _input(
        "[-]", "multi-GPU scaling efficiency", bound=_SHARE_KEPT, default=1.0
    )
    setup_usd: Distribution = _input(
        "[USD]", "one-off setup, not resold", 0, 1e7, default=0.0, origin="no setup cost"
    )
    electricity_usd_per_kwh: Distribution = _input(
        "[USD/kWh]",
        "electricity price",
        0,
        10,
        default=0.1252,
        origin="US commercial average, March 2023 (EIA via shrinkthatfootprint.com)",
    )
    electricity_annual_change: Distribution = _input(
        "[1/year]",
        "annual change of the electricity price",
        -0.99,
        10,
        default=0.0,
        origin="flat electricity price",
    )
    pue: Distribution = _input(
        "[-]",
        "power usage effectiveness: cooling and facility overhead",
        1,
        5,
        default=1.0,
        origin="office or home, no facility overhead",
    )
    hosting_usd_per_kw_month: Distribution = _input(
        "[USD/(kW*month)]",
        "colocation fee on peak IT power",
        0,
        10_000,
        default=0.0,
        origin="no colocation fee",
    )
    maintenance_rate: Distribution = _input(
        "[1/year]",
        "maintenance as a share of the hardware price",
        0,
        1,
        default=0.0,
        origin="no maintenance contract",
    )
    gpu_annual_failure_rate: Distribution = _input(
        "[1/year]",
        "GPUs replaced per GPU-year, at the GPU price",
        0,
        1,
        default=0.0,
        origin="no GPU replacements",
    )
    repair_days: Distribution = _input(
        "[day]",
        "days a failed GPU is out of service (a spare, when there is one, takes its place)",
        0,
        365,
        default=0.0,
        origin="no downtime (a failed GPU is replaced at once)",
    )
    spare_gpus: int = _input(
        "[GPU]",
        "spare GPUs bought with the build, swapped in for failed ones",
        0,
        10_000,
        integer=True,
        default=0,
        dist=False,
    )
    financing: Financing = field(default=CASH, metadata={"text": "how the hardware is paid for"})
    admin_usd_per_month: Distribution = _input(
        "[USD/month]", "administration", 0, 1e6, default=0.0, origin="no administration cost"
    )
    resale_annual_decay: Distribution = _input(
        "[1/year]",
        "market value lost per year (geometric)",
        0,
        1,
        default=0.2,
        origin="20 %/year, between the 12 and 24 %/year lost by used GeForce cards (Dettmers 2020)",
    )
    thermal_derate: Distribution = _input(
        "[-]",
        "share of throughput kept under the build's cooling",
        bound=_SHARE_KEPT,
        default=1.0,
        origin="cooling keeps full speed",
    )
    powered_when_idle: bool = field(
        default=True, metadata={"text": "the build stays powered when idle"}
    )
    depreciation: str = _choice(
        "tax depreciation method", DEPRECIATION_METHODS, default="straight_line"
    )
    depreciation_years: int = _input(
        "[year]", "straight-line tax life", 1, 40, integer=True, default=5, dist=False
    )

    def __post_init__(self) -> None:
        _validate(self, "buy.")
        _one_throughput(self, "buy.")


@dataclass(frozen=True, kw_only=True)
class RentInputs:
    """The rented side: instances with ``gpu_count`` GPUs each, priced per instance-hour.

    ``committed_instances`` is the number of reserved instances (``None``: ceil(T_own /
    T_inst) per draw; 0: none). Each field's unit, description and range are in its metadata.
    """

    gpu_count: int = _input(
        "[GPU]", "GPUs per instance", bound=INSTANCE_LIMITS["gpu_count"], dist=False
    )
    pricing: str = _choice("pricing model", PRICING_MODELS, default="on_demand")
    price_usd_per_hour: Distribution = _input(
        "[USD/instance-hour]",
        "price under the pricing model",
        bound=INSTANCE_LIMITS["usd_per_hour"],
    )
    relative_throughput: Distribution | None = _rate("reference_gpu_hour")
    tokens_per_s_per_gpu: Distribution | None = _rate("million_tokens")
    throughput_error: Distribution = _throughput_error()
    on_demand_price_usd_per_hour: Distribution | None = _input(
        "[USD/instance-hour]",
        "price of hours above a reservation",
        bound=INSTANCE_LIMITS["usd_per_hour"],
        default=None,
    )
    committed_instances: int | None = _input(
        "[instance]",
        "reserved instances; default ceil(T_own/T_inst)",
        0,
        10_000,
        integer=True,
        default=None,
        dist=False,
    )
    price_annual_change: Distribution = _input(
        "[1/year]",
        "annual change of the cloud price",
        -0.99,
        10,
        default=0.0,
        origin="flat cloud prices",
    )
    spot_interruption_overhead: Distribution = _input(
        "[-]",
        "share of hours redone after spot interruptions",
        0,
        10,
        default=0.0,
        origin="no work redone",
    )
    storage_usd_per_month: Distribution = _input(
        "[USD/month]", "storage", 0, 1e6, default=0.0, origin="no storage cost"
    )
    egress_usd_per_month: Distribution = _input(
        "[USD/month]", "data egress", 0, 1e6, default=0.0, origin="no egress cost"
    )
    admin_usd_per_month: Distribution = _input(
        "[USD/month]", "administration", 0, 1e6, default=0.0, origin="no administration cost"
    )
    scaling_efficiency: Distribution = _input(
        "[-]", "multi-GPU scaling efficiency", bound=_SHARE_KEPT, default=1.0
    )

    def __post_init__(self) -> None:
        _validate(self, "rent.")
        _one_throughput(self, "rent.")
        reserved = self.pricing in RESERVED_PRICINGS
        if reserved and self.on_demand_price_usd_per_hour is None:
            raise InputError(
                "rent.on_demand_price_usd_per_hour",
                "a reservation needs the on-demand price for hours above the commitment",
            )
        if self.committed_instances is not None and not reserved:
            raise InputError("rent.committed_instances", "applies to reserved pricing only")


#: Prices of a hosted API [USD per million tokens]: from free to well above any listed price.
_MTOK_PRICE = Bound(0, 1000, "[USD/M tokens]")
#: Tokens of one request [tokens].
_TOKENS = Bound(0, 10_000_000, "[tokens]", integer=True)


@dataclass(frozen=True, kw_only=True)
class ApiInputs:
    """A hosted API billed per million tokens, doing the owned side's work: requests of
    ``input_tokens`` and ``output_tokens`` tokens, a share ``cached_input_share`` of the input
    billed at the cached price. Each field's unit, description, range and default are in its
    metadata.
    """

    input_usd_per_mtok: Distribution = _input(
        "[USD/M tokens]", "price of input tokens", bound=_MTOK_PRICE
    )
    output_usd_per_mtok: Distribution = _input(
        "[USD/M tokens]", "price of output tokens", bound=_MTOK_PRICE
    )
    input_tokens: int = _input("[tokens]", "input tokens per request", bound=_TOKENS, dist=False)
    output_tokens: int = _input("[tokens]", "output tokens per request", bound=_TOKENS, dist=False)
    cached_input_share: Distribution = _input(
        "[-]",
        "share of input tokens billed at the cached price",
        0,
        1,
        default=0.0,
        origin="no prompt cache",
    )
    cached_input_usd_per_mtok: Distribution | None = _input(
        "[USD/M tokens]",
        "price of cached input tokens; default the input price",
        bound=_MTOK_PRICE,
        default=None,
    )
    price_annual_change: Distribution = _input(
        "[1/year]",
        "annual change of the API's prices",
        -0.99,
        10,
        default=0.0,
        origin="flat API prices",
    )

    #: The unit of work an API bills: a million tokens.
    unit: ClassVar[str] = "million_tokens"

    def __post_init__(self) -> None:
        _validate(self, "api.")
        if self.input_tokens + self.output_tokens == 0:
            raise InputError("api.input_tokens", "a request needs at least one token")


_GRID = "[gCO2e/kWh]"
_EMBODIED = Bound(0, 10_000_000, "[kg CO2e]")


def _grid_change(whose: str) -> Any:
    return _input(
        "[1/year]",
        f"annual change of the carbon intensity of {whose} grid",
        -0.99,
        10,
        default=0.0,
        origin="a grid as carbon-intensive as today",
    )


@dataclass(frozen=True, kw_only=True)
class OwnedCarbon:
    """What the owned build emits: its electricity's carbon intensity ``grid`` (changing at
    ``grid_annual_change`` a year) and the embodied carbon of its hardware. The build's power
    and PUE are its :class:`BuyInputs`'. Named in sampling ``"buy.<field>"``."""

    grid: Distribution = _input(
        _GRID, "carbon intensity of the build's electricity", bound=CARBON_LIMITS["g_co2e_per_kwh"]
    )
    grid_annual_change: Distribution = _grid_change("the build's")
    embodied_kg_co2e: Distribution = _input(
        "[kg CO2e]",
        "embodied carbon of the build's hardware (GPUs, spares and platform)",
        bound=_EMBODIED,
    )

    def __post_init__(self) -> None:
        _validate(self, "buy.")


@dataclass(frozen=True, kw_only=True)
class RentedCarbon:
    """What a rented instance emits per instance-hour: ``power_kw`` at the provider's ``pue``
    on its region's ``grid``, and its embodied carbon spread over the provider's service life.
    Named in sampling ``"rent.<field>"``."""

    grid: Distribution = _input(
        _GRID, "carbon intensity of the region's electricity", bound=CARBON_LIMITS["g_co2e_per_kwh"]
    )
    grid_annual_change: Distribution = _grid_change("the region's")
    pue: Distribution = _input("[-]", "the provider's power usage effectiveness", 1, 5)
    power_kw: Distribution = _input("[kW]", "draw of one busy instance", 0, 1000)
    embodied_kg_co2e: Distribution = _input(
        "[kg CO2e]", "embodied carbon of one instance's share of its host", bound=_EMBODIED
    )

    def __post_init__(self) -> None:
        _validate(self, "rent.")


@dataclass(frozen=True, kw_only=True)
class HostedCarbon:
    """What a hosted API emits per million tokens it serves (the provider's or a tool's
    estimate; without one the API's carbon is unknown). Named in sampling ``"api.<field>"``."""

    g_co2e_per_mtok: Distribution = _input(
        "[gCO2e/M tokens]", "emissions per million tokens served", 0, 1e7
    )

    def __post_init__(self) -> None:
        _validate(self, "api.")


def _service_life(whose: str) -> Any:
    return _input(
        "[year]",
        f"service life {whose} embodied carbon is spread over",
        0,
        50,
        low_open=True,
        default=5.0,
        dist=False,
        origin="5 years, the amortisation EcoLogits and Cloud Carbon Footprint use for servers",
    )


@dataclass(frozen=True, kw_only=True)
class _Priced:
    """What carbon inputs share: the price ``usd_per_tonne`` that folds carbon into money, the
    service lives embodied carbon is spread over and every drawn input by name."""

    usd_per_tonne: Distribution = _input(
        "[USD/t CO2e]",
        "carbon price added to each side's cost",
        0,
        10_000,
        default=0.0,
        origin="no carbon price",
    )
    service_life_years: float = _service_life("the owned build's")
    provider_service_life_years: float = _service_life("a provider's host's")

    def __post_init__(self) -> None:
        _validate(self, "carbon.")

    @property
    def priced(self) -> bool:
        """Whether carbon has a price that can be above 0 (then it moves money figures)."""
        return self.usd_per_tonne.support()[1] > 0.0

    def _sides(self) -> dict[str, Any]:
        raise NotImplementedError

    def distributions(self) -> dict[str, Distribution]:
        """Every distribution-valued carbon input by its dotted name (``"buy.grid"``)."""
        return {**_distributions(self._sides()), "carbon.usd_per_tonne": self.usd_per_tonne}


@dataclass(frozen=True, kw_only=True)
class CarbonInputs(_Priced):
    """Emissions beside cost: the sides' carbon inputs and the price that folds carbon into
    money. ``usd_per_tonne`` 0 (the default) leaves every money figure as it is; the carbon
    inputs then are drawn on their own streams, after the cost inputs, so they move none of
    them. ``api`` is ``None`` when the API's emissions are unknown. Named in sampling
    ``"buy.<field>"``, ``"rent.<field>"``, ``"api.<field>"`` and ``"carbon.<field>"``.
    """

    buy: OwnedCarbon = field(metadata={"text": "the owned build's emissions"})
    rent: RentedCarbon = field(metadata={"text": "the rented instance's emissions"})
    api: HostedCarbon | None = field(
        default=None, metadata={"text": "the hosted API's emissions (unknown without)"}
    )

    def _sides(self) -> dict[str, Any]:
        return {"buy": self.buy, "rent": self.rent, "api": self.api}


@dataclass(frozen=True, kw_only=True)
class PlanCarbon(_Priced):
    """A fleet plan's emissions beside cost: one owned server's carbon inputs (``own``, its
    embodied carbon without spares), the reserved and burst instances' (``reserve`` ``None``
    without a reserve, ``burst`` ``None`` for an API burst), the burst API's (``api``, ``None``
    when unknown or not an API), the embodied carbon of one pooled spare GPU and the price, as
    for :class:`CarbonInputs`. Named in sampling ``"own.<field>"``, ``"reserve.<field>"``,
    ``"burst.<field>"``, ``"burst.api.<field>"`` and ``"carbon.<field>"``."""

    own: OwnedCarbon = field(metadata={"text": "one owned server's emissions"})
    burst: RentedCarbon | None = field(metadata={"text": "a burst instance's emissions"})
    reserve: RentedCarbon | None = field(
        default=None, metadata={"text": "a reserved instance's emissions"}
    )
    api: HostedCarbon | None = field(
        default=None, metadata={"text": "the burst API's emissions (unknown without)"}
    )
    spare_gpu_kg_co2e: float = field(
        default=0.0, metadata={"unit": "[kg CO2e]", "text": "embodied carbon of one spare GPU"}
    )

    def _sides(self) -> dict[str, Any]:
        sides = {"own": self.own, "reserve": self.reserve, "burst": self.burst}
        return {**sides, "burst.api": self.api}


#: The longest horizon [month].
MAX_HORIZON = 240


def _horizon() -> Any:
    return _input(
        "[month]", "months compared", 1, MAX_HORIZON, integer=True, default=36, dist=False
    )


def _discount_rate() -> Any:
    return _input(
        "[1/year]",
        "nominal annual discount rate",
        -0.5,
        1,
        low_open=True,
        default=0.0,
        dist=False,
    )


def _tax_rate() -> Any:
    return _input(
        "[-]",
        "tax rate; opex and depreciation are deductible when > 0",
        0,
        0.9,
        default=0.0,
        dist=False,
    )


def _samples() -> Any:
    return _input(
        "[draw]", "Monte Carlo draws", 1, MAX_SAMPLES, integer=True, default=10_000, dist=False
    )


def _seed() -> Any:
    return _input(
        "[-]",
        "random seed; same seed, same result",
        0,
        2**63 - 1,
        integer=True,
        default=0,
        dist=False,
    )


def _correlations() -> Any:
    return field(
        default=(), metadata={"text": "Spearman rank correlations between uncertain inputs"}
    )


def _distributions(sides: dict[str, Any]) -> dict[str, Distribution]:
    """Every distribution-valued field of each side object by ``"<side>.<field>"``."""
    out = {}
    for side, obj in sides.items():
        if obj is None:
            continue
        for f in fields(obj):
            value = getattr(obj, f.name)
            if isinstance(value, Distribution):
                out[f"{side}.{f.name}"] = value
            elif isinstance(value, Financing):
                out |= _distributions({f"{side}.{f.name}": value})
    return out


def _check_lease(owned: BuyInputs, side: str, horizon: int) -> None:
    """A lease is operating for the whole horizon: its term must cover it."""
    f = owned.financing
    if f.kind == "lease" and f.term_months < horizon:
        raise InputError(
            f"{side}.financing.term_months",
            f"a lease must run at least the horizon ({horizon} months), got {f.term_months}",
        )


def _check_correlations(
    correlations: tuple[tuple[str, str, float], ...], dists: dict[str, Distribution]
) -> None:
    for i, (a, b, rho) in enumerate(correlations):
        path = f"correlations[{i}]"
        for name in (a, b):
            if name not in dists:
                raise InputError(path, f"unknown input {name!r}")
            if dists[name].is_fixed:
                raise InputError(path, f"{name} is fixed; only uncertain inputs can be correlated")
        if a == b:
            raise InputError(path, "an input cannot be correlated with itself")
        if not -1.0 < rho < 1.0:
            raise InputError(path, "rho must be in (-1, 1)")


#: The utilisation levels compared unless given: 0.05 to 1.00 in steps of 0.05 [-].
UTILISATION = tuple(round(0.05 * i, 10) for i in range(1, 21))


@dataclass(frozen=True, kw_only=True)
class ModelInputs:
    """A whole evaluation: horizon, money conventions, utilisation grid, the sides, sampling.

    The owned build (``buy``) is compared with rented instances (``rent``) and, for inference
    work, a hosted API (``api``) doing the same work; ``unit`` names the unit of work every
    throughput counts (per GPU-hour), which an API requires to be ``million_tokens``.
    ``correlations`` are (input name, input name, Spearman rho) triples; ``report_utilisation``
    is the level at which cumulative cost by month is summarised (default: the level nearest
    0.5). With ``target_halfwidth`` the engine doubles the draws, starting from ``samples``,
    until the break-even P50's 95 % interval (and with an API that of the break-even against
    it) is that narrow or the next doubling would pass ``max_samples`` (default
    :data:`MAX_SAMPLES`, never below ``samples``). Each field's unit, description and range
    are in its metadata.
    """

    horizon_months: int = _horizon()
    utilisation: tuple[float, ...] = _input(
        "[-]",
        "busy share of wall-clock hours of the owned GPUs",
        0,
        1,
        default=UTILISATION,
        dist=False,
    )
    buy: BuyInputs = field(metadata={"text": "the owned build"})
    rent: RentInputs = field(metadata={"text": "the rented instances"})
    api: ApiInputs | None = field(
        default=None, metadata={"text": "a hosted API doing the same work (inference only)"}
    )
    unit: str = _choice(
        "the unit of work the throughputs count, per GPU-hour", UNITS, default="reference_gpu_hour"
    )
    discount_rate: float = _discount_rate()
    tax_rate: float = _tax_rate()
    samples: int = _samples()
    seed: int = _seed()
    method: str = _choice("sampler", METHODS, default="lhs")
    correlations: tuple[tuple[str, str, float], ...] = _correlations()
    report_utilisation: float | None = _input(
        "[-]", "level of the cumulative-cost-by-month summary", 0, 1, default=None, dist=False
    )
    target_halfwidth: float | None = _input(
        "[-]",
        "half-width of the break-even P50's 95 % interval to reach (with an `api` block, of "
        "the break-even against the API as well): the draws are doubled until it is met or "
        "max_samples is reached",
        0,
        1,
        low_open=True,
        default=None,
        dist=False,
    )
    max_samples: int | None = _input(
        "[draw]",
        "most draws when doubling toward target_halfwidth (never fewer than samples)",
        1,
        MAX_SAMPLES,
        integer=True,
        default=None,
        dist=False,
    )
    carbon: CarbonInputs | None = field(
        default=None, metadata={"text": "emissions beside cost, and a carbon price"}
    )
    further: tuple[tuple[str, Any], ...] = field(
        default=(),
        metadata={
            "text": "further sides compared with buying: (registered side name, its frozen "
            "inputs) pairs (costmodel.sides.SIDES)"
        },
    )

    def __post_init__(self) -> None:
        _validate(self, "")
        self._check_carbon()
        for name in self.further_sides:
            if name in ("buy", "rent", "api"):
                raise InputError(name, "is not a further side: give it as its own field")
        if not self.utilisation:
            raise InputError("utilisation", "needs at least one level")
        if len(self.utilisation) > MAX_LEVELS:
            raise InputError(
                "utilisation", f"at most {MAX_LEVELS} levels, got {len(self.utilisation)}"
            )
        tiny = [u for u in self.utilisation if 0 < u < MIN_UTILISATION]
        if tiny:
            raise InputError(
                "utilisation",
                f"a level above 0 must be at least {MIN_UTILISATION:g}, got {tiny[0]:g}",
            )
        if self.api is not None and self.unit != ApiInputs.unit:
            raise InputError("api", f"a hosted API bills tokens: the unit must be {ApiInputs.unit}")
        _other_rates({"buy": self.buy, "rent": self.rent}, self.unit, "the unit must be {unit.id}")
        _check_lease(self.buy, "buy", self.horizon_months)
        _check_correlations(self.correlations, self.distributions())

    def distributions(self) -> dict[str, Distribution]:
        """Every distribution-valued input by its dotted name (``"buy.pue"``); the carbon
        inputs among them only when carbon has a price (:attr:`CarbonInputs.priced`)."""
        sides = {"buy": self.buy, "rent": self.rent, "api": self.api, **self.further_sides}
        out = _distributions(sides)
        if self.carbon is not None and self.carbon.priced:
            out |= self.carbon.distributions()
        return out

    @property
    def further_sides(self) -> dict[str, Any]:
        """The further sides' inputs by side name, in order."""
        return dict(self.further)

    def _check_carbon(self) -> None:
        """API emissions need an API; an unpriced carbon input is drawn apart from the costs,
        so it cannot be correlated with them."""
        c = self.carbon
        if c is None:
            return
        if c.api is not None and self.api is None:
            raise InputError("api.g_co2e_per_mtok", "applies to a hosted API side only")
        _check_apart(c, self.correlations)


def _check_apart(c: _Priced, correlations: tuple[tuple[str, str, float], ...]) -> None:
    """An unpriced carbon input is drawn apart from the costs: it cannot be correlated."""
    if c.priced:
        return
    apart = c.distributions()
    for i, pair in enumerate(correlations):
        for name in pair[:2]:
            if name in apart:
                raise InputError(
                    f"correlations[{i}]",
                    f"{name} is a carbon input, drawn apart from the costs while carbon "
                    "has no price; give carbon.usd_per_tonne above 0 to correlate it",
                )


#: What a fleet plan's ``best`` candidate minimises.
OBJECTIVES = ("mean", "p90", "cvar95")
#: Most owned servers or reserved instances a plan considers [count].
MAX_FLEET = 1000


@dataclass(frozen=True, kw_only=True)
class Demand:
    """The work to be done: ``work_per_month`` W_1 [units of work/month] in month 1, counted in
    ``unit`` (a :class:`~costmodel.units.Unit` id), growing at ``annual_growth`` (month m:
    W_1 * (1 + g_w)^((m - 1)/12)). Within each month the load is a daily sinusoid whose peak
    hour is ``peak_to_mean`` times the mean hour (1: flat, :mod:`costmodel.load`). The amount
    is named in sampling by its unit's demand key (``"demand.million_tokens_per_month"``), as
    documents write it (:meth:`document_fields`).
    """

    unit: str = _choice("the unit of work of the demand", UNITS, default="reference_gpu_hour")
    work_per_month: Distribution = field(
        metadata={"text": "work in month 1, in the unit's demand key [units of work/month]"}
    )
    annual_growth: Distribution = _input(
        "[1/year]", "annual growth of the work", -0.99, 10, default=0.0, origin="no growth"
    )
    peak_to_mean: Distribution = _input(
        "[-]",
        "load of the busiest hour of the day over the mean hour (a daily sinusoid)",
        1,
        2,
        default=1.0,
        origin="a flat load within each month",
    )

    def __post_init__(self) -> None:
        _validate(self, "demand.")
        path = f"demand.{self.work_field}"
        if self.work_per_month is None:
            raise InputError("demand", f"needs the work in month 1: {path}")
        _check_bound(self.work_per_month, path, unit_of(self.unit).demand_bound)

    @property
    def work_field(self) -> str:
        """The document key of the work, its unit's (``reference_gpu_hours_per_month``,
        ``million_tokens_per_month``)."""
        return unit_of(self.unit).demand

    def distributions(self) -> dict[str, Distribution]:
        """Every distribution of the demand by its name in sampling, the work first."""
        rest = _distributions({"demand": self})
        del rest["demand.work_per_month"]
        return {f"demand.{self.work_field}": self.work_per_month, **rest}

    @classmethod
    def given(cls, **keys: Any) -> Demand:
        """A demand from the keys a document writes: exactly one unit's amount key
        (``million_tokens_per_month=...``) and any other field."""
        amounts = {u.demand: u.id for u in UNITS.values()}
        named = [k for k in keys if k in amounts and keys[k] is not None]
        if not named:
            raise InputError("demand", f"needs the work in month 1: {' or '.join(amounts)}")
        if len(named) > 1:
            raise InputError(f"demand.{named[1]}", f"give one of {' and '.join(named)}, not both")
        rest = {k: v for k, v in keys.items() if k not in amounts}
        return cls(unit=amounts[named[0]], work_per_month=keys[named[0]], **rest)

    def document(self) -> dict[str, Any]:
        """The demand by the keys a document writes (:meth:`given` takes them back)."""
        rest = {f.name: getattr(self, f.name) for f in fields(self)}
        del rest["unit"], rest["work_per_month"]
        return {self.work_field: self.work_per_month, **rest}

    @staticmethod
    def document_fields() -> dict[str, Field]:
        """The demand's keys as documents write them, with their metadata: one amount key per
        unit of work (optional: the document gives the one of its unit) and the rest."""
        amounts = {
            u.demand: _input(u.demand_unit, u.demand_text, bound=u.demand_bound, default=None)
            for u in UNITS.values()
        }
        rest = {f.name: f for f in fields(Demand) if f.name not in ("unit", "work_per_month")}
        return amounts | rest


def _counts(text: str) -> Any:
    return _input("[count]", text, 0, MAX_FLEET, integer=True, dist=False)


#: The share of the first servers' capacity a trigger may name, at most [-].
MAX_TRIGGER = 10.0
#: The most candidate triggers (or months) of a later purchase [count].
MAX_TRIGGERS = 24


@dataclass(frozen=True, kw_only=True)
class Addition:
    """One later purchase of a fleet plan (``own.add``): ``servers`` (min, max) S1, the candidate
    counts of servers added, bought at the end of the first month a whose work passes a share
    ``when_demand_above`` theta of the first servers' capacity (candidate shares), or at the
    fixed months ``at_month`` (one or the other), in service from month a + L + 1
    (``lead_time_months`` L), at the server's purchase price times
    (1 + ``price_annual_change``)^(a/12). Sampled as ``"own.add.<field>"``.
    """

    servers: tuple[int, int] = _counts("servers added later, (min, max)")
    when_demand_above: tuple[float, ...] = _input(
        "[-]",
        "candidate triggers: shares of the first servers' capacity the month's work passes",
        0,
        MAX_TRIGGER,
        default=(),
        dist=False,
    )
    at_month: tuple[int, ...] = _input(
        "[month]", "candidate months of the purchase, instead of a trigger", 1, MAX_HORIZON,
        default=(), integer=True, dist=False,
    )  # fmt: skip
    lead_time_months: int = _input(
        "[month]",
        "months from the order (the end of the trigger month) to the first month of service, "
        "less one",
        0,
        MAX_HORIZON,
        default=1,
        integer=True,
        dist=False,
        origin="ordered at the end of the trigger month, in service from the second month after",
    )
    price_annual_change: Distribution = _input(
        "[1/year]",
        "annual change of the server's purchase price until it is bought",
        -0.99,
        10,
        default=0.0,
        origin="no change",
    )

    def __post_init__(self) -> None:
        _validate(self, "own.add.")
        low, high = self.servers
        if low > high:
            raise InputError("own.add.servers.min", f"min {low} exceeds max {high}")
        if bool(self.when_demand_above) == bool(self.at_month):
            raise InputError(
                "own.add", "give when_demand_above (candidate shares) or at_month, one of them"
            )

    @property
    def triggers(self) -> tuple[float, ...]:
        """The candidate triggers: shares theta, or months (:attr:`by_month`)."""
        return self.when_demand_above or tuple(float(m) for m in self.at_month)

    @property
    def by_month(self) -> bool:
        """Whether the purchase is at fixed months (``at_month``) rather than triggered."""
        return bool(self.at_month)

    @property
    def counts(self) -> tuple[int, ...]:
        """The candidate numbers of servers added, 0 left out (the plans that add nothing are
        always candidates) [count]."""
        return tuple(range(max(1, self.servers[0]), self.servers[1] + 1))


@dataclass(frozen=True, kw_only=True)
class PlanInputs:
    """A fleet plan: which mix of owned servers, reserved instances and burst capacity serves a
    growing, uncertain demand at least cost.

    ``own`` is one server (its ``gpu_count`` GPUs); ``servers`` and ``instances`` are the
    (min, max) candidate counts of owned servers and of ``reserve`` instances (none without a
    reserve); ``burst`` takes the rest: on-demand or spot instances, or a hosted API (an
    :class:`ApiInputs`, for a demand in millions of tokens). Inputs are named in sampling by
    ``"own.<field>"``, ``"reserve.<field>"``, ``"burst.<field>"`` (``"burst.api.<field>"``
    for an API) and ``"demand.<field>"``. The fleet's spares are pooled: ``spare_share`` of
    its GPUs, s = ceil(spare_share * S * N) for S servers (``own.spare_gpus`` is not taken).
    """

    horizon_months: int = _horizon()
    demand: Demand = field(metadata={"text": "the work and its growth"})
    own: BuyInputs = field(metadata={"text": "one owned server"})
    burst: RentInputs | ApiInputs = field(
        metadata={"text": "the instances or the hosted API that take the rest of the work"}
    )
    servers: tuple[int, int] = _counts("owned servers considered, (min, max)")
    reserve: RentInputs | None = field(default=None, metadata={"text": "reserved instances"})
    instances: tuple[int, int] = field(
        default=(0, 0), metadata={"text": "reserved instances considered, (min, max)"}
    )
    discount_rate: float = _discount_rate()
    tax_rate: float = _tax_rate()
    samples: int = _samples()
    seed: int = _seed()
    method: str = _choice("sampler", METHODS, default="lhs")
    correlations: tuple[tuple[str, str, float], ...] = _correlations()
    objective: str = _choice("what the best candidate minimises", OBJECTIVES, default="mean")
    spare_share: float = _input(
        "[-]",
        "spare GPUs pooled over the fleet, as a share of its GPUs (rounded up)",
        0,
        1,
        default=0.0,
        dist=False,
    )
    carbon: PlanCarbon | None = field(
        default=None, metadata={"text": "emissions beside cost, and a carbon price"}
    )
    add: Addition | None = field(
        default=None, metadata={"text": "one later purchase of servers, when the work arrives"}
    )

    def __post_init__(self) -> None:
        _validate(self, "")
        self._check_carbon()
        self._check_add()
        if self.own.spare_gpus:
            raise InputError("own.spare_gpus", "a plan pools its spares: give spare_share")
        for name, pair in (("servers", self.servers), ("instances", self.instances)):
            low, high = pair
            for end, value in (("min", low), ("max", high)):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise InputError(f"{name}.{end}", f"must be an integer, got {value!r}")
                if not 0 <= value <= MAX_FLEET:
                    raise InputError(f"{name}.{end}", f"must be in [0, {MAX_FLEET:,}], got {value}")
            if low > high:
                raise InputError(f"{name}.min", f"min {low} exceeds max {high}")
        if self.reserve is None and self.instances != (0, 0):
            raise InputError("instances", "reserved instances need a reserve block")
        if self.reserve is not None and self.reserve.pricing not in RESERVED_PRICINGS:
            raise InputError(
                "reserve.pricing",
                f"must be {' or '.join(sorted(RESERVED_PRICINGS))}, got {self.reserve.pricing!r}",
            )
        if not isinstance(self.burst, ApiInputs) and self.burst.pricing not in (
            "on_demand",
            "spot",
        ):
            raise InputError(
                "burst.pricing", f"must be on_demand or spot, got {self.burst.pricing!r}"
            )
        self._check_units()
        _check_lease(self.own, "own", self.horizon_months)
        _check_correlations(self.correlations, self.distributions())

    def _check_units(self) -> None:
        """Every side counts the demand's unit: an API burst needs the unit it bills, and no
        side gives its throughput in another unit's rate."""
        unit = self.demand.unit
        if isinstance(self.burst, ApiInputs) and unit != ApiInputs.unit:
            demand = unit_of(ApiInputs.unit).demand
            raise InputError("burst", f"an API bills tokens: the demand needs {demand}")
        sides = {"own": self.own, "reserve": self.reserve, "burst": self.burst}
        _other_rates(sides, unit, "the demand needs {unit.demand}")

    @property
    def candidates(self) -> int:
        """Number of candidates [count]: every (servers, instances) pair, and with a later
        purchase each of them again for every count added and trigger."""
        pairs = (self.servers[1] - self.servers[0] + 1) * (
            self.instances[1] - self.instances[0] + 1
        )
        if self.add is None:
            return pairs
        return pairs * (1 + len(self.add.counts) * len(self.add.triggers))

    def _check_add(self) -> None:
        """A purchase month lies within the horizon."""
        a = self.add
        if a is None:
            return
        for month in a.at_month:
            if month > self.horizon_months:
                raise InputError(
                    "own.add.at_month",
                    f"month {month} is past the horizon of {self.horizon_months} months",
                )

    @property
    def burst_side(self) -> str:
        """The name of the burst side's inputs: ``"burst"``, or ``"burst.api"`` for an API."""
        return "burst.api" if isinstance(self.burst, ApiInputs) else "burst"

    def distributions(self) -> dict[str, Distribution]:
        """Every distribution-valued input by its dotted name (``"own.pue"``; an API burst's
        as ``"burst.api.<field>"``, its key path in a plan)."""
        sides = {"own": self.own, "reserve": self.reserve, self.burst_side: self.burst}
        out = self.demand.distributions() | _distributions({**sides, "own.add": self.add})
        if self.carbon is not None and self.carbon.priced:
            out |= self.carbon.distributions()
        return out

    def _check_carbon(self) -> None:
        """Each side's carbon inputs match the sides (a reserve's only with a reserve, an
        API's only for an API burst, the instances' for instances); an unpriced carbon input is
        drawn apart from the costs, so it cannot be correlated with them."""
        c = self.carbon
        if c is None:
            return
        api = isinstance(self.burst, ApiInputs)
        if (c.reserve is None) != (self.reserve is None):
            raise InputError("reserve", "the reserve's carbon inputs need a reserve, and it them")
        if c.api is not None and not api:
            raise InputError("burst.api.g_co2e_per_mtok", "applies to an API burst only")
        if (c.burst is None) != api:
            raise InputError("burst", "burst instances need their carbon inputs, an API none")
        _check_apart(c, self.correlations)


def input_fields(cls: type) -> dict[str, Field]:
    """The dataclass fields of an inputs class by name, with their ``unit``/``text``/``bound``
    or ``choices`` metadata; a :class:`Demand`'s by the keys documents write
    (:meth:`Demand.document_fields`)."""
    if cls is Demand:
        return Demand.document_fields()
    return {f.name: f for f in fields(cls)}
