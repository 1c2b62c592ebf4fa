"""The cost equations (docs/model.md), vectorised over draws.

Every function takes arrays of shape ``(S,)`` (one value per Monte Carlo draw) and returns arrays
of shape ``(S,)`` or ``(S, H)``. Both sides are reduced to a form in utilisation u:

- buy: monthly after-tax discounted flow ``a_m + u * b_m``, capex ``C0`` at m = 0 and an after-tax
  discounted salvage at m = H, so ``TCO_buy(u) = C0 + sum(a) + u * sum(b) - salvage``;
- rent: monthly after-tax discounted flow ``r_m + s_m * max(0, u - k)``, with kink k = 0 except
  for a reservation, where k is the utilisation that fills the committed instances.

Sign rule: costs are positive; resale and tax shields reduce cost. Units: USD, months of 730 h.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pricing.vocabulary import RESERVATION_MONTHS

__all__ = [
    "HOURS_PER_MONTH",
    "MACRS5",
    "BuyFlows",
    "RentFlows",
    "discount_factors",
    "growth_factors",
    "depreciation_schedule",
    "buy_flows",
    "rent_flows",
    "term_end",
    "throughput",
]

HOURS_PER_MONTH = 730.0
#: US MACRS 5-year property, half-year convention (IRS Pub. 946 Table A-1): share of basis per year.
MACRS5 = (0.20, 0.32, 0.192, 0.1152, 0.1152, 0.0576)


def discount_factors(rate: float, horizon: int, first: int = 1) -> np.ndarray:
    """``d_m = (1 + rate)^(-m/12)`` for m = first..horizon; rate [1/year] nominal annual."""
    m = np.arange(first, horizon + 1)
    return (1.0 + rate) ** (-m / 12.0)


def growth_factors(annual_change: np.ndarray, horizon: int, first: int = 1) -> np.ndarray:
    """``(1 + g)^((m - 1)/12)`` for m = first..horizon, shape ``(S, horizon - first + 1)``.

    g [1/year].
    """
    g = np.asarray(annual_change, dtype=float)
    years = (np.arange(first, horizon + 1) - 1) / 12.0
    if g.size and np.all(g == g[0]):  # a fixed input: one row serves every draw
        return np.broadcast_to((1.0 + g[0]) ** years, (g.size, years.size))
    return (1.0 + g)[:, None] ** years


def depreciation_schedule(method: str, years: int, horizon: int) -> np.ndarray:
    """Share of the depreciable basis written off in each month m = 1..horizon, shape ``(H,)``.

    straight_line: 1/(12*years) per month for ``years`` years. macrs5: the yearly MACRS shares,
    each spread evenly over its 12 months (``years`` is ignored). Months past the horizon are
    cut off; the remaining basis is the book value at the horizon.
    """
    if method == "straight_line":
        yearly = np.full(years, 1.0 / years)
    elif method == "macrs5":
        yearly = np.asarray(MACRS5)
    else:
        raise ValueError(f"unknown depreciation method {method!r}")
    monthly = np.repeat(yearly / 12.0, 12)
    out = np.zeros(horizon)
    n = min(horizon, monthly.size)
    out[:n] = monthly[:n]
    return out


def throughput(
    count: int, per_gpu: np.ndarray, efficiency: np.ndarray, derate: np.ndarray | float = 1.0
) -> np.ndarray:
    """Reference GPU-hours per wall-clock hour: count * per-GPU throughput * scaling * derate."""
    return count * np.asarray(per_gpu) * np.asarray(efficiency) * np.asarray(derate)


@dataclass(frozen=True)
class BuyFlows:
    """The buy side in linear form. Shapes: capex, salvage (S,); fixed, per_u (S, H).

    ``fixed[:, m] + u * per_u[:, m]`` is the after-tax discounted outflow of month m + 1
    (depreciation tax shield included); ``salvage`` is the after-tax discounted resale at H.
    """

    capex: np.ndarray
    fixed: np.ndarray
    per_u: np.ndarray
    salvage: np.ndarray

    @cached_property
    def tco_at_zero(self) -> np.ndarray:
        """``TCO_buy(0)`` [USD], shape (S,)."""
        return self.capex + self.fixed.sum(axis=1) - self.salvage

    @cached_property
    def tco_per_u(self) -> np.ndarray:
        """``dTCO_buy/du`` [USD], shape (S,)."""
        return self.per_u.sum(axis=1)

    def tco(self, u: np.ndarray | float) -> np.ndarray:
        """``TCO_buy(u)`` [USD] present value: shape (S,) for a scalar u, (S, U) for a grid."""
        u = np.asarray(u, dtype=float)
        return self.tco_at_zero.reshape((-1,) + (1,) * u.ndim) + np.multiply.outer(
            self.tco_per_u, u
        )


@dataclass(frozen=True)
class RentFlows:
    """The rent side in kinked-linear form. Shapes: base, slope (S, H); kink, tail (S,).

    ``base[:, m] + slope[:, m] * max(0, u - kink)`` is the after-tax discounted outflow of
    month m + 1; ``tail`` is the after-tax discounted reservation still owed after the horizon
    (a term that ends after month H), counted in the TCO but not in cumulative cost by month.
    """

    base: np.ndarray
    slope: np.ndarray
    kink: np.ndarray
    tail: np.ndarray | float = 0.0

    @cached_property
    def tco_at_zero(self) -> np.ndarray:
        """``TCO_rent(u)`` for u below the kink [USD], shape (S,)."""
        return self.base.sum(axis=1) + self.tail

    @cached_property
    def tco_slope(self) -> np.ndarray:
        """``dTCO_rent/du`` above the kink [USD], shape (S,)."""
        return self.slope.sum(axis=1)

    def tco(self, u: np.ndarray | float) -> np.ndarray:
        """``TCO_rent(u)`` [USD] present value: shape (S,) for a scalar u, (S, U) for a grid."""
        u = np.asarray(u, dtype=float)
        shape = (-1,) + (1,) * u.ndim
        above = np.maximum(0.0, u - self.kink.reshape(shape))
        return self.tco_at_zero.reshape(shape) + self.tco_slope.reshape(shape) * above


def buy_flows(
    x: dict[str, np.ndarray],
    *,
    gpu_count: int,
    powered_when_idle: bool,
    depreciation: str,
    depreciation_years: int,
    horizon: int,
    discount_rate: float,
    tax_rate: float,
) -> BuyFlows:
    """Buy-side cash flows from sampled inputs ``x`` (keys without the ``buy.`` prefix).

    HW = N*G + P; C0 = HW + setup. IT power [kW] at utilisation u: powered when idle,
    (N*(u*W_busy + (1-u)*W_idle) + W_platform)/1000, else u*(N*W_busy + W_platform)/1000; peak
    (N*W_busy + W_platform)/1000. energy_m = kW(u)*730*PUE*e*(1+g_e)^((m-1)/12); opex_m = energy_m
    + hosting*peak_kW + maintenance*HW/12 + AFR*N*G/12 + admin. Depreciation D_m on basis C0;
    resale R = HW*(1 - decay)^(H/12); book value BV = C0 - sum(D). Discounted after tax:
    C0 + sum[(opex_m*(1-tau) - tau*D_m)*d_m] - [R - tau*(R - BV)]*d_H.
    """
    n, tau = gpu_count, tax_rate
    g, p = x["gpu_price_usd"], x["platform_price_usd"]
    hw = n * g + p
    capex = hw + x["setup_usd"]
    w_busy, w_idle, w_plat = x["gpu_power_w"], x["gpu_idle_w"], x["platform_power_w"]
    if powered_when_idle:
        kw_idle = (n * w_idle + w_plat) / 1000.0
        kw_per_u = n * (w_busy - w_idle) / 1000.0
    else:
        kw_idle = np.zeros_like(w_busy)
        kw_per_u = (n * w_busy + w_plat) / 1000.0
    peak_kw = (n * w_busy + w_plat) / 1000.0
    monthly_fixed = (
        x["hosting_usd_per_kw_month"] * peak_kw
        + x["maintenance_rate"] * hw / 12.0
        + x["gpu_annual_failure_rate"] * n * g / 12.0
        + x["admin_usd_per_month"]
    )
    d = discount_factors(discount_rate, horizon)
    after_tax = (1.0 - tau) * d
    # energy per kW, after tax and discounted [USD/kW]: 730 * PUE * e * growth_m * (1-tau) * d_m
    per_kw = growth_factors(x["electricity_annual_change"], horizon) * after_tax
    per_kw *= (HOURS_PER_MONTH * x["pue"] * x["electricity_usd_per_kwh"])[:, None]
    fixed = per_kw * kw_idle[:, None]
    fixed += np.multiply.outer(monthly_fixed, after_tax)
    schedule = depreciation_schedule(depreciation, depreciation_years, horizon)
    if tau:
        fixed -= np.multiply.outer(tau * capex, schedule * d)
    per_kw *= kw_per_u[:, None]
    resale = hw * (1.0 - x["resale_annual_decay"]) ** (horizon / 12.0)
    book_value = capex * (1.0 - schedule.sum())
    return BuyFlows(
        capex=capex,
        fixed=fixed,
        per_u=per_kw,
        salvage=(resale - tau * (resale - book_value)) * d[-1],
    )


def rent_flows(
    x: dict[str, np.ndarray],
    *,
    pricing: str,
    own_throughput: np.ndarray,
    instance_throughput: np.ndarray,
    committed_instances: int | None,
    horizon: int,
    discount_rate: float,
    tax_rate: float,
) -> RentFlows:
    """Rent-side cash flows from sampled inputs ``x`` (keys without the ``rent.`` prefix).

    Instance-hours in month m at utilisation u: u*730*T_own/T_inst, times (1 + overhead) for
    spot. On demand and spot: rent_m = hours_m*p*(1+g_p)^((m-1)/12) + storage + egress + admin.
    Reserved with K instances: rent_m = [K*730*p_res + max(0, hours_m - K*730)*p_od]
    *(1+g_p)^((m-1)/12) + extras, K = ceil(T_own/T_inst) by default. Discounted after tax:
    sum[rent_m*(1-tau)*d_m]. A reservation is paid in whole terms (12 or 36 months): when the
    term running at month H ends after H, months H+1 .. end add K*730*p_res*(1+g_p)^((m-1)/12)
    *(1-tau)*d_m as ``tail``.
    """
    hours_at_full = HOURS_PER_MONTH * own_throughput / instance_throughput
    if pricing == "spot":
        hours_at_full = hours_at_full * (1.0 + x["spot_interruption_overhead"])
    after_tax = discount_factors(discount_rate, horizon) * (1.0 - tax_rate)
    grow = growth_factors(x["price_annual_change"], horizon) * after_tax  # (S, H)
    extras = x["storage_usd_per_month"] + x["egress_usd_per_month"] + x["admin_usd_per_month"]
    base = np.multiply.outer(extras, after_tax)
    if pricing.startswith("reserved"):
        if committed_instances is None:
            # ceil with a tolerance, so that a ratio of exactly 2 computed as 2.0000000000004
            # does not commit a third instance.
            committed = np.ceil(own_throughput / instance_throughput - 1e-9)
        else:
            committed = np.full_like(hours_at_full, float(committed_instances))
        reserved = committed * HOURS_PER_MONTH * x["price_usd_per_hour"]
        base += reserved[:, None] * grow
        tail = reserved * _owed_after(
            x["price_annual_change"], RESERVATION_MONTHS[pricing], horizon, discount_rate
        )
        price = x["on_demand_price_usd_per_hour"]
        kink = committed * HOURS_PER_MONTH / hours_at_full
    else:
        price = x["price_usd_per_hour"]
        kink = np.zeros_like(hours_at_full)
        tail = 0.0
    grow *= (price * hours_at_full)[:, None]
    return RentFlows(base=base, slope=grow, kink=kink, tail=tail * (1.0 - tax_rate))


def term_end(term: int, horizon: int) -> int:
    """Last month [month] of the reservation term running at month ``horizon``."""
    return -(-horizon // term) * term


def _owed_after(annual_change: np.ndarray, term: int, horizon: int, rate: float) -> np.ndarray:
    """sum over m = H+1 .. term end of (1+g)^((m-1)/12) * d_m, shape (S,); 0 when none."""
    end = term_end(term, horizon)
    if end == horizon:
        return np.zeros(np.shape(annual_change))
    grow = growth_factors(annual_change, end, first=horizon + 1)
    return grow @ discount_factors(rate, end, first=horizon + 1)
