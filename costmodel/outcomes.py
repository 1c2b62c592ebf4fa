"""Break-even utilisation, payback months and cumulative cost, per draw.

``inf`` marks "never" (renting stays cheaper at u = 1, or buying does not pay back within the
horizon); a break-even of 0 means buying is cheaper even when idle ("always").
"""

from __future__ import annotations

import numpy as np

from .cashflows import BuyFlows, RentFlows

__all__ = ["breakeven_utilisation", "Cumulative"]


def breakeven_utilisation(buy: BuyFlows, rent: RentFlows) -> np.ndarray:
    """The smallest u in [0, 1] with TCO_buy(u) <= TCO_rent(u), per draw, shape (S,).

    TCO_buy is linear in u and TCO_rent is linear with at most one kink (at the utilisation that
    fills a reservation), so the difference is piecewise linear on [0, k] and [k, 1] and its first
    zero is found exactly by linear interpolation on the first segment whose end is <= 0.
    """
    b0, b1 = buy.tco_at_zero, buy.tco_per_u
    r0, s = rent.tco_at_zero, rent.tco_slope
    k = np.clip(rent.kink, 0.0, 1.0)
    d0 = b0 - r0
    dk = b0 + b1 * k - r0
    d1 = b0 + b1 - r0 - s * np.maximum(0.0, 1.0 - rent.kink)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = k * d0 / (d0 - dk)
        second = k + (1.0 - k) * dk / (dk - d1)
    return np.where(d0 <= 0, 0.0, np.where(dk <= 0, first, np.where(d1 <= 0, second, np.inf)))


class Cumulative:
    """Cumulative discounted after-tax cost of each side by month, for any utilisation.

    The four running sums (buy fixed and per-u, rent base and slope) are computed once, so each
    utilisation level costs a few (S, H) array operations.
    """

    def __init__(self, buy: BuyFlows, rent: RentFlows) -> None:
        self.capex = buy.capex
        self.kink = rent.kink
        self._gap = buy.capex[:, None] + np.cumsum(buy.fixed, axis=1)  # buy at u = 0, m = 1..H
        self._buy_u = np.cumsum(buy.per_u, axis=1)
        self._rent = np.cumsum(rent.base, axis=1)
        self._rent_u = np.cumsum(rent.slope, axis=1)
        # f(u) = net0 + u * net_u - max(0, u - k) * rent_u, and with no kink (k = 0, pay as
        # you go) simply net0 + u * (net_u - rent_u): one multiply-add per level.
        self._net0 = self._gap - self._rent
        self._kinked = bool(np.any(self.kink > 0))
        self._net_u = self._buy_u if self._kinked else self._buy_u - self._rent_u

    def costs(self, u: float) -> tuple[np.ndarray, np.ndarray]:
        """(buy, rent) cumulative costs [USD] at months 0..H, shapes (S, H + 1).

        Buy starts at C0 at month 0 and counts no resale; rent starts at 0.
        """
        above = np.maximum(0.0, u - self.kink)[:, None]
        buy = np.concatenate([self.capex[:, None], self._gap + u * self._buy_u], axis=1)
        rent = self._rent + above * self._rent_u
        return buy, np.concatenate([np.zeros((rent.shape[0], 1)), rent], axis=1)

    def payback(self, u: float) -> np.ndarray:
        """Fractional month at which cumulative buy cost first meets cumulative rent cost, (S,).

        f(t) = C0 + sum_{m<=t}[opex_m(1-tau) - tau*D_m]d_m - sum_{m<=t} rent_m(1-tau)d_m; the
        first month m with f(m) <= 0 gives t = (m - 1) + f(m-1)/(f(m-1) - f(m)), linear inside
        the month. ``inf`` when f stays positive through the horizon; 0 when f(0) = C0 <= 0.
        """
        f = self._net_u * u  # months 1..H
        f += self._net0
        if self._kinked:
            f -= np.maximum(0.0, u - self.kink)[:, None] * self._rent_u
        month = np.argmax(f <= 0.0, axis=1)  # index m-1 of the first month with f(m) <= 0
        rows = np.arange(f.shape[0])
        here = f[rows, month]
        prev = np.where(month == 0, self.capex, f[rows, np.maximum(month - 1, 0)])
        with np.errstate(divide="ignore", invalid="ignore"):
            t = month + prev / (prev - here)
        t = np.where(here <= 0.0, t, np.inf)  # argmax found no month: never within H
        return np.where(self.capex <= 0.0, 0.0, t)
