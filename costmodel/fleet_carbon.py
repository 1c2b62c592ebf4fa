"""A fleet plan's emissions beside its cost: per unit of each month's work, by where it is done.

The equations are those of :mod:`costmodel.fleet` (its docstring). A chunk of draws gives, for
each place work is done, its emissions per unit of work of month m [kg CO2e/unit] as the rows
of one array, month-major: row 0 the kilograms, and when carbon has a price, row 1 their
after-tax present value (1 - tau) d_m times row 0 [kg], so that the cost a candidate adds is
p times row 1 (p [USD/kg] per draw). One weighted sum over the months of the candidate's
monthly work (:func:`weighted_rows`) then gives both. Units: kg CO2e, kW, gCO2e/kWh; months of
730 h, years of 8760 h.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .carbon import G_PER_KG, HOURS_PER_YEAR, KG_PER_TONNE
from .cashflows import HOURS_PER_MONTH, BuyDraws, Value, owned_power_kw
from .inputs import PlanCarbon

__all__ = ["FleetEmissions", "fleet_emissions", "weighted_rows"]


@dataclass(frozen=True)
class FleetEmissions:
    """A chunk's emissions; each monthly array is ``(R, H)`` or ``(R, H, n)``, R = 1 without a
    carbon price and 2 with one (row 1 the after-tax present value of row 0).

    ``owned`` [kg per unit of owned work, every GPU up]: kW_per_u PUE I_own (1 + g_I)^((m-1)/12)
    / (1000 T_srv), to be divided by A(S); ``reserved`` and ``burst`` [kg per unit of reserved
    or burst work] (``reserved`` ``None`` without a reserve, ``burst`` ``None`` for an API of
    unknown emissions); ``server`` [kg per server] its idle power over the horizon and its
    embodied share, ``spare`` [kg per pooled spare GPU] its embodied share, each (R, 1) or
    (R, n); ``price`` [USD/kg] per draw, ``None`` without a price."""

    owned: np.ndarray
    reserved: np.ndarray | None
    burst: np.ndarray | None
    server: np.ndarray
    spare: np.ndarray
    price: Value | None


def _monthly(coef: Value, change: Value, d: np.ndarray, kept: float | None) -> np.ndarray:
    """coef (1 + g)^((m-1)/12) for m = 1..H, and (1 - tau) d_m times it when ``kept`` (1 - tau)
    is given: ``(R, H)`` for a fixed coefficient and change, else ``(R, H, n)``."""
    g = np.asarray(change, dtype=float)
    months = np.arange(d.size) / 12.0
    growth = (1.0 + g) ** (months[:, None] if g.ndim else months)
    rows = [growth] if kept is None else [growth, kept * (growth.T * d).T]
    c = np.asarray(coef, dtype=float)
    out = np.stack(rows)
    if c.ndim and out.ndim == 2:
        return out[:, :, None] * c
    return out * c


def _rented(values: dict[str, Value], side: str, hours: Value, life: float, d, kept) -> np.ndarray:
    """A rented side's kg per unit of its work by month: ``hours`` instance-hours a unit of
    work, each P PUE I (1 + g_r)^((m-1)/12) / 1000 + E_inst / (L_p 8760)."""
    power = values[f"{side}.power_kw"] * values[f"{side}.pue"] * values[f"{side}.grid"] / G_PER_KG
    operational = _monthly(hours * power, values[f"{side}.grid_annual_change"], d, kept)
    embodied = _monthly(hours * values[f"{side}.embodied_kg_co2e"] / life, 0.0, d, kept)
    if operational.ndim != embodied.ndim:  # one (R, H), the other (R, H, n)
        operational, embodied = (
            x if x.ndim == 3 else x[:, :, None] for x in (operational, embodied)
        )
    return operational + embodied


def fleet_emissions(
    carbon: PlanCarbon | None,
    values: dict[str, Value],
    own: BuyDraws,
    throughputs: tuple[Value, Value | None, Value],
    burst_hours: Value,
    terms: tuple[np.ndarray, float],
) -> FleetEmissions | None:
    """The emissions of a chunk of draws ``values`` (the carbon inputs among them), ``own`` the
    server's draws, ``throughputs`` (T_srv, T_res or ``None``, T_burst) [units of work/hour],
    ``burst_hours`` the burst's instance-hours per hour of its work (1 + spot overhead, 1 for
    an API), ``terms`` (d_m, tau); ``None`` for a plan that counts no carbon."""
    if carbon is None:
        return None
    d, tau = terms
    kept = (1.0 - tau) if carbon.priced else None
    t_srv, t_res, t_burst = throughputs
    h = d.size
    life = min(1.0, h / (12.0 * carbon.service_life_years))
    provider = carbon.provider_service_life_years * HOURS_PER_YEAR
    kw_idle, kw_per_u = owned_power_kw(own)
    per_kwh = own.pue * values["own.grid"] / G_PER_KG  # [kg/kWh]
    change = values["own.grid_annual_change"]
    idle = _monthly(kw_idle * HOURS_PER_MONTH * per_kwh, change, d, kept).sum(axis=1)
    rows = 1 if kept is None else 2
    burst = None
    if carbon.burst is not None:
        burst = _rented(values, "burst", burst_hours / t_burst, provider, d, kept)
    elif carbon.api is not None:  # M tokens: g per M tokens, flat
        burst = _monthly(values["burst.api.g_co2e_per_mtok"] / G_PER_KG, 0.0, d, kept)
    return FleetEmissions(
        owned=_monthly(kw_per_u * per_kwh / t_srv, change, d, kept),
        reserved=None
        if t_res is None
        else _rented(values, "reserve", 1.0 / t_res, provider, d, kept),
        burst=burst,
        server=(idle if idle.ndim == 2 else idle[:, None]) + values["own.embodied_kg_co2e"] * life,
        spare=np.full((rows, 1), carbon.spare_gpu_kg_co2e * life),
        price=None if kept is None else values["carbon.usd_per_tonne"] / KG_PER_TONNE,
    )


def weighted_rows(weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    """sum_m weights_{r,m} x_m per row r and draw, for ``(R, H)`` or ``(R, H, n)`` weights and
    ``(H, n)`` x: ``(R, n)``."""
    return weights @ x if weights.ndim == 2 else np.einsum("rmn,mn->rn", weights, x)
