"""The version-1 scenario schema, shared by the YAML loader, the HTTP API and the JSON Schema.

Loading validates types, ranges and distribution forms and returns plain dicts whose *dist*
fields hold :class:`costmodel.distributions.Distribution` objects; fields left out are ``None``
(or their fixed default) and are filled from the catalog by :mod:`scenarios.resolve`.

No range, unit or vocabulary is written here: the engine inputs' field metadata give the units,
descriptions and ranges of every input (:mod:`costmodel.inputs`), and :mod:`pricing.vocabulary`
gives the catalog's words and the ranges of inline GPUs and instances. A value is therefore
refused where it is typed, with the same message the engine or the catalog would give. One
exception: a utilisation above 0 must be at least :data:`MIN_UTILISATION` (the cost per hour of
work at a smaller one is too large to compute), which scenarios and comparisons share.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import MISSING
from typing import Any, ClassVar

from marshmallow import (
    Schema,
    ValidationError,
    fields,
    post_dump,
    post_load,
    validate,
    validates_schema,
)

from costmodel.distributions import DistributionError
from costmodel.inputs import (
    FINANCING_KEYS,
    MAX_FLEET,
    MAX_HORIZON,
    MAX_LEVELS,
    MAX_TRIGGER,
    MAX_TRIGGERS,
    MIN_UTILISATION,
    UTILISATION,
    Addition,
    ApiInputs,
    BuyInputs,
    CarbonInputs,
    Demand,
    Financing,
    HostedCarbon,
    ModelInputs,
    OwnedCarbon,
    PlanInputs,
    RentedCarbon,
    RentInputs,
    financing_problems,
    input_fields,
)
from costmodel.sides import SIDES, Side
from present.prebuilt import prebuilt
from pricing.vocabulary import (
    ARCHITECTURE,
    GPU_LIMITS,
    INSTANCE_LIMITS,
    INTERCONNECTS,
    MODEL_LIMITS,
    PRECISIONS,
    RESERVED_PRICINGS,
    SERVING_LIMITS,
    SERVING_PRECISIONS,
    Bound,
    written,
)

from .distspec import from_spec, to_spec

__all__ = [
    "CARBON_KEYS",
    "DistField",
    "GridField",
    "further_schema",
    "further_sides",
    "PlanSchema",
    "SCHEMA_VERSION",
    "ScenarioSchema",
    "UtilisationFloor",
]

SCHEMA_VERSION = 1


class BoundRange(validate.Range):
    """A :class:`marshmallow.validate.Range` from a :class:`~pricing.vocabulary.Bound`, with its
    message ("must be <= 2000 [W], got 2500"); apispec reads it as minimum/maximum."""

    def __init__(self, bound: Bound) -> None:
        self.bound = bound
        low = None if math.isinf(bound.low) else bound.low
        high = None if math.isinf(bound.high) else bound.high
        super().__init__(low, high, min_inclusive=not bound.low_open)

    def __call__(self, value: Any) -> Any:
        problem = self.bound.problem(value)
        if problem:
            raise ValidationError(problem)
        return value


class DistField(fields.Field):
    """A number, or a distribution mapping ``{dist: ..., ...}``; every possible value in range.

    An unbounded normal or lognormal for a bounded quantity is refused with a hint to give
    ``low``/``high``.
    """

    def __init__(self, unit: str, description: str, bound: Bound, **kwargs: Any) -> None:
        self.bound = bound
        metadata = {"description": description, "unit": unit, "x-dist": True}
        if not kwargs.get("required"):
            kwargs.setdefault("load_default", None)
            kwargs.setdefault("allow_none", True)
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any):
        try:
            dist = from_spec(value)
        except DistributionError as exc:
            raise ValidationError(str(exc)) from None
        except TypeError as exc:  # a parameter given as a list or mapping
            raise ValidationError(f"invalid distribution parameters: {exc}") from None
        lo, hi = dist.support()
        if self.bound.problem(lo) or self.bound.problem(hi):
            hint = " (give low/high bounds to truncate it)" if math.isinf(lo - hi) else ""
            raise ValidationError(
                f"values must lie in {self.bound.text()}, but this input spans "
                f"[{written(lo)}, {written(hi)}]{hint}"
            )
        return dist

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any):
        return None if value is None else to_spec(value)


class GridField(DistField):
    """A grid's carbon intensity: a catalog grid id (an ISO country code, a US eGRID
    subregion or a cloud region, kept as text for resolution) or a number or distribution."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any):
        if isinstance(value, str):
            if not value.strip():
                raise ValidationError("must be a catalog grid id, a number or a distribution")
            return value.strip()
        return super()._deserialize(value, attr, data, **kwargs)

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any):
        return value if isinstance(value, str) else super()._serialize(value, attr, obj, **kwargs)


class Ref(fields.Field):
    """A catalog id (string) or an inline mapping validated by ``schema``."""

    def __init__(self, schema: type[Schema], description: str, **kwargs: Any) -> None:
        self.schema_cls = schema
        super().__init__(metadata={"description": description}, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any):
        if isinstance(value, str):
            if not value.strip():
                raise ValidationError("must be a catalog id or an inline mapping, got ''")
            return value.strip()
        if isinstance(value, dict):
            return prebuilt(self.schema_cls).load(value)
        raise ValidationError(
            f"must be a catalog id (string) or an inline mapping, got {type(value).__name__}"
        )

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any):
        """An inline mapping without the keys of its schema's ``unset`` left out."""
        if isinstance(value, dict):
            return _drop_none(dict(value), getattr(self.schema_cls, "unset", ()))
        return value


def _bounded(
    kind: type[fields.Field], bound: Bound, description: str, unit: str = "", **kwargs: Any
) -> fields.Field:
    """A number in ``bound``; its ``unit`` (else the bound's) in the metadata beside the
    description, not in it."""
    if kind is fields.Integer:
        kwargs.setdefault("strict", True)
    else:
        kwargs.setdefault("allow_nan", False)
    metadata = {"description": description, "unit": unit or bound.unit}
    return kind(validate=BoundRange(bound), metadata=metadata, **kwargs)


def _input(cls: type, name: str, **kwargs: Any) -> fields.Field:
    """The schema field of engine input ``name`` of ``cls``, from its metadata; a plain input
    (not a distribution) that has a default in the engine takes it as its own, so each default
    is written once. A distribution left out stays ``None``: resolution fills it (from the
    catalog, or the field's documented default) and records where it came from."""
    f = input_fields(cls)[name]
    meta = f.metadata
    if not meta.get("dist") and f.default is not MISSING and not kwargs.get("required"):
        default = f.default
        kwargs.setdefault("load_default", list(default) if isinstance(default, tuple) else default)
    if "choices" in meta:
        return fields.String(
            validate=validate.OneOf(meta["choices"]),
            metadata={"description": meta["text"]},
            **kwargs,
        )
    if "bound" not in meta:  # a flag
        return fields.Boolean(metadata={"description": meta["text"]}, **kwargs)
    bound = meta["bound"]
    if meta["dist"]:
        return DistField(meta["unit"], meta["text"], bound, **kwargs)
    kind = fields.Integer if bound.integer else fields.Float
    return _bounded(kind, bound, meta["text"], meta["unit"], **kwargs)


def _grid(cls: type) -> GridField:
    """The ``grid`` key of a side: its engine input's unit, text and range."""
    meta = input_fields(cls)["grid"].metadata
    return GridField(meta["unit"], f"{meta['text']}: a catalog grid id, or a value", meta["bound"])


def _limit(limits: dict[str, Bound], name: str, description: str, **kwargs: Any) -> fields.Field:
    bound = limits[name]
    kind = fields.Integer if bound.integer else fields.Float
    return _bounded(kind, bound, description, **kwargs)


class _Base(Schema):
    """Unknown keys are errors (marshmallow's default, RAISE). The keys of ``unset`` are left
    out of a dumped document when ``None``: keys added after the first documents were stored,
    or of another kind of work, so that documents written without them keep their cache keys."""

    unset: ClassVar[tuple[str, ...]] = ()

    @post_dump
    def _drop_unset(self, data: dict, **kwargs: Any) -> dict:
        return _drop_none(data, self.unset)


class InlineGPUSchema(_Base):
    """A GPU the catalog lacks; ranges as for catalog rows."""

    name = fields.String(
        required=True,
        validate=validate.Length(min=1, max=200),
        metadata={"description": "the GPU's name"},
    )
    memory_gb = _limit(GPU_LIMITS, "memory_gb", "memory", required=True)
    tdp_w = _limit(GPU_LIMITS, "tdp_w", "board power at peak", required=True)
    price_usd = _limit(GPU_LIMITS, "price_usd", "price of one GPU", required=True)
    fp32_tflops = _limit(GPU_LIMITS, "fp32_tflops", "FP32 peak", load_default=None)
    fp16_tflops = _limit(GPU_LIMITS, "fp16_tflops", "dense FP16 tensor peak", load_default=None)
    int8_tops = _limit(GPU_LIMITS, "int8_tops", "dense INT8 tensor peak", load_default=None)
    idle_w = _limit(GPU_LIMITS, "idle_w", "draw when powered but idle", load_default=None)
    bandwidth_gbs = _limit(
        GPU_LIMITS, "bandwidth_gbs", "memory bandwidth, for a serving estimate", load_default=None
    )
    arch = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=100),
        metadata={
            "description": "architecture, for a serving estimate: its fp8 and fp4 tensor cores "
            "(Ada Lovelace, Hopper, Blackwell, CDNA 3 and CDNA 4 have fp8; Blackwell and CDNA 4 "
            "fp4)"
        },
    )

    unset = ("bandwidth_gbs", "arch")

    @validates_schema
    def _idle_below_tdp(self, data: dict, **kwargs: Any) -> None:
        idle, tdp = data.get("idle_w"), data.get("tdp_w")
        if idle is not None and tdp is not None and idle > tdp:
            raise ValidationError(f"must be <= tdp_w ({tdp:g} [W]), got {idle:g}", "idle_w")


class InlineInstanceSchema(_Base):
    """A cloud instance the catalog lacks; ranges as for catalog rows."""

    name = fields.String(
        required=True,
        validate=validate.Length(min=1, max=200),
        metadata={"description": "the instance's name"},
    )
    gpu = Ref(InlineGPUSchema, "catalog GPU id or inline GPU", required=True)
    gpu_count = _limit(INSTANCE_LIMITS, "gpu_count", "GPUs per instance", required=True)
    on_demand_usd_per_hour = _limit(
        INSTANCE_LIMITS, "on_demand_usd_per_hour", "on-demand price", required=True
    )
    spot_usd_per_hour = _limit(INSTANCE_LIMITS, "usd_per_hour", "spot price", load_default=None)
    reserved_1y_usd_per_hour = _limit(
        INSTANCE_LIMITS, "usd_per_hour", "1-year reservation price", load_default=None
    )
    reserved_3y_usd_per_hour = _limit(
        INSTANCE_LIMITS, "usd_per_hour", "3-year reservation price", load_default=None
    )
    interconnect = fields.String(
        validate=validate.OneOf(INTERCONNECTS),
        load_default=None,
        metadata={"description": "link between the instance's GPUs"},
    )


_LEVEL = input_fields(ModelInputs)["utilisation"].metadata["bound"]
_COUNT = Bound(0, MAX_FLEET, "[count]", integer=True)


class UtilisationFloor(BoundRange):
    """A utilisation [-] in [0, 1] that is 0 or at least :data:`MIN_UTILISATION` (``zero``),
    else one that must be busy: in [:data:`MIN_UTILISATION`, 1]. A level above 0 but below
    the floor is refused with why. apispec reads the range as minimum and maximum (the floor
    when 0 is refused); :func:`scenarios.jsonschema.field_schema` states the gap between 0 and
    the floor of a level that may be 0."""

    def __init__(self, zero: bool = True) -> None:
        super().__init__(_LEVEL)
        self.zero = zero
        if not zero:
            self.min = MIN_UTILISATION

    def __call__(self, value: float) -> float:
        if value < MIN_UTILISATION and (value > 0 or not self.zero):
            least = f"{'0 or ' if self.zero else ''}at least {MIN_UTILISATION:g} [-]"
            why = (
                ": at a smaller busy share the cost per hour of work is too large to compute"
                if value > 0
                else ""
            )
            raise ValidationError(f"must be {least}, got {value:g}{why}")
        return super().__call__(value)


def _level(description: str, **kwargs: Any) -> fields.Field:
    """A utilisation level [-]: in [0, 1], and 0 or at least :data:`MIN_UTILISATION`."""
    metadata = {"description": description, "unit": _LEVEL.unit}
    return fields.Float(validate=UtilisationFloor(), allow_nan=False, metadata=metadata, **kwargs)


class UtilisationRangeSchema(_Base):
    """Evenly spaced utilisation levels from ``start`` to ``stop``."""

    start = _level("first level", required=True)
    stop = _level("last level", required=True)
    step = _bounded(fields.Float, Bound(0.001, 1, "[-]"), "step", required=True)

    @validates_schema
    def _ordered(self, data: dict, **kwargs: Any) -> None:
        if data["start"] > data["stop"]:
            raise ValidationError(
                f"start ({data['start']:g}) is greater than stop ({data['stop']:g})", "start"
            )

    @post_load
    def _levels(self, data: dict, **kwargs: Any) -> list[float]:
        count = int(math.floor((data["stop"] - data["start"]) / data["step"] + 1e-9)) + 1
        return [round(data["start"] + i * data["step"], 10) for i in range(count)]


class Utilisation(fields.Field):
    """A list of levels in [0, 1] or ``{start, stop, step}``; at most ``MAX_LEVELS`` levels."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            metadata={
                "description": "utilisation levels: a list of numbers in [0, 1], each 0 or at "
                f"least {MIN_UTILISATION:g}, or {{start, stop, step}}; at most {MAX_LEVELS} levels",
                "unit": _LEVEL.unit,
            },
            **kwargs,
        )

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any):
        if isinstance(value, dict):
            levels = prebuilt(UtilisationRangeSchema).load(value)
        elif isinstance(value, list):
            item = _level("level")
            levels = fields.List(item, validate=validate.Length(min=1)).deserialize(value)
        else:
            raise ValidationError("must be a list of levels or {start, stop, step}")
        if len(levels) > MAX_LEVELS:
            raise ValidationError(f"at most {MAX_LEVELS} utilisation levels, got {len(levels)}")
        return sorted(set(levels))


class Correlation(fields.Field):
    """``[input name, input name, Spearman rho]``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(metadata={"description": "[input, input, Spearman rho]"}, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any):
        if (
            not isinstance(value, list | tuple)
            or len(value) != 3
            or not all(isinstance(v, str) for v in value[:2])
            or isinstance(value[2], bool)
            or not isinstance(value[2], int | float)
        ):
            raise ValidationError(
                "must be [input name, input name, rho], e.g. "
                "[buy.electricity_usd_per_kwh, rent.price_annual_change, 0.3]"
            )
        if not -1 < value[2] < 1:
            raise ValidationError(f"rho must be in (-1, 1), got {value[2]}")
        return (value[0], value[1], float(value[2]))

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any):
        return None if value is None else list(value)


def _nested(schema: type[Schema]) -> Callable[[], dict]:
    return lambda: prebuilt(schema).load({})


class DrawsSchema(_Base):
    """How the Monte Carlo draws are made (a plan's ``simulation``)."""

    samples = _input(ModelInputs, "samples")
    seed = _input(ModelInputs, "seed")
    method = _input(ModelInputs, "method")


def _drop_none(data: dict, keys: tuple[str, ...]) -> dict:
    """``data`` without those of ``keys`` that are ``None`` (keys that were not given)."""
    for key in keys:
        if data.get(key) is None:
            data.pop(key, None)
    return data


#: Keys of a scenario's ``simulation`` left out of its resolved document when not given, so that
#: scenarios written before they existed keep their cache keys.
_OPTIONAL_SIMULATION = ("target_halfwidth", "max_samples")


class SimulationSchema(DrawsSchema):
    """How the Monte Carlo draws are made, and how precise the break-even P50 must be."""

    target_halfwidth = _input(ModelInputs, "target_halfwidth")
    max_samples = _input(ModelInputs, "max_samples")

    unset = _OPTIONAL_SIMULATION


#: The keys of an inline model besides its name and parameters, left out of a dumped document
#: when not given (documents written before them keep their cache keys).
_INLINE_MODEL_UNSET = ("active_params_b", *ARCHITECTURE, "arch_source", "config")


class InlineModelSchema(_Base):
    """A model the catalog lacks: its parameters, and where known its architecture (typed, or
    read from a Hugging Face ``config.json`` named by ``config``, a path relative to the
    scenario file). Without serving rows, every side gives its throughput."""

    name = fields.String(
        required=True,
        validate=validate.Length(min=1, max=200),
        metadata={"description": "the model's name"},
    )
    params_b = _limit(
        MODEL_LIMITS,
        "params_b",
        "parameters, every expert counted (default: counted from config)",
        load_default=None,
    )
    active_params_b = _limit(
        MODEL_LIMITS,
        "params_b",
        "parameters active per token of a mixture of experts",
        load_default=None,
    )
    layers = _limit(MODEL_LIMITS, "layers", "transformer layers", load_default=None)
    kv_heads = _limit(MODEL_LIMITS, "kv_heads", "key/value heads", load_default=None)
    head_dim = _limit(MODEL_LIMITS, "head_dim", "values per head", load_default=None)
    kv_dim_per_layer = _limit(
        MODEL_LIMITS,
        "kv_dim_per_layer",
        "values cached per token and layer by compressed attention (MLA), instead of kv_heads "
        "and head_dim",
        load_default=None,
    )
    sliding_window_layers = _limit(
        MODEL_LIMITS,
        "sliding_window_layers",
        "layers that attend to a sliding window only",
        load_default=None,
    )
    sliding_window = _limit(MODEL_LIMITS, "sliding_window", "that window", load_default=None)
    arch_source = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=2000),
        metadata={"description": "where the architecture values come from"},
    )
    config = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=4096),
        metadata={
            "description": "a Hugging Face config.json to read the architecture from (a path "
            "relative to the scenario file); the keys given here win over it"
        },
    )

    unset = _INLINE_MODEL_UNSET

    @validates_schema
    def _parameters(self, data: dict, **kwargs: Any) -> None:
        if data.get("params_b") is None and data.get("config") is None:
            raise ValidationError(
                "required, unless config names a config.json to count them from", "params_b"
            )
        active, total = data.get("active_params_b"), data.get("params_b")
        if active is not None and total is not None and active > total:
            message = f"must be <= params_b ({total:g}), got {active:g}"
            raise ValidationError(message, "active_params_b")


#: The kinds of work, and the unit each counts.
WORK_KINDS = ("training", "inference")
#: Per kind of work: the workload keys of that kind only, those it requires, the precisions it
#: is measured at, a side's throughput key and the scenario's blocks of that kind only (the
#: JSON Schema states the same rules, :mod:`scenarios.jsonschema`).
WORK_ONLY = {
    "training": ("reference_gpu",),
    "inference": (
        "model",
        "input_tokens",
        "output_tokens",
        "min_tokens_per_s_per_user",
        "max_tpot_ms",
        "max_ttft_ms",
    ),
}
WORK_REQUIRED = {"training": (), "inference": ("model", "input_tokens", "output_tokens")}
WORK_PRECISIONS = {"training": PRECISIONS, "inference": SERVING_PRECISIONS}
WORK_THROUGHPUT = {"training": "relative_throughput", "inference": "tokens_per_s_per_gpu"}
WORK_BLOCKS = {"training": (), "inference": ("api",)}
_REFERENCE_GPU = "v100-sxm2-16gb"


class WorkloadSchema(_Base):
    """What work the GPUs do, and the unit it is counted in: training work in reference
    GPU-hours, or serving a model in millions of tokens of requests of one shape."""

    kind = fields.String(
        validate=validate.OneOf(WORK_KINDS),
        load_default="training",
        metadata={"description": "training (reference GPU-hours) or inference (M tokens)"},
    )
    precision = fields.String(
        validate=validate.OneOf(tuple(dict.fromkeys(PRECISIONS + SERVING_PRECISIONS))),
        load_default="fp16",
        metadata={
            "description": "numeric precision of the work; picks the catalog throughput "
            f"(training: {', '.join(PRECISIONS)}; inference: {', '.join(SERVING_PRECISIONS)})"
        },
    )
    reference_gpu = fields.String(
        load_default=None,
        validate=validate.Length(min=1),
        metadata={"description": "training: catalog GPU id, the unit of normalised work"},
    )
    min_gpu_memory_gb = _limit(
        GPU_LIMITS, "memory_gb", "GPUs with less memory are refused", load_default=None
    )
    model = Ref(InlineModelSchema, "inference: catalog model id or inline model", load_default=None)
    input_tokens = _limit(
        SERVING_LIMITS, "input_tokens", "inference: input tokens per request", load_default=None
    )
    output_tokens = _limit(
        SERVING_LIMITS, "output_tokens", "inference: output tokens per request", load_default=None
    )
    min_tokens_per_s_per_user = _limit(
        SERVING_LIMITS,
        "tokens_per_s_per_user",
        "inference: only operating points that serve each request at least this fast",
        load_default=None,
    )
    max_tpot_ms = _limit(
        SERVING_LIMITS,
        "tpot_ms",
        "inference: only operating points whose time per output token is at most this; a "
        "measured row counts only where it measured it, else the estimate at the targets",
        load_default=None,
    )
    max_ttft_ms = _limit(
        SERVING_LIMITS,
        "ttft_ms",
        "inference: only operating points whose time to first token is at most this "
        "(queueing before admission not counted); a measured row counts only where it "
        "measured it, else the estimate at the targets",
        load_default=None,
    )

    @validates_schema
    def _kind(self, data: dict, **kwargs: Any) -> None:
        kind = data["kind"]
        other = WORK_KINDS[1 - WORK_KINDS.index(kind)]
        errors: dict[str, list[str]] = {}
        for key in WORK_ONLY[other]:
            if data.get(key) is not None:
                errors[key] = [f"only for {other} work (workload.kind: {other})"]
        for key in WORK_REQUIRED[kind]:
            if data.get(key) is None:
                errors[key] = [f"required for {kind} work"]
        if data["precision"] not in WORK_PRECISIONS[kind]:
            errors["precision"] = [
                f"{kind} work is measured at {', '.join(WORK_PRECISIONS[kind])}, "
                f"got {data['precision']!r}"
            ]
        if errors:
            raise ValidationError(errors)

    @post_load
    def _reference(self, data: dict, **kwargs: Any) -> dict:
        if data["kind"] == "training" and data["reference_gpu"] is None:
            data["reference_gpu"] = _REFERENCE_GPU
        return data

    @post_dump
    def _drop_unset(self, data: dict, **kwargs: Any) -> dict:
        """Keys of the other kind of work are left out, and ``kind`` for training work, so
        that training scenarios written before inference existed keep their cache keys."""
        if data.get("kind") == "training":
            data.pop("kind")
        return _drop_none(data, WORK_ONLY["training"] + WORK_ONLY["inference"])


#: A whole server's price [USD]: up to the largest build of the most expensive GPUs.
_SERVER_PRICE = Bound(0, INSTANCE_LIMITS["gpu_count"].high * GPU_LIMITS["price_usd"].high, "[USD]")

#: A price per GPU-hour [USD/GPU-hour], in the range of an instance's.
_GPU_HOUR_PRICE = Bound(0, INSTANCE_LIMITS["usd_per_hour"].high, "[USD/GPU-hour]")

#: A side's throughput keys, one per kind of work: the other is left out of its document.
_THROUGHPUTS = tuple(WORK_THROUGHPUT.values())
#: The keys a rented block's document leaves out when not given: the throughput of the other
#: kind of work, and the price per GPU-hour (resolved into the price per instance-hour).
_RENT_UNSET = (*_THROUGHPUTS, "price_usd_per_gpu_hour", "throughput_error")
#: Owned keys added after the first scenarios were stored, left out of the resolved document
#: when not given (so their cache keys stay); left out, a build is always up and paid in cash.
_OWNED_ADDED = ("repair_days", "spare_gpus", "financing", "throughput_error")
#: Keys of a financing block besides ``kind``.
_FINANCING = tuple(dict.fromkeys(k for keys in FINANCING_KEYS.values() for k in keys))


class FinancingSchema(_Base):
    """How the hardware is paid for: cash, a loan or an operating lease, each with its keys."""

    kind = _input(Financing, "kind", required=True)
    rate = _input(Financing, "rate")
    term_months = _input(Financing, "term_months")
    down_payment_share = _input(Financing, "down_payment_share", load_default=None)
    monthly_rate = _input(Financing, "monthly_rate")

    @validates_schema
    def _kind(self, data: dict, **kwargs: Any) -> None:
        given = [k for k in _FINANCING if data.get(k) is not None]
        problems = financing_problems(data["kind"], given)
        if problems:
            raise ValidationError({key: [message] for key, message in problems})

    unset = _FINANCING


class BuySchema(_Base):
    """The owned build."""

    gpu = Ref(InlineGPUSchema, "catalog GPU id or inline GPU", required=True)
    gpu_count = _input(BuyInputs, "gpu_count", required=True)
    interconnect = fields.String(
        validate=validate.OneOf(INTERCONNECTS),
        load_default=None,
        metadata={"description": "link between the GPUs; picks the scaling-efficiency row"},
    )
    gpu_price_usd = _input(BuyInputs, "gpu_price_usd")
    platform_price_usd = _input(BuyInputs, "platform_price_usd")
    server_price_usd = DistField(
        "[USD]",
        "price of the whole server, GPUs and platform; the platform is this less gpu_count x "
        "gpu_price_usd (give it or platform_price_usd)",
        _SERVER_PRICE,
    )
    setup_usd = _input(BuyInputs, "setup_usd")
    gpu_power_w = _input(BuyInputs, "gpu_power_w")
    gpu_idle_w = _input(BuyInputs, "gpu_idle_w")
    platform_power_w = _input(BuyInputs, "platform_power_w")
    powered_when_idle = _input(BuyInputs, "powered_when_idle")
    electricity_usd_per_kwh = _input(BuyInputs, "electricity_usd_per_kwh")
    electricity_annual_change = _input(BuyInputs, "electricity_annual_change")
    pue = _input(BuyInputs, "pue")
    hosting_usd_per_kw_month = _input(BuyInputs, "hosting_usd_per_kw_month")
    maintenance_rate = _input(BuyInputs, "maintenance_rate")
    gpu_annual_failure_rate = _input(BuyInputs, "gpu_annual_failure_rate")
    resale_annual_decay = _input(BuyInputs, "resale_annual_decay")
    depreciation = _input(BuyInputs, "depreciation")
    depreciation_years = _input(BuyInputs, "depreciation_years")
    admin_usd_per_month = _input(BuyInputs, "admin_usd_per_month")
    relative_throughput = _input(BuyInputs, "relative_throughput")
    tokens_per_s_per_gpu = _input(BuyInputs, "tokens_per_s_per_gpu")
    throughput_error = _input(BuyInputs, "throughput_error")
    scaling_efficiency = _input(BuyInputs, "scaling_efficiency")
    thermal_derate = _input(BuyInputs, "thermal_derate")
    repair_days = _input(BuyInputs, "repair_days")
    spare_gpus = _input(BuyInputs, "spare_gpus", load_default=None)
    financing = fields.Nested(
        FinancingSchema,
        load_default=None,
        metadata={"description": "how the hardware is paid for; default cash"},
    )
    grid = _grid(OwnedCarbon)
    grid_annual_change = _input(OwnedCarbon, "grid_annual_change")
    embodied_kg_co2e = _input(OwnedCarbon, "embodied_kg_co2e")

    unset = (*_THROUGHPUTS, "server_price_usd", *_OWNED_ADDED)


class RentSchema(_Base):
    """The rented instances."""

    instance = Ref(InlineInstanceSchema, "catalog instance id or inline instance", required=True)
    pricing = _input(RentInputs, "pricing")
    price_usd_per_hour = _input(RentInputs, "price_usd_per_hour")
    price_usd_per_gpu_hour = DistField(
        "[USD/GPU-hour]",
        "price per GPU-hour under the pricing model; times the instance's GPUs it is "
        "price_usd_per_hour (give one of them)",
        _GPU_HOUR_PRICE,
    )
    on_demand_price_usd_per_hour = _input(RentInputs, "on_demand_price_usd_per_hour")
    committed_instances = _input(
        RentInputs, "committed_instances", load_default=None, allow_none=True
    )
    price_annual_change = _input(RentInputs, "price_annual_change")
    spot_interruption_overhead = _input(RentInputs, "spot_interruption_overhead")
    storage_usd_per_month = _input(RentInputs, "storage_usd_per_month")
    egress_usd_per_month = _input(RentInputs, "egress_usd_per_month")
    admin_usd_per_month = _input(RentInputs, "admin_usd_per_month")
    relative_throughput = _input(RentInputs, "relative_throughput")
    tokens_per_s_per_gpu = _input(RentInputs, "tokens_per_s_per_gpu")
    throughput_error = _input(RentInputs, "throughput_error")
    scaling_efficiency = _input(RentInputs, "scaling_efficiency")
    grid = _grid(RentedCarbon)
    grid_annual_change = _input(RentedCarbon, "grid_annual_change")
    pue = _input(RentedCarbon, "pue")
    power_kw = _input(RentedCarbon, "power_kw")
    embodied_kg_co2e = _input(RentedCarbon, "embodied_kg_co2e")

    unset = _RENT_UNSET


class ApiSchema(_Base):
    """A hosted API billed per million tokens: a catalog offer, or its prices inline."""

    model = fields.String(
        load_default=None,
        validate=validate.Length(min=1),
        metadata={"description": "catalog API offer id (dated prices); or give the prices"},
    )
    input_usd_per_mtok = _input(ApiInputs, "input_usd_per_mtok")
    output_usd_per_mtok = _input(ApiInputs, "output_usd_per_mtok")
    cached_input_share = _input(ApiInputs, "cached_input_share")
    cached_input_usd_per_mtok = _input(ApiInputs, "cached_input_usd_per_mtok")
    price_annual_change = _input(ApiInputs, "price_annual_change")
    g_co2e_per_mtok = _input(HostedCarbon, "g_co2e_per_mtok")

    @validates_schema
    def _priced(self, data: dict, **kwargs: Any) -> None:
        if data.get("model") is None:
            missing = [k for k in API_PRICES if data.get(k) is None]
            if missing:
                raise ValidationError(
                    {k: ["required without a catalog offer (api.model)"] for k in missing}
                )

    unset = ("model", "cached_input_usd_per_mtok", "g_co2e_per_mtok")


#: The prices an API block gives when it names no catalog offer.
API_PRICES = ("input_usd_per_mtok", "output_usd_per_mtok")


def _version() -> fields.Field:
    return fields.Integer(
        strict=True,
        required=True,
        validate=validate.Equal(
            SCHEMA_VERSION, error="unsupported version {input}; this release reads version 1"
        ),
        metadata={"description": "format version: 1"},
    )


def _name() -> fields.Field:
    return fields.String(
        required=True,
        validate=validate.Length(min=1, max=200),
        metadata={"description": "names the results and report files"},
    )


def _description() -> fields.Field:
    return fields.String(
        load_default="", validate=validate.Length(max=5000), metadata={"description": "free text"}
    )


def _simulation(schema: type[Schema] = SimulationSchema) -> fields.Field:
    return fields.Nested(
        schema,
        load_default=_nested(schema),
        metadata={"description": "Monte Carlo draws, seed and sampler"},
    )


def _workload() -> fields.Field:
    return fields.Nested(
        WorkloadSchema,
        load_default=_nested(WorkloadSchema),
        metadata={"description": "precision and the unit of work"},
    )


def _correlations() -> fields.Field:
    return fields.List(
        Correlation(),
        load_default=list,
        metadata={
            "description": "Spearman rank correlations between uncertain inputs, named <side>.<key>"
        },
    )


class CarbonPriceSchema(_Base):
    """Emissions beside cost: the carbon price and the service lives embodied carbon is
    spread over."""

    usd_per_tonne = _input(CarbonInputs, "usd_per_tonne")
    service_life_years = _input(CarbonInputs, "service_life_years")
    provider_service_life_years = _input(CarbonInputs, "provider_service_life_years")


#: The carbon keys of each block of a scenario (a plan's ``own`` takes buy's, its ``reserve``
#: and ``burst`` rent's, its ``burst.api`` api's).
CARBON_KEYS = {
    "buy": ("grid", "grid_annual_change", "embodied_kg_co2e"),
    "rent": ("grid", "grid_annual_change", "pue", "power_kw", "embodied_kg_co2e"),
    "api": ("g_co2e_per_mtok",),
}


def further_schema(side: Side) -> type[Schema]:
    """The block schema of a further kind of side (beyond buy, rent and api): one key per
    field of its engine inputs, each from the field's metadata (unit, range, default)."""
    declared = {name: _input(side.inputs, name) for name in input_fields(side.inputs)}
    return _Base.from_dict(declared, name=f"{side.label.replace(' ', '')}Schema")


class ScenarioSchema(_Base):
    """A whole rent-versus-buy scenario, version 1; beside ``buy``, ``rent`` and ``api`` a
    block for each further kind of side registered (:data:`costmodel.sides.SIDES`), at its
    name, left out of the resolved document when not given."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        extra = [name for name in further_sides() if name not in self.declared_fields]
        if extra:
            for name in extra:
                text = f"a further side: {SIDES[name].option}"
                self.declared_fields[name] = fields.Nested(
                    further_schema(SIDES[name]), load_default=None, metadata={"description": text}
                )
            self._init_fields()

    @post_dump
    def _drop_further(self, data: dict, **kwargs: Any) -> dict:
        return _drop_none(data, further_sides())

    version = _version()
    name = _name()
    description = _description()
    horizon_months = _input(ModelInputs, "horizon_months")
    discount_rate = _input(ModelInputs, "discount_rate")
    tax_rate = _input(ModelInputs, "tax_rate")
    utilisation = Utilisation(load_default=lambda: list(UTILISATION))
    report_utilisation = _input(ModelInputs, "report_utilisation")
    simulation = _simulation()
    workload = _workload()
    buy = fields.Nested(BuySchema, required=True, metadata={"description": "the owned build"})
    rent = fields.Nested(
        RentSchema, required=True, metadata={"description": "the rented instances"}
    )
    api = fields.Nested(
        ApiSchema,
        load_default=None,
        metadata={"description": "a hosted API doing the same work (inference only)"},
    )
    correlations = _correlations()
    carbon = fields.Nested(
        CarbonPriceSchema,
        load_default=_nested(CarbonPriceSchema),
        metadata={"description": "the carbon price, and the service lives of embodied carbon"},
    )

    @validates_schema
    def _api_serves(self, data: dict, **kwargs: Any) -> None:
        for kind, blocks in WORK_BLOCKS.items():
            for block in blocks:
                if data.get(block) is not None and data["workload"]["kind"] != kind:
                    raise ValidationError(f"only for {kind} work (workload.kind: {kind})", block)

    unset = ("api",)


def further_sides() -> tuple[str, ...]:
    """The names of the registered kinds of side beyond buy, rent and api."""
    return tuple(name for name in SIDES if name not in ("buy", "rent", "api"))


#: Hours of a named GPU a month [GPU-hours/month], in the range of reference GPU-hours.
_GPU_HOURS = Bound(
    input_fields(Demand)["reference_gpu_hours_per_month"].metadata["bound"].low,
    input_fields(Demand)["reference_gpu_hours_per_month"].metadata["bound"].high,
    "[GPU-hours/month]",
)


#: The demand key of each kind of work: its month-1 amount in the kind's unit.
DEMAND_WORK = {
    "training": "reference_gpu_hours_per_month",
    "inference": "million_tokens_per_month",
}


class DemandSchema(_Base):
    """The work to plan for: its month-1 amount (in the workload's unit), annual growth and
    daily peak."""

    reference_gpu_hours_per_month = _input(Demand, "reference_gpu_hours_per_month")
    million_tokens_per_month = _input(Demand, "million_tokens_per_month")
    gpu_hours_per_month = DistField(
        "[GPU-hours/month]",
        "work in month 1 (training) as hours of demand.gpu, converted with the catalog's "
        "throughput (give it or reference_gpu_hours_per_month)",
        _GPU_HOURS,
    )
    gpu = fields.String(
        load_default=None,
        validate=validate.Length(min=1),
        metadata={"description": "catalog GPU id whose hours demand.gpu_hours_per_month counts"},
    )
    annual_growth = _input(Demand, "annual_growth")
    peak_to_mean = _input(Demand, "peak_to_mean")

    @validates_schema
    def _named_gpu(self, data: dict, **kwargs: Any) -> None:
        hours, gpu = data.get("gpu_hours_per_month"), data.get("gpu")
        if (hours is None) != (gpu is None):
            key, other = ("gpu", "gpu_hours_per_month") if hours is None else (
                "gpu_hours_per_month", "gpu")  # fmt: skip
            raise ValidationError(f"only with demand.{other}", key)
        if hours is not None and data.get("reference_gpu_hours_per_month") is not None:
            raise ValidationError(
                "give demand.gpu_hours_per_month or demand.reference_gpu_hours_per_month, not both",
                "gpu_hours_per_month",
            )

    unset = (*DEMAND_WORK.values(), "gpu_hours_per_month", "gpu")


class CountRangeSchema(_Base):
    """Candidate counts from ``min`` to ``max``, each considered."""

    min = _bounded(fields.Integer, _COUNT, "fewest", required=True)
    max = _bounded(fields.Integer, _COUNT, "most", required=True)

    @validates_schema
    def _ordered(self, data: dict, **kwargs: Any) -> None:
        if data["min"] > data["max"]:
            raise ValidationError(f"min {data['min']} exceeds max {data['max']}", "min")


_TRIGGER = Bound(0, MAX_TRIGGER, "[-]")
_MONTH = Bound(1, MAX_HORIZON, "[month]", integer=True)


class AddSchema(_Base):
    """One later purchase of servers (``own.add``): how many, when the work passes a share
    of the first servers' capacity (or at which months), how long they take to arrive and how
    their price moves meanwhile."""

    servers = fields.Nested(
        CountRangeSchema, required=True, metadata={"description": "servers added"}
    )
    when_demand_above = fields.List(
        _bounded(fields.Float, _TRIGGER, "a share of the first servers' capacity"),
        validate=validate.Length(min=1, max=MAX_TRIGGERS),
        load_default=None,
        metadata={
            "description": "candidate triggers: the servers are bought at the end of the first "
            "month whose work passes this share of the first servers' capacity"
        },
    )
    at_month = fields.List(
        _bounded(fields.Integer, _MONTH, "a month of the horizon"),
        validate=validate.Length(min=1, max=MAX_TRIGGERS),
        load_default=None,
        metadata={"description": "candidate months of the purchase, instead of a trigger"},
    )
    lead_time_months = _input(Addition, "lead_time_months", load_default=None)
    price_annual_change = _input(Addition, "price_annual_change")

    unset = ("when_demand_above", "at_month")

    @validates_schema
    def _one_trigger(self, data: dict, **kwargs: Any) -> None:
        given = [k for k in ("when_demand_above", "at_month") if data.get(k) is not None]
        if len(given) != 1:
            raise ValidationError(
                "give when_demand_above (shares of the first servers' capacity) or at_month "
                "(months), one of them",
                "when_demand_above",
            )


class OwnSchema(BuySchema):
    """One owned server (every ``buy`` key but ``spare_gpus``: a fleet pools its spares,
    ``spare_share`` of its GPUs) and the server counts to consider. The carbon keys are left
    out of the resolved plan when not given: a plan counts carbon only when it has some."""

    class Meta:
        exclude = ("spare_gpus",)

    servers = fields.Nested(CountRangeSchema, required=True, metadata={"description": "servers"})
    spare_share = _input(PlanInputs, "spare_share", load_default=None)
    add = fields.Nested(
        AddSchema,
        load_default=None,
        metadata={"description": "one later purchase of servers, when the work arrives"},
    )

    unset = (*BuySchema.unset, "spare_share", "add", *CARBON_KEYS["buy"])


def _rent_keys(pricing: tuple[str, ...], default: str, extra: tuple[str, ...]) -> dict:
    """The ``rent`` keys that apply to reserved or burst instances."""
    keys = ("instance", "price_usd_per_hour", "price_usd_per_gpu_hour", "price_annual_change",
            "relative_throughput", "tokens_per_s_per_gpu", "throughput_error",
            "scaling_efficiency", *extra, *CARBON_KEYS["rent"])  # fmt: skip
    out = {k: RentSchema._declared_fields[k] for k in keys}
    out["pricing"] = fields.String(
        validate=validate.OneOf(pricing),
        load_default=default,
        metadata={"description": f"pricing model: {' or '.join(pricing)}"},
    )
    return out


#: A plan's rented block's keys left out when not given: the carbon keys, as a plan counts
#: carbon only when it has some.
_PLAN_RENT_UNSET = (*_RENT_UNSET, *CARBON_KEYS["rent"])


class _PlanRented(_Base):
    """A plan's rented block: the other kind of work's throughput key and the carbon keys not
    given are left out."""

    unset = _PLAN_RENT_UNSET


ReserveSchema = _PlanRented.from_dict(
    {
        **_rent_keys(tuple(sorted(RESERVED_PRICINGS)), "reserved_1y", ()),
        "instances": fields.Nested(
            CountRangeSchema, required=True, metadata={"description": "reserved instances"}
        ),
    },
    name="ReserveSchema",
)
ReserveSchema.__doc__ = "Reserved instances (1- or 3-year terms) and the counts to consider."


class _Burst(_PlanRented):
    """A plan's burst: instances, or (inference work) a hosted API, ``{api: {...}}``."""

    @validates_schema(pass_original=True)
    def _instances_or_api(self, data: dict, original: Any, **kwargs: Any) -> None:
        given = set(original) if isinstance(original, dict) else set()
        if data.get("api") is None:
            if data.get("instance") is None:
                raise ValidationError("give the burst instance, or an api to send the rest to")
        elif given - {"api"}:
            extra = ", ".join(sorted(given - {"api"}))
            raise ValidationError(f"an API burst takes only api; got also {extra}", "api")

    @post_dump
    def _drop_unset(self, data: dict, **kwargs: Any) -> dict:
        if data.get("api") is not None:
            return {"api": data["api"]}
        data.pop("api", None)
        return _drop_none(data, _PLAN_RENT_UNSET)


BurstSchema = _Burst.from_dict(
    {
        **_rent_keys(("on_demand", "spot"), "on_demand", ("spot_interruption_overhead",)),
        "instance": Ref(
            InlineInstanceSchema,
            "catalog instance id or inline instance; give it or api",
            load_default=None,
        ),
        "api": fields.Nested(
            ApiSchema,
            load_default=None,
            metadata={"description": "inference: a hosted API takes the rest instead"},
        ),
    },
    name="BurstSchema",
)
BurstSchema.__doc__ = (
    "The on-demand or spot instances, or a hosted API, that take the work left over."
)


class PlanSchema(_Base):
    """A fleet plan, version 1: which mix of owned servers, reserved instances and burst
    capacity serves a growing, uncertain demand at least cost."""

    version = _version()
    kind = fields.String(
        required=True, validate=validate.Equal("plan"), metadata={"description": "plan"}
    )
    name = _name()
    description = _description()
    horizon_months = _input(PlanInputs, "horizon_months")
    discount_rate = _input(PlanInputs, "discount_rate")
    tax_rate = _input(PlanInputs, "tax_rate")
    simulation = _simulation(DrawsSchema)
    workload = _workload()
    demand = fields.Nested(DemandSchema, required=True, metadata={"description": "the work"})
    own = fields.Nested(OwnSchema, required=True, metadata={"description": "one owned server"})
    reserve = fields.Nested(
        ReserveSchema, load_default=None, metadata={"description": "reserved instances"}
    )
    burst = fields.Nested(
        BurstSchema, required=True, metadata={"description": "instances for the rest"}
    )
    objective = _input(PlanInputs, "objective")
    correlations = _correlations()
    carbon = fields.Nested(
        CarbonPriceSchema,
        load_default=None,
        metadata={
            "description": "the carbon price, and the service lives of embodied carbon; a "
            "plan counts carbon when it has this block or a carbon key"
        },
    )

    @validates_schema
    def _work_kind(self, data: dict, **kwargs: Any) -> None:
        """The demand is in the workload's unit; only inference work bursts to an API."""
        kind = data["workload"]["kind"]
        errors: dict[str, Any] = {}
        named = data["demand"].get("gpu_hours_per_month") is not None
        if named and kind != "training":
            errors["gpu_hours_per_month"] = ["only for training work (workload.kind: training)"]
        for other, key in DEMAND_WORK.items():
            given = data["demand"].get(key) is not None
            if other == kind and not given and not (named and kind == "training"):
                errors[key] = [f"required for {kind} work"]
            elif other != kind and given:
                errors[key] = [f"only for {other} work (workload.kind: {other})"]
        if errors:
            raise ValidationError({"demand": errors})
        if kind != "inference" and data["burst"].get("api") is not None:
            raise ValidationError(
                {"burst": {"api": ["only for inference work (workload.kind: inference)"]}}
            )

    unset = ("carbon",)
