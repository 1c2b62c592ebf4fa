"""Break-even utilisation, payback months and cumulative cost, per draw.

``inf`` marks "never" (renting stays cheaper at u = 1, or buying does not pay back within the
horizon); a break-even of 0 means buying is cheaper even when idle ("always").
"""

from __future__ import annotations

import numpy as np

from .cashflows import BuyFlows, RentFlows

__all__ = ["breakeven_utilisation", "cumulative_costs", "payback_months"]


def breakeven_utilisation(buy: BuyFlows, rent: RentFlows) -> np.ndarray:
    """The smallest u in [0, 1] with TCO_buy(u) <= TCO_rent(u), per draw, shape (S,).

    TCO_buy is linear in u and TCO_rent is linear with at most one kink (at the utilisation that
    fills a reservation), so the difference is piecewise linear on [0, k] and [k, 1] and its first
    zero is found exactly by linear interpolation on the first segment whose end is <= 0.
    """
    b0 = buy.capex + buy.fixed.sum(axis=1) - buy.salvage
    b1 = buy.per_u.sum(axis=1)
    r0, s = rent.base.sum(axis=1), rent.slope.sum(axis=1)
    k = np.clip(rent.kink, 0.0, 1.0)
    d0 = b0 - r0
    dk = b0 + b1 * k - r0
    d1 = b0 + b1 - r0 - s * np.maximum(0.0, 1.0 - rent.kink)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = k * d0 / (d0 - dk)
        second = k + (1.0 - k) * dk / (dk - d1)
    return np.where(d0 <= 0, 0.0, np.where(dk <= 0, first, np.where(d1 <= 0, second, np.inf)))


def cumulative_costs(buy: BuyFlows, rent: RentFlows, u: float) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative discounted after-tax cost of each side at months 0..H, shapes (S, H + 1).

    Buy starts at C0 at month 0; resale is not counted. Rent starts at 0.
    """
    monthly_buy = buy.fixed + u * buy.per_u
    monthly_rent = rent.base + np.maximum(0.0, u - rent.kink)[:, None] * rent.slope
    cum_buy = np.concatenate([np.zeros((monthly_buy.shape[0], 1)), monthly_buy], axis=1)
    cum_rent = np.concatenate([np.zeros((monthly_rent.shape[0], 1)), monthly_rent], axis=1)
    cum_buy = np.cumsum(cum_buy, axis=1) + buy.capex[:, None]
    return cum_buy, np.cumsum(cum_rent, axis=1)


def payback_months(buy: BuyFlows, rent: RentFlows, u: float) -> np.ndarray:
    """Fractional month at which cumulative buy cost first meets cumulative rent cost, (S,).

    f(t) = C0 + sum_{m<=t}[opex_m(1-tau) - tau*D_m]d_m - sum_{m<=t} rent_m(1-tau)d_m; the first
    month m with f(m) <= 0 gives t = (m - 1) + f(m-1)/(f(m-1) - f(m)), linear inside the month.
    ``inf`` when f stays positive through the horizon; 0 when f(0) = C0 <= 0.
    """
    cum_buy, cum_rent = cumulative_costs(buy, rent, u)
    f = cum_buy - cum_rent
    met = f <= 0.0
    first = np.argmax(met, axis=1)
    rows = np.arange(f.shape[0])
    prev = f[rows, np.maximum(first - 1, 0)]
    here = f[rows, first]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (first - 1) + prev / (prev - here)
    t = np.where(first == 0, 0.0, t)
    return np.where(met.any(axis=1), t, np.inf)
