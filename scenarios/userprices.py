"""Prices in the user's terms: a whole server's price, a price per GPU-hour, and how far a given
price lies from the catalog's.

A server's price ``buy.server_price_usd`` (``own`` in a plan) is split into the engine's inputs:
the platform is the server less its N GPUs, ``platform = server - N * gpu_price_usd`` [USD]. A
price per GPU-hour ``rent.price_usd_per_gpu_hour`` (``reserve``, ``burst``) becomes the price
per instance-hour, ``price_usd_per_hour = n * price_usd_per_gpu_hour`` [USD/instance-hour] with
n the instance's GPUs. Either is one value written two ways, so giving both ways is an error.
A distribution keeps its form: the price per GPU-hour is scaled, the server's price shifted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from costmodel.distributions import Distribution, Fixed, LogNormal
from costmodel.outcomes import TIE_RTOL
from pricing.text import counted

from .errors import ScenarioError

__all__ = ["FAR", "SERVER_KEY", "GPU_HOUR_KEY", "instance_price", "platform_price", "scaled"]

#: The key of a whole server's price, and of a price per GPU-hour.
SERVER_KEY = "server_price_usd"
GPU_HOUR_KEY = "price_usd_per_gpu_hour"
#: A given price this many times above or below the catalog's is far from it [-].
FAR = 2.0

#: The parameters of the distributions that are values (they move with a shift and a scale),
#: and spreads (they scale only); the others are shapes (PERT's lam, discrete weights).
_VALUES = ("value", "low", "mode", "high", "mean", "median", "p90", "values")
_SPREADS = ("sd",)


def _affine(dist: Distribution, scale: float, shift: float) -> Distribution:
    """``scale * X + shift`` in the form of ``X`` (``scale`` > 0): every value parameter mapped,
    spreads scaled, shapes kept. A lognormal moves by scale only (shifted, it is no longer
    one): ValueError."""
    if isinstance(dist, LogNormal) and shift:
        raise ValueError("a lognormal cannot be shifted")

    def mapped(name: str, value: Any) -> Any:
        if value is None or name not in _VALUES + _SPREADS:
            return value
        if name in _SPREADS:
            return value * scale
        if isinstance(value, tuple):
            return tuple(v * scale + shift for v in value)
        return value * scale + shift

    return replace(
        dist, **{f.name: mapped(f.name, getattr(dist, f.name)) for f in fields(dist) if f.init}
    )


def scaled(dist: Distribution, factor: float) -> Distribution:
    """``factor * X`` [-] in the form of ``X`` (``factor`` > 0)."""
    return _affine(dist, factor, 0.0)


def _both(block: Mapping[str, Any], path: str, mine: str, other: str, why: str) -> None:
    if block.get(mine) is not None and block.get(other) is not None:
        message = f"give {path}.{mine} or {path}.{other}, not both: {why}"
        raise ScenarioError(None, [{"path": f"{path}.{mine}", "message": message}])


def instance_price(block: Mapping[str, Any], path: str, gpu_count: int) -> dict[str, Any]:
    """``block`` with a price per GPU-hour turned into the price per instance-hour of an
    instance of ``gpu_count`` GPUs [USD/instance-hour].

    Raises :class:`ScenarioError` at ``path.price_usd_per_gpu_hour`` when the block also gives
    ``price_usd_per_hour``.
    """
    _both(
        block,
        path,
        GPU_HOUR_KEY,
        "price_usd_per_hour",
        f"one is the other times the instance's {counted(gpu_count, 'GPU')}",
    )
    per_gpu = block.get(GPU_HOUR_KEY)
    if per_gpu is None:
        return dict(block)
    return {**block, "price_usd_per_hour": scaled(per_gpu, float(gpu_count))}


def platform_price(
    block: Mapping[str, Any], path: str, gpu_count: int, gpu_price: Distribution
) -> Distribution | None:
    """The platform's price [USD] of a block that gives the whole server's price: the server
    less ``gpu_count`` GPUs at ``gpu_price`` [USD/GPU]; None when it gives none.

    Raises :class:`ScenarioError` at ``path.server_price_usd`` when the block also gives the
    platform's price, when the GPU price is a distribution, when the server costs less than
    its GPUs (by more than a part in 1e9, :data:`~costmodel.outcomes.TIE_RTOL`: within it the
    platform is free), or for a lognormal server price (which a shift would not keep
    lognormal).
    """
    key = f"{path}.{SERVER_KEY}"
    _both(block, path, SERVER_KEY, "platform_price_usd", "the platform is the server less its GPUs")
    server = block.get(SERVER_KEY)
    if server is None:
        return None
    if not isinstance(gpu_price, Fixed):
        problem = (
            f"the platform is the server less its GPUs, which needs {path}.gpu_price_usd "
            "as a number (a distribution of it would draw the GPUs apart from the "
            "server they are part of)"
        )
        raise ScenarioError(None, [{"path": key, "message": problem}])
    if isinstance(server, LogNormal):
        problem = (
            "a lognormal server price cannot be split into its GPUs and platform; give a "
            "number or a uniform, triangular, pert, normal or discrete distribution"
        )
        raise ScenarioError(None, [{"path": key, "message": problem}])
    gpus = gpu_count * float(gpu_price.value)
    low = server.support()[0]
    # a server priced at exactly its GPUs is a free platform: N x G is rounded (6 x 29,266.81
    # is 175,600.86 + 2.9e-11 in floating point), so "below" allows TIE_RTOL of the larger
    if low < gpus - TIE_RTOL * max(gpus, abs(low)):
        lowest = "" if server.is_fixed else "as low as "
        problem = (
            f"the server's price ({lowest}{low:,.2f} USD) is below its "
            f"{counted(gpu_count, 'GPU')} at "
            f"{float(gpu_price.value):,.2f} USD: N x G = {gpus:,.2f} USD, so the platform would "
            f"cost {low - gpus:,.2f} USD; give the whole server's price, or the price of one "
            f"GPU as {path}.gpu_price_usd"
        )
        raise ScenarioError(None, [{"path": key, "message": problem}])
    return _affine(server, 1.0, -min(gpus, low))
