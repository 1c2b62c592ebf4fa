"""What a market comparison is asked: :class:`CompareRequest`, its schema
(:class:`CompareSchema`: the body of ``POST /v1/compare``, the options of ``costmodel compare``)
and :func:`load_request`, with the defaults a request leaves out.

Utilisation is the busy share of wall-clock hours [-], the horizon in [month], GPU memory in
[GB], tokens per request in [tokens], the interactivity floor in [tokens/s per user] and the
latency targets in [ms]. The
unit of work a request's costs are per is :attr:`CompareRequest.unit`: without a ``model``,
training work in reference GPU-hours (``"reference_gpu_hour"``); with one, serving it in
millions of tokens, input + output (``"million_tokens"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from marshmallow import (
    Schema,
    ValidationError,
    fields,
    post_dump,
    post_load,
    validate,
    validates_schema,
)

from costmodel.inputs import MAX_SAMPLES, MIN_UTILISATION, ModelInputs, input_fields
from pricing import PRECISIONS, SERVING_PRECISIONS
from pricing.vocabulary import GPU_LIMITS, SERVING_LIMITS, TIERS

from ..errors import ScenarioError, flatten_messages
from ..schema import WORK_ONLY, BoundRange, InlineModelSchema, Ref, UtilisationFloor
from ..sidecarbon import DEFAULT_GRID

__all__ = ["SORTS", "CompareRequest", "CompareSchema", "load_request"]

#: Draws per option unless asked otherwise.
DEFAULT_SAMPLES = 2000
#: Tokens per request, input and output alike, unless asked otherwise [tokens].
DEFAULT_TOKENS = 1000
#: The precision of training work unless asked otherwise.
TRAINING_PRECISION = "fp16"
#: The units of work: training (no model) and serving a model.
TRAINING_UNIT, SERVING_UNIT = "reference_gpu_hour", "million_tokens"
#: What the options can be ranked by: P50 cost per unit of work (the default), or P50 carbon.
SORTS = ("cost", "carbon")

_HORIZON = input_fields(ModelInputs)["horizon_months"].metadata["bound"]
_SEED = input_fields(ModelInputs)["seed"].metadata["bound"]
_MEMORY = GPU_LIMITS["memory_gb"]
#: The request keys of a comparison by model: the workload keys of inference work.
_SERVING_KEYS = WORK_ONLY["inference"]
#: The latency targets among them.
_LATENCY_KEYS = ("max_tpot_ms", "max_ttft_ms")


@dataclass(frozen=True)
class CompareRequest:
    """What to compare.

    Attributes:
        utilisation: busy share of wall-clock hours [-], in (0, 1].
        precision: picks the catalog throughput: ``"fp32" | "fp16" | "int8"`` for training
            work (``None``: fp16); with a ``model``, ``"fp16" | "fp8" | "fp4"`` (``None``: the
            first precision the catalog measures the model at, in that order).
        horizon_months: months of ownership or rental [month].
        min_memory_gb: GPUs with less memory are left out [GB]; ``None``: none.
        tier: keep the rented instances of this kind of provider (``"hyperscaler" |
            "neocloud" | "marketplace"``); ``None``: all. Owned options and API offers are not
            filtered.
        samples: draws per option [draw]. seed: random seed [-].
        model: catalog model id, or an inline model (a mapping of a scenario's inline model
            keys, with its architecture): compare serving it, by cost per M tokens; ``None``:
            training work, by cost per reference GPU-hour.
        input_tokens, output_tokens: tokens per request of the model's work [tokens].
        min_tokens_per_s_per_user: only serving measurements that serve each request at least
            this fast [tokens/s]; ``None``: any.
        max_tpot_ms, max_ttft_ms: latency targets, time per output token and to the first
            token [ms]: each option serves at the estimate's operating point meeting them
            (a measurement counts only where it measured them); an option that cannot meet them
            is left out and counted. ``None``: no target.
        grid: catalog grid id of the owned options' electricity (default the US average).
        sort: ``"cost"`` (P50 cost, cheapest first) or ``"carbon"`` (P50 carbon, lowest first,
            the options of unknown carbon last).
    """

    utilisation: float
    precision: str | None = None
    horizon_months: int = 36
    min_memory_gb: float | None = None
    tier: str | None = None
    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    model: str | Mapping[str, Any] | None = None
    input_tokens: int = DEFAULT_TOKENS
    output_tokens: int = DEFAULT_TOKENS
    min_tokens_per_s_per_user: float | None = None
    max_tpot_ms: float | None = None
    max_ttft_ms: float | None = None
    grid: str = DEFAULT_GRID
    sort: str = SORTS[0]

    @property
    def unit(self) -> str:
        """The unit of work costs are per: ``"reference_gpu_hour"`` or ``"million_tokens"``."""
        return TRAINING_UNIT if self.model is None else SERVING_UNIT


def _model_id(value: Any) -> None:
    """A catalog model id is at most 200 characters (an inline model is checked by its
    schema)."""
    if isinstance(value, str) and len(value) > 200:
        raise ValidationError("a model id is at most 200 characters")


def _tokens(name: str, description: str) -> fields.Field:
    return fields.Integer(
        load_default=DEFAULT_TOKENS,
        strict=True,
        validate=BoundRange(SERVING_LIMITS[name]),
        metadata={"description": description, "unit": "[tokens]"},
    )


def _latency(name: str, what: str) -> fields.Field:
    return fields.Float(
        load_default=None,
        allow_none=True,
        allow_nan=False,
        validate=BoundRange(SERVING_LIMITS[name]),
        metadata={
            "description": f"with a model: serve each request within this {what}; an option "
            "that cannot is left out and counted",
            "unit": "[ms]",
        },
    )


class CompareSchema(Schema):
    """The options of a comparison (the body of ``POST /v1/compare``)."""

    utilisation = fields.Float(
        required=True,
        allow_nan=False,
        validate=UtilisationFloor(zero=False),
        metadata={
            "description": f"busy share of wall-clock hours, in [{MIN_UTILISATION:g}, 1]",
            "unit": "[-]",
            "example": 0.5,
        },
    )
    precision = fields.String(
        load_default=None,
        validate=validate.OneOf(tuple(dict.fromkeys(PRECISIONS + SERVING_PRECISIONS))),
        metadata={
            "description": "numeric precision of the work; picks the catalog throughput "
            f"(training: {', '.join(PRECISIONS)}, default {TRAINING_PRECISION}; with a model: "
            f"{', '.join(SERVING_PRECISIONS)}, default the first the catalog measures it at)"
        },
    )
    horizon_months = fields.Integer(
        load_default=36,
        strict=True,
        validate=validate.Range(int(_HORIZON.low), int(_HORIZON.high)),
        metadata={"description": "months of ownership or rental", "unit": "[month]"},
    )
    min_memory_gb = fields.Float(
        load_default=None,
        allow_none=True,
        allow_nan=False,
        validate=validate.Range(_MEMORY.low, _MEMORY.high),
        metadata={"description": "leave out GPUs with less memory", "unit": "[GB]"},
    )
    tier = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.OneOf(TIERS),
        metadata={"description": "keep the rented instances of this kind of provider"},
    )
    samples = fields.Integer(
        load_default=DEFAULT_SAMPLES,
        strict=True,
        validate=validate.Range(1, MAX_SAMPLES),
        metadata={"description": "Monte Carlo draws per option", "unit": "[draw]"},
    )
    seed = fields.Integer(
        load_default=0,
        strict=True,
        validate=validate.Range(int(_SEED.low), int(_SEED.high)),
        metadata={"description": "random seed", "unit": "[-]"},
    )
    model = Ref(
        InlineModelSchema,
        "catalog model id (llama-3.3-70b): rank the options of serving it by cost per M "
        "tokens, with the API offers of the model; or a model the catalog lacks, inline with "
        "its architecture (name, params_b, layers, kv_heads, head_dim, ...), compared at its "
        "estimated throughput; left out: training work",
        load_default=None,
        allow_none=True,
        validate=_model_id,
    )
    input_tokens = _tokens("input_tokens", "with a model: input tokens per request")
    output_tokens = _tokens("output_tokens", "with a model: output tokens per request")
    min_tokens_per_s_per_user = fields.Float(
        load_default=None,
        allow_none=True,
        allow_nan=False,
        validate=BoundRange(SERVING_LIMITS["tokens_per_s_per_user"]),
        metadata={
            "description": "with a model: only measurements that serve each request at least "
            "this fast",
            "unit": "[tokens/s]",
        },
    )
    max_tpot_ms = _latency("tpot_ms", "time per output token")
    max_ttft_ms = _latency("ttft_ms", "time to first token (queueing before admission not counted)")
    grid = fields.String(
        load_default=DEFAULT_GRID,
        validate=validate.Length(min=1, max=100),
        metadata={
            "description": "catalog grid id of the owned options' electricity, for their "
            "carbon: a country (US), a US eGRID subregion (CAMX) or a cloud region "
            "(aws/us-east-1); rented options use their region's",
            "example": "US",
        },
    )
    sort = fields.String(
        load_default=SORTS[0],
        validate=validate.OneOf(SORTS),
        metadata={
            "description": "rank by P50 cost (cheapest first) or P50 carbon (lowest first, "
            "the options of unknown carbon last)"
        },
    )

    @validates_schema(pass_original=True)
    def _kind(self, data: dict, original: Any, **kwargs: Any) -> None:
        """The serving keys need a model, and each kind of work has its own precisions."""
        given = original if isinstance(original, Mapping) else {}
        precision, errors = data.get("precision"), {}
        if data.get("model") is None:
            for key in _SERVING_KEYS[1:]:
                if given.get(key) is not None:
                    errors[key] = ["only with a model (comparing the serving of it)"]
            if precision is not None and precision not in PRECISIONS:
                errors["precision"] = [
                    f"training work is measured at {', '.join(PRECISIONS)}, got {precision!r}; "
                    "give a model to compare serving it"
                ]
        elif precision is not None and precision not in SERVING_PRECISIONS:
            errors["precision"] = [
                f"serving is measured at {', '.join(SERVING_PRECISIONS)}, got {precision!r}"
            ]
        if errors:
            raise ValidationError(errors)

    @post_load
    def _request(self, data: dict, **kwargs: Any) -> CompareRequest:
        return CompareRequest(**data)

    @post_dump
    def _drop_serving(self, data: dict, **kwargs: Any) -> dict:
        """A comparison of training work shows none of the serving keys, and one without
        latency targets none of theirs (added later: earlier answers keep their form)."""
        for key in _SERVING_KEYS if data.get("model") is None else ():
            data.pop(key, None)
        for key in _LATENCY_KEYS:
            if data.get(key) is None:
                data.pop(key, None)
        return data


def load_request(data: Mapping[str, Any], source: str = "<request>") -> CompareRequest:
    """A :class:`CompareRequest` from a mapping; a :class:`ScenarioError` with every key path
    when it is invalid."""
    schema = CompareSchema()
    try:
        return schema.load(data)
    except ValidationError as exc:
        raise ScenarioError(source, flatten_messages(exc.messages, schema)) from None
