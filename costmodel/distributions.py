"""Uncertain inputs as distributions that map percentiles to values.

Every distribution is a frozen dataclass with a vectorised ``ppf`` (inverse CDF): a sampler
produces percentiles in the open interval (0, 1) and the distribution maps them to values in the
input's own unit. Random, Latin hypercube and Sobol sampling are interchangeable because of this.

The mapping forms accepted in scenario files (DESIGN section 3) are built by :func:`from_spec`:
``{dist: uniform, low, high}``, ``{dist: triangular, low, mode, high}``, ``{dist: pert, low, mode,
high}`` (beta-PERT with lambda = 4), ``{dist: normal, mean, sd, low?, high?}`` (truncated where
bounds are given), ``{dist: lognormal, median, p90}`` or ``{dist: lognormal, mean, sd}`` and
``{dist: discrete, values, weights}``. A plain number is a :class:`Fixed` value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

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
    "from_spec",
    "DIST_FORMS",
]

_Z90 = float(stats.norm.ppf(0.9))


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

    def median(self) -> float:
        """The value at the 50th percentile."""
        return float(self.ppf(np.array([0.5]))[0])

    def to_spec(self) -> float | dict[str, Any]:
        """The scenario-file form of this distribution (a number for a fixed value)."""
        raise NotImplementedError


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

    def to_spec(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform on [low, high]."""

    low: float
    high: float

    def __post_init__(self) -> None:
        _ordered(_finite("low", self.low), _finite("high", self.high))

    def ppf(self, q: np.ndarray) -> np.ndarray:
        return self.low + np.asarray(q) * (self.high - self.low)

    def support(self) -> tuple[float, float]:
        return (float(self.low), float(self.high))

    def to_spec(self) -> dict[str, Any]:
        return {"dist": "uniform", "low": self.low, "high": self.high}


@dataclass(frozen=True)
class Triangular(Distribution):
    """Triangular with minimum ``low``, mode ``mode`` and maximum ``high``."""

    low: float
    mode: float
    high: float

    def __post_init__(self) -> None:
        _ordered(_finite("low", self.low), _finite("high", self.high), _finite("mode", self.mode))

    def ppf(self, q: np.ndarray) -> np.ndarray:
        width = self.high - self.low
        if width == 0:
            return np.full(np.shape(q), float(self.low))
        c = (self.mode - self.low) / width
        return stats.triang.ppf(q, c, loc=self.low, scale=width)

    def support(self) -> tuple[float, float]:
        return (float(self.low), float(self.high))

    def to_spec(self) -> dict[str, Any]:
        return {"dist": "triangular", "low": self.low, "mode": self.mode, "high": self.high}


@dataclass(frozen=True)
class Pert(Distribution):
    """Beta-PERT: a beta on [low, high] with mean (low + lam*mode + high)/(lam + 2), lam = 4."""

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
        return stats.beta.ppf(q, a, b, loc=self.low, scale=width)

    def support(self) -> tuple[float, float]:
        return (float(self.low), float(self.high))

    def to_spec(self) -> dict[str, Any]:
        return {"dist": "pert", "low": self.low, "mode": self.mode, "high": self.high}


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
        low = -math.inf if self.low is None else _finite("low", self.low)
        high = math.inf if self.high is None else _finite("high", self.high)
        if low >= high:
            raise DistributionError(f"low ({low:g}) must be less than high ({high:g})")
        # A truncation window far in a tail leaves no probability mass to sample from.
        a, b = (low - self.mean) / self.sd, (high - self.mean) / self.sd
        if stats.norm.cdf(b) - stats.norm.cdf(a) < 1e-9:
            raise DistributionError(
                f"the bounds [{low:g}, {high:g}] hold almost no probability of "
                f"normal(mean={self.mean:g}, sd={self.sd:g})"
            )

    def ppf(self, q: np.ndarray) -> np.ndarray:
        if self.low is None and self.high is None:
            return stats.norm.ppf(q, loc=self.mean, scale=self.sd)
        low, high = self.support()
        a, b = (low - self.mean) / self.sd, (high - self.mean) / self.sd
        return stats.truncnorm.ppf(q, a, b, loc=self.mean, scale=self.sd)

    def support(self) -> tuple[float, float]:
        low = -math.inf if self.low is None else float(self.low)
        high = math.inf if self.high is None else float(self.high)
        return (low, high)

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"dist": "normal", "mean": self.mean, "sd": self.sd}
        if self.low is not None:
            spec["low"] = self.low
        if self.high is not None:
            spec["high"] = self.high
        return spec


@dataclass(frozen=True)
class LogNormal(Distribution):
    """Lognormal given either by ``median`` and ``p90`` or by ``mean`` and ``sd`` (of the value).

    median/p90: mu = ln(median), sigma = (ln(p90) - mu) / z(0.90).
    mean/sd: sigma^2 = ln(1 + sd^2/mean^2), mu = ln(mean) - sigma^2/2.
    """

    median: float | None = None
    p90: float | None = None
    mean: float | None = None
    sd: float | None = None
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

    def ppf(self, q: np.ndarray) -> np.ndarray:
        return np.exp(self.mu + self.sigma * stats.norm.ppf(q))

    def support(self) -> tuple[float, float]:
        return (0.0, math.inf)

    def to_spec(self) -> dict[str, Any]:
        if self.median is not None:
            return {"dist": "lognormal", "median": self.median, "p90": self.p90}
        return {"dist": "lognormal", "mean": self.mean, "sd": self.sd}


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

    def to_spec(self) -> dict[str, Any]:
        return {"dist": "discrete", "values": list(self.values), "weights": list(self.weights)}


#: The parameters each ``dist`` form takes: (required, optional).
DIST_FORMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "uniform": (("low", "high"), ()),
    "triangular": (("low", "mode", "high"), ()),
    "pert": (("low", "mode", "high"), ()),
    "normal": (("mean", "sd"), ("low", "high")),
    "lognormal": ((), ("median", "p90", "mean", "sd")),
    "discrete": (("values", "weights"), ()),
}


def from_spec(spec: float | Mapping[str, Any]) -> Distribution:
    """Build a distribution from a number or a scenario mapping such as ``{dist: pert, ...}``.

    Raises :class:`DistributionError` naming the unknown form or parameter.
    """
    if isinstance(spec, int | float) and not isinstance(spec, bool):
        return Fixed(float(spec))
    if not isinstance(spec, Mapping):
        raise DistributionError(f"expected a number or a distribution mapping, got {spec!r}")
    kind = spec.get("dist")
    if kind not in DIST_FORMS:
        raise DistributionError(
            f"unknown dist {kind!r}; valid: {', '.join(DIST_FORMS)}"
            if kind is not None
            else f"a distribution mapping needs 'dist' (one of: {', '.join(DIST_FORMS)})"
        )
    required, optional = DIST_FORMS[kind]
    params = {k: v for k, v in spec.items() if k != "dist"}
    unknown = sorted(set(params) - set(required) - set(optional))
    if unknown:
        raise DistributionError(
            f"{kind} does not take {', '.join(unknown)}; it takes {', '.join(required + optional)}"
        )
    missing = [k for k in required if k not in params]
    if missing:
        raise DistributionError(f"{kind} needs {', '.join(missing)}")
    if kind == "discrete":
        values, weights = params["values"], params["weights"]
        if not isinstance(values, list | tuple) or not isinstance(weights, list | tuple):
            raise DistributionError("discrete values and weights must be lists of numbers")
        return Discrete(tuple(values), tuple(weights))
    cls = {
        "uniform": Uniform,
        "triangular": Triangular,
        "pert": Pert,
        "normal": Normal,
        "lognormal": LogNormal,
    }[kind]
    return cls(**params)
