"""Growing the fleet: the servers a plan adds when the work arrives, and what they cost.

A staged candidate (S0, K, S1, theta) of a fleet plan buys S0 servers at month 0 and S1 more
at the end of month a, the first month m in 1..H whose work passes theta times the first
servers' capacity, W_m > theta C(S0) (strictly; with S0 = 0 the first month with any work), or
at a fixed month a (``at_month``). They serve from month s = a + L + 1 (L the lead time);
when s > H, or no month triggers, nothing is bought and the candidate is (S0, K).

Bought at a, the added cohort's hardware costs HW' = HW (1 + g_hw)^(a/12) per server (GPUs
and platform; a pooled spare G (1 + g_hw)^(a/12)), with setup unchanged. Per draw, with
d_m = (1 + r)^(-m/12), tau the tax rate and the cohort's hardware P' = S1 HW' + s1 G'
(s1 = ceil(spare_share S1 N) spares), capex C0' = P' + S1 setup:

- paid: C0' d_a in cash; a loan or a lease starting at a is what it costs over the H - a
  months left (:func:`~costmodel.financing.loan_by_month`, :func:`~costmodel.financing.lease_cost`),
  discounted by d_a;
- running, from month s on: (1 - tau) sum_{m >= s} d_m [S1 kW_idle 730 PUE e (1 + g_e)^((m-1)/12)
  + S1 (hosting peak_kW + admin) + maintenance P'/12 + AFR S1 N G'/12]; the power that grows
  with utilisation is the fleet's (:mod:`costmodel.fleet`);
- depreciation: section 4's schedule on the basis (C0', or setup for a lease) shifted to
  start in month s and cut at H; its tax shield tau basis sum_j D_j d_{s+j}, and the book value
  at H, BV' = basis (1 - sum of the months written off);
- resale at H: R' = P' (1 - decay)^((H - a)/12) (nothing for a lease), ageing from purchase,
  less tau (R' - BV'), discounted by d_H.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cashflows import BuyDraws, Value, buy_parts, depreciation_schedule
from .discounting import discount_factors
from .financing import lease_cost, loan_by_month
from .stats import percentiles

__all__ = ["Cohort", "first_month_above", "suffix_sums", "work_band"]

#: Elements of one block of (months x draws) work in :func:`work_band`.
_BLOCK_ELEMENTS = 2_000_000


def work_band(first: Value, growth: Value, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """The P10 and P90 over the draws of each month's work W_m = W_1 (1 + g_w)^((m-1)/12)
    [units of work/month], m = 1..H, from the draws of ``first`` W_1 [units of work/month] and
    ``growth`` g_w [1/year] (floats or (n,)): two (H,) arrays, a block of months at a time."""
    w1, g = np.asarray(first, dtype=float), np.asarray(growth, dtype=float)
    n = max(w1.size, g.size)
    low, high = np.empty(horizon), np.empty(horizon)
    step = max(1, _BLOCK_ELEMENTS // n)
    for m0 in range(0, horizon, step):
        months = np.arange(m0, min(horizon, m0 + step))[:, None] / 12.0
        work = np.broadcast_to(w1 * (1.0 + g) ** months, (months.size, n)).copy()
        pct = percentiles(work)
        low[m0 : m0 + months.size], high[m0 : m0 + months.size] = pct["p10"], pct["p90"]
    return low, high


def first_month_above(work: np.ndarray, threshold: Value) -> np.ndarray:
    """The first month m in 1..H whose work W_m [units of work/month] is strictly above
    ``threshold`` (a float or per draw), per draw, H + 1 where none is; ``work`` is
    month-major (H, n)."""
    over = work > np.asarray(threshold, dtype=float)
    first = np.argmax(over, axis=0) + 1
    return np.where(over.any(axis=0), first, work.shape[0] + 1)


def suffix_sums(x: np.ndarray) -> np.ndarray:
    """sum_{j >= i} x_j for i = 0..H over the month axis (the first), with a row of zeros
    appended: ``(H + 1,)`` or ``(H + 1, n)``."""
    out = np.zeros((x.shape[0] + 1, *x.shape[1:]))
    out[:-1] = np.cumsum(x[::-1], axis=0)[::-1]
    return out


def _at(table: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``table[index]`` per draw: a month-indexed (M,) or (M, n) table, ``index`` (n,)."""
    if table.ndim == 1:
        return table[index]
    return np.take_along_axis(table, index[None, :], axis=0)[0]


@dataclass(frozen=True)
class Cohort:
    """One added server's terms for a chunk of draws (floats or (n,) arrays, month tables
    month-major), from which :meth:`cost` prices any cohort bought at any month."""

    own: BuyDraws
    horizon: int
    rate: float
    tax: float
    shield: np.ndarray  # (H + 1,): sum_j D_j d_{s+j} for the first month of service s
    kept: np.ndarray  # (H + 1,): 1 - the share written off by H, for s
    energy_after: np.ndarray  # (H + 1,) or (H + 1, n): sum_{m >= s} d_m (1 + g_e)^((m-1)/12)
    flat_after: np.ndarray  # (H + 1,): sum_{m >= s} d_m
    loan: np.ndarray | None  # (H,) or (H, n): a loan's cost over M = 1..H months, per USD

    @classmethod
    def of(cls, own: BuyDraws, horizon: int, rate: float, tax: float, energy: np.ndarray):
        """The terms of one server ``own`` with ``energy`` = d_m (1 + g_e)^((m-1)/12), (H,)
        or (H, n), the same for every cohort."""
        d = discount_factors(rate, horizon)
        schedule = depreciation_schedule(own.depreciation, own.depreciation_years, horizon)
        shield, kept = np.zeros(horizon + 1), np.ones(horizon + 1)
        for s in range(1, horizon + 1):  # months, not draws: H short dot products
            months = horizon - s + 1
            shield[s - 1] = schedule[:months] @ d[s - 1 :]
            kept[s - 1] = 1.0 - schedule[:months].sum()
        f = own.financing
        loan = loan_by_month(f, horizon, rate, tax) if f.kind == "loan" else None
        return cls(own, horizon, rate, tax, shield, kept, suffix_sums(energy), suffix_sums(d), loan)

    def priced(
        self, servers: int, spares: int, bought: np.ndarray, start: np.ndarray, change: Value
    ) -> np.ndarray:
        """The present value [USD] per draw of ``servers`` S1 servers and ``spares`` s1 pooled
        GPUs bought at the end of month ``bought`` a and in service from month ``start`` s
        (both (n,)), at a price that changes by ``change`` g_hw a year; 0 where s > H."""
        b, h, tau = self.own, self.horizon, self.tax
        p = buy_parts(b)
        active = start <= h
        a = np.where(active, bought, 0)
        s = np.where(active, start, h + 1)
        scale = (1.0 + np.asarray(change, dtype=float)) ** (a / 12.0)
        gpu = b.gpu_price_usd * scale  # G'
        hardware = servers * p.hardware * scale + spares * gpu  # P'
        capex = hardware + servers * b.setup_usd
        d_a = (1.0 + self.rate) ** (-a / 12.0)
        paid, basis, resold = self._funding(hardware, capex, servers * b.setup_usd, a, d_a)
        peak_kw = (b.gpu_count * b.gpu_power_w + b.platform_power_w) / 1000.0
        monthly = (
            servers * (b.hosting_usd_per_kw_month * peak_kw + b.admin_usd_per_month)
            + b.maintenance_rate * hardware / 12.0
            + b.gpu_annual_failure_rate * servers * b.gpu_count * gpu / 12.0
        )
        running = (1.0 - tau) * (
            servers * p.kw_idle * p.energy_month * _at(self.energy_after, s - 1)
            + monthly * _at(self.flat_after, s - 1)
        )
        resale = resold * (1.0 - b.resale_annual_decay) ** ((h - a) / 12.0)
        book = basis * self.kept[s - 1]
        d_h = (1.0 + self.rate) ** (-h / 12.0)
        salvage = (resale - tau * (resale - book)) * d_h
        out = paid + running - tau * basis * self.shield[s - 1] - salvage
        return np.where(active, out, 0.0)

    def _funding(
        self, hardware: Value, capex: Value, setup: Value, a: np.ndarray, d_a: np.ndarray
    ) -> tuple[Value, Value, Value]:
        """What paying for the cohort bought at a costs at present value, its depreciable
        basis and the hardware resold at H (as :func:`~costmodel.cashflows.buy_line` says,
        the financing starting at a)."""
        f = self.own.financing
        if f.kind == "cash":
            return capex * d_a, capex, hardware
        if f.kind == "loan":
            left = np.clip(self.horizon - a, 1, self.horizon)  # months of the loan within H
            return capex * _at(self.loan, left - 1) * d_a, capex, hardware
        paid = (setup + hardware * lease_cost(f, self.rate, self.tax)) * d_a
        return paid, setup, 0.0 * hardware
