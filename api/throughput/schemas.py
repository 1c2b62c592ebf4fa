"""Schemas of the serving-throughput endpoints: the question in the query, the options
(measured or estimated, with P10-P90) and the estimate's calibration out."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from pricing.vocabulary import (
    INSTANCE_LIMITS,
    MODEL_LIMITS,
    SERVING_LIMITS,
    SERVING_PRECISIONS,
    Bound,
)

__all__ = ["CalibrationReportSchema", "ThroughputQuerySchema", "ThroughputSchema"]

#: The most estimated curves one answer draws [GPUs].
MAX_CURVES = 12


def _ranged(bound: Bound, description: str, *, integer: bool = False) -> fields.Field:
    kind = fields.Integer if integer else fields.Float
    return kind(
        load_default=None,
        validate=validate.Range(min=bound.low, max=bound.high, min_inclusive=not bound.low_open),
        metadata={"description": f"{description} {bound.text()}"},
    )


def _positive(description: str) -> fields.Float:
    return fields.Float(
        load_default=None,
        validate=validate.Range(min=0, min_inclusive=False),
        metadata={"description": description},
    )


class ThroughputQuerySchema(Schema):
    """The question: a model, the GPUs and build size, the request shape and the targets."""

    model = fields.String(required=True, metadata={"description": "catalog model id"})
    gpu = fields.List(
        fields.String(),
        load_default=list,
        metadata={"description": "catalog GPU ids (repeat the parameter); none: every GPU"},
    )
    gpus = _ranged(
        INSTANCE_LIMITS["gpu_count"], "GPUs per build (default: each tier)", integer=True
    )
    precision = fields.String(
        load_default=None,
        validate=validate.OneOf(SERVING_PRECISIONS),
        metadata={"description": "fp16, fp8 or fp4 (default: the first the catalog measures)"},
    )
    input_tokens = _ranged(
        SERVING_LIMITS["input_tokens"], "per request, default 1000", integer=True
    )
    output_tokens = _ranged(
        SERVING_LIMITS["output_tokens"], "per request, default 1000", integer=True
    )
    concurrency = _ranged(
        SERVING_LIMITS["concurrency"], "requests in flight on the whole build", integer=True
    )
    min_tokens_per_s_per_user = _positive("per-user speed floor [output tokens/s]")
    max_ttft_ms = _positive("time to first token ceiling [ms]")
    max_tpot_ms = _positive("time per output token ceiling [ms]")
    params_b = _ranged(MODEL_LIMITS["params_b"], "parameters in place of the catalog's count")
    curves = fields.Integer(
        load_default=0,
        validate=validate.Range(min=0, max=MAX_CURVES),
        metadata={
            "description": "also the estimated curves of this many GPUs, best first "
            f"[0, {MAX_CURVES}] (default 0: none)"
        },
    )
    estimate_only = fields.Boolean(
        load_default=False,
        metadata={"description": "estimate every build, also where a measurement holds"},
    )


class _Percentiles(Schema):
    p10 = fields.Float()
    p50 = fields.Float()
    p90 = fields.Float()


class _OptionSchema(Schema):
    gpu = fields.String(metadata={"description": "catalog GPU id"})
    gpus = fields.Integer(metadata={"description": "GPUs of the build [GPU]"})
    gpus_per_replica = fields.Integer(allow_none=True, metadata={"description": "G [GPU]"})
    batch = fields.Float(allow_none=True, metadata={"description": "requests per replica"})
    origin = fields.String(
        metadata={
            "description": "measured (the catalog's row), yours (the server's serving "
            "file) or estimated"
        }
    )
    row_id = fields.String(allow_none=True, metadata={"description": "the measured row"})
    tokens_per_s_per_gpu = fields.Nested(
        _Percentiles,
        metadata={"description": "[tokens/s per GPU, input + output]; measured: P10 = P90"},
    )
    tokens_per_s_per_user = fields.Float(allow_none=True, metadata={"description": "[tokens/s]"})
    ttft_ms = fields.Float(allow_none=True, metadata={"description": "time to first token [ms]"})
    tpot_ms = fields.Float(allow_none=True, metadata={"description": "per output token [ms]"})
    bound = fields.String(allow_none=True, metadata={"description": "memory or compute"})


class _BestSchema(Schema):
    gpus_per_replica = fields.Integer()
    tokens_per_s_per_user = fields.Float()
    ttft_ms = fields.Float()
    tpot_ms = fields.Float()


class _LeftOutSchema(Schema):
    gpu = fields.String()
    gpus = fields.Integer()
    reason = fields.String()
    best = fields.Nested(_BestSchema, allow_none=True, metadata={"description": "at batch 1"})


class _CalibrationSchema(Schema):
    eta_b = fields.Float(metadata={"description": "bandwidth efficiency [-]"})
    eta_f = fields.Float(metadata={"description": "tensor-rate efficiency [-]"})
    o_dec_s = fields.Float(metadata={"description": "fixed time per decode step [s]"})
    o_pre_s = fields.Float(metadata={"description": "fixed time per prefill [s]"})
    eta_moe = fields.Float(metadata={"description": "mixture-of-experts bandwidth share [-]"})
    o_tp_s = fields.Float(
        metadata={"description": "per layer per decode step, PCIe tensor parallel [s]"}
    )
    terms = fields.List(fields.String())
    rows = fields.Integer(metadata={"description": "measured rows fitted"})
    as_of = fields.String()
    loo_median_pct = fields.Float(metadata={"description": "leave-one-out median error [%]"})
    sigma = fields.Float(metadata={"description": "sd of leave-one-out ln ratios [-]"})
    sigma_dense = fields.Float(allow_none=True)
    sigma_moe = fields.Float(allow_none=True)


class _Band(Schema):
    p10 = fields.List(fields.Float())
    p50 = fields.List(fields.Float())
    p90 = fields.List(fields.Float())


class _CurveSchema(Schema):
    gpu = fields.String(metadata={"description": "catalog GPU id"})
    gpus = fields.Integer(metadata={"description": "GPUs of the build [GPU]"})
    gpus_per_replica = fields.Integer(metadata={"description": "G [GPU]"})
    tokens_per_s_per_user = fields.List(
        fields.Float(), metadata={"description": "along the batches, 1 to the option's [tokens/s]"}
    )
    tokens_per_s_per_gpu = fields.Nested(
        _Band,
        metadata={"description": "along the same batches [tokens/s per GPU, input + output]"},
    )


class ThroughputSchema(Schema):
    """Every build of the GPUs asked, most tokens/s per GPU first, and those left out."""

    model = fields.String()
    precision = fields.String()
    input_tokens = fields.Integer()
    output_tokens = fields.Integer()
    sigma = fields.Float(metadata={"description": "lognormal sigma of the estimated options"})
    options = fields.List(fields.Nested(_OptionSchema))
    left_out = fields.List(fields.Nested(_LeftOutSchema))
    calibration = fields.Nested(_CalibrationSchema)
    curves = fields.List(
        fields.Nested(_CurveSchema),
        metadata={
            "description": "with `curves`: tokens/s per GPU (P10/P50/P90) against tokens/s per "
            "user as the batch grows, for the best estimated option of each of the best GPUs"
        },
    )


class _RowRatioSchema(Schema):
    id = fields.String()
    in_sample = fields.Float(metadata={"description": "predicted / measured, full fit"})
    loo = fields.Float(metadata={"description": "predicted / measured, fit without the row"})


class CalibrationReportSchema(_CalibrationSchema):
    """The calibration and each measured row's in-sample and leave-one-out ratio."""

    row_ratios = fields.List(fields.Nested(_RowRatioSchema))
