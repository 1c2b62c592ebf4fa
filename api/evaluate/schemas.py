"""Schemas of ``POST /v1/evaluate``: the query overrides, and the result (the engine's own
:class:`~present.schema.ResultSchema`, which serialises the response).

The request body is the version-1 scenario itself (component ``Scenario``, generated from
:class:`scenarios.ScenarioSchema`).
"""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from costmodel.inputs import ModelInputs, input_fields
from present.schema import ResultSchema

__all__ = ["EvaluateQuerySchema", "ResultSchema"]

_SEED = input_fields(ModelInputs)["seed"].metadata["bound"]


class EvaluateQuerySchema(Schema):
    """Optional overrides of the scenario's ``simulation`` block."""

    samples = fields.Integer(
        validate=validate.Range(min=1),
        metadata={
            "description": "Monte Carlo draws [-]; overrides simulation.samples. At most "
            "COSTMODEL_MAX_SAMPLES (default 200,000); more is answered 400 naming the limit, "
            "as any query parameter out of range.",
            "example": 10000,
        },
    )
    seed = fields.Integer(
        validate=validate.Range(int(_SEED.low), int(_SEED.high)),
        metadata={"description": "random seed [-]; overrides simulation.seed", "example": 42},
    )
