"""The daily load shape: the share of a month's work a fixed hourly capacity serves.

Serving capacity must meet the peak hour, not the mean. With a peak-to-mean ratio k in [1, 2]
the load within each month is a daily sinusoid,

    l(t) = l_m (1 + a sin(2 pi t / 24)),  a = k - 1 in [0, 1],  t in hours,

around the month's mean hourly load l_m = W_m / 730. A capacity of c units of work per hour
serves min(c, l(t)) each hour, so over a day it serves the share

    F(x) = E[min(x, 1 + a sin theta)],  x = c / l_m,  theta uniform on [0, 2 pi),

of the work. Writing min(x, 1 + a s) = 1 + a s - a (s - z)+ with z = (x - 1) / a and using
E[sin theta] = 0 and E[(sin theta - z)+] = (sqrt(1 - z^2) - z arccos z) / pi for z in [-1, 1]:

    F(x) = min(1, x)                                    when a = 0;
    F(x) = 1                                            when x >= 1 + a (capacity above the peak);
    F(x) = x                                            when x <= 1 - a (below the trough);
    F(x) = 1 - a (sqrt(1 - z^2) - z arccos z) / pi      otherwise.

F is continuous, non-decreasing in x, non-increasing in a, and F(x) <= min(1, x); k = 1 gives
min(1, x), the split of a flat load.
"""

from __future__ import annotations

import numpy as np

__all__ = ["served_share"]


def served_share(capacity_ratio: float | np.ndarray, amplitude: float | np.ndarray) -> np.ndarray:
    """Share of a month's work served by a fixed hourly capacity under the daily sinusoid [-].

    Args:
        capacity_ratio: x = c / l_m, hourly capacity over the month's mean hourly load [-], >= 0.
        amplitude: a = peak_to_mean - 1 [-], in [0, 1].

    Both broadcast against each other (one value per draw, per month, or both).

    Returns:
        F(x) of the module docstring, in [0, 1], an array of the broadcast shape.

    Raises:
        ValueError: a capacity ratio below 0 or an amplitude outside [0, 1] (or NaN).
    """
    x, a = np.broadcast_arrays(
        np.asarray(capacity_ratio, dtype=float), np.asarray(amplitude, dtype=float)
    )
    if not np.all(x >= 0):
        raise ValueError("capacity_ratio must be >= 0 (capacity over mean load) [-]")
    if not np.all((a >= 0) & (a <= 1)):
        raise ValueError("amplitude must be in [0, 1] (peak_to_mean - 1, k in [1, 2]) [-]")
    within = (a > 0) & (x > 1.0 - a) & (x < 1.0 + a)
    z = np.divide(x - 1.0, a, out=np.zeros(x.shape), where=within)  # |z| < 1 where used
    partial = 1.0 - a * (np.sqrt(1.0 - z * z) - z * np.arccos(z)) / np.pi
    return np.where(within, partial, np.minimum(x, 1.0))
