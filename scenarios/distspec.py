"""The distribution forms of scenario files: ``{dist: ..., ...}`` mappings to and from the
engine's distribution objects.

Any numeric input marked *dist* takes a plain number (a fixed value) or one of these mappings:
``{dist: uniform, low, high}``, ``{dist: triangular, low, mode, high}``, ``{dist: pert, low, mode,
high}`` (beta-PERT with lambda = 4), ``{dist: normal, mean, sd, low?, high?}`` (truncated where
bounds are given), ``{dist: lognormal, median, p90, low?, high?}`` or ``{dist: lognormal, mean, sd,
low?, high?}`` and ``{dist: discrete, values, weights}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from costmodel.distributions import (
    Discrete,
    Distribution,
    DistributionError,
    Fixed,
    LogNormal,
    Normal,
    Pert,
    Triangular,
    Uniform,
)

__all__ = ["DIST_FORMS", "from_spec", "to_spec"]

#: Each ``dist`` form: its class, required parameters and optional parameters.
DIST_FORMS: dict[str, tuple[type[Distribution], tuple[str, ...], tuple[str, ...]]] = {
    "uniform": (Uniform, ("low", "high"), ()),
    "triangular": (Triangular, ("low", "mode", "high"), ()),
    "pert": (Pert, ("low", "mode", "high"), ()),
    "normal": (Normal, ("mean", "sd"), ("low", "high")),
    "lognormal": (LogNormal, (), ("median", "p90", "mean", "sd", "low", "high")),
    "discrete": (Discrete, ("values", "weights"), ()),
}
_NAMES = {cls: name for name, (cls, _, _) in DIST_FORMS.items()}


def from_spec(spec: float | Mapping[str, Any]) -> Distribution:
    """Build a distribution from a number or a mapping such as ``{dist: pert, ...}``.

    Raises :class:`~costmodel.distributions.DistributionError` naming the unknown form, the
    unknown or missing parameter, or the inconsistent value.
    """
    if isinstance(spec, int | float) and not isinstance(spec, bool):
        return Fixed(float(_in_range("the value", spec)))
    if not isinstance(spec, Mapping):
        raise DistributionError(f"expected a number or a distribution mapping, got {spec!r}")
    kind = spec.get("dist")
    if kind not in DIST_FORMS:
        raise DistributionError(
            f"unknown dist {kind!r}; valid: {', '.join(DIST_FORMS)}"
            if kind is not None
            else f"a distribution mapping needs 'dist' (one of: {', '.join(DIST_FORMS)})"
        )
    cls, required, optional = DIST_FORMS[kind]
    params = {k: v for k, v in spec.items() if k != "dist"}
    unknown = sorted(set(params) - set(required) - set(optional))
    if unknown:
        raise DistributionError(
            f"{kind} does not take {', '.join(unknown)}; it takes {', '.join(required + optional)}"
        )
    missing = [k for k in required if k not in params]
    if missing:
        raise DistributionError(f"{kind} needs {', '.join(missing)}")
    if cls is Discrete:
        values, weights = params["values"], params["weights"]
        if not isinstance(values, list | tuple) or not isinstance(weights, list | tuple):
            raise DistributionError("discrete values and weights must be lists of numbers")
        return Discrete(
            tuple(_in_range("values", v) for v in values),
            tuple(_in_range("weights", w) for w in weights),
        )
    return cls(**{k: _in_range(k, v) for k, v in params.items()})


def _in_range(name: str, value: Any) -> Any:
    """``value`` as it is, or ``DistributionError`` for an integer beyond the range of a float
    (a 400-digit integer), which the distributions could not even compare; everything else is
    theirs to check."""
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    try:
        float(value)
    except OverflowError:
        raise DistributionError(
            f"{name} is an integer of {len(str(abs(value)))} digits, beyond the range of a "
            "number (about 1.8e308)"
        ) from None
    return value


def to_spec(dist: Distribution) -> float | dict[str, Any]:
    """The scenario-file form of ``dist``: a number when fixed, else a ``{dist: ...}`` mapping."""
    if isinstance(dist, Fixed):
        return float(dist.value)
    name = _NAMES[type(dist)]
    _, required, optional = DIST_FORMS[name]
    spec: dict[str, Any] = {"dist": name}
    for f in fields(dist):
        value = getattr(dist, f.name)
        if f.name in required + optional and value is not None:
            spec[f.name] = list(value) if isinstance(value, tuple) else value
    return spec
