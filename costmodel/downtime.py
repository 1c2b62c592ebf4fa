"""Downtime of owned GPUs: how many are in repair at a time, and the share of work kept.

A failed GPU is out of service for ``repair_days``; spares bought with the hardware are swapped
in at once. By Palm's theorem the number of GPUs in repair at any moment is Poisson with mean
mu = n_s * AFR * repair_days / 365 (n_s GPUs in service, AFR failures per GPU-year), whatever
the distribution of the repair time; with s spares, the GPUs missing from service are
(X - s)+, and the availability A = 1 - E[(X - s)+] / n_s is the share of the build's work it
still does. Everything is vectorised over draws (floats or ``(S,)`` arrays); ``scipy.special``
is imported only for a build with spares and downtime.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DAYS_PER_YEAR", "availability", "missing_gpus"]

#: Days in a year [day/year], as the failure rate's year counts them.
DAYS_PER_YEAR = 365.0


def missing_gpus(mu: float | np.ndarray, spares: int) -> float | np.ndarray:
    """E[(X - s)+] [GPU] for X ~ Poisson(mu) and s = ``spares``: the GPUs in repair that no
    spare covers, on average.

    E[(X - s)+] = mu - s + sum_{k<s} (s - k) P(X = k); computed as the equal
    mu * P(X >= s) - s * P(X >= s + 1) (from k P(X = k) = mu P(X = k - 1)), whose two terms do
    not cancel when mu is small (the first form loses every digit of mu^(s+1)/(s+1)! to
    rounding). ``pdtrc(k, mu)`` is P(X > k). ``mu`` [GPU] >= 0; ``spares`` an integer >= 0.
    """
    mu = np.asarray(mu, dtype=float)
    if spares == 0:
        return mu if mu.ndim else float(mu)
    from scipy.special import pdtrc  # imported when first used, as the distributions do

    out = mu * pdtrc(spares - 1, mu) - spares * pdtrc(spares, mu)
    return out if out.ndim else float(out)


def availability(
    in_service: int, afr: float | np.ndarray, repair_days: float | np.ndarray, spares: int
) -> float | np.ndarray:
    """Share of the GPUs in service that are up, on average [-]: A = 1 - E[(X - s)+] / n_s
    with X ~ Poisson(n_s * AFR * repair_days / 365).

    ``in_service`` n_s [GPU] (none: nothing is missing, A = 1); ``afr`` [1/year];
    ``repair_days`` [day]; ``spares`` s [GPU]. Exactly 1.0 (a float) when ``repair_days`` is
    a plain 0, so that a build without downtime is computed as it always was.
    """
    if np.ndim(repair_days) == 0 and float(repair_days) == 0.0:
        return 1.0
    afr, days = np.asarray(afr, dtype=float), np.asarray(repair_days, dtype=float)
    mu = in_service * afr * days / DAYS_PER_YEAR
    return 1.0 - missing_gpus(mu, spares) / max(in_service, 1)
