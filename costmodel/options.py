"""A ranking's numbers: options of the market, each one side alone, evaluated on shared draws.

Each option is a registered kind of side (:mod:`costmodel.sides`) with its frozen inputs, its
carbon inputs where known, and the default uncertainty laid on the values a catalog gave
(:func:`widened`). Every option is evaluated on the same Latin hypercube draws of the inputs
named in the uncertainty (common random numbers), so differences between options are not
noise. Costs are per unit of work done at utilisation u [USD/unit], undiscounted and before
tax (a comparison of hourly costs): the side's TCO line per unit of its own capacity,
TCO / (730 * H * T), at u over u; emissions likewise [g CO2e/unit].

An option whose throughput is estimated (:class:`ThroughputError`) does T * E work an hour,
E ~ LogNormal(0, sigma) drawn on the shared draws too: one E per build (the options on the same
GPUs at the same count share it), the E of two builds rank-correlated at
:data:`ERROR_RANK_CORRELATION` (the errors of one model's estimates cluster). With
z = sqrt(rho) * z_0 + sqrt(1 - rho) * z_b, z_0 the standard normal of the input
``throughput_error`` and z_b that of ``throughput_error:<build>``, and rho = 2 sin(pi r / 6)
the Pearson correlation whose Spearman correlation is r: E = exp(sigma * z).
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

__all__ = [
    "ERROR_RANK_CORRELATION",
    "THROUGHPUT_ERROR",
    "Evaluated",
    "OptionInputs",
    "ThroughputError",
    "breakeven_between",
    "evaluate_options",
    "widened",
]

#: Spearman rank correlation between the throughput errors of two estimated builds [-].
ERROR_RANK_CORRELATION = 0.5
#: The name of the throughput error's shared part among the sampled inputs; a build's own part
#: is ``"throughput_error:<build>"``.
THROUGHPUT_ERROR = "throughput_error"


@dataclass(frozen=True)
class ThroughputError:
    """An estimated throughput's error: the option does E times the work its inputs say,
    E ~ LogNormal(0, ``sigma``) [-]; ``build`` names the GPUs it runs on (``"h100:8"``), and
    options on the same build share their E."""

    sigma: float
    build: str


@dataclass(frozen=True)
class OptionInputs:
    """One option: its kind of side by name (``"buy"``, ``"rent"``, ``"api"``), its frozen
    inputs, its carbon inputs by key path (``"buy.grid"``; ``None``: unknown) and, where its
    throughput is estimated, that estimate's error (``None``: measured or given)."""

    side: str
    inputs: Any
    carbon: Mapping[str, float] | None = None
    error: ThroughputError | None = None


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
    o: OptionInputs, values: dict, h: int, lives: tuple[float, float], error: Any = 1.0
) -> tuple[BuyLine | RentLine, CarbonLine | None]:
    """The option's TCO line per unit of the work it does, undiscounted and before tax, and
    its emissions line [kg CO2e] likewise (``None`` without carbon inputs); ``lives`` the
    service lives [year] of an owned build and of a provider's host; ``error`` the factor E
    [-] on its capacity (1: measured)."""
    terms, kind = Terms(h, 0.0, 0.0), side_of(o.side)
    carbon = o.carbon
    if carbon is not None:
        values = {**values, **carbon}
    d = kind.drawn(o.inputs, values, o.side)
    t = kind.capacity(d)
    done = t * error if np.ndim(error) else t  # the work an hour, the estimate's error on it
    life = lives[0] if kind.owned else lives[1]
    kg = carbon and kind.emissions and kind.emissions(d, values, t, t, life, h)
    return kind.line(d, t, t, terms).per_unit(done, h), kg and kg.per_unit(done, h)


def _error_names(options: Sequence[OptionInputs]) -> list[str]:
    """The sampled inputs of the estimated options' errors: the shared part and each build's."""
    builds = sorted({o.error.build for o in options if o.error is not None})
    return [THROUGHPUT_ERROR, *(f"{THROUGHPUT_ERROR}:{b}" for b in builds)] if builds else []


def _errors(options: Sequence[OptionInputs], q: Mapping[str, np.ndarray]) -> list[Any]:
    """Each option's factor E on its capacity [-], an array over the draws (1.0: measured)."""
    if not any(o.error is not None for o in options):
        return [1.0] * len(options)
    from scipy.special import ndtri  # imported when an estimate needs it

    rho = 2.0 * np.sin(np.pi * ERROR_RANK_CORRELATION / 6.0)  # Pearson for that Spearman
    z0 = ndtri(q[THROUGHPUT_ERROR])
    out = []
    for o in options:
        if o.error is None:
            out.append(1.0)
            continue
        own = ndtri(q[f"{THROUGHPUT_ERROR}:{o.error.build}"])
        z = np.sqrt(rho) * z0 + np.sqrt(1.0 - rho) * own
        out.append(np.exp(o.error.sigma * z))
    return out


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
    service lives [year] of an owned build and of a provider's host. An estimated serving
    option's throughput error is drawn with them (see the module docstring); an uncertain
    ``throughput_error`` of an option's inputs (training's estimated throughputs) is drawn too,
    as ``"<side>.throughput_error"``: shared by the options of one kind of side and correlated
    at :data:`~costmodel.inputs.THROUGHPUT_ERROR_RHO` between the kinds."""
    erred = {f"{o.side}.throughput_error": o.inputs.throughput_error for o in options if _erred(o)}
    names = sorted({k for k, v in spreads.items() if v > 0} | set(erred)) + _error_names(options)
    drawn = sample(names, samples, seed, "lhs") if names else None
    q = gaussian_copula(drawn, throughput_error_pairs(erred)).q if names else {}
    u, out = utilisation, []
    for o, error in zip(options, _errors(options, q), strict=True):
        inputs = widened(o.inputs, o.side, spreads)
        values = draws_at({f"{o.side}.{k}": v for k, v in vars(inputs).items()}, q)
        unit, kg = _lines(replace(o, inputs=inputs), values, horizon, lives, error)
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
