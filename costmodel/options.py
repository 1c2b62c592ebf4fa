"""A ranking's numbers: options of the market, each one side alone, evaluated on shared draws.

Each option is a registered kind of side (:mod:`costmodel.sides`) with its frozen inputs, its
carbon inputs where known, and the default uncertainty laid on the values a catalog gave
(:func:`widened`). Every option is evaluated on the same Latin hypercube draws of the inputs
named in the uncertainty (common random numbers), so differences between options are not
noise. Costs are per unit of work done at utilisation u [USD/unit], undiscounted and before
tax (a comparison of hourly costs): the side's TCO line per unit of its own capacity,
TCO / (730 * H * T), at u over u; emissions likewise [g CO2e/unit].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .carbon import G_PER_KG, CarbonLine
from .cashflows import BuyLine, RentLine, Terms
from .distributions import Distribution, Fixed, Triangular, draws_at
from .inputs import input_fields, throughput_error_pairs
from .outcomes import breakeven_utilisation
from .result import Breakeven
from .sampling import gaussian_copula, sample
from .sides import side as side_of
from .stats import breakeven

__all__ = ["Evaluated", "OptionInputs", "breakeven_between", "evaluate_options", "widened"]


@dataclass(frozen=True)
class OptionInputs:
    """One option: its kind of side by name (``"buy"``, ``"rent"``, ``"api"``), its frozen
    inputs and its carbon inputs by key path (``"buy.grid"``; ``None``: unknown)."""

    side: str
    inputs: Any
    carbon: Mapping[str, float] | None = None


@dataclass(frozen=True, eq=False)
class Evaluated:
    """One option's figures over the shared draws: ``cost`` [USD/unit] of each draw at the
    utilisation asked, its TCO ``line`` per unit of capacity (TCO / (730 * H * T)) and its
    emissions per unit of work ``grams`` [g CO2e/unit] of each draw (``None``: unknown)."""

    cost: np.ndarray
    line: BuyLine | RentLine
    grams: np.ndarray | None


def _widen(dist: Distribution, spread: float, bound: Any) -> Distribution:
    """A fixed value ``v`` as triangular(v - spread*v, v, v + spread*v), kept in ``bound``."""
    if not isinstance(dist, Fixed) or spread <= 0 or dist.value == 0:
        return dist
    v = float(dist.value)
    low = max(v - spread * abs(v), bound.low)
    high = min(v + spread * abs(v), bound.high)
    return Triangular(low, v, high) if low < high else dist


def widened(inputs: Any, path: str, spreads: Mapping[str, float]) -> Any:
    """``inputs`` of the side at ``path`` with the default uncertainty: each input named in
    ``spreads`` (``"<path>.<field>"`` -> relative half-width [-]) that holds a fixed value
    becomes a symmetric triangular distribution around it, within the input's range."""
    meta = input_fields(type(inputs))
    changes = {}
    for key, spread in spreads.items():
        prefix, name = key.split(".")
        value = getattr(inputs, name, None) if prefix == path else None
        if value is not None:
            changes[name] = _widen(value, spread, meta[name].metadata["bound"])
    return replace(inputs, **changes) if changes else inputs


def _lines(
    o: OptionInputs, values: dict, h: int, lives: tuple[float, float]
) -> tuple[BuyLine | RentLine, CarbonLine | None]:
    """The option's TCO line per unit of its capacity, undiscounted and before tax, and its
    emissions line [kg CO2e] per unit of capacity (``None`` without carbon inputs); ``lives``
    the service lives [year] of an owned build and of a provider's host."""
    terms, kind = Terms(h, 0.0, 0.0), side_of(o.side)
    carbon = o.carbon
    if carbon is not None:
        values = {**values, **carbon}
    d = kind.drawn(o.inputs, values, o.side)
    t = kind.capacity(d)
    life = lives[0] if kind.owned else lives[1]
    kg = carbon and kind.emissions and kind.emissions(d, values, t, t, life, h)
    return kind.line(d, t, t, terms).per_unit(t, h), kg and kg.per_unit(t, h)


def _erred(o: OptionInputs) -> bool:
    """Whether an option's throughput is estimated: an uncertain error on it."""
    error = getattr(o.inputs, "throughput_error", None)
    return error is not None and not error.is_fixed


def evaluate_options(
    options: Sequence[OptionInputs],
    *,
    utilisation: float,
    horizon: int,
    samples: int,
    seed: int,
    spreads: Mapping[str, float],
    lives: tuple[float, float],
) -> list[Evaluated]:
    """Every option's cost and emissions per unit of work at ``utilisation`` [-] over
    ``horizon`` months, on ``samples`` shared Latin hypercube draws (``seed``) of the inputs
    named in ``spreads`` (each option's inputs :func:`widened` by them); ``lives`` the
    service lives [year] of an owned build and of a provider's host. An estimated throughput's
    error (an uncertain ``throughput_error``) is drawn too, as ``"<side>.throughput_error"``:
    shared by the options of one kind of side (their errors move together) and correlated at
    :data:`~costmodel.inputs.THROUGHPUT_ERROR_RHO` between the kinds."""
    erred = {f"{o.side}.throughput_error": o.inputs.throughput_error for o in options if _erred(o)}
    names = sorted({k for k, v in spreads.items() if v > 0} | set(erred))
    drawn = sample(names, samples, seed, "lhs") if names else None
    q = gaussian_copula(drawn, throughput_error_pairs(erred)).q if names else {}
    u, out = utilisation, []
    for o in options:
        inputs = widened(o.inputs, o.side, spreads)
        values = draws_at({f"{o.side}.{k}": v for k, v in vars(inputs).items()}, q)
        unit, kg = _lines(replace(o, inputs=inputs), values, horizon, lives)
        cost = np.empty(samples)
        cost[...] = np.asarray(unit.tco(u), dtype=float) / u
        grams = None if kg is None else np.asarray(kg.kg(u), dtype=float) / u * G_PER_KG
        out.append(Evaluated(cost, unit, grams))
    return out


def breakeven_between(owned: BuyLine, other: RentLine, samples: int) -> Breakeven:
    """The break-even utilisation of an owned option against another, draw by draw, from
    their lines per unit of capacity (equal cost per unit of capacity is equal cost per unit
    of work)."""
    return breakeven(np.array(breakeven_utilisation(owned, other, samples), dtype=float))
