"""Paying for owned hardware with a loan or an operating lease instead of cash, vectorised over
draws (floats or ``(S,)`` arrays).

Loan (docs/model.md): principal P = (1 - delta) C0, monthly rate i = rate/12, n months,
PMT = P i / (1 - (1 + i)^(-n)) (P/n when i = 0), interest_m = b_{m-1} i and balance
b_m = b_{m-1} - (PMT - interest_m). What it costs to month M, at present value, is
delta C0 + sum_{m <= min(n, M)} (PMT - tau interest_m) d_m + b_M d_M: the payments less the
interest's tax shield, and the balance still owed (settled at the horizon when the term
outlives it). In closed form, per USD of principal: the principal repaid in month m is
(pmt - i)(1 + i)^(m-1), so sum_{m<=M} interest_m d_m = pmt F(M) - (pmt - i) G(M) with F and G
the present values of 1 USD a month flat and growing at (1 + i)^12 - 1 a year
(:func:`~costmodel.discounting.growth_sum`); b_M = (e^(nL) - e^(ML)) / (e^(nL) - 1) with
L = ln(1 + i) ((n - M)/n when i = 0).

Lease: rho HW (1 - tau) d_m for m = 1..term, owed to the term's end, so its present value is
rho (1 - tau) F(term) per USD of hardware, however early it is counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .discounting import Value, growth_sum
from .inputs import Financing

__all__ = ["FinancingDraws", "lease_cost", "loan_cost", "loan_by_month"]


@dataclass(frozen=True)
class FinancingDraws:
    """The financing's inputs for a set of draws: ``kind`` (cash, loan, lease); a loan's
    ``rate`` [1/year], ``term_months`` [month] and ``down_payment_share`` [-]; a lease's
    ``monthly_rate`` [1/month, share of the hardware price] and ``term_months``."""

    kind: str
    rate: Value | None
    term_months: int | None
    down_payment_share: float
    monthly_rate: Value | None

    @classmethod
    def sampled(cls, inputs: Financing, values: dict[str, Any], side: str) -> FinancingDraws:
        """The draws ``values`` (by ``"<side>.<field>"``, e.g. ``"buy.financing.rate"``) with
        the plain fields of ``inputs``."""
        return cls(
            kind=inputs.kind,
            rate=values.get(f"{side}.rate", inputs.rate),
            term_months=inputs.term_months,
            down_payment_share=inputs.down_payment_share,
            monthly_rate=values.get(f"{side}.monthly_rate", inputs.monthly_rate),
        )


@dataclass(frozen=True)
class _Loan:
    """One USD of principal at monthly rate ``i`` over ``n`` months: the payment ``pmt``
    [USD/month] and ``log_step`` L = ln(1 + i)."""

    i: np.ndarray
    n: int
    pmt: np.ndarray
    log_step: np.ndarray

    @classmethod
    def of(cls, f: FinancingDraws) -> _Loan:
        i = np.asarray(f.rate, dtype=float) / 12.0
        n = f.term_months
        step = np.log1p(i)
        with np.errstate(divide="ignore", invalid="ignore"):
            pmt = np.where(i == 0.0, 1.0 / n, i / -np.expm1(-n * step))
        return cls(i, n, pmt, step)

    def balance(self, months: np.ndarray) -> np.ndarray:
        """b_M per USD of principal after M = ``months`` (<= n) payments: ``(K,)`` or, for
        drawn rates, ``(K, S)``."""
        m = months[:, None] if self.i.ndim else months
        whole = np.expm1(self.n * self.log_step)
        with np.errstate(divide="ignore", invalid="ignore"):
            left = (whole - np.expm1(m * self.log_step)) / whole
        return np.where(self.i == 0.0, (self.n - m) / self.n, left)

    def paid(self, months: np.ndarray, rate: float, tax: float) -> np.ndarray:
        """sum_{m <= M} (pmt - tau interest_m) d_m per USD of principal, for each M of
        ``months`` (<= n): (1 - tau) pmt F(M) + tau (pmt - i) G(M); ``(K,)`` or ``(K, S)``."""
        flat = growth_sum(0.0, rate, months)
        grown = growth_sum(np.expm1(12.0 * self.log_step), rate, months)
        if self.i.ndim:
            flat, grown = flat[:, None], grown.T
        return (1.0 - tax) * self.pmt * flat + tax * (self.pmt - self.i) * grown


def _owed(f: FinancingDraws, months: np.ndarray, rate: float, tax: float) -> np.ndarray:
    """What a loan has cost by month M (each of ``months``), per USD of capex: delta +
    (1 - delta) [paid to min(n, M) + b_min(n, M) d_min(n, M)]."""
    loan = _Loan.of(f)
    upto = np.minimum(months, loan.n)
    d = (1.0 + rate) ** (-upto / 12.0)
    if loan.i.ndim:
        d = d[:, None]
    delta = f.down_payment_share
    return delta + (1.0 - delta) * (loan.paid(upto, rate, tax) + loan.balance(upto) * d)


def loan_cost(f: FinancingDraws, horizon: int, rate: float, tax: float) -> Value:
    """What a loan costs over the ``horizon`` [month] at present value, per USD of capex C0
    [-] (cash: 1): the down payment, the payments less the interest's tax shield and the
    balance settled at the horizon; ``rate`` [1/year] discounts, ``tax`` [-] shields."""
    out = _owed(f, np.array([horizon]), rate, tax)[0]
    return out if np.ndim(out) else float(out)


def loan_by_month(f: FinancingDraws, horizon: int, rate: float, tax: float) -> np.ndarray:
    """What a loan has cost by each month m = 1..``horizon``, per USD of capex, counting the
    balance still owed at m: month-major ``(H,)`` or, for a drawn rate, ``(H, S)``."""
    return _owed(f, np.arange(1, horizon + 1), rate, tax)


def lease_cost(f: FinancingDraws, rate: float, tax: float) -> Value:
    """A lease's payments to the end of its term at present value, per USD of hardware [-]:
    rho (1 - tau) sum_{m <= term} d_m."""
    return f.monthly_rate * (1.0 - tax) * float(growth_sum(0.0, rate, f.term_months))
