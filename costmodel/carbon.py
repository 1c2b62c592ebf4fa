"""Emissions beside cost (docs/model.md), vectorised over draws, as lines in utilisation.

Each side's emissions over the horizon [kg CO2e] are linear in u, like its TCO:

- owned operational: sum_m kW(u)*730*PUE*I_own*(1+g_I)^((m-1)/12)/1000, with kW(u) the
  build's IT power (:func:`~costmodel.cashflows.owned_power_kw`) and PUE its own;
- owned embodied: E_own*min(1, H/(12*L)), L the service life [year];
- rented: hours_m*P_inst*PUE_p*I_region*(1+g_r)^((m-1)/12)/1000 + hours_m*E_inst/(L_p*8760),
  hours_m = u*730*T_own/T_inst the instance-hours used (spot overhead in, a reservation's idle
  committed hours out: :func:`~costmodel.cashflows.instance_hours`);
- API: u*730*T_own*g_api/1000 a month, only where ``g_co2e_per_mtok`` is given (else unknown).

A carbon price p [USD/t] folds them into money: the owned embodied carbon once at m = 0 (no tax
effect, not discounted), everything else in each month's flow, after tax like the flow it
joins (times 1 - tau) and discounted (:func:`~costmodel.cashflows.growth_sum` at the discount
rate in place of the plain sum). With p fixed at 0 nothing here touches a money figure, and the
carbon inputs are drawn on their own name-keyed streams (:func:`carbon_values`), apart from the
costs'. Units: kg CO2e, kW, gCO2e/kWh, USD; months of 730 h, years of 8760 h.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .cashflows import (
    HOURS_PER_MONTH,
    BuyDraws,
    BuyLine,
    Gap,
    Lines,
    RentDraws,
    Terms,
    instance_hours,
    model_lines,
    owned_power_kw,
)
from .discounting import Value, growth_sum
from .inputs import ModelInputs
from .sampling import sample

__all__ = [
    "G_PER_KG",
    "HOURS_PER_YEAR",
    "KG_PER_TONNE",
    "CarbonLine",
    "Emissions",
    "carbon_values",
    "emissions",
    "owned_emissions",
    "priced_cumulative",
    "priced_gap",
    "priced_lines",
    "rented_emissions",
]

#: Hours in a year [h], the unit of a provider's service life.
HOURS_PER_YEAR = 8760.0
#: Grams in a kilogram, kilograms in a tonne.
G_PER_KG = KG_PER_TONNE = 1000.0


@dataclass(frozen=True)
class CarbonLine:
    """A side's emissions over the horizon [kg CO2e] per draw: ``at_zero + per_u * u``."""

    at_zero: Value
    per_u: Value

    def kg(self, u: float) -> Value:
        """Emissions at utilisation ``u`` [kg CO2e]."""
        return self.at_zero + self.per_u * u

    def per_unit(self, cap: Value, horizon: int) -> CarbonLine:
        """The line per unit of capacity: divided by 730 * H * ``cap`` [units of work/hour]
        (the work done over the horizon at u = 1), so that ``kg(u) / u`` is the emissions per
        unit of work [kg CO2e/unit], as :meth:`~costmodel.cashflows.BuyLine.per_unit`."""
        scale = HOURS_PER_MONTH * horizon * np.asarray(cap)
        return CarbonLine(self.at_zero / scale, self.per_u / scale)


@dataclass(frozen=True)
class Emissions:
    """Every side's emissions line; ``api`` is ``None`` when the API's emissions are unknown
    (no ``g_co2e_per_mtok``), never a line of zeros."""

    buy: CarbonLine
    rent: CarbonLine
    api: CarbonLine | None = None


@dataclass(frozen=True)
class _Rates:
    """Each side's emissions in month 1 [kg CO2e/month] (floats or ``(S,)``), and the price.

    ``owned_idle`` and ``owned_per_u`` (the build's at u = 0 and per unit of u) grow at
    ``owned_change``; ``rented_power`` (per unit of u) at ``rented_change``; the rented
    embodied share ``rented_embodied`` and the API's ``api`` (per unit of u) are flat.
    ``owned_embodied`` [kg CO2e] is charged once; ``price`` [USD/kg CO2e]."""

    owned_embodied: Value
    owned_idle: Value
    owned_per_u: Value
    owned_change: Value
    rented_power: Value
    rented_change: Value
    rented_embodied: Value
    api: Value | None
    price: Value


def carbon_values(inputs: ModelInputs) -> dict[str, Value]:
    """The carbon inputs' draws by name, drawn on their own name-keyed streams with the run's
    seed and method (the costs' draws are not touched), or ``{}`` when carbon has a price: then
    they are among the cost inputs (:meth:`~costmodel.inputs.ModelInputs.distributions`)."""
    c = inputs.carbon
    if c is None or c.priced:
        return {}
    dists = c.distributions()
    names = sorted(name for name, d in dists.items() if not d.is_fixed)
    q = sample(names, inputs.samples, inputs.seed, inputs.method).q if names else {}
    return {name: d.ppf(q[name]) if name in q else d.support()[0] for name, d in dists.items()}


def _owned_rates(b: BuyDraws, values: dict[str, Value], life_years: float, h: int) -> tuple:
    """The owned build's embodied share over ``h`` months [kg CO2e] and its month-1
    emissions at u = 0 and per unit of u [kg CO2e/month], with their annual change."""
    kw_idle, kw_per_u = owned_power_kw(b)
    per_kw = HOURS_PER_MONTH * b.pue * values["buy.grid"] / G_PER_KG  # [kg/(kW*month)]
    embodied = values["buy.embodied_kg_co2e"] * min(1.0, h / (12 * life_years))
    return embodied, kw_idle * per_kw, kw_per_u * per_kw, values["buy.grid_annual_change"]


def _rented_rates(
    r: RentDraws, values: dict[str, Value], own: Value, inst: Value, life_years: float
) -> tuple:
    """A rented instance's month-1 power emissions and flat embodied share per unit of u
    [kg CO2e/month], and the power's annual change, on the throughputs ``own`` and ``inst``."""
    full = instance_hours(r, own, inst)
    power = values["rent.power_kw"] * values["rent.pue"] * values["rent.grid"] / G_PER_KG
    embodied = full * values["rent.embodied_kg_co2e"] / (life_years * HOURS_PER_YEAR)
    return full * power, values["rent.grid_annual_change"], embodied


def _api_rate(values: dict[str, Value], own: Value) -> Value:
    """The API's month-1 emissions per unit of u [kg CO2e/month]: the M tokens it serves a
    month at u = 1 times its g per M tokens."""
    return HOURS_PER_MONTH * own * values["api.g_co2e_per_mtok"] / G_PER_KG


def _rates(inputs: ModelInputs, values: dict[str, Value], own: Value, inst: Value) -> _Rates:
    """The month-1 emissions of each side for the draws ``values`` (carbon inputs included),
    with ``own`` and ``inst`` the throughputs [units of work/hour] of the build and an
    instance."""
    c, h = inputs.carbon, inputs.horizon_months
    b = BuyDraws.sampled(inputs.buy, values)
    embodied, idle, per_u, change = _owned_rates(b, values, c.service_life_years, h)
    r = RentDraws.sampled(inputs.rent, values)
    power, rented_change, rented_embodied = _rented_rates(
        r, values, own, inst, c.provider_service_life_years
    )
    return _Rates(
        owned_embodied=embodied,
        owned_idle=idle,
        owned_per_u=per_u,
        owned_change=change,
        rented_power=power,
        rented_change=rented_change,
        rented_embodied=rented_embodied,
        api=None if c.api is None else _api_rate(values, own),
        price=values["carbon.usd_per_tonne"] / KG_PER_TONNE,
    )


def owned_emissions(
    b: BuyDraws, values: dict[str, Value], life_years: float, horizon: int
) -> CarbonLine:
    """The owned build's emissions over ``horizon`` months [kg CO2e] for the draws ``values``
    (its ``buy.*`` carbon inputs among them), ``life_years`` its service life [year]:
    operational sum_m kW(u)*730*PUE*I_own*(1+g_I)^((m-1)/12)/1000 plus the embodied share."""
    embodied, idle, per_u, change = _owned_rates(b, values, life_years, horizon)
    grow = growth_sum(change, 0.0, horizon)  # sum_m (1+g)^((m-1)/12), undiscounted
    return CarbonLine(idle * grow + embodied, per_u * grow)


def rented_emissions(
    r: RentDraws,
    values: dict[str, Value],
    own: Value,
    inst: Value,
    life_years: float,
    horizon: int,
) -> CarbonLine:
    """A rented instance's emissions over ``horizon`` months [kg CO2e] for the draws
    ``values`` (its ``rent.*`` carbon inputs among them), doing the work of a build of
    throughput ``own`` on instances of ``inst`` [units of work/hour]; ``life_years`` the
    provider's service life [year]. Through the origin: only the hours used emit."""
    power, change, embodied = _rented_rates(r, values, own, inst, life_years)
    return CarbonLine(0.0, power * growth_sum(change, 0.0, horizon) + embodied * horizon)


def emissions(inputs: ModelInputs, values: dict[str, Value], lines: Lines) -> Emissions | None:
    """Every side's emissions line [kg CO2e] for the draws ``values`` (the cost inputs'; the
    carbon inputs are drawn here when carbon has no price), on the throughputs of ``lines``;
    ``None`` without carbon inputs."""
    c = inputs.carbon
    if c is None:
        return None
    h = inputs.horizon_months
    values = {**values, **carbon_values(inputs)}
    api = None if c.api is None else CarbonLine(0.0, _api_rate(values, lines.own) * h)
    return Emissions(
        buy=owned_emissions(BuyDraws.sampled(inputs.buy, values), values, c.service_life_years, h),
        rent=rented_emissions(
            RentDraws.sampled(inputs.rent, values),
            values,
            lines.own,
            lines.instance,
            c.provider_service_life_years,
            h,
        ),
        api=api,
    )


def priced_lines(inputs: ModelInputs, values: dict[str, Value]) -> Lines:
    """The TCO lines of :func:`~costmodel.cashflows.model_lines` with a carbon price folded
    in (the lines as they are when carbon has none): buy + p*E_emb + (1-tau)*p*sum[owned
    operational_m*d_m]; rent + (1-tau)*p*sum[rented_m*d_m] as its ``per_u`` (the hours used
    grow with u, whatever a reservation commits); the API + (1-tau)*p*sum[api_m*d_m] where its
    emissions are known."""
    lines = model_lines(inputs, values)
    if inputs.carbon is None or not inputs.carbon.priced:
        return lines
    h, rate, kept = inputs.horizon_months, inputs.discount_rate, 1.0 - inputs.tax_rate
    r = _rates(inputs, values, lines.own, lines.instance)
    owned = kept * r.price * growth_sum(r.owned_change, rate, h)
    flat = kept * r.price * growth_sum(0.0, rate, h)
    rented = r.rented_power * kept * r.price * growth_sum(r.rented_change, rate, h)
    b, rent = lines.buy, lines.rent
    buy = BuyLine(
        b.capex,
        b.at_zero + r.price * r.owned_embodied + r.owned_idle * owned,
        b.per_u + r.owned_per_u * owned,
    )
    rent = dataclasses.replace(rent, per_u=rent.per_u + rented + r.rented_embodied * flat)
    api = lines.api
    if api is not None and r.api is not None:
        api = dataclasses.replace(api, per_u=api.per_u + r.api * flat)
    return dataclasses.replace(lines, buy=buy, rent=rent, api=api)


def _by_month(annual_change: Value, terms: Terms) -> np.ndarray:
    """The present value to month m of 1 USD a month growing at g, m = 1..H, month-major:
    ``(H, 1)`` for a fixed g, ``(H, S)`` for drawn ones."""
    out = growth_sum(annual_change, terms.discount_rate, np.arange(1, terms.horizon + 1))
    return out[:, None] if out.ndim == 1 else out.T


def _month_parts(
    inputs: ModelInputs, values: dict[str, Value], own: Value, inst: Value, terms: Terms
) -> tuple[_Rates, np.ndarray, np.ndarray, np.ndarray]:
    """The rates and the after-tax priced present value to month m of 1 kg a month growing
    as the owned grid, as the rented grid, and flat [USD/kg], month-major."""
    r = _rates(inputs, values, own, inst)
    unit = (1.0 - terms.tax_rate) * np.asarray(r.price)
    return (
        r,
        _by_month(r.owned_change, terms) * unit,
        _by_month(r.rented_change, terms) * unit,
        _by_month(0.0, terms) * unit,
    )


def priced_gap(
    g: Gap,
    inputs: ModelInputs,
    values: dict[str, Value],
    own: Value,
    inst: Value,
    terms: Terms,
    against: str = "rent",
) -> Gap:
    """The cumulative buy-minus-``against`` gap of :func:`~costmodel.cashflows.gap` (for
    payback) with carbon's price by month, in place: p*E_emb from month 0 on, the owned
    operational carbon to month m after tax, less the other side's (``"rent"`` or ``"api"``; an
    API of unknown emissions, or a further side, adds none). ``g`` as it is when carbon has no
    price."""
    if inputs.carbon is None or not inputs.carbon.priced:
        return g
    r, owned, rented, flat = _month_parts(inputs, values, own, inst, terms)
    start = r.price * r.owned_embodied
    net0, slope = g.net0, g.slope  # the gap's own buffers, changed in place
    net0 += start + r.owned_idle * owned
    slope += r.owned_per_u * owned
    if against == "rent":
        slope -= r.rented_power * rented + r.rented_embodied * flat
    elif against == "api" and r.api is not None:
        slope -= r.api * flat
    return dataclasses.replace(g, capex=g.capex + start)


def priced_cumulative(
    buy: np.ndarray,
    rent: np.ndarray,
    inputs: ModelInputs,
    values: dict[str, Value],
    own: Value,
    inst: Value,
    terms: Terms,
    u: float,
    api: np.ndarray | None = None,
) -> None:
    """Add carbon's price to the cumulative cost by month 0..H at utilisation ``u`` of
    :func:`~costmodel.cashflows.cumulative_cost` (``buy``, ``rent``, ``(H + 1, S)``) and, when
    given, of the hosted API's (``api``, where its emissions are known: u*api_1*p*(1-tau)*
    sum_j d_j to month m), in place; nothing when carbon has no price."""
    if inputs.carbon is None or not inputs.carbon.priced:
        return
    r, owned, rented, flat = _month_parts(inputs, values, own, inst, terms)
    start = r.price * r.owned_embodied
    buy[0] += start
    buy[1:] += start + (r.owned_idle + u * r.owned_per_u) * owned
    rent[1:] += u * (r.rented_power * rented + r.rented_embodied * flat)
    if api is not None and r.api is not None:
        api[1:] += u * r.api * flat
