"""The JSON form of a fleet plan's result (``kind: plan``, ``schema_version`` 1).

The schema dumps a plan's :class:`~.answer.Answer` (a :class:`~costmodel.plan_result.PlanResult`
with its words) to the documented JSON, loads plan results read back as answers (unknown keys,
NaN and other schema versions are errors naming their key path) and documents the HTTP
response.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marshmallow import (
    ValidationError,
    fields,
    missing,
    post_dump,
    post_load,
    validate,
    validates_schema,
)

from costmodel.plan_result import (
    KIND,
    Added,
    Candidate,
    CarbonStats,
    Choice,
    CostStats,
    PlanResult,
    Precision,
    ServiceMonth,
    StagingSaving,
    WorkSplit,
)

from .answer import Answer
from .schema import (
    NOT_A_NUMBER,
    AdviceSchema,
    AssumptionSchema,
    Floats,
    InputValueSchema,
    Number,
    ResultBase,
    ResultSchema,
    Strict,
    floats,
    prebuilt,
    replicate_count,
    share,
)

__all__ = ["PlanResultSchema", "result_from_dict"]


def _money(description: str, unit: str = "[USD, present value]") -> fields.Float:
    return fields.Float(
        required=True,
        allow_nan=False,
        error_messages={"special": NOT_A_NUMBER},
        metadata={"description": f"{description} {unit}"},
    )


class _Absent(Number):
    """A number (``null``: NaN) that loads as ``None`` when its key is absent, as in results
    stored before it was written."""

    def deserialize(self, value: Any, attr: Any = None, data: Any = None, **kwargs: Any) -> Any:
        return None if value is missing else super().deserialize(value, attr, data, **kwargs)


class CostStatsSchema(Strict):
    """A candidate's cost over the draws."""

    mean = _money("mean")
    p10 = _money("10th percentile")
    p50 = _money("median")
    p90 = _money("90th percentile")
    cvar95 = _money("mean of the worst 5 % of draws")

    make = CostStats


_TONNES = "[t CO2e]"


class CarbonStatsSchema(Strict):
    """A candidate's emissions over the horizon and the draws."""

    mean = _money("mean", _TONNES)
    p10 = _money("10th percentile", _TONNES)
    p50 = _money("median", _TONNES)
    p90 = _money("90th percentile", _TONNES)
    per_unit = Number(
        required=True,
        metadata={"description": "[g CO2e per unit of work] all emissions over all work"},
    )

    make = CarbonStats


class ServiceMonthSchema(Strict):
    """The first month of service of the servers a candidate adds, over the draws; a
    percentile that lands on "never" (nothing added within the horizon) is null."""

    mean = Number(required=True, metadata={"description": "[month] mean over the draws that add"})
    p10 = Number(required=True, metadata={"description": "[month] 10th percentile"})
    p50 = Number(required=True, metadata={"description": "[month] median"})
    p90 = Number(required=True, metadata={"description": "[month] 90th percentile"})
    prob_never = share("share of draws that add nothing within the horizon [-]")

    make = ServiceMonth


class AddedSchema(Strict):
    """A candidate's later purchase: how many servers, at which trigger (a share of the first
    servers' capacity) or month, and when they enter service."""

    servers = fields.Integer(required=True, strict=True, validate=validate.Range(1))
    when_demand_above = fields.Float(
        load_default=None,
        allow_nan=False,
        validate=validate.Range(0),
        metadata={"description": "[-] share of the first servers' capacity that triggers it"},
    )
    at_month = fields.Integer(
        load_default=None,
        strict=True,
        validate=validate.Range(1),
        metadata={"description": "[month] the month it is bought, instead of a trigger"},
    )
    month = fields.Nested(ServiceMonthSchema, required=True)

    make = Added
    absent = ("when_demand_above", "at_month")


class StagingSavingSchema(Strict):
    """What adding servers later saves against the best plan that buys every server at
    month 0, per draw."""

    mean = _money("mean")
    p10 = _money("10th percentile")
    p90 = _money("90th percentile")

    make = StagingSaving


class CandidateSchema(Strict):
    """One mix of owned servers and reserved instances; the rest of the work is burst."""

    servers = fields.Integer(required=True, strict=True, validate=validate.Range(0))
    instances = fields.Integer(required=True, strict=True, validate=validate.Range(0))
    cost = fields.Nested(CostStatsSchema, required=True)
    share_owned = share("mean share of the work done on owned servers [-]")
    owned_utilisation = share("mean busy share of the owned servers [-]; 0 without servers")
    prob_cheaper_than_cloud = share("share of draws cheaper than renting everything [-]")
    availability = fields.Float(
        load_default=None,
        allow_nan=False,
        validate=validate.Range(0, 1),
        error_messages={"special": NOT_A_NUMBER},
        metadata={"description": "mean share of the GPUs in service [-]; with downtime only"},
    )
    carbon = fields.Nested(
        CarbonStatsSchema,
        load_default=None,
        allow_none=True,
        metadata={"description": "emissions; only in plans that count carbon, null when unknown"},
    )
    add = fields.Nested(
        AddedSchema,
        load_default=None,
        metadata={"description": "the later purchase; only for candidates that add servers"},
    )
    prob_cheaper_ci95 = fields.List(
        fields.Float(allow_nan=False),
        validate=validate.Length(equal=2),
        load_default=None,
        metadata={
            "description": "[-] 95 % Wilson interval [lo, hi] of prob_cheaper_than_cloud; "
            "absent in runs stored before it"
        },
    )

    absent = ("availability", "add", "prob_cheaper_ci95")

    @staticmethod
    def make(prob_cheaper_ci95: list[float] | None = None, **data: Any) -> Candidate:
        ci = None if prob_cheaper_ci95 is None else tuple(prob_cheaper_ci95)
        return Candidate(**data, prob_cheaper_ci95=ci)


def _staged_months(what: str) -> Floats:
    """Each month's ``what`` [reference GPU-hours/month] for the best plan; only in plans that
    add servers later (own.add)."""
    return Floats(
        nullable=False,
        load_default=None,
        metadata={"description": f"{what} of each month; only in plans with own.add"},
    )


class WorkSplitSchema(Strict):
    """Mean work of each month of the best plan [reference GPU-hours/month]."""

    owned = floats("on owned servers", nullable=False)
    reserved = floats("on reserved instances", nullable=False)
    burst = floats("on burst instances", nullable=False)
    capacity = _staged_months("mean owned capacity")
    demand_p10 = _staged_months("10th percentile of the work")
    demand_p90 = _staged_months("90th percentile of the work")

    make = WorkSplit
    absent = ("capacity", "demand_p10", "demand_p90")

    @validates_schema
    def _aligned(self, data: dict, **kwargs: Any) -> None:
        n = len(data["owned"])
        for key in ("reserved", "burst", *self.absent):
            if data.get(key) is not None and len(data[key]) != n:
                raise ValidationError(f"{len(data[key])} months, owned has {n}", key)


#: The keys of a candidate that adds servers later, beside its servers and instances.
_ADDED = ("added", "when_demand_above", "at_month")


class _Pair(fields.Field):
    """A candidate as ``{servers, instances}`` in JSON, ``(servers, instances)`` in Python;
    one that adds servers later as ``{servers, instances, added, when_demand_above |
    at_month}``, ``(servers, instances, added, when_demand_above, at_month)``."""

    def _serialize(self, value: Any, attr: Any, obj: Any, **kwargs: Any) -> dict[str, Any]:
        out = {"servers": int(value[0]), "instances": int(value[1])}
        extra = dict(zip(_ADDED, value[2:], strict=False))
        return out | {k: v for k, v in extra.items() if v is not None}

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> tuple:
        if not isinstance(value, Mapping) or set(value) - {"servers", "instances", *_ADDED}:
            raise ValidationError("expected {servers, instances}, two counts")
        pair = tuple(value.get(k) for k in ("servers", "instances"))
        if not all(type(v) is int and v >= 0 for v in pair):
            raise ValidationError("expected {servers, instances}, two counts")
        if "added" not in value:
            return pair
        added, share, month = (value.get(k) for k in _ADDED)
        if type(added) is not int or added < 1 or (share is None) == (month is None):
            raise ValidationError("expected added servers with when_demand_above or at_month")
        return (*pair, added, share, month)

    def json_schema(self, openapi: tuple[int, int]) -> dict[str, Any]:
        """The OpenAPI/JSON Schema of this field."""
        count = {"type": "integer", "minimum": 0}
        return {
            "type": "object",
            "properties": {
                "servers": count,
                "instances": count,
                "added": {"type": "integer", "minimum": 1},
                "when_demand_above": {"type": "number", "minimum": 0},
                "at_month": {"type": "integer", "minimum": 1},
            },
            "required": ["servers", "instances"],
            "additionalProperties": False,
        }


class ChoiceSchema(Strict):
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


class PrecisionSchema(Strict):
    """Whether the run's draws tell the best candidate from the runner-up."""

    first = _Pair(required=True, metadata={"description": "the best candidate"})
    second = _Pair(required=True, metadata={"description": "the runner-up"})
    objective = fields.String(
        required=True,
        validate=validate.OneOf(("mean", "p90", "cvar95")),
        metadata={"description": "the statistic of the cost the two are ranked by"},
    )
    difference = fields.Float(
        required=True,
        allow_nan=False,
        validate=validate.Range(0),
        error_messages={"special": NOT_A_NUMBER},
        metadata={
            "description": "the runner-up's objective minus the best's on the run's draws "
            "[USD, present value]"
        },
    )
    difference_se = Number(
        required=True,
        validate=validate.Range(0),
        metadata={
            "description": "standard error of the difference [USD, present value]: s/sqrt(n) "
            "of the per-draw difference for the mean, a bootstrap of 200 replicates for p90 "
            "and cvar95, or from the spread between replicates (see replicates); null from "
            "one draw of uncertain inputs"
        },
    )
    prob_first_cheaper = share("share of draws in which the best costs less than the runner-up [-]")
    replicates = replicate_count("difference_se comes from")

    make = Precision
    absent = ("replicates",)


class PlanResultSchema(ResultBase):
    """The plan result contract, ``kind: plan``, ``schema_version`` 1."""

    kind = fields.String(required=True, validate=validate.Equal(KIND))
    objective = fields.String(required=True, validate=validate.OneOf(("mean", "p90", "cvar95")))
    candidates = fields.List(fields.Nested(CandidateSchema), required=True)
    best = fields.Nested(CandidateSchema, required=True)
    frontier = fields.List(fields.Nested(CandidateSchema), required=True)
    all_cloud = fields.Nested(CandidateSchema, required=True)
    work_split = fields.Nested(WorkSplitSchema, required=True)
    saving = _Absent(
        load_default=None,
        metadata={
            "description": "P50 over the draws of the share of the all-cloud cost the best "
            "candidate saves [-] (negative: dearer); null when some draw has no work; absent "
            "in results stored before it"
        },
    )
    value_of_information = fields.Nested(
        ChoiceSchema,
        load_default=None,
        allow_none=True,
        metadata={"description": "absent with one candidate, or in results stored before it"},
    )
    precision = fields.Nested(
        PrecisionSchema,
        load_default=None,
        metadata={"description": "absent with one candidate, or in results stored before it"},
    )
    warnings = fields.List(fields.Nested(AdviceSchema), required=True)
    verdict = fields.String(required=True, metadata={"description": "one-sentence answer"})
    assumptions = fields.List(fields.Nested(AssumptionSchema), required=True)
    carbon_frontier = fields.List(
        fields.Nested(CandidateSchema),
        load_default=None,
        allow_none=True,
        metadata={
            "description": "candidates no other beats on both mean cost and mean emissions; "
            "only in plans that count carbon, null when the emissions are unknown"
        },
    )
    carbon_unknown = fields.List(
        fields.String(validate=validate.OneOf(("burst.api",))),
        load_default=(),
        metadata={"description": "sides of unknown emissions; only in plans that count carbon"},
    )
    staging_saving = fields.Nested(
        StagingSavingSchema,
        load_default=None,
        metadata={
            "description": "what adding servers later saves against the best plan that buys "
            "every server at month 0; only in plans with own.add"
        },
    )

    absent = ("precision", "staging_saving")

    @post_dump(pass_original=True)
    def _no_carbon(self, data: dict, original: Answer, **kwargs: Any) -> dict:
        """A plan that counts no carbon has no carbon keys, as before plans counted it; a plan
        result stored before its saving was a figure is written back without it."""
        if original.result.saving is None:
            data.pop("saving", None)
        if original.result.counts_carbon:
            return data
        for key in ("carbon_frontier", "carbon_unknown"):
            data.pop(key, None)
        for item in (*data["candidates"], *data["frontier"], data["best"], data["all_cloud"]):
            item.pop("carbon", None)
        return data

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> Answer:
        for key in ("candidates", "frontier", "carbon_unknown"):
            data[key] = tuple(data[key])
        if data["carbon_frontier"] is not None:
            data["carbon_frontier"] = tuple(data["carbon_frontier"])
        return self.answer(PlanResult, data)


def result_from_dict(data: Any) -> Answer:
    """Validate and load either JSON result: a plan's (``kind: plan``) or a rent-versus-buy
    scenario's (no ``kind``); raises ``marshmallow.ValidationError``."""
    if isinstance(data, Mapping) and data.get("kind") == KIND:
        return prebuilt(PlanResultSchema).load(data)
    return prebuilt(ResultSchema).load(data)
