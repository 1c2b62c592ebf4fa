"""The cost equations (docs/model.md), vectorised over draws, with monthly sums in closed form.

Every input is a float (a fixed input) or an array of shape ``(S,)`` (one value per Monte Carlo
draw); results broadcast the same way. Both sides reduce to lines in utilisation u:

- buy: ``TCO_buy(u) = at_zero + per_u * u``;
- rent: ``TCO_rent(u) = at_zero + slope * max(0, u - kink)``, with kink 0 except for a
  reservation, where it is the utilisation that fills the committed instances.

The sums over months of a growing, discounted price are geometric series (:func:`growth_sum`), so
the TCO needs no month axis; only the cumulative cost by month (payback, the cumulative chart)
builds month-major ``(H, S)`` arrays, one chunk of draws at a time, each a sum of month-by-draw
terms that a compiled kernel adds up in one pass (:func:`_fold`; its numpy form gives the same
numbers). Sign rule: costs are positive; resale and tax shields reduce cost. Units: USD, months
of 730 h, rates [1/year].
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

import numpy as np

from pricing.vocabulary import RESERVATION_MONTHS

from .api_price import blended_price
from .compiled import kernel
from .discounting import Value, discount_factors, growth_sum
from .downtime import availability
from .financing import FinancingDraws, lease_cost, loan_by_month, loan_cost
from .inputs import ApiInputs, BuyInputs, ModelInputs, RentInputs
from .units import rates

__all__ = [
    "HOURS_PER_MONTH",
    "MACRS5",
    "ApiDraws",
    "BuyDraws",
    "BuyLine",
    "BuyParts",
    "Gap",
    "Lines",
    "buy_parts",
    "cumulative_cost",
    "gap",
    "metered",
    "instance_hours",
    "owned_power_kw",
    "RentDraws",
    "RentLine",
    "Terms",
    "Workspace",
    "busy_energy_month",
    "buy_line",
    "capacity",
    "capacity_all_up",
    "depreciation_schedule",
    "discount_factors",
    "growth_sum",
    "model_lines",
    "owned_availability",
    "spare_cost",
    "rent_line",
    "rented_cumulative",
    "term_end",
    "throughput",
]

HOURS_PER_MONTH = 730.0
#: US MACRS 5-year property, half-year convention (IRS Pub. 946 Table A-1): share of basis per year.
MACRS5 = (0.20, 0.32, 0.192, 0.1152, 0.1152, 0.0576)


@dataclass(frozen=True)
class Terms:
    """The money conventions: ``horizon`` H [month], ``discount_rate`` r [1/year] nominal
    annual, ``tax_rate`` tau [-]."""

    horizon: int
    discount_rate: float
    tax_rate: float


def _sampled(cls: type, inputs: Any, side: str, values: dict[str, Value], **given: Any) -> Any:
    """``cls`` with each field from ``values["<side>.<field>"]`` (a drawn input), else the
    plain field of ``inputs`` (counts, flags, methods); ``given`` fields as they are."""
    return cls(
        **{
            f.name: values.get(f"{side}.{f.name}", getattr(inputs, f.name, None))
            for f in fields(cls)
            if f.name not in given
        },
        **given,
    )


@dataclass(frozen=True)
class BuyDraws:
    """The owned build's inputs for a set of draws (floats or ``(S,)`` arrays).

    gpu_price_usd [USD/GPU]; platform_price_usd, setup_usd [USD]; gpu_power_w, gpu_idle_w
    [W/GPU]; platform_power_w [W]; electricity_usd_per_kwh [USD/kWh];
    electricity_annual_change [1/year]; pue [-]; hosting_usd_per_kw_month [USD/(kW*month)];
    maintenance_rate, gpu_annual_failure_rate [1/year]; admin_usd_per_month [USD/month];
    resale_annual_decay [1/year]; relative_throughput [units of work/GPU-hour] or
    tokens_per_s_per_gpu [tokens/s per GPU] (the other ``None``); scaling_efficiency,
    thermal_derate [-]; repair_days [day] a failed GPU is out; spare_gpus [GPU] bought with the
    build; financing how it is paid for; throughput_error [-] the factor on the per-GPU
    throughput (an estimate's error, 1 for a measured or given one).
    """

    gpu_count: int
    gpu_price_usd: Value
    platform_price_usd: Value
    setup_usd: Value
    gpu_power_w: Value
    gpu_idle_w: Value
    platform_power_w: Value
    powered_when_idle: bool
    electricity_usd_per_kwh: Value
    electricity_annual_change: Value
    pue: Value
    hosting_usd_per_kw_month: Value
    maintenance_rate: Value
    gpu_annual_failure_rate: Value
    admin_usd_per_month: Value
    resale_annual_decay: Value
    depreciation: str
    depreciation_years: int
    relative_throughput: Value | None
    tokens_per_s_per_gpu: Value | None
    scaling_efficiency: Value
    thermal_derate: Value
    repair_days: Value = 0.0
    spare_gpus: int = 0
    financing: FinancingDraws = FinancingDraws("cash", None, None, 0.0, None)
    throughput_error: Value = 1.0

    @classmethod
    def sampled(cls, inputs: BuyInputs, values: dict[str, Value], side: str = "buy") -> BuyDraws:
        """The draws ``values`` (by ``"<side>.<field>"``) with the plain fields of ``inputs``."""
        paid = FinancingDraws.sampled(inputs.financing, values, f"{side}.financing")
        return _sampled(cls, inputs, side, values, financing=paid)


@dataclass(frozen=True)
class RentDraws:
    """The rented side's inputs for a set of draws (floats or ``(S,)`` arrays).

    price_usd_per_hour, on_demand_price_usd_per_hour [USD/instance-hour]; price_annual_change
    [1/year]; spot_interruption_overhead [-]; storage, egress and admin [USD/month];
    relative_throughput [units of work/GPU-hour] or tokens_per_s_per_gpu [tokens/s per GPU]
    (the other ``None``); scaling_efficiency [-]; throughput_error [-] the factor on the
    per-GPU throughput (an estimate's error, 1 for a measured or given one).
    """

    gpu_count: int
    pricing: str
    price_usd_per_hour: Value
    on_demand_price_usd_per_hour: Value | None
    committed_instances: int | None
    price_annual_change: Value
    spot_interruption_overhead: Value
    storage_usd_per_month: Value
    egress_usd_per_month: Value
    admin_usd_per_month: Value
    relative_throughput: Value | None
    tokens_per_s_per_gpu: Value | None
    scaling_efficiency: Value
    throughput_error: Value = 1.0

    @classmethod
    def sampled(cls, inputs: RentInputs, values: dict[str, Value], side: str = "rent") -> RentDraws:
        """The draws ``values`` (by ``"<side>.<field>"``) with the plain fields of ``inputs``."""
        return _sampled(cls, inputs, side, values)


@dataclass(frozen=True)
class ApiDraws:
    """The hosted API's inputs for a set of draws (floats or ``(S,)`` arrays): prices [USD per
    million tokens], the cached share [-], the annual price change [1/year] and the request
    shape [tokens]."""

    input_usd_per_mtok: Value
    output_usd_per_mtok: Value
    input_tokens: int
    output_tokens: int
    cached_input_share: Value
    cached_input_usd_per_mtok: Value | None
    price_annual_change: Value

    @classmethod
    def sampled(cls, inputs: ApiInputs, values: dict[str, Value], side: str = "api") -> ApiDraws:
        """The draws ``values`` (by ``"<side>.<field>"``) with the plain fields of ``inputs``."""
        return _sampled(cls, inputs, side, values)

    def as_rented(self) -> RentDraws:
        """The API as a rented side: an "instance" that does one unit of work (a million
        tokens) an hour at the blended price p_api of :func:`costmodel.api_price.blended_price`,
        on demand, with no extras, so that its TCO is section 4's rent line with
        hours_m(u) = u * 730 * T_own and rent_m = hours_m * p_api * (1 + g_api)^((m-1)/12)."""
        price = blended_price(
            self.input_tokens,
            self.output_tokens,
            self.input_usd_per_mtok,
            self.output_usd_per_mtok,
            self.cached_input_usd_per_mtok,
            self.cached_input_share,
        )
        return metered(price if np.ndim(price) else float(price), self.price_annual_change)


def metered(price: Value, annual_change: Value) -> RentDraws:
    """A rented side billed for the work it does: an "instance" doing one unit of work an
    hour at ``price`` [USD/unit], changing at ``annual_change`` [1/year], on demand, with no
    extras (the hosted API's form; at price 0, a side that costs nothing)."""
    return RentDraws(
        gpu_count=1,
        pricing="on_demand",
        price_usd_per_hour=price,
        on_demand_price_usd_per_hour=None,
        committed_instances=None,
        price_annual_change=annual_change,
        spot_interruption_overhead=0.0,
        storage_usd_per_month=0.0,
        egress_usd_per_month=0.0,
        admin_usd_per_month=0.0,
        relative_throughput=1.0,
        tokens_per_s_per_gpu=None,
        scaling_efficiency=1.0,
    )


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


def throughput(count: int, per_gpu: Value, efficiency: Value, derate: Value = 1.0) -> Value:
    """Units of work per wall-clock hour: count * per-GPU throughput * scaling * derate."""
    return count * per_gpu * efficiency * derate


def _per_gpu(side: BuyDraws | RentDraws) -> Value:
    """Work of one GPU of a side per hour [units of work/GPU-hour]: the rate the side gives,
    scaled as its unit of work says (:func:`costmodel.units.rates`: a relative throughput as
    it is, tokens per second times 3600 / 1e6), times its ``throughput_error``."""
    for rate, scale in rates().items():
        value = getattr(side, rate)
        if value is not None:
            value = value if scale == 1.0 else value * scale
            error = side.throughput_error
            return value if np.ndim(error) == 0 and error == 1.0 else value * error
    raise ValueError("a side without a throughput")


def owned_availability(b: BuyDraws) -> Value:
    """Share of the build's GPUs up on average [-] (:func:`costmodel.downtime.availability`
    with its N GPUs in service and its spares); 1.0 without downtime."""
    return availability(b.gpu_count, b.gpu_annual_failure_rate, b.repair_days, b.spare_gpus)


def capacity_all_up(b: BuyDraws) -> Value:
    """Units of work an owned build does per wall-clock hour with every GPU in service
    [units of work/hour]: N * thr * eff * derate."""
    return throughput(b.gpu_count, _per_gpu(b), b.scaling_efficiency, b.thermal_derate)


def capacity(side: BuyDraws | RentDraws) -> Value:
    """Units of work one owned build or one rented instance does per wall-clock hour
    [units of work/hour]: T = N * thr * eff (* derate * A, for an owned build, A its
    availability). The unit is the workload's: reference GPU-hours for training, M tokens for
    inference."""
    if not isinstance(side, BuyDraws):
        return throughput(side.gpu_count, _per_gpu(side), side.scaling_efficiency)
    t = capacity_all_up(side)
    kept = owned_availability(side)
    return t if np.ndim(kept) == 0 and kept == 1.0 else t * kept


def term_end(term: int, horizon: int) -> int:
    """Last month [month] of the reservation term running at month ``horizon``."""
    return -(-horizon // term) * term


@dataclass(frozen=True)
class BuyParts:
    """The pieces of the buy side shared by the TCO line, the cumulative cost and the servers a
    plan adds later."""

    hardware: Value  # HW = N*G + P + s*G, spares included [USD]
    capex: Value  # C0 = HW + setup [USD]
    kw_idle: Value  # IT power at u = 0 [kW]
    kw_per_u: Value  # added IT power per unit of u [kW]
    energy_month: Value  # cost of 1 kW for month 1: 730 * PUE * e [USD/kW]
    fixed_month: Value  # hosting, maintenance, failures, admin [USD/month]


def buy_parts(b: BuyDraws) -> BuyParts:
    n = b.gpu_count
    hardware = n * b.gpu_price_usd + b.platform_price_usd
    if b.spare_gpus:  # on the shelf: resold and maintained, but drawing no power, not failing
        hardware = hardware + b.spare_gpus * b.gpu_price_usd
    peak_kw = (n * b.gpu_power_w + b.platform_power_w) / 1000.0
    if b.powered_when_idle:
        kw_idle = (n * b.gpu_idle_w + b.platform_power_w) / 1000.0
        kw_per_u = n * (b.gpu_power_w - b.gpu_idle_w) / 1000.0
    else:
        kw_idle, kw_per_u = 0.0, peak_kw
    fixed = (
        b.hosting_usd_per_kw_month * peak_kw
        + b.maintenance_rate * hardware / 12.0
        + b.gpu_annual_failure_rate * n * b.gpu_price_usd / 12.0
        + b.admin_usd_per_month
    )
    return BuyParts(
        hardware=hardware,
        capex=hardware + b.setup_usd,
        kw_idle=kw_idle,
        kw_per_u=kw_per_u,
        energy_month=HOURS_PER_MONTH * b.pue * b.electricity_usd_per_kwh,
        fixed_month=fixed,
    )


def busy_energy_month(b: BuyDraws) -> Value:
    """Cost [USD/month] of the power that grows with utilisation, at u = 1 in month 1:
    kW_per_u * 730 * PUE * e (the idle draw of a powered build is not in it)."""
    p = buy_parts(b)
    return p.kw_per_u * p.energy_month


def owned_power_kw(b: BuyDraws) -> tuple[Value, Value]:
    """IT power of the build [kW] as a line in u: (draw at u = 0, added draw per unit of u);
    powered when idle (N*W_idle + W_platform, N*(W_busy - W_idle)), else (0, peak)."""
    p = buy_parts(b)
    return p.kw_idle, p.kw_per_u


@dataclass(frozen=True)
class BuyLine:
    """``TCO_buy(u) = at_zero + per_u * u`` [USD, present value] per draw; ``capex`` C0 [USD]."""

    capex: Value
    at_zero: Value
    per_u: Value

    def tco(self, u: float) -> Value:
        """TCO_buy at utilisation ``u`` [USD]."""
        return self.at_zero + self.per_u * u

    def per_unit(self, cap: Value, horizon: int) -> BuyLine:
        """The line per unit of capacity: divided by 730 * H * ``cap`` (the work done over
        the horizon at u = 1), so that ``tco(u) / u`` is the cost per unit of work [USD/unit]."""
        scale = HOURS_PER_MONTH * horizon * np.asarray(cap)
        return BuyLine(self.capex / scale, self.at_zero / scale, self.per_u / scale)


@dataclass(frozen=True)
class _Funding:
    """How the hardware is paid for, as the TCO sees it: ``paid`` [USD, present value] in
    place of the capex, the depreciable ``basis`` [USD] and the hardware ``resold`` at the
    horizon [USD, at its purchase price]."""

    paid: Value
    basis: Value
    resold: Value


def _funding(b: BuyDraws, p: BuyParts, terms: Terms) -> _Funding:
    """Cash: C0, on basis C0, HW resold. Loan: C0 times :func:`~costmodel.financing.loan_cost`,
    depreciation and resale as cash. Operating lease: setup plus the lease's payments
    rho*HW*(1-tau)*d_m to the term's end, on basis setup (the hardware is not the lessee's:
    not depreciated, not resold)."""
    f = b.financing
    if f.kind == "cash":
        return _Funding(p.capex, p.capex, p.hardware)
    h, r, tau = terms.horizon, terms.discount_rate, terms.tax_rate
    if f.kind == "loan":
        return _Funding(p.capex * loan_cost(f, h, r, tau), p.capex, p.hardware)
    return _Funding(b.setup_usd + p.hardware * lease_cost(f, r, tau), b.setup_usd, 0.0)


def buy_line(b: BuyDraws, terms: Terms) -> BuyLine:
    """The buy side's TCO as a line in u.

    HW = N*G + P + s*G (s spares); C0 = HW + setup. IT power [kW]: powered when idle,
    (N*(u*W_busy + (1-u)*W_idle) + W_platform)/1000, else u*(N*W_busy + W_platform)/1000; peak
    (N*W_busy + W_platform)/1000. opex_m = kW(u)*730*PUE*e*(1+g_e)^((m-1)/12) +
    hosting*peak_kW + maintenance*HW/12 + AFR*N*G/12 + admin. Depreciation D_m on basis C0;
    resale R = HW*(1 - decay)^(H/12); book value BV = C0 - sum(D). TCO_buy(u) = C0 +
    sum[(opex_m*(1-tau) - tau*D_m)*d_m] - [R - tau*(R - BV)]*d_H, the sums in closed form.
    Financed (:func:`_funding`), C0 is replaced by what the loan or lease costs, and the
    basis and the hardware resold are the financing's.
    """
    h, r, tau = terms.horizon, terms.discount_rate, terms.tax_rate
    p = buy_parts(b)
    paid = _funding(b, p, terms)
    energy = growth_sum(b.electricity_annual_change, r, h)
    flat = growth_sum(0.0, r, h)
    schedule = depreciation_schedule(b.depreciation, b.depreciation_years, h)
    d = discount_factors(r, h)
    resale = paid.resold * (1.0 - b.resale_annual_decay) ** (h / 12.0)
    book_value = paid.basis * (1.0 - schedule.sum())
    salvage = (resale - tau * (resale - book_value)) * d[-1]
    running = (1.0 - tau) * (p.kw_idle * p.energy_month * energy + p.fixed_month * flat)
    shield = tau * paid.basis * float(schedule @ d)
    return BuyLine(
        capex=p.capex,
        at_zero=paid.paid + running - shield - salvage,
        per_u=(1.0 - tau) * p.kw_per_u * p.energy_month * energy,
    )


def spare_cost(b: BuyDraws, terms: Terms) -> Value:
    """What one more spare GPU adds to the build's TCO [USD, present value]: its price
    (financed as the build is), maintenance, depreciation and resale (a lease's payments
    instead, for a leased build); no power, no failures. The TCO is linear in the spares, so
    it is the difference of the build's TCO with one spare more and as it is."""
    more = dataclasses.replace(b, spare_gpus=b.spare_gpus + 1)
    return buy_line(more, terms).at_zero - buy_line(b, terms).at_zero


@dataclass(frozen=True)
class _RentParts:
    hours_at_full: Value  # instance-hours a month at u = 1 [instance-hour]
    reserved_month: Value  # K*730*p_res, the reservation's month-1 cost [USD] (0 without)
    price: Value  # price of the hours that grow with u [USD/instance-hour]
    kink: Value  # utilisation that fills the reservation [-] (0 without one)


def _rent_parts(r: RentDraws, own_throughput: Value, instance_throughput: Value) -> _RentParts:
    full = HOURS_PER_MONTH * own_throughput / instance_throughput
    if r.pricing == "spot":
        full = full * (1.0 + r.spot_interruption_overhead)
    if r.pricing not in RESERVATION_MONTHS:
        return _RentParts(full, 0.0, r.price_usd_per_hour, 0.0)
    if r.committed_instances is None:
        # ceil with a tolerance, so that a ratio of exactly 2 computed as 2.0000000000004
        # does not commit a third instance.
        committed = np.ceil(own_throughput / instance_throughput - 1e-9)
    else:
        committed = float(r.committed_instances)
    return _RentParts(
        hours_at_full=full,
        reserved_month=committed * HOURS_PER_MONTH * r.price_usd_per_hour,
        price=r.on_demand_price_usd_per_hour,
        kink=committed * HOURS_PER_MONTH / full,
    )


def instance_hours(r: RentDraws, own_throughput: Value, instance_throughput: Value) -> Value:
    """Instance-hours used in a month at u = 1 [instance-hour]: 730*T_own/T_inst, times
    (1 + overhead) for spot; a reservation's idle committed hours are not in it."""
    return _rent_parts(r, own_throughput, instance_throughput).hours_at_full


@dataclass(frozen=True)
class RentLine:
    """``TCO_rent(u) = at_zero + per_u * u + slope * max(0, u - kink)`` [USD, present value]
    per draw; ``per_u`` is 0 but for a priced carbon that grows with the hours used
    (:mod:`costmodel.carbon`), which a reservation's kink does not bend."""

    at_zero: Value
    slope: Value
    kink: Value
    per_u: Value = 0.0

    def tco(self, u: float) -> Value:
        """TCO_rent at utilisation ``u`` [USD]."""
        return self.at_zero + self.per_u * u + self.slope * np.maximum(0.0, u - self.kink)

    def per_unit(self, cap: Value, horizon: int) -> RentLine:
        """The line per unit of capacity, as :meth:`BuyLine.per_unit`."""
        scale = HOURS_PER_MONTH * horizon * np.asarray(cap)
        return RentLine(self.at_zero / scale, self.slope / scale, self.kink, self.per_u / scale)


def rent_line(
    r: RentDraws, own_throughput: Value, instance_throughput: Value, terms: Terms
) -> RentLine:
    """The rent side's TCO as a kinked line in u.

    Instance-hours in month m at utilisation u: u*730*T_own/T_inst, times (1 + overhead) for
    spot. On demand and spot: rent_m = hours_m*p*(1+g_p)^((m-1)/12) + storage + egress + admin.
    Reserved with K instances: rent_m = [K*730*p_res + max(0, hours_m - K*730)*p_od]
    *(1+g_p)^((m-1)/12) + extras, K = ceil(T_own/T_inst) by default. TCO_rent(u) =
    sum[rent_m*(1-tau)*d_m]. A reservation is paid in whole terms (12 or 36 months): when the
    term running at month H ends after H, months H+1 .. end add K*730*p_res*(1+g_p)^((m-1)/12)
    *(1-tau)*d_m.
    """
    h, rate, tau = terms.horizon, terms.discount_rate, terms.tax_rate
    p = _rent_parts(r, own_throughput, instance_throughput)
    grow = growth_sum(r.price_annual_change, rate, h)
    extras = r.storage_usd_per_month + r.egress_usd_per_month + r.admin_usd_per_month
    base = extras * growth_sum(0.0, rate, h)
    if r.pricing in RESERVATION_MONTHS:  # owed to the end of the term running at month H
        end = term_end(RESERVATION_MONTHS[r.pricing], h)
        base = base + p.reserved_month * growth_sum(r.price_annual_change, rate, end)
    return RentLine(
        at_zero=(1.0 - tau) * base,
        slope=(1.0 - tau) * p.hours_at_full * p.price * grow,
        kink=p.kink,
    )


@dataclass(frozen=True)
class Lines:
    """The sides' TCO lines for a set of draws, and the capacities they rest on [units of
    work/hour]: ``own`` of the owned build, ``instance`` of one instance. ``api`` is the hosted
    API's line (a rent line: :meth:`ApiDraws.as_rented`), ``None`` without one;
    ``availability`` [-] the share of the owned GPUs up (1.0 without downtime); ``further``
    the line of each further side by name (:attr:`ModelInputs.further`)."""

    buy: BuyLine
    rent: RentLine
    own: Value
    instance: Value
    api: RentLine | None = None
    availability: Value = 1.0
    further: Mapping[str, RentLine] = field(default_factory=dict)

    def rival(self, name: str) -> RentLine | None:
        """The line of side ``name`` buying is weighed against (``"rent"``, ``"api"`` or a
        further side), ``None`` without that side."""
        return getattr(self, name) if name in ("rent", "api") else self.further.get(name)


def model_lines(inputs: ModelInputs, values: dict[str, Value]) -> Lines:
    """The TCO lines of every side of ``inputs`` for the draws ``values`` (by input name,
    floats for fixed inputs)."""
    terms = Terms(inputs.horizon_months, inputs.discount_rate, inputs.tax_rate)
    b = BuyDraws.sampled(inputs.buy, values)
    r = RentDraws.sampled(inputs.rent, values)
    t_own, t_inst = capacity(b), capacity(r)
    api = None
    if inputs.api is not None:
        api = rent_line(ApiDraws.sampled(inputs.api, values).as_rented(), t_own, 1.0, terms)
    return Lines(
        buy_line(b, terms),
        rent_line(r, t_own, t_inst, terms),
        t_own,
        t_inst,
        api,
        owned_availability(b),
    )


class Workspace:
    """Reusable buffers for the month-major arrays of successive chunks of draws.

    Writing to a fresh multi-megabyte array costs a page fault per 4 KiB, more than the
    arithmetic done on it; reusing a few buffers across chunks avoids that. Buffers are
    contiguous and keyed by name; a request for another size replaces the buffer.
    """

    def __init__(self) -> None:
        self._buffers: dict[str, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
        """A contiguous array of ``shape`` (contents undefined), reusing buffer ``name``."""
        size = math.prod(shape)
        buf = self._buffers.get(name)
        if buf is None or buf.size < size or buf.dtype != dtype:
            buf = self._buffers[name] = np.empty(size, dtype)
        return buf[:size].reshape(shape)


class _Outer(NamedTuple):
    """The term ``column[m] * row[s]`` of a month-major sum: an ``(H,)`` month factor times a
    float or ``(S,)`` draw factor."""

    column: np.ndarray
    row: Value


class _Growth(NamedTuple):
    """The term A_m (times ``times``, when given) with A_1 = ``first``, A_m = A_{m-1} * ``step``
    + ``first``: a sum over months growing by ``step`` a month per draw (``(S,)``; ``first``
    and ``times`` floats or ``(S,)``)."""

    step: np.ndarray
    first: Value
    times: Value | None = None


#: A term of :func:`_fold`: an outer product, a growing sum, or an ``(H, S)`` array as it is.
_Term = _Outer | _Growth | np.ndarray


def _growth(annual_change: Value, rate: float, horizon: int, scale: Value = 1.0) -> _Term:
    """``scale * growth_sum(g, r, m)`` for m = 1..H as a term of :func:`_fold`: an outer
    product of the closed-form sums and ``scale`` when g is fixed; for drawn g the recurrence
    A_1 = c, A_m = c + x*A_{m-1} with x = ((1 + g)/(1 + r))^(1/12) and c = scale*(1 + r)^(-1/12)
    (two operations a month instead of one exponential per draw and month; exact to a few
    ulps)."""
    if np.ndim(annual_change) == 0:
        return _Outer(growth_sum(annual_change, rate, np.arange(1, horizon + 1)), scale)
    step = ((1.0 + np.asarray(annual_change)) / (1.0 + rate)) ** (1.0 / 12.0)
    return _Growth(step, np.asarray(scale) * (1.0 + rate) ** (-1.0 / 12.0))


def _fold(
    out: np.ndarray, terms: list[tuple[int, _Term]], scratch: np.ndarray | None = None
) -> np.ndarray:
    """``out`` (a C-contiguous ``(H, S)`` array) = t_0 +- t_1 +- ..., each term with its sign
    (+1 or -1; the first is +1), returned.

    The loop is in C (``costmodel/_months.c``, loaded by :mod:`costmodel.compiled`): months
    outer, draws inner, a block of a month's row taken through every term while it is in the
    processor's cache and the array written once, where the numpy form passes over the whole
    array for each operation and makes two calls a month for a growing term: the payback's
    gap of 10,000 draws x 36 months in about 0.6 ms instead of 1.0, of 1M draws x 60 months
    in 71 ms instead of 132 (2-core machine, 2026-12). Its numpy form, :func:`_fold_numpy`, runs
    with ``COSTMODEL_KERNELS=numpy`` or where the kernel was not built; the two give the same
    numbers bit for bit (the same operations in the same order). ``scratch`` is an ``(H, S)``
    buffer the numpy form may use (a new one when not given)."""
    months = kernel("months")
    if months is None:
        return _fold_numpy(out, terms, scratch)
    h, s = out.shape
    months.fold(out, h, s, [_packed(sign, term) for sign, term in terms])
    return out


def _row(x: Value) -> np.ndarray:
    """A float or an array as a contiguous float64 vector (one value, or one a draw)."""
    return np.ascontiguousarray(x, dtype=np.float64).reshape(-1)


def _packed(sign: int, term: _Term) -> tuple:
    """A term as ``costmodel._months.fold`` takes it: (kind, sign, buffers...)."""
    if isinstance(term, _Outer):
        return (0, sign, _row(term.column), _row(term.row))
    if isinstance(term, _Growth):
        if term.times is None:
            return (2, sign, _row(term.step), _row(term.first))
        return (3, sign, _row(term.step), _row(term.first), _row(term.times))
    return (1, sign, np.ascontiguousarray(term, dtype=np.float64))


def _fold_numpy(
    out: np.ndarray, terms: list[tuple[int, _Term]], scratch: np.ndarray | None = None
) -> np.ndarray:
    """The numpy form of :func:`_fold`: each term over the whole array in turn, into ``out``
    for the first and ``scratch`` for the others, then added or subtracted."""
    for i, (sign, term) in enumerate(terms):
        if isinstance(term, np.ndarray):
            value = term
        else:
            if i and scratch is None:
                scratch = np.empty_like(out)
            value = out if i == 0 else scratch
            if isinstance(term, _Outer):
                np.multiply(term.column[:, None], term.row, out=value)
            else:
                first = np.broadcast_to(term.first, out.shape[1:])
                value[0] = first
                for m in range(1, out.shape[0]):
                    np.multiply(value[m - 1], term.step, out=value[m])
                    value[m] += first
                if term.times is not None:
                    value *= term.times
        if i == 0:
            if value is not out:
                out[...] = value
        elif sign > 0:
            out += value
        else:
            out -= value
    return out


@dataclass(frozen=True)
class Gap:
    """The cumulative gap f_m(u) = buy - rent by month, month-major ``(H, S)``:
    ``net0 + u * slope - max(0, u - kink) * rent_u``; without a reservation ``rent_u`` is
    ``None`` (folded into ``slope``). ``spare`` is a free ``(H, S)`` buffer and ``work`` the
    workspace the arrays come from."""

    capex: np.ndarray
    net0: np.ndarray
    slope: np.ndarray
    rent_u: np.ndarray | None
    kink: np.ndarray
    spare: np.ndarray
    work: Workspace


def _months(terms: Terms, b: BuyDraws) -> tuple[np.ndarray, np.ndarray]:
    """Month factors (H,): the present value of 1 USD a month to month m, and the capex kept
    after the depreciation tax shield to month m (1 - tau * cumulative discounted write-off)."""
    h, rate, tau = terms.horizon, terms.discount_rate, terms.tax_rate
    flat = growth_sum(0.0, rate, np.arange(1, h + 1))
    schedule = depreciation_schedule(b.depreciation, b.depreciation_years, h)
    return flat, 1.0 - tau * np.cumsum(schedule * discount_factors(rate, h))


@dataclass(frozen=True)
class _Capital:
    """What the hardware has cost by month m = 1..H, owed amounts counted, less the
    depreciation tax shield: ``sum_i outer(columns[i], rows[i])`` plus ``extra`` (a drawn
    loan rate's ``(H, S)`` part, else ``None``); ``start`` [USD] is what is owed at m = 0."""

    columns: list[np.ndarray]
    rows: list[Value]
    extra: np.ndarray | None
    start: Value


def _capital(b: BuyDraws, p: BuyParts, terms: Terms, kept: np.ndarray) -> _Capital:
    """Cash: C0 * kept_m. Loan: C0 * (kept_m - 1 + owed_m), owed_m the loan's cost by month m
    per USD of capex, its balance counted (:func:`~costmodel.financing.loan_by_month`).
    Lease: setup * kept_m plus every payment to the term's end, rho*HW*(1-tau)*sum d_j,
    owed from the start."""
    f, (h, rate, tau) = b.financing, (terms.horizon, terms.discount_rate, terms.tax_rate)
    if f.kind == "cash":
        return _Capital([kept], [p.capex], None, p.capex)
    if f.kind == "lease":
        owed = p.hardware * lease_cost(f, rate, tau)
        return _Capital([kept, np.ones(h)], [b.setup_usd, owed], None, b.setup_usd + owed)
    extra = loan_by_month(f, h, rate, tau) - 1.0
    if extra.ndim == 1:
        return _Capital([kept + extra], [p.capex], None, p.capex)
    return _Capital([kept], [p.capex], extra * p.capex, p.capex)


def gap(
    b: BuyDraws,
    r: RentDraws,
    own_throughput: Value,
    instance_throughput: Value,
    terms: Terms,
    draws: int,
    work: Workspace | None = None,
    any_kink: bool | None = None,
) -> Gap:
    """The cumulative buy-minus-rent gap by month of ``draws`` draws, for payback.

    f_m(u) = C0*(1 - tau*sum_{j<=m} D_j d_j/C0) + (1-tau)*[kW(u)*730*PUE*e*E_m + fixed*F_m]
    - (1-tau)*[extras*F_m + K*730*p_res*G_m + max(0, u - kink)*hours_at_full*p*G_m], with E_m,
    G_m, F_m the present value to month m of 1 USD a month growing as electricity, as the cloud
    price, and flat; financed, the first term is what the loan or lease has cost by month m,
    what is still owed counted (:func:`_capital`). ``net0``, ``slope`` (and ``rent_u``) are
    each one :func:`_fold` of those terms. ``work`` lends the buffers (a fresh
    :class:`Workspace` when not given). ``any_kink``: whether a reservation's kink is above 0
    in some draw of the whole sample, so that the form of a draw's gap does not depend on the
    draws evaluated with it (when not given, of these draws).
    """
    work = work or Workspace()
    tau = terms.tax_rate
    p = buy_parts(b)
    q = _rent_parts(r, own_throughput, instance_throughput)
    flat, kept = _months(terms, b)
    capital = _capital(b, p, terms, kept)
    h, rate = terms.horizon, terms.discount_rate
    extras = r.storage_usd_per_month + r.egress_usd_per_month + r.admin_usd_per_month
    idle = (1.0 - tau) * p.kw_idle * p.energy_month
    energy = _growth(b.electricity_annual_change, rate, h)
    reserved = r.pricing in RESERVATION_MONTHS
    net0_terms: list[tuple[int, _Term]] = [
        (1, _Outer(column, row)) for column, row in zip(capital.columns, capital.rows, strict=True)
    ]
    net0_terms.append((1, _Outer(flat, (1.0 - tau) * (p.fixed_month - extras))))
    if isinstance(energy, _Outer):
        net0_terms.append((1, _Outer(energy.column, idle)))
    if capital.extra is not None:
        net0_terms.append((1, capital.extra))
    if isinstance(energy, _Growth):
        net0_terms.append((1, energy._replace(times=idle)))
    if reserved:
        net0_terms.append(
            (-1, _growth(r.price_annual_change, rate, h, (1.0 - tau) * q.reserved_month))
        )
    shape = (h, draws)
    spare = work.get("spare", shape)
    net0 = _fold(work.get("net0", shape), net0_terms, spare)
    # the slope per u: buying's power, less (without a kink) the cloud's hours
    power = _growth(b.electricity_annual_change, rate, h, (1.0 - tau) * p.kw_per_u * p.energy_month)
    kink = np.broadcast_to(np.asarray(q.kink, dtype=float), (draws,))
    kinked = reserved and (bool(np.any(kink > 0)) if any_kink is None else any_kink)
    hours = _growth(r.price_annual_change, rate, h, (1.0 - tau) * q.hours_at_full * q.price)
    slope = work.get("slope", shape)
    rent = None
    if kinked:
        _fold(slope, [(1, power)], spare)
        rent = _fold(work.get("rent", shape), [(1, hours)], spare)
    else:
        _fold(slope, [(1, power), (-1, hours)], spare)
    return Gap(
        capex=np.broadcast_to(np.asarray(capital.start, dtype=float), (draws,)),
        net0=net0,
        slope=slope,
        rent_u=rent,
        kink=kink,
        spare=spare,
        work=work,
    )


def cumulative_cost(
    b: BuyDraws,
    r: RentDraws,
    own_throughput: Value,
    instance_throughput: Value,
    terms: Terms,
    draws: int,
    u: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative cost [USD] of each side by month 0..H at utilisation ``u``, month-major
    ``(H + 1, S)`` (buy, rent): the month-by-month form of the TCO without resale (buying starts
    from the capex at month 0, or what a loan or lease owes) and without a reservation's months
    after the horizon."""
    tau, h, rate = terms.tax_rate, terms.horizon, terms.discount_rate
    p = buy_parts(b)
    flat, kept = _months(terms, b)
    capital = _capital(b, p, terms, kept)
    power = (1.0 - tau) * (p.kw_idle + u * p.kw_per_u) * p.energy_month
    buy = np.empty((h + 1, draws))
    buy[0] = capital.start
    parts: list[tuple[int, _Term]] = [
        (1, _Outer(column, row))
        for column, row in zip(
            [*capital.columns, flat], [*capital.rows, (1.0 - tau) * p.fixed_month], strict=True
        )
    ]
    if capital.extra is not None:
        parts.append((1, capital.extra))
    parts.append((1, _growth(b.electricity_annual_change, rate, h, power)))
    _fold(buy[1:], parts)
    return buy, rented_cumulative(r, own_throughput, instance_throughput, terms, draws, u)


def rented_cumulative(
    r: RentDraws,
    own_throughput: Value,
    instance_throughput: Value,
    terms: Terms,
    draws: int,
    u: float,
) -> np.ndarray:
    """Cumulative cost [USD] of a rented side by month 0..H at utilisation ``u``, month-major
    ``(H + 1, S)``: 0 at month 0, then sum_j rent_j*(1-tau)*d_j to month m (without a
    reservation's months after the horizon). The hosted API's with
    :meth:`ApiDraws.as_rented` and an instance throughput of 1."""
    tau, h, rate = terms.tax_rate, terms.horizon, terms.discount_rate
    q = _rent_parts(r, own_throughput, instance_throughput)
    flat = growth_sum(0.0, rate, np.arange(1, h + 1))
    extras = r.storage_usd_per_month + r.egress_usd_per_month + r.admin_usd_per_month
    grow = (1.0 - tau) * (
        q.reserved_month + np.maximum(0.0, u - q.kink) * q.hours_at_full * q.price
    )
    rent = np.empty((h + 1, draws))
    rent[0] = 0.0
    extra = _Outer(flat, (1.0 - tau) * extras)
    _fold(rent[1:], [(1, extra), (1, _growth(r.price_annual_change, rate, h, grow))])
    return rent
