"""Schemas of ``POST /v1/evaluate``: the query overrides and the result contract (DESIGN sec. 5).

The request body is the version-1 scenario itself (component ``Scenario``, generated from
:class:`scenarios.ScenarioSchema`). The result schemas document the response; the view returns
the engine's result unchanged.
"""

from __future__ import annotations

from marshmallow import Schema, fields, validate

__all__ = ["EvaluateQuerySchema", "ResultSchema"]


def _floats(description: str) -> fields.List:
    return fields.List(
        fields.Float(allow_none=True), required=True, metadata={"description": description}
    )


class EvaluateQuerySchema(Schema):
    """Optional overrides of the scenario's ``simulation`` block."""

    samples = fields.Integer(
        validate=validate.Range(min=1),
        metadata={
            "description": "Monte Carlo draws [-]; overrides simulation.samples. At most "
            "COSTMODEL_MAX_SAMPLES (default 200,000); more is answered 422 naming the limit.",
            "example": 10000,
        },
    )
    seed = fields.Integer(
        validate=validate.Range(0, 2**63 - 1),
        metadata={"description": "random seed [-]; overrides simulation.seed", "example": 42},
    )


class StatsSchema(Schema):
    """Mean and percentiles per utilisation level [USD, present value]."""

    mean = _floats("mean per level")
    p10 = _floats("10th percentile per level")
    p50 = _floats("median per level")
    p90 = _floats("90th percentile per level")


class BandsSchema(Schema):
    """Percentiles per utilisation level; null where undefined."""

    p10 = _floats("10th percentile per level")
    p50 = _floats("median per level")
    p90 = _floats("90th percentile per level")


class BreakevenSchema(Schema):
    """Break-even utilisation [-]: the smallest u with TCO_buy(u) <= TCO_rent(u)."""

    mean = fields.Float(allow_none=True, required=True, metadata={"description": "[-]"})
    p10 = fields.Float(allow_none=True, required=True, metadata={"description": "[-]; null=never"})
    p50 = fields.Float(allow_none=True, required=True, metadata={"description": "[-]; null=never"})
    p90 = fields.Float(allow_none=True, required=True, metadata={"description": "[-]; null=never"})
    prob_always = fields.Float(
        required=True, metadata={"description": "share of draws where buying wins idle [-]"}
    )
    prob_never = fields.Float(
        required=True, metadata={"description": "share of draws where renting wins at u=1 [-]"}
    )


class PaybackSchema(BandsSchema):
    """Payback [month] per utilisation level; null where it is not reached in the horizon."""

    prob_never = _floats("share of draws without payback per level [-]")


class CostPerHourSchema(Schema):
    """Cost per reference GPU-hour [USD/reference GPU-hour]; null at u = 0."""

    buy = fields.Nested(BandsSchema, required=True)
    rent = fields.Nested(BandsSchema, required=True)


class CumulativeSchema(Schema):
    """Cumulative discounted after-tax cost by month at one utilisation [USD], no resale."""

    utilisation = fields.Float(required=True, metadata={"description": "level [-]"})
    months = fields.List(fields.Integer(), required=True, metadata={"description": "0..H"})
    buy = fields.Nested(BandsSchema, required=True)
    rent = fields.Nested(BandsSchema, required=True)


class CatalogRefSchema(Schema):
    """The catalog a result was computed with."""

    version = fields.String(required=True, metadata={"example": "2026.11.29"})
    as_of = fields.String(required=True, metadata={"description": "ISO date"})


class WarningSchema(Schema):
    """A domain warning about the scenario (power, cooling, PCIe lanes, ...)."""

    code = fields.String(required=True)
    severity = fields.String(required=True, validate=validate.OneOf(("info", "warning", "error")))
    message = fields.String(required=True)


class AssumptionSchema(Schema):
    """Where one input's value came from."""

    key = fields.String(required=True, metadata={"example": "buy.electricity_usd_per_kwh"})
    value = fields.Raw(
        required=True, metadata={"description": "a number or a distribution mapping"}
    )
    unit = fields.String(required=True, metadata={"example": "[USD/kWh]"})
    source = fields.String(required=True, metadata={"example": "scenario"})


class DriverSchema(Schema):
    """One uncertain input's Spearman rank correlation with TCO_buy - TCO_rent [-]."""

    input = fields.String(required=True, metadata={"example": "rent.price_annual_change"})
    spearman = fields.Float(
        required=True,
        metadata={"description": "in [-1, 1]; > 0: a higher value makes buying relatively dearer"},
    )


class SensitivitySchema(Schema):
    """What drives the answer, at the utilisation level nearest the report utilisation."""

    utilisation = fields.Float(required=True, metadata={"description": "level [-]"})
    metric = fields.String(required=True, metadata={"example": "buy_tco - rent_tco"})
    inputs = fields.List(
        fields.Nested(DriverSchema), required=True, metadata={"description": "strongest first"}
    )


class ResultSchema(Schema):
    """The result contract, ``schema_version`` 1 (DESIGN sec. 5). Money in USD, present value."""

    schema_version = fields.Integer(required=True, metadata={"example": 1})
    scenario = fields.Dict(
        required=True,
        metadata={"description": "the resolved scenario: every default filled in"},
    )
    seed = fields.Integer(required=True)
    samples = fields.Integer(required=True, metadata={"description": "Monte Carlo draws [-]"})
    method = fields.String(required=True, validate=validate.OneOf(("random", "lhs", "sobol")))
    catalog = fields.Nested(CatalogRefSchema, required=True)
    utilisation = fields.List(fields.Float(), required=True, metadata={"description": "levels [-]"})
    buy_tco = fields.Nested(StatsSchema, required=True)
    rent_tco = fields.Nested(StatsSchema, required=True)
    prob_buy_cheaper = _floats("P(TCO_buy < TCO_rent) per level [-]")
    breakeven_utilisation = fields.Nested(BreakevenSchema, required=True)
    payback_months = fields.Nested(PaybackSchema, required=True)
    cost_per_reference_gpu_hour = fields.Nested(CostPerHourSchema, required=True)
    warnings = fields.List(fields.Nested(WarningSchema), required=True)
    verdict = fields.String(required=True, metadata={"description": "one-sentence summary"})
    cumulative_cost = fields.Nested(CumulativeSchema, required=True)
    assumptions = fields.List(fields.Nested(AssumptionSchema), required=True)
    sensitivity = fields.Nested(
        SensitivitySchema, metadata={"description": "absent in runs stored before it existed"}
    )
