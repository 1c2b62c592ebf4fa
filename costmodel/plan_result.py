"""The typed result of a fleet plan and its JSON form (``kind: plan``, ``schema_version`` 1).

Money in USD at present value; shares and utilisation as fractions [-]; work in reference
GPU-hours per month. The schema dumps a :class:`PlanResult` to the documented JSON, validates
plan results read back (unknown keys, NaN and other schema versions are errors naming their key
path) and documents the HTTP response.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from marshmallow import ValidationError, fields, post_load, validate, validates_schema

from .result import SCHEMA_VERSION, Advice, Assumption, CatalogRef, InputValue, Result
from .result_schema import (
    _NOT_A_NUMBER,
    AdviceSchema,
    AssumptionSchema,
    InputValueSchema,
    ResultBase,
    _floats,
    _share,
    _Strict,
)

__all__ = [
    "Candidate",
    "Choice",
    "CostStats",
    "PlanResult",
    "PlanResultSchema",
    "WorkSplit",
    "result_from_dict",
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
    verdict: str
    seed: int
    samples: int
    method: str
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

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON form, as plain Python data."""
        return PlanResultSchema().dump(self)

    def to_json(self) -> bytes:
        """The JSON form as UTF-8 bytes, indented by 2."""
        return json.dumps(self.to_dict(), indent=2, allow_nan=False).encode("utf-8")

    @classmethod
    def from_dict(cls, data: Any) -> PlanResult:
        """Validate and load the JSON form; raises ``marshmallow.ValidationError``."""
        return PlanResultSchema().load(data)


def _money(description: str) -> fields.Float:
    return fields.Float(
        required=True,
        allow_nan=False,
        error_messages={"special": _NOT_A_NUMBER},
        metadata={"description": f"{description} [USD, present value]"},
    )


class CostStatsSchema(_Strict):
    """A candidate's cost over the draws."""

    mean = _money("mean")
    p10 = _money("10th percentile")
    p50 = _money("median")
    p90 = _money("90th percentile")
    cvar95 = _money("mean of the worst 5 % of draws")

    make = CostStats


class CandidateSchema(_Strict):
    """One mix of owned servers and reserved instances; the rest of the work is burst."""

    servers = fields.Integer(required=True, strict=True, validate=validate.Range(0))
    instances = fields.Integer(required=True, strict=True, validate=validate.Range(0))
    cost = fields.Nested(CostStatsSchema, required=True)
    share_owned = _share("mean share of the work done on owned servers [-]")
    owned_utilisation = _share("mean busy share of the owned servers [-]; 0 without servers")
    prob_cheaper_than_cloud = _share("share of draws cheaper than renting everything [-]")

    make = Candidate


class WorkSplitSchema(_Strict):
    """Mean work of each month of the best plan [reference GPU-hours/month]."""

    owned = _floats("on owned servers", nullable=False)
    reserved = _floats("on reserved instances", nullable=False)
    burst = _floats("on burst instances", nullable=False)

    make = WorkSplit

    @validates_schema
    def _aligned(self, data: dict, **kwargs: Any) -> None:
        n = len(data["owned"])
        for key in ("reserved", "burst"):
            if len(data[key]) != n:
                raise ValidationError(f"{len(data[key])} months, owned has {n}", key)


class _Pair(fields.Field):
    """A candidate as ``{servers, instances}`` in JSON, ``(servers, instances)`` in Python."""

    def _serialize(self, value: Any, attr: Any, obj: Any, **kwargs: Any) -> dict[str, int]:
        return {"servers": int(value[0]), "instances": int(value[1])}

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> tuple[int, int]:
        pair = (
            tuple(value.get(k) for k in ("servers", "instances"))
            if isinstance(value, Mapping)
            else ()
        )
        if len(pair) != 2 or not all(type(v) is int and v >= 0 for v in pair):
            raise ValidationError("expected {servers, instances}, two counts")
        return pair  # type: ignore[return-value]

    def json_schema(self, openapi: tuple[int, int]) -> dict[str, Any]:
        """The OpenAPI/JSON Schema of this field."""
        count = {"type": "integer", "minimum": 0}
        return {
            "type": "object",
            "properties": {"servers": count, "instances": count},
            "required": ["servers", "instances"],
        }


class ChoiceSchema(_Strict):
    """The value of information of the choice between the two best candidates."""

    first = _Pair(required=True, metadata={"description": "the best candidate"})
    second = _Pair(required=True, metadata={"description": "the runner-up"})
    evpi = _money("expected saving from knowing every input before choosing")
    bins = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(1),
        metadata={"description": "equal-count bins per continuous input for the EVPPI"},
    )
    by_input = fields.List(
        fields.Nested(InputValueSchema), required=True, metadata={"description": "largest first"}
    )

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> Choice:
        return Choice(**{**data, "by_input": tuple(data["by_input"])})


class PlanResultSchema(ResultBase):
    """The plan result contract, ``kind: plan``, ``schema_version`` 1."""

    kind = fields.String(required=True, validate=validate.Equal(KIND))
    objective = fields.String(required=True, validate=validate.OneOf(("mean", "p90", "cvar95")))
    candidates = fields.List(fields.Nested(CandidateSchema), required=True)
    best = fields.Nested(CandidateSchema, required=True)
    frontier = fields.List(fields.Nested(CandidateSchema), required=True)
    all_cloud = fields.Nested(CandidateSchema, required=True)
    work_split = fields.Nested(WorkSplitSchema, required=True)
    value_of_information = fields.Nested(
        ChoiceSchema,
        load_default=None,
        allow_none=True,
        metadata={"description": "absent with one candidate, or in results stored before it"},
    )
    warnings = fields.List(fields.Nested(AdviceSchema), required=True)
    verdict = fields.String(required=True, metadata={"description": "one-sentence answer"})
    assumptions = fields.List(fields.Nested(AssumptionSchema), required=True)

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> PlanResult:
        for key in ("candidates", "frontier", "warnings", "assumptions"):
            data[key] = tuple(data[key])
        return PlanResult(**data)


def result_from_dict(data: Any) -> Result | PlanResult:
    """Validate and load either JSON result: a plan's (``kind: plan``) or a rent-versus-buy
    scenario's (no ``kind``); raises ``marshmallow.ValidationError``."""
    if isinstance(data, Mapping) and data.get("kind") == KIND:
        return PlanResult.from_dict(data)
    return Result.from_dict(data)
