"""Uncertain inputs as distributions that map percentiles to values.

Every distribution is a frozen dataclass with a vectorised ``ppf`` (inverse CDF): a sampler
produces percentiles in the open interval (0, 1) and the distribution maps them to values in the
input's own unit. Random, Latin hypercube and Sobol sampling are interchangeable because of this.

Uniform, triangular and discrete inverse CDFs are closed forms in numpy; the normal, lognormal
and beta-PERT ones use ``scipy.special``, imported when first used.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "Distribution",
    "DistributionError",
    "Fixed",
    "Uniform",
    "Triangular",
    "Pert",
    "Normal",
    "LogNormal",
    "Discrete",
    "draws_at",
]

#: z(0.90) = Phi^-1(0.9) of the standard normal, to 16 digits.
_Z90 = 1.2815515655446004


class DistributionError(ValueError):
    """An inconsistent distribution: the message names the offending parameter."""


def _finite(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DistributionError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise DistributionError(f"{name} must be finite, got {value!r}")
    return float(value)


def _ordered(low: float, high: float, mode: float | None = None) -> None:
    if low > high:
        raise DistributionError(f"low ({low:g}) is greater than high ({high:g})")
    if mode is not None and not low <= mode <= high:
        raise DistributionError(
            f"mode ({mode:g}) must lie between low ({low:g}) and high ({high:g})"
        )


def _bounds(low: float | None, high: float | None) -> tuple[float, float]:
    lo = -math.inf if low is None else _finite("low", low)
    hi = math.inf if high is None else _finite("high", high)
    if lo >= hi:
        raise DistributionError(f"low ({lo:g}) must be less than high ({hi:g})")
    return lo, hi


def _phi(z: float) -> float:
    """Standard normal CDF [-] (scalar, no scipy)."""
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def _truncated_standard_normal(q: np.ndarray, a: float, b: float) -> np.ndarray:
    """Inverse CDF of the standard normal truncated to [a, b] (infinite ends allowed).

    Windows in the upper tail are computed by reflection, so that the CDF values subtracted are
    never both close to 1.
    """
    from scipy.special import ndtr, ndtri

    if a > 0:
        return -_truncated_standard_normal(1.0 - np.asarray(q), -b, -a)
    lo, hi = ndtr(a), ndtr(b)
    return ndtri(lo + np.asarray(q) * (hi - lo))


def _mass(a: float, b: float) -> float:
    """Probability of the standard normal between a and b [-]."""
    if a > 0:
        return _phi(-a) - _phi(-b)
    return _phi(b) - _phi(a)


#: Intervals of the inverse beta CDF table (percentiles 1/4096 apart).
_BETA_INTERVALS = 4096

#: Quintic Hermite basis as polynomial coefficients: rows x0, m0, c0, x1, m1, c1 (value, first
#: and second derivative at each end of an interval), columns t**0 .. t**5.
_HERMITE5 = np.array(
    [
        [1.0, 0.0, 0.0, -10.0, 15.0, -6.0],
        [0.0, 1.0, 0.0, -6.0, 8.0, -3.0],
        [0.0, 0.0, 0.5, -1.5, 1.5, -0.5],
        [0.0, 0.0, 0.0, 10.0, -15.0, 6.0],
        [0.0, 0.0, 0.0, -4.0, 7.0, -3.0],
        [0.0, 0.0, 0.0, 0.5, -1.0, 0.5],
    ]
)

#: Largest error of the table, relative to min(x, 1 - x), checked at every interval's midpoint.
_BETA_TOLERANCE = 1e-13


@functools.lru_cache(maxsize=64)
def _beta_table(a: float, b: float) -> np.ndarray:
    """Polynomial coefficients (intervals x 6, ascending powers of the position t in [0, 1) in
    the interval) of the inverse beta(a, b) CDF; NaN rows where the check failed.

    Each interval is the quintic Hermite interpolant of x(q) from ``betaincinv`` at its ends with
    the exact derivatives x' = 1/f(x) and x'' = -(f'/f)(x) x'**2, f the beta density. Where the
    midpoint misses ``betaincinv`` by more than :data:`_BETA_TOLERANCE` (the tails, where x(q)
    is not smooth) the row is NaN and those percentiles are inverted directly.
    """
    from scipy.special import betaincinv, betaln

    n = _BETA_INTERVALS
    x = betaincinv(a, b, np.linspace(0.0, 1.0, n + 1))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        density = np.exp((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) - betaln(a, b))
        slope = 1.0 / (n * density)  # dx/dt [x per interval]
        curve = -((a - 1.0) / x - (b - 1.0) / (1.0 - x)) * slope**2  # d2x/dt2
        ends = np.stack([x[:-1], slope[:-1], curve[:-1], x[1:], slope[1:], curve[1:]], axis=1)
        coef = ends @ _HERMITE5
        mid = betaincinv(a, b, (np.arange(n) + 0.5) / n)
        ok = np.abs(_horner(coef, np.arange(n), 0.5) - mid) <= _BETA_TOLERANCE * np.minimum(
            mid, 1.0 - mid
        )
    coef[~ok] = np.nan
    return coef


def _horner(coef: np.ndarray, rows: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    out = np.take(coef[:, 5], rows)
    for k in (4, 3, 2, 1, 0):
        out *= t
        out += np.take(coef[:, k], rows)
    return out


def _beta_ppf(a: float, b: float, q: np.ndarray) -> np.ndarray:
    """Inverse CDF of beta(a, b) at ``q``, as ``scipy.special.betaincinv`` gives it (to 1e-13
    relative to min(x, 1 - x)).

    Many percentiles: evaluate a table of piecewise quintic polynomials (built once per shape
    and kept, so repeated runs share it; about 10x cheaper than ``betaincinv`` per percentile)
    and invert directly in the intervals the table does not cover to that accuracy. A shape of
    1 (mode at an end) has a closed-form inverse that ``betaincinv`` already takes, and few
    percentiles are not worth a table.
    """
    from scipy.special import betaincinv

    if q.size <= _BETA_INTERVALS or a == 1.0 or b == 1.0:
        return betaincinv(a, b, q)
    position = q * _BETA_INTERVALS
    rows = np.minimum(position.astype(np.intp), _BETA_INTERVALS - 1)
    out = _horner(_beta_table(a, b), rows, position - rows)
    direct = np.isnan(out)
    if direct.any():
        out[direct] = betaincinv(a, b, q[direct])
    return out


@dataclass(frozen=True)
class Distribution:
    """Base class: a one-dimensional distribution evaluated through its inverse CDF."""

    def ppf(self, q: np.ndarray) -> np.ndarray:
        """Values at percentiles ``q`` in (0, 1); same shape as ``q``, in the input's unit."""
        raise NotImplementedError

    @property
    def is_fixed(self) -> bool:
        """True when every percentile maps to the same value."""
        low, high = self.support()
        return low == high

    def support(self) -> tuple[float, float]:
        """The closed range ``(low, high)`` of possible values; infinite ends for open tails."""
        raise NotImplementedError

    def p50(self) -> float:
        """The value at the 50th percentile (not ``median``: a lognormal given by its median
        has a field of that name)."""
        return float(self.ppf(np.array([0.5]))[0])


@dataclass(frozen=True)
class Fixed(Distribution):
    """A known value."""

    value: float

    def __post_init__(self) -> None:
        _finite("value", self.value)

    def ppf(self, q: np.ndarray) -> np.ndarray:
        return np.full(np.shape(q), float(self.value))

    def support(self) -> tuple[float, float]:
        return (float(self.value), float(self.value))


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform on [low, high]: ppf(q) = low + q*(high - low)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        _ordered(_finite("low", self.low), _finite("high", self.high))

    def ppf(self, q: np.ndarray) -> np.ndarray:
        return self.low + np.asarray(q) * (self.high - self.low)

    def support(self) -> tuple[float, float]:
        return (float(self.low), float(self.high))


@dataclass(frozen=True)
class Triangular(Distribution):
    """Triangular with minimum ``low``, mode ``mode`` and maximum ``high``.

    With w = high - low and c = (mode - low)/w: ppf(q) = low + sqrt(q*w*(mode - low)) for
    q < c, else high - sqrt((1 - q)*w*(high - mode)).
    """

    low: float
    mode: float
    high: float

    def __post_init__(self) -> None:
        _ordered(_finite("low", self.low), _finite("high", self.high), _finite("mode", self.mode))

    def ppf(self, q: np.ndarray) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        width = self.high - self.low
        if width == 0:
            return np.full(q.shape, float(self.low))
        c = (self.mode - self.low) / width
        # left = low + sqrt(q*w*(mode - low)), right = high - sqrt((1 - q)*w*(high - mode)),
        # each in one buffer (a million draws: no fresh array per step)
        left = np.multiply(q, width, out=np.empty(q.shape))
        left *= self.mode - self.low
        np.sqrt(left, out=left)
        np.add(self.low, left, out=left)
        right = np.subtract(1.0, q, out=np.empty(q.shape))
        right *= width
        right *= self.high - self.mode
        np.sqrt(right, out=right)
        np.subtract(self.high, right, out=right)
        np.copyto(right, left, where=q < c)
        return right

    def support(self) -> tuple[float, float]:
        return (float(self.low), float(self.high))


@dataclass(frozen=True)
class Pert(Distribution):
    """Beta-PERT: a beta on [low, high] with mean (low + lam*mode + high)/(lam + 2), lam = 4.

    Shape parameters a = 1 + lam*(mode - low)/w and b = 1 + lam*(high - mode)/w, w = high - low.
    """

    low: float
    mode: float
    high: float
    lam: float = 4.0

    def __post_init__(self) -> None:
        _ordered(_finite("low", self.low), _finite("high", self.high), _finite("mode", self.mode))
        if _finite("lam", self.lam) <= 0:
            raise DistributionError(f"lam must be positive, got {self.lam:g}")

    def ppf(self, q: np.ndarray) -> np.ndarray:
        width = self.high - self.low
        if width == 0:
            return np.full(np.shape(q), float(self.low))
        a = 1.0 + self.lam * (self.mode - self.low) / width
        b = 1.0 + self.lam * (self.high - self.mode) / width
        return self.low + width * _beta_ppf(a, b, np.asarray(q, dtype=float))

    def support(self) -> tuple[float, float]:
        return (float(self.low), float(self.high))


@dataclass(frozen=True)
class Normal(Distribution):
    """Normal with ``mean`` and standard deviation ``sd``, truncated to [low, high] if given."""

    mean: float
    sd: float
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        _finite("mean", self.mean)
        if _finite("sd", self.sd) <= 0:
            raise DistributionError(f"sd must be positive, got {self.sd:g}")
        low, high = _bounds(self.low, self.high)
        # A truncation window far in a tail leaves no probability mass to sample from.
        if _mass((low - self.mean) / self.sd, (high - self.mean) / self.sd) < 1e-9:
            raise DistributionError(
                f"the bounds [{low:g}, {high:g}] hold almost no probability of "
                f"normal(mean={self.mean:g}, sd={self.sd:g})"
            )

    def ppf(self, q: np.ndarray) -> np.ndarray:
        low, high = self.support()
        a, b = (low - self.mean) / self.sd, (high - self.mean) / self.sd
        return self.mean + self.sd * _truncated_standard_normal(q, a, b)

    def support(self) -> tuple[float, float]:
        return _bounds(self.low, self.high)


@dataclass(frozen=True)
class LogNormal(Distribution):
    """Lognormal given by ``median`` and ``p90`` or by ``mean`` and ``sd`` (of the value),
    truncated to [low, high] where given.

    median/p90: mu = ln(median), sigma = (ln(p90) - mu) / z(0.90).
    mean/sd: sigma^2 = ln(1 + sd^2/mean^2), mu = ln(mean) - sigma^2/2.
    The parameters describe the lognormal before truncation.
    """

    median: float | None = None
    p90: float | None = None
    mean: float | None = None
    sd: float | None = None
    low: float | None = None
    high: float | None = None
    mu: float = field(init=False, repr=False)
    sigma: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        by_quantiles = self.median is not None or self.p90 is not None
        by_moments = self.mean is not None or self.sd is not None
        if by_quantiles == by_moments:
            raise DistributionError("lognormal takes either median and p90, or mean and sd")
        if by_quantiles:
            if self.median is None or self.p90 is None:
                raise DistributionError("lognormal by quantiles needs both median and p90")
            median, p90 = _finite("median", self.median), _finite("p90", self.p90)
            if median <= 0:
                raise DistributionError(f"median must be positive, got {median:g}")
            if p90 <= median:
                raise DistributionError(f"p90 ({p90:g}) must be greater than median ({median:g})")
            mu, sigma = math.log(median), (math.log(p90) - math.log(median)) / _Z90
        else:
            if self.mean is None or self.sd is None:
                raise DistributionError("lognormal by moments needs both mean and sd")
            mean, sd = _finite("mean", self.mean), _finite("sd", self.sd)
            if mean <= 0 or sd <= 0:
                raise DistributionError("lognormal mean and sd must be positive")
            try:
                s2 = math.log1p((sd / mean) ** 2)
            except OverflowError:
                s2 = math.inf
            mu, sigma = math.log(mean) - s2 / 2, math.sqrt(s2)
        if not (math.isfinite(mu) and math.isfinite(sigma)):
            raise DistributionError("the parameters give an infinitely wide lognormal")
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "sigma", sigma)
        low, high = self.support()
        if low < 0:
            raise DistributionError(f"low must not be negative for a lognormal, got {low:g}")
        if _mass(*self._window(low, high)) < 1e-9:
            raise DistributionError(
                f"the bounds [{low:g}, {high:g}] hold almost no probability of this lognormal"
            )

    def _window(self, low: float, high: float) -> tuple[float, float]:
        """The bounds in standard-normal units of ln(value)."""
        a = -math.inf if low <= 0 else (math.log(low) - self.mu) / self.sigma
        b = (math.log(high) - self.mu) / self.sigma if math.isfinite(high) else math.inf
        return a, b

    def ppf(self, q: np.ndarray) -> np.ndarray:
        a, b = self._window(*self.support())
        return np.exp(self.mu + self.sigma * _truncated_standard_normal(q, a, b))

    def support(self) -> tuple[float, float]:
        return _bounds(0.0 if self.low is None else self.low, self.high)


@dataclass(frozen=True)
class Discrete(Distribution):
    """A finite set of ``values`` drawn with probabilities proportional to ``weights``."""

    values: tuple[float, ...]
    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.values) == 0:
            raise DistributionError("values must not be empty")
        if len(self.values) != len(self.weights):
            raise DistributionError(
                f"values ({len(self.values)}) and weights ({len(self.weights)}) differ in length"
            )
        for i, v in enumerate(self.values):
            _finite(f"values[{i}]", v)
        for i, w in enumerate(self.weights):
            if _finite(f"weights[{i}]", w) < 0:
                raise DistributionError(f"weights[{i}] must not be negative, got {w:g}")
        if sum(self.weights) <= 0:
            raise DistributionError("weights must not all be zero")

    def ppf(self, q: np.ndarray) -> np.ndarray:
        order = np.argsort(self.values, kind="stable")
        values = np.asarray(self.values, dtype=float)[order]
        cum = np.cumsum(np.asarray(self.weights, dtype=float)[order])
        cum /= cum[-1]
        idx = np.searchsorted(cum, np.asarray(q), side="left")
        return values[np.minimum(idx, len(values) - 1)]

    def support(self) -> tuple[float, float]:
        kept = [v for v, w in zip(self.values, self.weights, strict=True) if w > 0]
        return (float(min(kept)), float(max(kept)))


def draws_at(inputs: Mapping[str, Any], q: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The draws of every distribution among ``inputs`` (by name) at its percentiles ``q[name]``
    in (0, 1); a fixed one (a point mass) is its value, a float, without going through ppf.
    Inputs that are not distributions (counts, flags) are left out."""
    out: dict[str, Any] = {}
    for name, dist in inputs.items():
        if isinstance(dist, Distribution):
            fixed = dist.is_fixed or name not in q
            out[name] = float(dist.support()[0]) if fixed else dist.ppf(q[name])
    return out
