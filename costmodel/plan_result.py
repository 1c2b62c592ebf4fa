"""The typed result of a fleet plan (``kind: plan``): numbers only.

Money in USD at present value; shares and utilisation as fractions [-]; work per month in the
demand's unit (reference GPU-hours, or millions of tokens). Its JSON form is
:mod:`present.plan_schema`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import numpy as np

from .result import SCHEMA_VERSION, Column, InputValue, Quantity
from .uncertainty import critical

if TYPE_CHECKING:
    import pandas

__all__ = [
    "Added",
    "Candidate",
    "CarbonStats",
    "Choice",
    "CostStats",
    "KIND",
    "PlanResult",
    "Precision",
    "ServiceMonth",
    "StagingSaving",
    "WorkSplit",
]

#: The ``kind`` of a plan and of its result.
KIND = "plan"


@dataclass(frozen=True)
class CostStats:
    """A candidate's cost over the draws [USD, present value]; ``cvar95`` is the mean of the
    worst 5 % of draws."""

    mean: float
    p10: float
    p50: float
    p90: float
    cvar95: float


_STATS = tuple(f.name for f in fields(CostStats))


@dataclass(frozen=True)
class CarbonStats:
    """A candidate's emissions over the horizon and the draws [t CO2e], and ``per_unit`` [g
    CO2e per unit of work: reference GPU-hour or M tokens], all its draws' emissions over all
    their work (NaN without work)."""

    mean: float
    p10: float
    p50: float
    p90: float
    per_unit: float


_CARBON = tuple(f.name for f in fields(CarbonStats))


@dataclass(frozen=True)
class ServiceMonth:
    """The first month of service of the servers a candidate adds [month] over the draws:
    percentiles counting "never" (nothing added within the horizon) as +inf, NaN where they
    land there; ``mean`` over the draws that add (NaN when none does); ``prob_never`` [-] the
    share of draws that add nothing."""

    mean: float
    p10: float
    p50: float
    p90: float
    prob_never: float


@dataclass(frozen=True)
class Added:
    """A candidate's later purchase: ``servers`` S1 added when the month's work passes
    ``when_demand_above`` [-] of the first servers' capacity, or at ``at_month`` [month] (the
    other ``None``), in service from ``month``."""

    servers: int
    when_demand_above: float | None
    at_month: int | None
    month: ServiceMonth


@dataclass(frozen=True)
class StagingSaving:
    """What adding servers later saves [USD, present value] over the draws: the cost of the
    best candidate that buys every server at month 0 less that of ``best`` (0 in every draw
    when ``best`` adds nothing)."""

    mean: float
    p10: float
    p90: float


@dataclass(frozen=True)
class Candidate:
    """One mix: ``servers`` owned, ``instances`` reserved, the rest burst.

    ``share_owned`` [-] is the mean over draws of owned work / all work; ``owned_utilisation``
    [-] the mean of owned work / owned capacity (0 without servers);
    ``prob_cheaper_than_cloud`` [-] the share of draws in which it costs less than renting all
    the work as burst; ``availability`` [-] the mean share of its GPUs in service (1 without
    servers), ``None`` for a plan without downtime; ``carbon`` its emissions, ``None`` for a
    plan that counts no carbon or whose burst's emissions are unknown; ``add`` its later
    purchase (``None`` for a candidate that buys every server at month 0);
    ``prob_cheaper_ci95`` [-] the 95 % Wilson interval of ``prob_cheaper_than_cloud``
    (``None`` in results stored before it). ``share_owned`` is
    then the mean of sum A_m / sum W_m and ``owned_utilisation`` of sum A_m / sum C_m, the
    capacity C_m growing when the added servers arrive.
    """

    servers: int
    instances: int
    cost: CostStats
    share_owned: float
    owned_utilisation: float
    prob_cheaper_than_cloud: float
    availability: float | None = None
    carbon: CarbonStats | None = None
    add: Added | None = None
    prob_cheaper_ci95: tuple[float, float] | None = None

    @property
    def key(self) -> tuple[int, int, int, float | None]:
        """(servers, instances, servers added, trigger or month), unique among candidates."""
        if self.add is None:
            return (self.servers, self.instances, 0, None)
        a = self.add
        trigger = a.at_month if a.when_demand_above is None else a.when_demand_above
        return (self.servers, self.instances, a.servers, trigger)


@dataclass(frozen=True, eq=False)
class WorkSplit:
    """Mean work of each month m = 1..H [units of work/month: reference GPU-hours or M tokens]
    of the best plan, by where it is done. A plan that adds servers later (``own.add``) also
    gives the best plan's mean owned ``capacity`` C_m of each month and the P10 and P90 of the
    month's work W_m over the draws (``demand_p10``, ``demand_p90``), in the same units;
    ``None`` otherwise."""

    owned: np.ndarray
    reserved: np.ndarray
    burst: np.ndarray
    capacity: np.ndarray | None = None
    demand_p10: np.ndarray | None = None
    demand_p90: np.ndarray | None = None


@dataclass(frozen=True)
class Choice:
    """What knowing the inputs before choosing between the two best candidates (``first`` the
    best, ``second`` the runner-up by the objective, each ``(servers, instances)``) would save
    on average: ``evpi`` [USD] for every input, ``by_input`` each input alone (largest first,
    EVPPI from ``bins`` equal-count bins)."""

    first: tuple[int, int]
    second: tuple[int, int]
    evpi: float
    bins: int
    by_input: tuple[InputValue, ...]


@dataclass(frozen=True)
class Precision:
    """Whether the run's draws tell the best candidate (``first``) from the runner-up
    (``second``) by ``objective``, each ``(servers, instances)``, the pair of the value of
    information: ``difference`` [USD] = objective(second) - objective(first) on the draws
    (never negative), ``difference_se`` [USD] its standard error (NaN from a single draw of
    uncertain inputs), ``prob_first_cheaper`` [-] the share of draws in which the first
    costs less than the second, and ``replicates`` [-] the number of independent replicates
    the standard error comes from (``lhs`` and ``sobol`` with enough draws; ``None`` when it
    comes from the draws as independent draws)."""

    first: tuple[int, int]
    second: tuple[int, int]
    objective: str
    difference: float
    difference_se: float
    prob_first_cheaper: float
    replicates: int | None = None

    @property
    def halfwidth(self) -> float:
        """Half the width of the 95 % interval of the difference [USD]: 1.96 x its standard
        error, or t(0.975, R - 1) x it when it comes from R replicates (NaN when it is
        unknown)."""
        return critical(self.replicates) * self.difference_se

    @property
    def close_call(self) -> bool:
        """Whether the draws fail to tell the two apart: the 95 % interval of the difference
        reaches 0, or is unknown. A difference without spread (0 in every draw) is none: no
        number of draws would part them."""
        if math.isnan(self.difference_se):
            return True
        return self.difference_se > 0 and self.difference <= self.halfwidth


@dataclass(frozen=True, eq=False)
class PlanResult:
    """Everything a plan reports: every candidate, the best by ``objective``, the cost-versus-
    risk ``frontier`` (no other candidate beats them on both mean and P90), ``all_cloud`` for
    reference, the best plan's monthly ``work_split`` and its P50 ``saving`` [-] against
    all-cloud (the share of the all-cloud cost it saves, negative when dearer; NaN when some
    draw has no work; ``None`` in results stored before it). For a plan that counts
    carbon, ``carbon_frontier`` holds the candidates no other beats on both mean cost and mean
    emissions (``None`` when the emissions are unknown, or not counted) and ``carbon_unknown``
    the sides of unknown emissions (``"burst.api"``). ``precision`` says how far the draws
    tell the best from the runner-up (``None`` with one candidate, or in results stored before
    it). For a plan that adds servers later (``own.add``), ``staging_saving`` is what that saves
    against the best plan that buys every server at month 0 (``None`` otherwise). The words,
    document, catalog, warnings and assumptions are the answer's that carries the result
    (:class:`present.answer.Answer`)."""

    candidates: tuple[Candidate, ...]
    best: Candidate
    frontier: tuple[Candidate, ...]
    all_cloud: Candidate
    objective: str
    work_split: WorkSplit
    seed: int
    samples: int
    method: str
    saving: float | None = None
    value_of_information: Choice | None = None
    precision: Precision | None = None
    carbon_frontier: tuple[Candidate, ...] | None = None
    carbon_unknown: tuple[str, ...] = ()
    staging_saving: StagingSaving | None = None
    schema_version: int = SCHEMA_VERSION
    kind: str = KIND

    def __repr__(self) -> str:
        """The headline numbers, a few hundred characters (the fields hold the rest)."""
        b, c = self.best, self.all_cloud
        add = f" + {b.add.servers} later" if b.add else ""
        saving = "" if self.saving is None else f", saving {self.saving:.3g} of it (P50)"
        return (
            f"PlanResult(best of {len(self.candidates):,} candidates by {self.objective}: "
            f"servers {b.servers}{add}, reserved {b.instances}, mean {b.cost.mean:,.0f} USD "
            f"(P90 {b.cost.p90:,.0f}); all cloud mean {c.cost.mean:,.0f} USD{saving}; "
            f"{self.samples:,} draws, seed {self.seed}, {self.method})"
        )

    def candidate(self, servers: int, instances: int) -> Candidate | None:
        """The candidate with ``servers`` and ``instances`` that adds nothing later, or
        ``None``."""
        return next(
            (
                c
                for c in self.candidates
                if (c.servers, c.instances) == (servers, instances) and c.add is None
            ),
            None,
        )

    def to_frame(self) -> pandas.DataFrame:
        """One row per candidate, in :attr:`candidates` order.

        Columns: ``servers`` and ``instances`` [count] (for a plan that adds servers later,
        then ``added`` [count], the trigger, ``added_month_p50`` [month] and
        ``added_prob_never`` [-]), ``cost_mean``, ``cost_p10``, ``cost_p50``, ``cost_p90``,
        ``cost_cvar95`` [USD, present value], ``share_owned``,
        ``owned_utilisation`` and ``prob_cheaper_than_cloud`` [-], ``availability`` [-] for a
        plan with downtime, and for a plan that counts carbon ``carbon_mean``, ``carbon_p10``,
        ``carbon_p50``, ``carbon_p90`` [t CO2e] and ``carbon_per_unit`` [g CO2e per unit of
        work] (NaN where the emissions are unknown).
        """
        import pandas

        return pandas.DataFrame(dict(self.columns()))

    def columns(self) -> list[Column]:
        """The candidates' table as :class:`~costmodel.result.Column` pairs ``(column name,
        values)``, one value per candidate: counts as ``int``, money [USD] and shares [-] as
        ``float``, each column declaring what it counts."""
        cs, share = self.candidates, Quantity.SHARE
        return [
            Column("servers", [c.servers for c in cs]),
            Column("instances", [c.instances for c in cs]),
            *(self._added_columns() if self.stages else []),
            *(Column(f"cost_{s}", [getattr(c.cost, s) for c in cs], Quantity.USD) for s in _STATS),
            Column("share_owned", [c.share_owned for c in cs], share),
            Column("owned_utilisation", [c.owned_utilisation for c in cs], share),
            Column("prob_cheaper_than_cloud", [c.prob_cheaper_than_cloud for c in cs], share),
            *([Column("availability", [c.availability for c in cs])] if self.downtime else []),
            *(self._carbon_columns() if self.counts_carbon else []),
        ]

    def _added_columns(self) -> list[Column]:
        """``added`` [count], the trigger (``when_demand_above`` [-] or ``at_month``
        [month]; NaN for a candidate that adds nothing), and the first month of service's
        ``added_month_p50`` [month] and ``added_prob_never`` [-]."""
        nan = float("nan")
        adds = [c.add for c in self.candidates]
        by_month = any(a is not None and a.at_month is not None for a in adds)
        trigger = "at_month" if by_month else "when_demand_above"
        return [
            Column("added", [0 if a is None else a.servers for a in adds]),
            Column(trigger, [nan if a is None else getattr(a, trigger) for a in adds]),
            Column("added_month_p50", [nan if a is None else a.month.p50 for a in adds]),
            Column(
                "added_prob_never",
                [nan if a is None else a.month.prob_never for a in adds],
                Quantity.SHARE,
            ),
        ]

    @property
    def stages(self) -> bool:
        """Whether some candidate adds servers later (a plan with ``own.add``)."""
        return self.staging_saving is not None

    def _carbon_columns(self) -> list[Column]:
        cs = [c.carbon for c in self.candidates]
        nan = float("nan")
        return [
            Column(
                f"carbon_{s}",
                [nan if c is None else getattr(c, s) for c in cs],
                Quantity.GRAMS_PER_UNIT if s == "per_unit" else Quantity.TONNES,
            )
            for s in _CARBON
        ]

    @property
    def counts_carbon(self) -> bool:
        """Whether the plan counts carbon (its emissions known or not)."""
        return self.carbon_frontier is not None or bool(self.carbon_unknown)

    @property
    def downtime(self) -> bool:
        """Whether the owned GPUs have downtime (the candidates then give their availability)."""
        return self.all_cloud.availability is not None
