"""The JSON form of a market comparison: one marshmallow schema per class of :mod:`.result`,
and :class:`ComparisonSchema` for the whole (``costmodel compare --format json``, the answer of
``POST /v1/compare`` and its OpenAPI document).

Numbers keep the units of the results: costs [USD/unit of work], carbon [g CO2e/unit of work],
prices [USD/GPU], [USD/instance-hour] or [USD/M tokens], throughput [tokens/s per GPU]. No
value is ``null``: a key without a value is left out. A comparison of training work keeps its
keys of old (``cost_per_reference_gpu_hour``, ``reference_gpu``); one by model has ``unit``,
``model``, ``cost_per_unit`` and the API offers' keys instead.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, post_dump, validate

from costmodel.result import Origin
from present.schema import AdviceSchema, BreakevenSchema, CatalogRefSchema, Number
from pricing import PRICING_MODELS

from .request import SERVING_UNIT, TRAINING_UNIT, CompareSchema
from .result import PER_TOKEN, PURCHASE, Comparison, Option
from .wording import from_peaks, option_name, pricing_name, wording

__all__ = ["ComparisonSchema"]


def _money(description: str) -> Number:
    return Number(metadata={"description": description})


class CompareCostSchema(Schema):
    """Cost per unit of work [USD/unit] under the default uncertainty."""

    p10 = _money("10th percentile [USD/unit of work]")
    p50 = _money("median [USD/unit of work]; the options are ranked by it")
    p90 = _money("90th percentile [USD/unit of work]")


class CompareCarbonSchema(Schema):
    """Emissions per unit of work [g CO2e/unit] at the utilisation compared."""

    p10 = _money("10th percentile [g CO2e/unit of work]")
    p50 = _money("median [g CO2e/unit of work]; sort=carbon ranks the options by it")
    p90 = _money("90th percentile [g CO2e/unit of work]")


class OwnedGridSchema(Schema):
    """The grid of the owned options' electricity."""

    id = fields.String(required=True, metadata={"description": "catalog grid id"})
    name = fields.String(required=True)
    g_co2e_per_kwh = Number(metadata={"description": "carbon intensity [g CO2e/kWh]"})


class CitationSchema(Schema):
    """The serving row, estimate or API offer an option of a comparison by model rests on."""

    id = fields.String(
        required=True,
        metadata={
            "description": "the catalog's serving row id or API offer id; for an estimate, "
            "'calibrated roofline'"
        },
    )
    as_of = fields.String(
        required=True, metadata={"description": "its date (an estimate's: its calibration's)"}
    )
    source = fields.String(required=True, metadata={"description": "its citation"})
    origin = fields.String(
        required=True,
        validate=validate.OneOf(("measured", "yours", "estimated", "published")),
        metadata={
            "description": "measured: a catalog serving row; yours: a row of your serving "
            "file; estimated: from the model's architecture and the GPU's specifications; "
            "published: an API offer's price list"
        },
    )
    conditions = fields.String(
        metadata={
            "description": "a serving row's conditions (GPUs per replica, load, framework, "
            "request shape) or an estimate's (GPUs per replica, batch, bound, request shape)"
        }
    )
    sigma = Number(
        metadata={
            "description": "an estimate's error: the sigma of the lognormal factor on its "
            "throughput drawn in the option's cost [-]; absent for a measurement"
        }
    )
    caveats = fields.List(
        fields.String(),
        metadata={
            "description": "the row's conditions that differ from the question (another "
            "request shape, offline, a single stream, replica size not stated)"
        },
    )

    @post_dump
    def _measured_without_sigma(self, data: dict, **kwargs: Any) -> dict:
        if data.get("sigma", ()) is None:
            data.pop("sigma")
        return data


#: The option keys of a comparison by model only, and of training work only.
_SERVING_OPTION_KEYS = ("cost_per_unit", "tokens_per_s_per_gpu", "source")
_TRAINING_OPTION_KEYS = ("cost_per_reference_gpu_hour",)


def _named() -> tuple[fields.Function, fields.Function]:
    """The fields that name an option in words, ranked or ruled out alike: ``name`` and
    ``pricing_name``."""
    return (
        fields.Function(
            option_name,
            metadata={"description": "the option in words: '4 x rtx-4090' or the id"},
        ),
        fields.Function(
            pricing_name, metadata={"description": "'own', or the pricing model in words"}
        ),
    )


class CompareOptionSchema(Schema):
    """One owned, rented or (by model) API option."""

    id = fields.String(
        required=True,
        attribute="key",
        metadata={
            "description": "the option's id, unique in the comparison: the GPU id and GPUs per "
            "server (owned), the instance id and pricing (rented) or the API offer id",
            "example": "rtx-4090:4x",
        },
    )
    catalog_id = fields.String(
        required=True,
        attribute="id",
        metadata={
            "description": "GPU id (owned), instance id (rented) or API offer id",
            "example": "rtx-4090",
        },
    )
    side = fields.String(required=True, validate=validate.OneOf(("buy", "rent", "api")))
    pricing = fields.String(
        required=True,
        validate=validate.OneOf((PURCHASE, *PRICING_MODELS, PER_TOKEN)),
        metadata={"description": "purchase (owned), the pricing model (rented) or per_token"},
    )
    gpu = fields.String(metadata={"description": "GPU id (not for an API)"})
    gpu_count = fields.Integer(
        metadata={"description": "GPUs per server or per instance (not for an API)"}
    )
    cost_per_reference_gpu_hour = fields.Nested(  # the property: one field per attribute
        CompareCostSchema,
        metadata={"description": "training work: cost [USD/reference GPU-hour]"},
    )
    cost_per_unit = fields.Nested(
        CompareCostSchema,
        attribute="cost",
        metadata={"description": "by model: cost [USD/M tokens]"},
    )
    price_usd = _money(
        "the option's price [USD/GPU] (owned), [USD/instance-hour] (rented) or its blended "
        "price [USD/M tokens] (an API)"
    )
    price_source = fields.String(
        required=True,
        metadata={"description": "where the price came from, in words"},
    )
    price_origin = fields.Enum(
        Origin,
        by_value=True,
        required=True,
        metadata={"description": "catalog, or prices: the user's prices file laid over it"},
    )
    warnings = fields.List(fields.Nested(AdviceSchema), required=True)
    name, pricing_name = _named()
    from_peaks = fields.Function(
        from_peaks,
        metadata={
            "description": "its speed is not measured on its GPU: the catalog's estimate or "
            "peak ratios (†)"
        },
    )
    tokens_per_s_per_gpu = Number(
        metadata={"description": "by model, owned and rented: the serving throughput, "
                  "measured or the median of an estimate [tokens/s per GPU]"}
    )  # fmt: skip
    source = fields.Nested(
        CitationSchema,
        metadata={"description": "by model: the serving row, estimate or API offer"},
    )
    carbon_per_unit = fields.Nested(
        CompareCarbonSchema,
        attribute="carbon",
        metadata={
            "description": "emissions [g CO2e/reference GPU-hour, or by model g CO2e/M "
            "tokens]; absent when not known (an API offer: not published), never zero"
        },
    )

    @post_dump(pass_original=True)
    def _in_its_unit(self, data: dict, option: Option, **kwargs: Any) -> dict:
        """Training options keep their keys of old; by model, the cost is ``cost_per_unit``
        and an API has no GPU."""
        training = option.unit == TRAINING_UNIT
        for key in _SERVING_OPTION_KEYS if training else _TRAINING_OPTION_KEYS:
            data.pop(key, None)
        for key in ("gpu", "gpu_count", "carbon_per_unit", *_SERVING_OPTION_KEYS):
            if data.get(key, ()) is None:
                data.pop(key)
        return data


class CompareWordingSchema(Schema):
    """The sentences the comparison is read by, as the CLI prints them."""

    heading = fields.String(required=True, metadata={"description": "what was compared and how"})
    summary = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "the cheapest option of each side and the break-evens"},
    )
    peaks_note = fields.String(
        required=True, metadata={"description": "the footnote to the † of an option's name"}
    )
    left_out = fields.String(
        metadata={
            "description": "by model: the options without a measurement or estimate, too "
            "small or too slow"
        }
    )
    carbon_note = fields.String(
        metadata={"description": "what the carbon column counts (absent when no option's is "
                  "known)"}
    )  # fmt: skip
    unknown_carbon_note = fields.String(
        required=True,
        metadata={"description": "the footnote to the — of an option of unknown carbon"},
    )
    estimated_note = fields.String(
        metadata={
            "description": "by model, the footnote to the § of an option whose throughput is "
            "estimated (absent when none is)"
        }
    )

    @post_dump
    def _drop_empty(self, data: dict, **kwargs: Any) -> dict:
        for key in ("left_out", "carbon_note", "estimated_note"):
            if not data.get(key):
                data.pop(key, None)
        return data


class CompareLeftOutSchema(Schema):
    """An option left out, and why; named in words as a ranked option is."""

    id = fields.String(required=True)
    side = fields.String(required=True, validate=validate.OneOf(("buy", "rent", "api")))
    pricing = fields.String(required=True)
    gpu_count = fields.Integer(required=True, allow_none=True)
    reason = fields.String(required=True)
    name, pricing_name = _named()


class ServedModelSchema(Schema):
    """The model of a comparison by model."""

    id = fields.String(required=True, metadata={"description": "catalog model id"})
    name = fields.String(required=True)
    params_b = Number(metadata={"description": "parameters [billion]"})
    weights_gb = Number(metadata={"description": "its weights at the precision compared [GB]"})


class ReachSchema(Schema):
    """The best the options left out for missing the latency targets reach."""

    tpot_ms = Number(metadata={"description": "least time per output token of any [ms]"})
    ttft_ms = Number(metadata={"description": "least time to first token of any [ms]"})
    tokens_per_s_per_user = Number(
        metadata={"description": "most output tokens/s per user of any [tokens/s]"}
    )


class UnservedSchema(Schema):
    """What a comparison by model leaves out before resolving it."""

    no_measurement_gpus = fields.Integer(
        required=True,
        metadata={
            "description": "GPUs of owned options with neither a measurement of the model nor "
            "an estimate (the GPU's bandwidth or peak, or the model's architecture, unknown)"
        },
    )
    no_measurement_instances = fields.Integer(
        required=True,
        metadata={"description": "instances with neither a measurement nor an estimate"},
    )
    does_not_fit_servers = fields.Integer(
        required=True,
        metadata={
            "description": "owned servers (a GPU at a count) too small for the weights (and "
            "one request's KV cache)"
        },
    )
    does_not_fit_instances = fields.Integer(
        required=True, metadata={"description": "instances too small for the weights"}
    )
    measured_gpus = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "the GPUs with a measurement of the model at the precision"},
    )
    misses_targets_servers = fields.Integer(
        required=True,
        metadata={"description": "owned servers that cannot meet the latency targets"},
    )
    misses_targets_instances = fields.Integer(
        required=True,
        metadata={"description": "instances that cannot meet the latency targets"},
    )
    misses_targets_best = fields.Nested(
        ReachSchema,
        allow_none=True,
        metadata={"description": "the best the options left out for the targets reach"},
    )
    too_slow_servers = fields.Integer(
        required=True,
        metadata={
            "description": "owned servers estimated to serve no request at "
            "min_tokens_per_s_per_user"
        },
    )
    too_slow_instances = fields.Integer(
        required=True,
        metadata={
            "description": "instances estimated to serve no request at min_tokens_per_s_per_user"
        },
    )


#: The answer's keys of a comparison by model only, and of training work only.
_SERVING_ANSWER_KEYS = ("model", "cheapest_api", "breakeven_vs_api", "left_out", "unit")
_TRAINING_ANSWER_KEYS = ("reference_gpu",)


class _Written(fields.Nested):
    """The comparison's sentences, written from it as it is dumped (:func:`.wording.wording`):
    the comparison holds numbers only."""

    def get_value(self, obj: Any, attr: str, accessor: Any = None, default: Any = None) -> Any:
        return wording(obj)


class ComparisonSchema(Schema):
    """Every option ranked by P50 cost per unit of work, cheapest first (or by P50 carbon,
    lowest first, with ``sort: carbon``)."""

    request = fields.Nested(
        CompareSchema, required=True, metadata={"description": "the options, defaults filled in"}
    )
    unit = fields.String(
        validate=validate.OneOf((TRAINING_UNIT, SERVING_UNIT)),
        metadata={"description": "by model: million_tokens, the unit costs are per"},
    )
    model = fields.Nested(ServedModelSchema, metadata={"description": "by model: the model"})
    reference_gpu = fields.String(
        metadata={"description": "training work: the GPU one reference GPU-hour is the work of"}
    )
    catalog = fields.Nested(CatalogRefSchema, required=True)
    grid = fields.Nested(
        OwnedGridSchema,
        metadata={"description": "the owned options' grid (absent: a catalog without grids)"},
    )
    uncertainty = fields.Dict(
        keys=fields.String(),
        values=fields.Float(),
        metadata={
            "description": "relative half-width of the triangular distribution around each "
            "input's value [-]"
        },
    )
    options = fields.List(fields.Nested(CompareOptionSchema), required=True)
    cheapest_buy = fields.Nested(CompareOptionSchema, allow_none=True)
    cheapest_rent = fields.Nested(CompareOptionSchema, allow_none=True)
    cheapest_api = fields.Nested(
        CompareOptionSchema, allow_none=True, metadata={"description": "by model"}
    )
    breakeven_utilisation = fields.Nested(
        BreakevenSchema,
        allow_none=True,
        metadata={"description": "between the cheapest owned and rented option"},
    )
    breakeven_vs_api = fields.Nested(
        BreakevenSchema,
        allow_none=True,
        metadata={"description": "by model: between the cheapest owned option and API offer"},
    )
    left_out_by_min_memory = fields.Integer(
        required=True, metadata={"description": "options left out by min_memory_gb"}
    )
    left_out = fields.Nested(
        UnservedSchema,
        attribute="unserved",
        metadata={
            "description": "by model: options without a measurement, too small or that "
            "cannot meet the latency targets"
        },
    )
    ruled_out = fields.List(
        fields.Nested(CompareLeftOutSchema),
        required=True,
        metadata={"description": "options the advice rules out or that cannot be resolved"},
    )
    wording = _Written(CompareWordingSchema, required=True)

    @post_dump(pass_original=True)
    def _of_its_work(self, data: dict, result: Comparison, **kwargs: Any) -> dict:
        """A comparison of training work keeps its keys of old; one by model has no reference
        GPU."""
        drop = _SERVING_ANSWER_KEYS if result.model is None else _TRAINING_ANSWER_KEYS
        for key in drop:
            data.pop(key, None)
        if result.grid is None:
            data.pop("grid", None)
        return data
