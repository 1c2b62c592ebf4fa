"""The typed result of a fleet plan (``kind: plan``): numbers only.

Money in USD at present value; shares and utilisation as fractions [-]; work in reference
GPU-hours per month. Its JSON form is :mod:`costmodel.present.plan_schema`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .result import SCHEMA_VERSION, Advice, Assumption, CatalogRef, InputValue

__all__ = [
    "Candidate",
    "Choice",
    "CostStats",
    "KIND",
    "PlanResult",
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


@dataclass(frozen=True)
class Candidate:
    """One mix: ``servers`` owned, ``instances`` reserved, the rest burst.

    ``share_owned`` [-] is the mean over draws of owned work / all work; ``owned_utilisation``
    [-] the mean of owned work / owned capacity (0 without servers);
    ``prob_cheaper_than_cloud`` [-] the share of draws in which it costs less than renting all
    the work as burst.
    """

    servers: int
    instances: int
    cost: CostStats
    share_owned: float
    owned_utilisation: float
    prob_cheaper_than_cloud: float


@dataclass(frozen=True, eq=False)
class WorkSplit:
    """Mean work of each month m = 1..H [reference GPU-hours/month] of the best plan, by where
    it is done."""

    owned: np.ndarray
    reserved: np.ndarray
    burst: np.ndarray


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


@dataclass(frozen=True, eq=False)
class PlanResult:
    """Everything a plan reports: every candidate, the best by ``objective``, the cost-versus-
    risk ``frontier`` (no other candidate beats them on both mean and P90), ``all_cloud`` for
    reference, the best plan's monthly ``work_split`` and the verdict. The scenario layer adds
    ``scenario``, ``catalog``, ``warnings`` and ``assumptions``."""

    candidates: tuple[Candidate, ...]
    best: Candidate
    frontier: tuple[Candidate, ...]
    all_cloud: Candidate
    objective: str
    work_split: WorkSplit
    seed: int
    samples: int
    method: str
    verdict: str = ""
    value_of_information: Choice | None = None
    scenario: Mapping[str, Any] = field(default_factory=dict)
    catalog: CatalogRef | None = None
    warnings: tuple[Advice, ...] = ()
    assumptions: tuple[Assumption, ...] = ()
    schema_version: int = SCHEMA_VERSION
    kind: str = KIND

    @property
    def name(self) -> str:
        """The plan's name, or ``""``."""
        return str(self.scenario.get("name") or "")

    def candidate(self, servers: int, instances: int) -> Candidate | None:
        """The candidate with ``servers`` and ``instances``, or ``None``."""
        return next(
            (c for c in self.candidates if (c.servers, c.instances) == (servers, instances)), None
        )
