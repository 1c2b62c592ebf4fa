"""Present values of monthly flows: discount factors and the closed-form sums of growing flows.

Months m = 1..H, flows at month ends; d_m = (1 + r)^(-m/12) for a nominal annual rate r
[1/year]; an annual change g [1/year] applies as (1 + g)^((m - 1)/12) in month m.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Value", "discount_factors", "growth_sum"]

Value = float | np.ndarray


def discount_factors(rate: float, horizon: int) -> np.ndarray:
    """``d_m = (1 + rate)^(-m/12)`` for m = 1..horizon; rate [1/year] nominal annual."""
    m = np.arange(1, horizon + 1)
    return (1.0 + rate) ** (-m / 12.0)


def growth_sum(annual_change: Value, rate: float, months: int | np.ndarray) -> np.ndarray:
    """``sum_{m=1..M} (1 + g)^((m - 1)/12) * (1 + r)^(-m/12)`` for each M of ``months``.

    The present value of 1 USD a month growing at g [1/year], discounted at r [1/year]. With
    ``a = (ln(1 + g) - ln(1 + r)) / 12`` the terms are ``(1 + r)^(-1/12) * e^(a*(m - 1))``, a
    geometric series: ``(1 + r)^(-1/12) * expm1(M*a) / expm1(a)``, and ``M * (1 + r)^(-1/12)``
    in the limit g = r (a = 0), taken exactly. ``annual_change`` is a float or an ``(S,)``
    array; ``months`` an int or a ``(K,)`` array; the result has shape ``()``, ``(S,)``,
    ``(K,)`` or ``(S, K)``.
    """
    g = np.asarray(annual_change, dtype=float)
    m = np.asarray(months, dtype=float)
    a = (np.log1p(g) - math.log1p(rate)) / 12.0
    if a.ndim and m.ndim:
        a = a[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.expm1(m * a) / np.expm1(a)
    return np.where(a == 0.0, m, ratio) * (1.0 + rate) ** (-1.0 / 12.0)
