"""The typed result of an evaluation: arrays and numbers, no JSON rules.

``NaN`` marks "no value" (a percentile that lands on "never", an undefined unit cost at u = 0);
the JSON form (:func:`present.to_dict`) writes it as ``null``. Money in USD at present
value, utilisation and shares as fractions [-], payback in months, unit cost in USD per unit of
work (``Result.unit``: a reference GPU-hour, or a million tokens). Arrays are aligned with
``utilisation`` (one value per level) unless said otherwise, and are read-only.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .units import unit as unit_of

if TYPE_CHECKING:
    import pandas

__all__ = [
    "Advice",
    "Assumption",
    "Availability",
    "Bands",
    "Breakeven",
    "BySide",
    "Carbon",
    "CatalogRef",
    "Cheapest",
    "Column",
    "Convergence",
    "CumulativeCost",
    "Driver",
    "Origin",
    "InputValue",
    "Payback",
    "Quantity",
    "Result",
    "Rival",
    "SCHEMA_VERSION",
    "Sensitivity",
    "Tornado",
    "TornadoBar",
    "UnitCost",
    "ValueOfInformation",
    "Versus",
    "Z95",
]

#: Version of the result's JSON form.
SCHEMA_VERSION = 1
#: The standard normal quantile of a two-sided 95 % interval, Phi^-1(0.975) [-].
Z95 = 1.959963984540054


def frozen_array(values: Any) -> np.ndarray:
    """A read-only float array (a copy when ``values`` is writable)."""
    out = np.array(values, dtype=float)
    out.flags.writeable = False
    return out


class Quantity(enum.StrEnum):
    """What a column of a table of figures counts, by its unit: how a report shows it."""

    USD = "[USD]"
    SHARE = "[-]"
    MONTH = "[month]"
    USD_PER_UNIT = "[USD/unit of work]"
    TONNES = "[t CO2e]"
    GRAMS_PER_UNIT = "[g CO2e/unit of work]"
    WORK = "[units of work/month]"


class Column(tuple):
    """A ``(name, values)`` pair (it unpacks and makes a dict as one) that declares what its
    values count: ``quantity`` (``None`` for counts, flags and text)."""

    quantity: Quantity | None

    def __new__(cls, name: str, values: Any, quantity: Quantity | None = None) -> Column:
        self = super().__new__(cls, (name, values))
        self.quantity = quantity
        return self

    def __getnewargs__(self) -> tuple[Any, ...]:
        return (*self, self.quantity)


@dataclass(frozen=True, eq=False)
class Bands:
    """P10/P50/P90 (and, for TCO, the mean) of a quantity, one value per level or month."""

    p10: np.ndarray
    p50: np.ndarray
    p90: np.ndarray
    mean: np.ndarray | None = None


@dataclass(frozen=True)
class Breakeven:
    """Break-even utilisation [-]: percentiles (NaN where they land on "never"), the mean over
    the draws that break even (NaN when none does), and the shares of draws where buying wins
    even idle (``prob_always``) or renting wins even at u = 1 (``prob_never``)."""

    mean: float
    p10: float
    p50: float
    p90: float
    prob_always: float
    prob_never: float


@dataclass(frozen=True)
class Availability:
    """Share of the owned GPUs in service on average, over the draws [-]: the mean and
    percentiles (all equal when the inputs behind it are fixed)."""

    mean: float
    p10: float
    p50: float
    p90: float


@dataclass(frozen=True, eq=False)
class Payback:
    """Payback [month] per level (NaN: not within the horizon) and the share of draws without
    payback per level [-]."""

    p10: np.ndarray
    p50: np.ndarray
    p90: np.ndarray
    prob_never: np.ndarray


class BySide:
    """A figure of each side of a question, by side name in the question's order (``buy``,
    ``rent``, then any further side): ``x["rent"]``, ``x.get("api")``, ``for side in x``."""

    sides: Mapping[str, Any]

    def __getitem__(self, side: str) -> Any:
        return self.sides[side]

    def __iter__(self) -> Iterator[str]:
        return iter(self.sides)

    def __contains__(self, side: object) -> bool:
        return side in self.sides

    def get(self, side: str) -> Any:
        """The figure of ``side``, or ``None`` without that side."""
        return self.sides.get(side)

    def items(self) -> Iterator[tuple[str, Any]]:
        """(side name, figure) pairs in the question's order."""
        return iter(self.sides.items())


@dataclass(frozen=True, eq=False)
class UnitCost(BySide):
    """Each side's cost per unit of work [USD per ``unit``], NaN at u = 0, by side name.
    ``unit`` is the id of a unit of work (:data:`costmodel.units.UNITS`)."""

    unit: str
    sides: Mapping[str, Bands]


@dataclass(frozen=True, eq=False)
class Carbon(BySide):
    """Each side's emissions over the horizon per level [t CO2e] (mean and percentiles), by
    side name, and per unit of work (``per_unit``, [g CO2e per ``per_unit.unit``], NaN at
    u = 0). ``unknown`` names the sides whose emissions are not known (an API without
    ``g_co2e_per_mtok``): they have no bands, never zeros."""

    sides: Mapping[str, Bands]
    per_unit: UnitCost
    unknown: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class Cheapest(BySide):
    """The share of draws in which each side is the cheapest, per level [-], by side name; a
    tie goes to the side first in the question's order. ``ci95`` [-]: each side's 95 % Wilson
    interval of its share, shape ``(levels, 2)``, by side name (as P(buy cheaper)'s,
    :func:`costmodel.uncertainty.wilson`; empty in results stored before it)."""

    sides: Mapping[str, np.ndarray]
    ci95: Mapping[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class CumulativeCost(BySide):
    """Cumulative discounted after-tax cost by month 0..H at one utilisation [USD], no resale,
    of each side by side name."""

    utilisation: float
    months: np.ndarray
    sides: Mapping[str, Bands]


@dataclass(frozen=True, eq=False)
class Versus:
    """Buying against one further side (a side beyond buy, rent and api): the side's TCO
    bands [USD], P(TCO_buy < TCO_<side>) per level [-], the break-even utilisation of buying
    against it and the payback of buying against it [month]."""

    tco: Bands
    prob_buy_cheaper: np.ndarray
    breakeven: Breakeven
    payback: Payback


@dataclass(frozen=True)
class Driver:
    """An uncertain input's Spearman rank correlation with TCO_buy - TCO_rent [-]."""

    input: str
    spearman: float


@dataclass(frozen=True)
class Sensitivity:
    """What drives the answer at one utilisation level, strongest first."""

    utilisation: float
    metric: str
    inputs: tuple[Driver, ...]


@dataclass(frozen=True, eq=False)
class Convergence:
    """How precise the Monte Carlo estimates are.

    ``samples`` [draw] used and ``initial_samples`` [draw] asked for (more when the draws were
    doubled toward ``target_halfwidth`` [-], at most ``max_samples`` [draw]; both ``None``
    without a target); ``met``: the half-width is at most the target (``None`` without one).
    ``breakeven_p50_ci95`` [-]: the 95 % interval (lo, hi) of the break-even P50, from two
    order statistics for independent draws, from the spread between replicates for draws in
    replicates (NaN: "never", or no interval with 5 draws or fewer), and
    ``breakeven_p50_halfwidth`` [-] = (hi - lo)/2 (NaN when unbounded). Per utilisation level:
    ``gap_mean_se`` [USD], the standard error of the mean of TCO_buy - TCO_rent,
    ``prob_buy_cheaper_se`` [-], that of P(buy cheaper) as for independent draws,
    sqrt(p(1 - p)/n), and ``prob_buy_cheaper_ci95`` [-], its 95 % Wilson interval, shape
    ``(levels, 2)`` (``None`` in results stored before it). ``replicates`` [-]: the number of
    independent replicates the interval of the break-even and the standard error of the gap
    come from (a 95 % interval of the mean gap is then +- t(0.975, R - 1) of it), ``None`` when
    they come from the draws as independent draws.
    """

    samples: int
    initial_samples: int
    target_halfwidth: float | None
    max_samples: int | None
    met: bool | None
    breakeven_p50_ci95: tuple[float, float]
    breakeven_p50_halfwidth: float
    gap_mean_se: np.ndarray
    prob_buy_cheaper_se: np.ndarray
    prob_buy_cheaper_ci95: np.ndarray | None = None
    replicates: int | None = None


@dataclass(frozen=True)
class TornadoBar:
    """One uncertain input moved from its P10 (``low``) to its P90 (``high``), in its own unit,
    with every other input at its median: the break-even utilisation [-] (NaN: "never") and
    TCO_buy - TCO_rent [USD] at the tornado's utilisation, at each end."""

    input: str
    low: float
    high: float
    breakeven_at_low: float
    breakeven_at_high: float
    gap_at_low: float
    gap_at_high: float


@dataclass(frozen=True)
class Tornado:
    """One-at-a-time swings at ``utilisation`` [-], largest first; ``breakeven_at_median`` [-]
    and ``gap_at_median`` [USD] with every input at its median."""

    utilisation: float
    breakeven_at_median: float
    gap_at_median: float
    inputs: tuple[TornadoBar, ...]


@dataclass(frozen=True)
class InputValue:
    """The expected value of perfect information on one input (EVPPI) [USD]."""

    input: str
    evppi: float


@dataclass(frozen=True)
class ValueOfInformation:
    """What knowing the inputs before choosing would save on average, at ``utilisation`` [-]:
    ``evpi`` [USD] for every input, ``by_input`` each input alone (largest first), estimated
    with ``bins`` equal-count bins of each input's draws."""

    utilisation: float
    evpi: float
    bins: int
    by_input: tuple[InputValue, ...]


@dataclass(frozen=True)
class Rival:
    """The uncertainty figures of buying against one more side than renting, named by
    ``versus`` (``"api"``, or a further side's name): the sensitivity, tornado, value of
    information and convergence of TCO_buy - TCO_<versus> in place of TCO_buy - TCO_rent, at
    the same utilisation levels (the tornado's and the convergence's break-evens are those
    against that side, its ``prob_buy_cheaper_se`` that of P(buy cheaper than that side));
    ``convergence`` is ``None`` in results stored before it was added."""

    versus: str
    sensitivity: Sensitivity
    tornado: Tornado
    value_of_information: ValueOfInformation
    convergence: Convergence | None = None


@dataclass(frozen=True)
class Advice:
    """A structured warning: ``severity`` is ``info``, ``warning`` or ``error``; ``side`` the
    key of the side it is about (``"buy"``, ``"rent"``, ``"own"``, ``"reserve"``, ``"burst"``),
    ``None`` for the document as a whole."""

    code: str
    severity: str
    message: str
    side: str | None = None


class Origin(enum.StrEnum):
    """Where an input's value came from: given in the document, a catalog row (or platform
    tier, or interconnect table), the user's prices file laid over the catalog, or a
    documented default."""

    GIVEN = "given"
    CATALOG = "catalog"
    PRICES = "prices"
    DEFAULT = "default"


@dataclass(frozen=True)
class Assumption:
    """Where one input's value came from: ``value`` is a number or a distribution mapping;
    ``source`` says it in words, ``origin`` is its kind."""

    key: str
    value: Any
    unit: str
    source: str
    origin: Origin = Origin.GIVEN


@dataclass(frozen=True)
class CatalogRef:
    """The catalog a result was computed with."""

    version: str
    as_of: str


@dataclass(frozen=True, eq=False)
class Result:
    """Everything an evaluation reports.

    ``cost_per_unit`` is in USD per unit of work (``cost_per_unit.unit``). With a hosted API
    (inference work), the ``api_*`` fields and ``cheapest_share`` hold its side: its TCO,
    P(TCO_buy < TCO_api), the break-even and payback of buying against it; they are ``None``
    without one. ``availability`` is the owned GPUs' share in service, ``None`` for a build
    without downtime. The engine fills the numbers and the sampling settings (``convergence``,
    ``tornado`` and ``value_of_information`` are ``None`` in results stored before they
    existed); the words, document, catalog, warnings and assumptions are the answer's that
    carries the result (:class:`present.answer.Answer`). ``carbon`` holds each side's
    emissions where the
    inputs have carbon figures (``None`` otherwise). ``sensitivity``, ``tornado`` and
    ``value_of_information`` are of buying against renting; ``rivals`` holds the same against
    each further side (a hosted API, then each side of ``versus``), empty without one.
    ``versus`` holds buying against each side beyond buy, rent and api (a registered kind of
    side, :mod:`costmodel.sides`) by name.
    """

    utilisation: np.ndarray
    buy_tco: Bands
    rent_tco: Bands
    prob_buy_cheaper: np.ndarray
    breakeven_utilisation: Breakeven
    payback_months: Payback
    cost_per_unit: UnitCost
    cumulative_cost: CumulativeCost
    sensitivity: Sensitivity
    seed: int
    samples: int
    method: str
    api_tco: Bands | None = None
    prob_buy_cheaper_than_api: np.ndarray | None = None
    breakeven_vs_api: Breakeven | None = None
    payback_vs_api_months: Payback | None = None
    cheapest_share: Cheapest | None = None
    availability: Availability | None = None
    convergence: Convergence | None = None
    tornado: Tornado | None = None
    value_of_information: ValueOfInformation | None = None
    schema_version: int = SCHEMA_VERSION
    carbon: Carbon | None = None
    rivals: tuple[Rival, ...] = ()
    versus: Mapping[str, Versus] = field(default_factory=dict)

    def __repr__(self) -> str:
        """The headline numbers, a few hundred characters (the fields hold the rest)."""
        b, p, u = self.breakeven_utilisation, self.prob_buy_cheaper, self.utilisation
        return (
            f"Result({' vs '.join(self.sides)}, utilisation {u[0]:.3g} to {u[-1]:.3g} in "
            f"{u.size} levels; break-even utilisation P50 {b.p50:.3g} (P10 {b.p10:.3g}, P90 "
            f"{b.p90:.3g}; always {b.prob_always:.3g}, never {b.prob_never:.3g}); "
            f"P(buy cheaper) {p[0]:.3g} to {p[-1]:.3g}; {self.samples:,} draws, seed "
            f"{self.seed}, {self.method})"
        )

    def level(self, u: float) -> int | None:
        """Index of utilisation level ``u`` in :attr:`utilisation`, or ``None``."""
        hits = np.flatnonzero(np.abs(self.utilisation - u) < 1e-9)
        return int(hits[0]) if hits.size else None

    def rival(self, versus: str) -> Rival | None:
        """The uncertainty figures of buying against side ``versus`` (``"rent"``: the
        top-level ones), or ``None`` (no such side, or a result stored before them)."""
        if versus != "rent":
            return next((r for r in self.rivals if r.versus == versus), None)
        if self.tornado is None or self.value_of_information is None:
            return None
        return Rival("rent", self.sensitivity, self.tornado, self.value_of_information)

    @property
    def unit(self) -> str:
        """The unit of work: ``reference_gpu_hour`` or ``million_tokens``."""
        return self.cost_per_unit.unit

    @property
    def sides(self) -> tuple[str, ...]:
        """The sides compared, in order: ``("buy", "rent")``, then any further side (``"api"``
        with a hosted API)."""
        return tuple(self.cost_per_unit)

    def tco(self, side: str) -> Bands:
        """The TCO bands [USD] of ``side`` (one of :attr:`sides`)."""
        fixed = {"buy": self.buy_tco, "rent": self.rent_tco, "api": self.api_tco}
        return fixed[side] if side in fixed else self.versus[side].tco

    def against(self, side: str) -> Versus:
        """Buying against ``side`` (one of :attr:`sides` but ``buy``): the side's TCO bands
        [USD], P(TCO_buy < TCO_<side>) per level [-], the break-even and the payback [month]
        of buying against it (renting's and the API's from their top-level fields)."""
        if side == "rent":
            return Versus(
                self.rent_tco,
                self.prob_buy_cheaper,
                self.breakeven_utilisation,
                self.payback_months,
            )
        if side == "api" and self.api_tco is not None:
            return Versus(
                self.api_tco,
                self.prob_buy_cheaper_than_api,
                self.breakeven_vs_api,
                self.payback_vs_api_months,
            )
        return self.versus[side]

    def to_frame(self) -> pandas.DataFrame:
        """One row per utilisation level: TCO bands, P(buy cheaper), payback and unit cost.

        Columns: ``buy_tco_mean`` .. ``rent_tco_p90`` [USD], ``prob_buy_cheaper`` [-],
        ``payback_months_p10`` .. ``payback_prob_never``, ``cost_per_ref_gpu_hour_buy_p10`` ..
        ``_rent_p90`` [USD/reference GPU-hour] (``cost_per_million_tokens_...`` [USD/M tokens]
        for inference work); with a hosted API also ``api_tco_mean`` .. ``_p90``,
        ``prob_buy_cheaper_than_api``, ``payback_vs_api_months_p10`` ..
        ``payback_vs_api_prob_never``, the API's unit cost and ``cheapest_buy`` ..
        ``cheapest_api``; with carbon figures each side's emissions ``carbon_buy_t_mean`` ..
        [t CO2e] and per unit of work ``carbon_buy_g_per_ref_gpu_hour_p10`` .. [g CO2e]
        (an API of unknown emissions has none). Indexed by ``utilisation`` [-]. NaN: no value.
        """
        import pandas

        columns = dict(self.columns())
        index = pandas.Index(columns.pop("utilisation"), name="utilisation")
        return pandas.DataFrame(columns, index=index)

    def columns(self) -> list[Column]:
        """The per-level table as :class:`Column` pairs ``(name, values)``, ``utilisation``
        first, each declaring what it counts."""
        usd, share = Quantity.USD, Quantity.SHARE
        cols = [Column("utilisation", self.utilisation, share)]
        for side in self.sides:
            cols += [Column(f"{side}_tco_{s}", getattr(self.tco(side), s), usd) for s in _STATS]
        cols.append(Column("prob_buy_cheaper", self.prob_buy_cheaper, share))
        if self.prob_buy_cheaper_than_api is not None:
            cols.append(Column("prob_buy_cheaper_than_api", self.prob_buy_cheaper_than_api, share))
        for side, v in self.versus.items():
            cols.append(Column(f"prob_buy_cheaper_than_{side}", v.prob_buy_cheaper, share))
        cols += _payback_columns("payback", self.payback_months)
        if self.payback_vs_api_months is not None:
            cols += _payback_columns("payback_vs_api", self.payback_vs_api_months)
        for side, v in self.versus.items():
            cols += _payback_columns(f"payback_vs_{side}", v.payback)
        per = unit_of(self.unit).column
        for side, bands in self.cost_per_unit.items():
            cols += [
                Column(f"cost_per_{per}_{side}_{s}", getattr(bands, s), Quantity.USD_PER_UNIT)
                for s in _STATS[1:]
            ]
        if self.cheapest_share is not None:
            cols += [
                Column(f"cheapest_{side}", v, share) for side, v in self.cheapest_share.items()
            ]
        if self.carbon is not None:
            cols += _carbon_columns(self.carbon, f"g_per_{per}")
        return cols


_STATS = ("mean", "p10", "p50", "p90")


def _carbon_columns(c: Carbon, per: str) -> list[Column]:
    """``carbon_<side>_t_mean`` .. ``_p90`` [t CO2e] and ``carbon_<side>_<per>_p10`` .. ``_p90``
    [g CO2e per unit of work] of each side whose emissions are known."""
    t, g = Quantity.TONNES, Quantity.GRAMS_PER_UNIT
    cols = [
        Column(f"carbon_{side}_t_{s}", getattr(b, s), t) for side, b in c.items() for s in _STATS
    ]
    return cols + [
        Column(f"carbon_{side}_{per}_{s}", getattr(b, s), g)
        for side, b in c.per_unit.items()
        for s in _STATS[1:]
    ]


def _payback_columns(stem: str, pb: Payback) -> list[Column]:
    """``<stem>_months_p10`` .. ``_p90`` [month] and ``<stem>_prob_never`` [-]."""
    cols = [Column(f"{stem}_months_{s}", getattr(pb, s), Quantity.MONTH) for s in _STATS[1:]]
    return [*cols, Column(f"{stem}_prob_never", pb.prob_never, Quantity.SHARE)]
