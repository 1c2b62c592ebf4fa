"""Frozen, validated engine inputs.

The scenario layer resolves catalog defaults and builds these; the engine never sees YAML, JSON
or HTTP. Every uncertain quantity is a :class:`~costmodel.distributions.Distribution`, named in
sampling by its dotted path (``"buy.pue"``), which keys its random stream.

Conventions (DESIGN section 4): months m = 1..H of 730 hours, cash flows at month ends, capex at
m = 0, discount factor (1 + r)^(-m/12) for a nominal annual rate r, an annual change g applied
as (1 + g)^((m - 1)/12) in month m. Money in USD; costs are positive numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from .distributions import Distribution, Fixed
from .sampling import METHODS

__all__ = [
    "InputError",
    "BuyInputs",
    "RentInputs",
    "ModelInputs",
    "PRICING_MODELS",
    "DEPRECIATION_METHODS",
]

PRICING_MODELS = ("on_demand", "spot", "reserved_1y", "reserved_3y")
DEPRECIATION_METHODS = ("straight_line", "macrs5")


class InputError(ValueError):
    """Engine inputs outside their valid range; the message names the field."""


def _check(ok: bool, name: str, message: str) -> None:
    if not ok:
        raise InputError(f"{name}: {message}")


def _within(dist: Distribution, name: str, low: float, high: float = math.inf) -> None:
    """Every value the distribution can take must lie in [low, high]."""
    lo, hi = dist.support()
    _check(
        low <= lo and hi <= high,
        name,
        f"values must lie in [{low:g}, {high:g}], but the distribution spans [{lo:g}, {hi:g}]",
    )


@dataclass(frozen=True)
class BuyInputs:
    """The owned build: N GPUs in a platform, powered, hosted, maintained and resold.

    gpu_price_usd [USD/GPU]; platform_price_usd [USD]; setup_usd [USD] one-off, not resold;
    gpu_power_w, gpu_idle_w [W/GPU]; platform_power_w [W]; electricity_usd_per_kwh [USD/kWh];
    electricity_annual_change [1/year]; pue [-] >= 1; hosting_usd_per_kw_month
    [USD/(kW*month)] on peak IT kW; maintenance_rate [1/year] of hardware price;
    gpu_annual_failure_rate [1/year]; admin_usd_per_month [USD/month]; resale_annual_decay
    [1/year] geometric; relative_throughput [reference GPU-hours per GPU-hour];
    scaling_efficiency [-]; thermal_derate [-] throughput kept under the build's cooling.
    """

    gpu_count: int
    gpu_price_usd: Distribution
    platform_price_usd: Distribution
    gpu_power_w: Distribution
    gpu_idle_w: Distribution
    platform_power_w: Distribution
    electricity_usd_per_kwh: Distribution
    relative_throughput: Distribution
    setup_usd: Distribution = Fixed(0.0)
    powered_when_idle: bool = True
    electricity_annual_change: Distribution = Fixed(0.0)
    pue: Distribution = Fixed(1.0)
    hosting_usd_per_kw_month: Distribution = Fixed(0.0)
    maintenance_rate: Distribution = Fixed(0.0)
    gpu_annual_failure_rate: Distribution = Fixed(0.0)
    admin_usd_per_month: Distribution = Fixed(0.0)
    resale_annual_decay: Distribution = Fixed(1.0)
    depreciation: str = "straight_line"
    depreciation_years: int = 5
    scaling_efficiency: Distribution = Fixed(1.0)
    thermal_derate: Distribution = Fixed(1.0)

    def __post_init__(self) -> None:
        _check(1 <= self.gpu_count <= 64, "buy.gpu_count", "must be an integer in [1, 64]")
        _check(
            self.depreciation in DEPRECIATION_METHODS,
            "buy.depreciation",
            f"unknown method {self.depreciation!r}; valid: {', '.join(DEPRECIATION_METHODS)}",
        )
        _check(
            1 <= self.depreciation_years <= 40,
            "buy.depreciation_years",
            "must be an integer in [1, 40]",
        )
        for name in (
            "gpu_price_usd",
            "platform_price_usd",
            "setup_usd",
            "gpu_power_w",
            "gpu_idle_w",
            "platform_power_w",
            "electricity_usd_per_kwh",
            "hosting_usd_per_kw_month",
            "maintenance_rate",
            "gpu_annual_failure_rate",
            "admin_usd_per_month",
        ):
            _within(getattr(self, name), f"buy.{name}", 0.0)
        _within(self.electricity_annual_change, "buy.electricity_annual_change", -0.99, 10.0)
        _within(self.pue, "buy.pue", 1.0, 5.0)
        _within(self.resale_annual_decay, "buy.resale_annual_decay", 0.0, 1.0)
        _within(self.relative_throughput, "buy.relative_throughput", 1e-9)
        _within(self.scaling_efficiency, "buy.scaling_efficiency", 1e-9, 1.0)
        _within(self.thermal_derate, "buy.thermal_derate", 1e-9, 1.0)


@dataclass(frozen=True)
class RentInputs:
    """The rented side: instances with ``gpu_count`` GPUs each, priced per instance-hour.

    price_usd_per_hour [USD/instance-hour] for the pricing model; on_demand_price_usd_per_hour
    [USD/instance-hour] for hours above a reservation; committed_instances: reserved instances
    (None: ceil(T_own / T_inst) per draw); price_annual_change [1/year];
    spot_interruption_overhead [-] share of hours redone; storage, egress and admin
    [USD/month]; relative_throughput [reference GPU-hours per GPU-hour]; scaling_efficiency [-].
    """

    gpu_count: int
    pricing: str
    price_usd_per_hour: Distribution
    relative_throughput: Distribution
    on_demand_price_usd_per_hour: Distribution | None = None
    committed_instances: int | None = None
    price_annual_change: Distribution = Fixed(0.0)
    spot_interruption_overhead: Distribution = Fixed(0.0)
    storage_usd_per_month: Distribution = Fixed(0.0)
    egress_usd_per_month: Distribution = Fixed(0.0)
    admin_usd_per_month: Distribution = Fixed(0.0)
    scaling_efficiency: Distribution = Fixed(1.0)

    def __post_init__(self) -> None:
        _check(1 <= self.gpu_count <= 64, "rent.gpu_count", "must be an integer in [1, 64]")
        _check(
            self.pricing in PRICING_MODELS,
            "rent.pricing",
            f"unknown pricing {self.pricing!r}; valid: {', '.join(PRICING_MODELS)}",
        )
        reserved = self.pricing.startswith("reserved")
        _check(
            not reserved or self.on_demand_price_usd_per_hour is not None,
            "rent.on_demand_price_usd_per_hour",
            "a reservation needs the on-demand price for hours above the commitment",
        )
        _check(
            self.committed_instances is None or (reserved and self.committed_instances >= 0),
            "rent.committed_instances",
            "applies to reserved pricing only and must not be negative",
        )
        for name in (
            "price_usd_per_hour",
            "storage_usd_per_month",
            "egress_usd_per_month",
            "admin_usd_per_month",
        ):
            _within(getattr(self, name), f"rent.{name}", 0.0)
        if self.on_demand_price_usd_per_hour is not None:
            _within(self.on_demand_price_usd_per_hour, "rent.on_demand_price_usd_per_hour", 0.0)
        _within(self.price_annual_change, "rent.price_annual_change", -0.99, 10.0)
        _within(self.spot_interruption_overhead, "rent.spot_interruption_overhead", 0.0, 10.0)
        _within(self.relative_throughput, "rent.relative_throughput", 1e-9)
        _within(self.scaling_efficiency, "rent.scaling_efficiency", 1e-9, 1.0)


@dataclass(frozen=True)
class ModelInputs:
    """A whole evaluation: horizon, money conventions, utilisation grid, both sides, sampling.

    horizon_months [month] 1..240; discount_rate [1/year] nominal annual; tax_rate [-];
    utilisation [-] levels in [0, 1] (busy share of wall-clock hours of the owned GPUs);
    correlations: (input name, input name, Spearman rho) triples; report_utilisation [-]: the
    level at which cumulative cost by month is summarised.
    """

    horizon_months: int
    utilisation: tuple[float, ...]
    buy: BuyInputs
    rent: RentInputs
    discount_rate: float = 0.0
    tax_rate: float = 0.0
    samples: int = 10_000
    seed: int = 0
    method: str = "lhs"
    correlations: tuple[tuple[str, str, float], ...] = ()
    report_utilisation: float | None = None

    def __post_init__(self) -> None:
        _check(1 <= self.horizon_months <= 240, "horizon_months", "must be in [1, 240]")
        _check(-0.5 < self.discount_rate <= 1.0, "discount_rate", "must be in (-0.5, 1]")
        _check(0.0 <= self.tax_rate <= 0.9, "tax_rate", "must be in [0, 0.9]")
        _check(len(self.utilisation) > 0, "utilisation", "needs at least one level")
        _check(
            all(0.0 <= u <= 1.0 for u in self.utilisation),
            "utilisation",
            "every level must be in [0, 1]",
        )
        _check(self.samples >= 1, "simulation.samples", "must be at least 1")
        _check(self.seed >= 0, "simulation.seed", "must not be negative")
        _check(
            self.method in METHODS,
            "simulation.method",
            f"unknown method {self.method!r}; valid: {', '.join(METHODS)}",
        )
        names = set(self.distributions())
        for i, (a, b, rho) in enumerate(self.correlations):
            for name in (a, b):
                _check(name in names, f"correlations[{i}]", f"unknown input {name!r}")
                _check(
                    not self.distributions()[name].is_fixed,
                    f"correlations[{i}]",
                    f"{name} is fixed; only uncertain inputs can be correlated",
                )
            _check(a != b, f"correlations[{i}]", "an input cannot be correlated with itself")
            _check(-1.0 < rho < 1.0, f"correlations[{i}]", "rho must be in (-1, 1)")
        if self.report_utilisation is not None:
            _check(
                0.0 <= self.report_utilisation <= 1.0,
                "report_utilisation",
                "must be in [0, 1]",
            )

    def distributions(self) -> dict[str, Distribution]:
        """Every distribution-valued input by its dotted name (``"buy.pue"``)."""
        out = {}
        for side, obj in (("buy", self.buy), ("rent", self.rent)):
            for f in fields(obj):
                value = getattr(obj, f.name)
                if isinstance(value, Distribution):
                    out[f"{side}.{f.name}"] = value
        return out
