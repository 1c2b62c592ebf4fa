"""The JSON form of a scenario's :class:`~.answer.Answer` (``schema_version`` 1): the engine's
:class:`~costmodel.result.Result` with its document, catalog, warnings, assumptions and
verdict, as one marshmallow schema: it dumps an answer to the documented JSON (the engine's
figures and the words beside them at the top level), loads it back as an answer, validates
result files read back (a
``schema_version`` other than 1, a ``NaN`` anywhere, the scenario included, or a list not aligned
with ``utilisation`` is an error naming its key path), and documents the HTTP response in the
OpenAPI document.

In JSON, "no value" is ``null``; in the :class:`Result` it is ``NaN``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import numpy as np
from marshmallow import (
    Schema,
    ValidationError,
    fields,
    post_dump,
    post_load,
    pre_load,
    validate,
    validates_schema,
)

from costmodel.result import (
    SCHEMA_VERSION,
    Advice,
    Assumption,
    Availability,
    Bands,
    Breakeven,
    BySide,
    Carbon,
    CatalogRef,
    Cheapest,
    Convergence,
    CumulativeCost,
    Driver,
    InputValue,
    Origin,
    Payback,
    Result,
    Rival,
    Sensitivity,
    Tornado,
    TornadoBar,
    UnitCost,
    ValueOfInformation,
    Versus,
    frozen_array,
)
from costmodel.sampling import METHODS
from costmodel.sides import SIDES
from costmodel.units import UNITS

from .answer import Answer
from .prebuilt import prebuilt
from .wording import Wording

__all__ = ["NOT_A_NUMBER", "ResultBase", "ResultSchema", "Strict", "floats", "prebuilt", "share"]

NOT_A_NUMBER = "NaN and infinities are not JSON numbers; write null for no value"
_UNSUPPORTED = f"unsupported schema_version {{input}}; this release reads {SCHEMA_VERSION}"
#: Deepest nesting of free-form data (the scenario, an assumption's value); scenarios need ~4.
_MAX_DEPTH = 32


def _number(value: Any) -> float:
    """A finite float from JSON, or NaN for ``null``."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(f"expected a number or null, got {value!r}")
    if not math.isfinite(value):
        raise ValidationError(NOT_A_NUMBER)
    return float(value)


def _plain_data(value: Any) -> None:
    """Validate free-form JSON data (the scenario, an assumption's value): no NaN or infinity
    anywhere inside, named by its key path, and at most :data:`_MAX_DEPTH` levels deep, so that
    no report shows "nan" or runs out of stack."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        keys, node = stack.pop()
        if len(keys) > _MAX_DEPTH:
            raise ValidationError(f"nested deeper than {_MAX_DEPTH} levels")
        if isinstance(node, float) and not math.isfinite(node):
            messages: Any = [NOT_A_NUMBER]
            for key in reversed(keys):
                messages = {key: messages}
            raise ValidationError(messages)
        if isinstance(node, Mapping):
            stack += [((*keys, k), v) for k, v in node.items()]
        elif isinstance(node, list | tuple):
            stack += [((*keys, i), v) for i, v in enumerate(node)]


def _json_number(value: Any) -> float | None:
    v = float(value)
    return v if math.isfinite(v) else None


class Number(fields.Field):
    """A number; ``null`` in JSON is NaN in the result (and NaN is written as ``null``)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_none=True, **kwargs)

    def deserialize(self, value: Any, attr: Any = None, data: Any = None, **kwargs: Any) -> Any:
        """``null`` loads as NaN (marshmallow would keep ``None``)."""
        out = super().deserialize(value, attr, data, **kwargs)
        return math.nan if out is None else out

    def _serialize(self, value: Any, attr: Any, obj: Any, **kwargs: Any) -> float | None:
        return None if value is None else _json_number(value)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> float:
        return _number(value)

    def json_schema(self, openapi: tuple[int, int]) -> dict[str, Any]:
        """The OpenAPI/JSON Schema of this field."""
        return _nullable({"type": "number"}, openapi)


class Floats(fields.Field):
    """A list of numbers (``null`` allowed unless ``nullable=False``) as a read-only array."""

    def __init__(self, *, nullable: bool = True, **kwargs: Any) -> None:
        self.nullable = nullable
        super().__init__(**kwargs)

    def _serialize(self, value: Any, attr: Any, obj: Any, **kwargs: Any) -> list | None:
        if value is None:
            return None
        array = np.asarray(value, dtype=float)
        if np.isfinite(array).all():
            return array.tolist()
        return [_json_number(v) for v in array.tolist()]

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> np.ndarray:
        if not isinstance(value, list | tuple):
            raise ValidationError("expected a list of numbers")
        out = []
        for i, v in enumerate(value):
            try:
                number = _number(v)
            except ValidationError as exc:
                raise ValidationError(f"item {i}: {exc.messages[0]}") from None
            if math.isnan(number) and not self.nullable:
                raise ValidationError(f"item {i}: null is not allowed here")
            out.append(number)
        return frozen_array(out)

    def json_schema(self, openapi: tuple[int, int]) -> dict[str, Any]:
        """The OpenAPI/JSON Schema of this field."""
        item = {"type": "number"}
        return {"type": "array", "items": _nullable(item, openapi) if self.nullable else item}


def _nullable(schema: dict[str, Any], openapi: tuple[int, int]) -> dict[str, Any]:
    if openapi >= (3, 1):
        return {**schema, "type": [schema["type"], "null"]}
    return {**schema, "nullable": True}


def floats(description: str, **kwargs: Any) -> Floats:
    return Floats(required=True, metadata={"description": description}, **kwargs)


def wilson_intervals(what: str) -> fields.List:
    """The 95 % Wilson intervals [lo, hi] [-] of a share of draws (``what``), one per level;
    absent in results stored before them."""
    return fields.List(
        Floats(nullable=False, validate=validate.Length(equal=2)),
        load_default=None,
        metadata={
            "description": f"[-] 95 % Wilson interval [lo, hi] of {what}; absent in runs "
            "stored before it existed"
        },
    )


def replicate_count(what: str) -> fields.Integer:
    """The number of independent replicates [-] that ``what`` (a phrase) rests on: ``lhs``
    and ``sobol`` with enough draws; absent (``None``) for independent draws."""
    return fields.Integer(
        strict=True,
        load_default=None,
        validate=validate.Range(2),
        metadata={
            "description": f"[-] independent replicates {what} (lhs and sobol with enough "
            "draws; a 95 % interval is then +- t(0.975, R - 1) standard errors); absent for "
            "independent draws"
        },
    )


def share(description: str) -> fields.Float:
    return fields.Float(
        required=True,
        allow_nan=False,
        validate=validate.Range(0, 1),
        error_messages={"special": NOT_A_NUMBER},
        metadata={"description": description},
    )


class Strict(Schema):
    """Unknown keys are errors, as in scenarios; a load makes ``make(**data)``. The keys of
    ``absent`` are left out of the JSON when they hold no value (``None``)."""

    make: ClassVar[Callable[..., Any]] = dict
    absent: ClassVar[tuple[str, ...]] = ()

    @post_dump
    def _drop_absent(self, data: dict, **kwargs: Any) -> dict:
        for key in self.absent:
            if data.get(key) is None:
                data.pop(key, None)
        return data

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> Any:
        return self.make(**data)


class BandsSchema(Strict):
    """Percentiles per utilisation level (or month); null where undefined."""

    p10 = floats("10th percentile")
    p50 = floats("median")
    p90 = floats("90th percentile")

    make = Bands


class StatsSchema(Strict):
    """Mean and percentiles per utilisation level [USD, present value]."""

    mean = floats("mean")
    p10 = floats("10th percentile")
    p50 = floats("median")
    p90 = floats("90th percentile")

    make = Bands


class BreakevenSchema(Strict):
    """Break-even utilisation [-]: the smallest u with TCO_buy(u) <= TCO_rent(u)."""

    mean = Number(required=True, metadata={"description": "[-] over the draws that break even"})
    p10 = Number(required=True, metadata={"description": "[-]; null: never"})
    p50 = Number(required=True, metadata={"description": "[-]; null: never"})
    p90 = Number(required=True, metadata={"description": "[-]; null: never"})
    prob_always = share("share of draws where buying wins even idle [-]")
    prob_never = share("share of draws where renting wins even at u = 1 [-]")

    make = Breakeven


class AvailabilitySchema(Strict):
    """Share of the owned GPUs in service on average [-], over the draws: failed GPUs wait
    ``repair_days`` unless a spare takes their place."""

    mean = share("mean [-]")
    p10 = share("10th percentile [-]")
    p50 = share("median [-]")
    p90 = share("90th percentile [-]")

    make = Availability


class PaybackSchema(BandsSchema):
    """Payback [month] per utilisation level; null where not reached within the horizon."""

    prob_never = floats("share of draws without payback within the horizon [-]", nullable=False)

    make = Payback


class BySideSchema(Strict):
    """Figures by side: one key per side of the question (``buy``, ``rent``, ``api``, or any
    registered side, :data:`costmodel.sides.SIDES`), read from and made into the result's
    by-side mapping (:class:`~costmodel.result.BySide`); a side the question lacks has no key.
    ``side_field`` makes the field of a side registered after the class was written."""

    side_field: ClassVar[Callable[[], fields.Field]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        extra = [name for name in SIDES if name not in self.declared_fields]
        if extra:
            self.declared_fields.update({name: self.side_field() for name in extra})
            self._init_fields()

    def get_attribute(self, obj: Any, attr: str, default: Any) -> Any:
        if attr in SIDES and isinstance(obj, BySide):
            return obj.get(attr)
        return super().get_attribute(obj, attr, default)

    @post_dump
    def _drop_absent(self, data: dict, **kwargs: Any) -> dict:
        for name in SIDES:
            if name in data and data[name] is None:
                del data[name]
        return data

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> Any:
        by_side = {name: data.pop(name) for name in SIDES if data.get(name) is not None}
        for name in SIDES:
            data.pop(name, None)
        return self.make(**data, sides=by_side)


def _side_bands() -> fields.Field:
    return fields.Nested(BandsSchema, load_default=None, metadata={"description": "[USD]"})


class UnitCostSchema(BySideSchema):
    """Each side's cost per unit of work [USD per unit]; null at u = 0."""

    unit = fields.String(
        required=True,
        validate=validate.OneOf(UNITS),
        metadata={"description": "reference_gpu_hour (training) or million_tokens (inference)"},
    )
    buy = fields.Nested(BandsSchema, required=True)
    rent = fields.Nested(BandsSchema, required=True)
    api = fields.Nested(
        BandsSchema, load_default=None, metadata={"description": "with a hosted API only"}
    )

    make = UnitCost
    side_field = staticmethod(_side_bands)


class CarbonPerUnitSchema(UnitCostSchema):
    """Each side's emissions per unit of work [g CO2e per unit]; null at u = 0."""


def _side_tonnes() -> fields.Field:
    return fields.Nested(StatsSchema, load_default=None, metadata={"description": "[t CO2e]"})


class CarbonSchema(BySideSchema):
    """Each side's emissions over the horizon [t CO2e] per level, and per unit of work."""

    buy = fields.Nested(StatsSchema, required=True, metadata={"description": "[t CO2e]"})
    rent = fields.Nested(StatsSchema, required=True, metadata={"description": "[t CO2e]"})
    api = fields.Nested(
        StatsSchema,
        load_default=None,
        metadata={"description": "[t CO2e]; with a hosted API whose emissions are known only"},
    )
    per_unit = fields.Nested(
        CarbonPerUnitSchema, required=True, metadata={"description": "[g CO2e per unit of work]"}
    )
    unknown = fields.List(
        fields.String(validate=validate.OneOf(SIDES)),
        load_default=(),
        metadata={"description": "sides whose emissions are unknown (reported so, never as 0)"},
    )

    side_field = staticmethod(_side_tonnes)

    @staticmethod
    def make(**data: Any) -> Carbon:
        return Carbon(**{**data, "unknown": tuple(data["unknown"])})


class TrainingUnitCostSchema(Strict):
    """Cost per reference GPU-hour [USD/reference GPU-hour]; null at u = 0 (the training
    results' name for ``cost_per_unit``, kept for readers of results stored before it)."""

    buy = fields.Nested(BandsSchema, required=True)
    rent = fields.Nested(BandsSchema, required=True)


def _side_share() -> fields.Field:
    return Floats(nullable=False, load_default=None, metadata={"description": "cheapest [-]"})


#: The suffix of a side's key of its 95 % Wilson intervals in ``cheapest_share``.
_CI95 = "_ci95"


class CheapestSchema(BySideSchema):
    """The share of draws in which each side is the cheapest, per level [-] (a tie goes to the
    first of buy, rent, api)."""

    buy = floats("buy cheapest [-]", nullable=False)
    rent = floats("rent cheapest [-]", nullable=False)
    api = Floats(nullable=False, load_default=None, metadata={"description": "API cheapest [-]"})
    buy_ci95 = wilson_intervals("buy's share per level")
    rent_ci95 = wilson_intervals("rent's share per level")
    api_ci95 = wilson_intervals("the API's share per level")

    make = Cheapest
    side_field = staticmethod(_side_share)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        extra = [f"{n}{_CI95}" for n in SIDES if f"{n}{_CI95}" not in self.declared_fields]
        if extra:
            what = "the side's share per level"
            self.declared_fields.update({key: wilson_intervals(what) for key in extra})
            self._init_fields()

    def get_attribute(self, obj: Any, attr: str, default: Any) -> Any:
        if attr.endswith(_CI95) and isinstance(obj, Cheapest):
            return obj.ci95.get(attr.removesuffix(_CI95))
        return super().get_attribute(obj, attr, default)

    @post_dump
    def _drop_no_intervals(self, data: dict, **kwargs: Any) -> dict:
        return {k: v for k, v in data.items() if not (k.endswith(_CI95) and v is None)}

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> Cheapest:
        keys = [k for k in data if k.endswith(_CI95)]
        given = {k.removesuffix(_CI95): data.pop(k) for k in keys}
        ci95 = {s: frozen_array(np.reshape(v, (-1, 2))) for s, v in given.items() if v is not None}
        return Cheapest(super()._make(data).sides, ci95)


class CumulativeSchema(BySideSchema):
    """Cumulative discounted after-tax cost by month at one utilisation [USD], no resale."""

    utilisation = fields.Float(required=True, metadata={"description": "level [-]"})
    months = fields.List(fields.Integer(), required=True, metadata={"description": "0..H"})
    buy = fields.Nested(BandsSchema, required=True)
    rent = fields.Nested(BandsSchema, required=True)
    api = fields.Nested(
        BandsSchema, load_default=None, metadata={"description": "with a hosted API only"}
    )

    side_field = staticmethod(_side_bands)

    @validates_schema
    def _aligned(self, data: dict, **kwargs: Any) -> None:
        n = len(data["months"])
        for side in SIDES:
            if data.get(side) is None:
                continue
            for s in ("p10", "p50", "p90"):
                if len(getattr(data[side], s)) != n:
                    raise ValidationError(
                        f"{n} months but {len(getattr(data[side], s))} values", f"{side}.{s}"
                    )

    @staticmethod
    def make(**data: Any) -> CumulativeCost:
        return CumulativeCost(**{**data, "months": frozen_array(data["months"])})


class CatalogRefSchema(Strict):
    """The catalog a result was computed with."""

    version = fields.String(required=True, metadata={"example": "2026.11.29"})
    as_of = fields.String(required=True, metadata={"description": "ISO date"})

    make = CatalogRef


class AdviceSchema(Strict):
    """A domain warning about the scenario (power, cooling, PCIe lanes, ...)."""

    code = fields.String(required=True, metadata={"example": "office_circuit"})
    severity = fields.String(required=True, validate=validate.OneOf(("info", "warning", "error")))
    message = fields.String(required=True)
    side = fields.String(
        load_default=None,
        allow_none=True,
        metadata={"description": "the key of the side it is about; null: the whole document"},
    )

    make = Advice


class AssumptionSchema(Strict):
    """Where one input's value came from."""

    key = fields.String(required=True, metadata={"example": "buy.electricity_usd_per_kwh"})
    value = fields.Raw(
        required=True,
        validate=_plain_data,
        metadata={"description": "a number or a distribution mapping"},
    )
    unit = fields.String(required=True, metadata={"example": "[USD/kWh]"})
    source = fields.String(required=True, metadata={"example": "scenario"})
    origin = fields.Enum(
        Origin,
        by_value=True,
        load_default=None,
        metadata={"description": "where the value came from (absent in runs stored before it)"},
    )

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> Assumption:
        if data["origin"] is None:  # stored before origins were typed: read from the words
            head = data["source"].partition(":")[0]
            data["origin"] = {"scenario": Origin.GIVEN, "plan": Origin.GIVEN}.get(
                head, Origin(head) if head in Origin.__members__.values() else Origin.PRICES
            )
        return Assumption(**data)


class DriverSchema(Strict):
    """One uncertain input's Spearman rank correlation with TCO_buy - TCO_rent (or, in
    ``rivals``, TCO_buy - TCO_api) [-]."""

    input = fields.String(required=True, metadata={"example": "rent.price_annual_change"})
    spearman = fields.Float(
        required=True,
        allow_nan=False,
        error_messages={"special": NOT_A_NUMBER},
        validate=validate.Range(-1, 1),
        metadata={"description": "> 0: a higher value makes buying relatively dearer"},
    )

    make = Driver


class SensitivitySchema(Strict):
    """What drives the answer, at the utilisation level nearest the report utilisation."""

    utilisation = fields.Float(required=True, metadata={"description": "level [-]"})
    metric = fields.String(required=True, metadata={"example": "buy_tco - rent_tco"})
    inputs = fields.List(
        fields.Nested(DriverSchema), required=True, metadata={"description": "strongest first"}
    )

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> Sensitivity:
        return Sensitivity(data["utilisation"], data["metric"], tuple(data["inputs"]))


def _finite(description: str, **kwargs: Any) -> fields.Float:
    """A float that must be a number (not null, NaN or infinite)."""
    return fields.Float(
        required=True,
        allow_nan=False,
        error_messages={"special": NOT_A_NUMBER},
        metadata={"description": description},
        **kwargs,
    )


class ConvergenceSchema(Strict):
    """How precise the Monte Carlo estimates are, and whether the draws were doubled until the
    break-even P50 was precise enough."""

    samples = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(1),
        metadata={"description": "[draw] used"},
    )
    initial_samples = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(1),
        metadata={"description": "[draw] asked for (simulation.samples)"},
    )
    target_halfwidth = fields.Float(
        required=True,
        allow_none=True,
        allow_nan=False,
        error_messages={"special": NOT_A_NUMBER},
        metadata={"description": "[-] simulation.target_halfwidth; null: none"},
    )
    max_samples = fields.Integer(
        required=True,
        strict=True,
        allow_none=True,
        metadata={"description": "[draw] cap on doubling; null without a target"},
    )
    met = fields.Boolean(
        required=True,
        allow_none=True,
        metadata={"description": "half-width <= target; null without a target"},
    )
    breakeven_p50_ci95 = Floats(
        required=True,
        validate=validate.Length(equal=2),
        metadata={
            "description": "[-] 95 % interval [lo, hi] of the break-even P50 from two order "
            "statistics (the binomial interval of a median); null: never, or too few draws"
        },
    )
    breakeven_p50_halfwidth = Number(
        required=True, metadata={"description": "[-] (hi - lo)/2; null when unbounded"}
    )
    gap_mean_se = floats("[USD] standard error of the mean of TCO_buy - TCO_rent per level")
    prob_buy_cheaper_se = floats("[-] standard error of P(buy cheaper) per level")
    prob_buy_cheaper_ci95 = wilson_intervals("P(buy cheaper) per level")
    replicates = replicate_count("the break-even interval and gap_mean_se come from")
    absent = ("prob_buy_cheaper_ci95", "replicates")

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> Convergence:
        lo, hi = (float(x) for x in data.pop("breakeven_p50_ci95"))
        ci = data.pop("prob_buy_cheaper_ci95")
        ci = None if ci is None else frozen_array(np.reshape(ci, (-1, 2)))
        return Convergence(breakeven_p50_ci95=(lo, hi), prob_buy_cheaper_ci95=ci, **data)


class TornadoBarSchema(Strict):
    """One uncertain input from its P10 to its P90, every other input at its median."""

    input = fields.String(required=True, metadata={"example": "rent.price_usd_per_hour"})
    low = _finite("the input's P10, in its own unit")
    high = _finite("the input's P90, in its own unit")
    breakeven_at_low = Number(required=True, metadata={"description": "[-]; null: never"})
    breakeven_at_high = Number(required=True, metadata={"description": "[-]; null: never"})
    gap_at_low = _finite("[USD] TCO_buy - TCO_rent (or the rival's) at the tornado's level")
    gap_at_high = _finite("[USD] TCO_buy - TCO_rent (or the rival's) at the tornado's level")

    make = TornadoBar


class TornadoSchema(Strict):
    """One-at-a-time swings at the report utilisation, largest swing first."""

    utilisation = fields.Float(required=True, metadata={"description": "level [-]"})
    breakeven_at_median = Number(
        required=True, metadata={"description": "[-] every input at its median; null: never"}
    )
    gap_at_median = _finite("[USD] TCO_buy - TCO_rent with every input at its median")
    inputs = fields.List(
        fields.Nested(TornadoBarSchema),
        required=True,
        metadata={"description": "largest swing first"},
    )

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> Tornado:
        return Tornado(**{**data, "inputs": tuple(data["inputs"])})


class InputValueSchema(Strict):
    """The expected value of perfect information on one input (EVPPI)."""

    input = fields.String(required=True, metadata={"example": "rent.price_usd_per_hour"})
    evppi = _finite("[USD] expected saving from knowing this input before choosing")

    make = InputValue


class ValueOfInformationSchema(Strict):
    """What knowing the uncertain inputs before choosing would save, on average."""

    utilisation = fields.Float(required=True, metadata={"description": "level [-]"})
    evpi = _finite("[USD] min(E[buy], E[rent]) - E[min(buy, rent)]")
    bins = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(1),
        metadata={"description": "equal-count bins per continuous input for the EVPPI"},
    )
    by_input = fields.List(
        fields.Nested(InputValueSchema),
        required=True,
        metadata={"description": "largest first"},
    )

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> ValueOfInformation:
        return ValueOfInformation(**{**data, "by_input": tuple(data["by_input"])})


class _Rival(validate.Validator):
    """A side buying is weighed against beside renting: a registered side (:data:`SIDES`),
    neither the owned one nor ``rent``, read from the registry when called (a side registered
    after the schema was made counts). ``choices`` lists them (the OpenAPI enum)."""

    @property
    def choices(self) -> list[str]:
        return [name for name, s in SIDES.items() if not s.owned and name != "rent"]

    def __call__(self, value: str) -> str:
        if value not in self.choices:
            raise ValidationError(f"Must be one of: {', '.join(self.choices)}.")
        return value


class RivalSchema(Strict):
    """The sensitivity, tornado, value of information and convergence of buying against one
    more side than renting (a hosted API, or a further registered side): of TCO_buy -
    TCO_<versus> (and the break-even against it), at the levels of the top-level ones."""

    versus = fields.String(required=True, validate=_Rival(), metadata={"example": "api"})
    sensitivity = fields.Nested(SensitivitySchema, required=True)
    tornado = fields.Nested(TornadoSchema, required=True)
    value_of_information = fields.Nested(ValueOfInformationSchema, required=True)
    convergence = fields.Nested(
        ConvergenceSchema,
        load_default=None,
        metadata={
            "description": "precision against this side: the break-even against it, "
            "TCO_buy - TCO_<versus> and P(buy cheaper than it); absent in runs stored before "
            "it existed"
        },
    )

    make = Rival
    absent = ("convergence",)


def _sentences(description: str) -> fields.List:
    return fields.List(fields.String(), required=True, metadata={"description": description})


class WordingSchema(Strict):
    """The sentences of a result beside its verdict, written once (:mod:`present.wording`);
    "" where a sentence does not apply."""

    shares = _sentences(
        "against renting, then the API, then any further side: the shares of draws in which "
        "buying is cheaper even idle and dearer even at 100 % utilisation"
    )
    cost = fields.String(
        required=True,
        metadata={"description": "each side's P50 cost per unit of work at the report level"},
    )
    payback_note = fields.String(
        required=True,
        metadata={"description": "why buying can be cheaper and still not pay back; or empty"},
    )
    value_of_information = _sentences(
        "what knowing the inputs before deciding would save, against renting, then the API, "
        "then any further side"
    )
    worth_naming = _sentences(
        "the inputs whose value of information is worth naming (at least 1 % of the EVPI "
        "against a side), largest first"
    )

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> Wording:
        return Wording(**{k: v if isinstance(v, str) else tuple(v) for k, v in data.items()})


#: Keys added after the first results were stored, or written only with a hosted API (or only
#: for training): absent (not null) in results without them.
_ADDED = (
    "convergence",
    "tornado",
    "value_of_information",
    "cost_per_reference_gpu_hour",
    "api_tco",
    "prob_buy_cheaper_than_api",
    "breakeven_vs_api",
    "payback_vs_api_months",
    "cheapest_share",
    "availability",
    "carbon",
    "rivals",
    "wording",
)


def _walk(data: Any, paths: tuple[tuple[str, ...], ...]) -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every key path of ``paths`` that ``data`` holds; ``"*"`` stands
    for every side of a by-side figure, and a key without a value (a side the question
    lacks, an API's key without one) ends its path."""
    for path in paths:
        nodes: list[tuple[str, Any]] = [("", data)]
        for key in path:
            step = []
            for where, node in nodes:
                if key == "*":
                    step += [(f"{where}.{side}", value) for side, value in node.items()]
                    continue
                value = node[key] if isinstance(node, Mapping) else getattr(node, key)
                if value is not None:
                    step.append((f"{where}.{key}", value))
            nodes = step
        yield from ((where[1:], node) for where, node in nodes)


#: Lists aligned with ``utilisation``, by key path.
_ALIGNED = (
    *(("buy_tco", s) for s in ("mean", "p10", "p50", "p90")),
    *(("rent_tco", s) for s in ("mean", "p10", "p50", "p90")),
    ("prob_buy_cheaper",),
    *(("payback_months", s) for s in ("p10", "p50", "p90", "prob_never")),
    *(("cost_per_unit", "*", s) for s in ("p10", "p50", "p90")),
    *(("api_tco", s) for s in ("mean", "p10", "p50", "p90")),
    ("prob_buy_cheaper_than_api",),
    *(("payback_vs_api_months", s) for s in ("p10", "p50", "p90", "prob_never")),
    ("cheapest_share", "*"),
    *(("carbon", "*", s) for s in ("mean", "p10", "p50", "p90")),
    *(("carbon", "per_unit", "*", s) for s in ("p10", "p50", "p90")),
)


#: What an answer holds beside the engine's result, by the name a load gives it (a plan's has
#: no ``wording``).
_WORDS = ("document", "catalog", "warnings", "assumptions", "verdict", "wording")


class ResultBase(Strict):
    """What every result holds first: its schema version (another version is refused for its
    version alone), the resolved document, the sampling settings and the catalog. A load
    makes an :class:`~.answer.Answer` of the result (:meth:`answer`)."""

    schema_version = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Equal(SCHEMA_VERSION, error=_UNSUPPORTED),
    )
    scenario = fields.Dict(
        required=True,
        attribute="document",
        validate=_plain_data,
        metadata={"description": "the resolved document: every default filled in"},
    )
    seed = fields.Integer(required=True, strict=True)
    samples = fields.Integer(
        required=True, strict=True, validate=validate.Range(1), metadata={"description": "[draw]"}
    )
    method = fields.String(required=True, validate=validate.OneOf(METHODS))
    catalog = fields.Nested(CatalogRefSchema, required=True)

    @pre_load
    def _version_first(self, data: Any, **kwargs: Any) -> Any:
        """A result of another schema version is refused for its version alone, not for each
        key that version may have added, renamed or dropped."""
        version = data.get("schema_version") if isinstance(data, Mapping) else None
        if type(version) is int and version != SCHEMA_VERSION:
            raise ValidationError(_UNSUPPORTED.format(input=version), "schema_version")
        return data

    @staticmethod
    def answer(make: Callable[..., Any], data: dict) -> Answer:
        """The answer of loaded ``data``: the engine's result ``make(**numbers)`` with the
        words beside it."""
        words = {key: data.pop(key) for key in _WORDS if key in data}
        for key in ("warnings", "assumptions"):
            words[key] = tuple(words[key])
        return Answer(make(**data), **words)


class VersusSchema(Strict):
    """Buying against a further side (beyond buy, rent and api), written in a result as the
    API's figures are: ``<side>_tco``, ``prob_buy_cheaper_than_<side>``, ``breakeven_vs_<side>``
    and ``payback_vs_<side>_months``."""

    tco = fields.Nested(StatsSchema, required=True)
    prob_buy_cheaper = floats("P(TCO_buy < TCO_side) per level [-]", nullable=False)
    breakeven = fields.Nested(BreakevenSchema, required=True)
    payback = fields.Nested(PaybackSchema, required=True)

    make = Versus

    #: The result's key of each field, for a side named ``{side}``.
    KEYS: ClassVar[dict[str, str]] = {
        "tco": "{side}_tco",
        "prob_buy_cheaper": "prob_buy_cheaper_than_{side}",
        "breakeven": "breakeven_vs_{side}",
        "payback": "payback_vs_{side}_months",
    }

    @classmethod
    def taken(cls, data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``data`` without the keys of further sides, and those keys' values by side."""
        sides = [n for n in SIDES if n not in ("buy", "rent", "api") and f"{n}_tco" in data]
        rest, found = dict(data), {}
        for side in sides:
            found[side] = {k: rest.pop(key.format(side=side), None) for k, key in cls.KEYS.items()}
        return rest, found

    @classmethod
    def written(cls, data: dict[str, Any], versus: Mapping[str, Any]) -> dict[str, Any]:
        """``data`` with each further side's keys, before ``cheapest_share`` (or the keys that
        follow it)."""
        if not versus:
            return data
        keys = {}
        for side, v in versus.items():
            dumped = prebuilt(cls).dump(v)
            keys |= {key.format(side=side): dumped[k] for k, key in cls.KEYS.items()}
        after = ("cheapest_share", "availability", "carbon", "rivals", "warnings")
        at = next((list(data).index(k) for k in after if k in data), len(data))
        items = list(data.items())
        return dict(items[:at] + list(keys.items()) + items[at:])


class ResultSchema(ResultBase):
    """The result contract, ``schema_version`` 1. Money in USD at present value; null marks
    no value (a percentile on "never", a unit cost at u = 0). Buying against a further side
    (beyond buy, rent and api) is written as the API's figures are (:class:`VersusSchema`)."""

    def dump(self, obj: Any, *, many: bool | None = None) -> Any:
        data = super().dump(obj, many=many)
        return data if many else VersusSchema.written(data, getattr(obj, "versus", {}))

    def load(self, data: Any, **kwargs: Any) -> Any:
        if not isinstance(data, Mapping):
            return super().load(data, **kwargs)
        rest, found = VersusSchema.taken(data)
        result = super().load(rest, **kwargs)
        if not found:
            return result
        try:
            schema = prebuilt(VersusSchema)
            versus = {side: schema.load(v) for side, v in found.items()}
        except ValidationError as exc:
            raise ValidationError({"versus": exc.messages}) from None
        if isinstance(result, Answer):  # the schema loads an answer; versus is its result's
            return dataclasses.replace(
                result, result=dataclasses.replace(result.result, versus=versus)
            )
        return dataclasses.replace(result, versus=versus)

    utilisation = floats("levels [-]", nullable=False)
    buy_tco = fields.Nested(StatsSchema, required=True)
    rent_tco = fields.Nested(StatsSchema, required=True)
    prob_buy_cheaper = floats("P(TCO_buy < TCO_rent) per level [-]", nullable=False)
    breakeven_utilisation = fields.Nested(BreakevenSchema, required=True)
    payback_months = fields.Nested(PaybackSchema, required=True)
    cost_per_unit = fields.Nested(UnitCostSchema, required=True)
    cost_per_reference_gpu_hour = fields.Nested(
        TrainingUnitCostSchema,
        dump_only=True,
        metadata={"description": "training results: cost_per_unit's buy and rent, by its old name"},
    )
    cumulative_cost = fields.Nested(CumulativeSchema, required=True)
    sensitivity = fields.Nested(
        SensitivitySchema,
        load_default=None,
        metadata={"description": "absent in runs stored before it existed"},
    )
    convergence = fields.Nested(
        ConvergenceSchema,
        load_default=None,
        allow_none=True,
        metadata={"description": "precision of the run; absent in runs stored before it existed"},
    )
    tornado = fields.Nested(
        TornadoSchema,
        load_default=None,
        allow_none=True,
        metadata={"description": "one-at-a-time swings; absent in runs stored before it existed"},
    )
    value_of_information = fields.Nested(
        ValueOfInformationSchema,
        load_default=None,
        allow_none=True,
        metadata={
            "description": "EVPI and EVPPI by input; absent in runs stored before it existed"
        },
    )
    api_tco = fields.Nested(
        StatsSchema, load_default=None, metadata={"description": "with a hosted API only"}
    )
    prob_buy_cheaper_than_api = Floats(
        nullable=False,
        load_default=None,
        metadata={"description": "P(TCO_buy < TCO_api) per level [-]; with a hosted API only"},
    )
    breakeven_vs_api = fields.Nested(
        BreakevenSchema,
        load_default=None,
        metadata={"description": "the smallest u with TCO_buy(u) <= TCO_api(u); with an API only"},
    )
    payback_vs_api_months = fields.Nested(
        PaybackSchema,
        load_default=None,
        metadata={"description": "payback of buying against the API; with a hosted API only"},
    )
    cheapest_share = fields.Nested(
        CheapestSchema, load_default=None, metadata={"description": "with a hosted API only"}
    )
    availability = fields.Nested(
        AvailabilitySchema,
        load_default=None,
        metadata={"description": "share of the owned GPUs in service; with downtime only"},
    )
    carbon = fields.Nested(
        CarbonSchema,
        load_default=None,
        metadata={"description": "each side's emissions; absent without carbon figures"},
    )
    rivals = fields.List(
        fields.Nested(RivalSchema),
        load_default=(),
        metadata={
            "description": "sensitivity, tornado, value of information and convergence "
            "against each side but renting (a hosted API, then each further side, in the "
            "question's order); with such a side only"
        },
    )
    warnings = fields.List(fields.Nested(AdviceSchema), required=True)
    verdict = fields.String(required=True, metadata={"description": "one-sentence answer"})
    wording = fields.Nested(
        WordingSchema,
        load_default=None,
        metadata={
            "description": "the result's further sentences, which the CLI, the reports and "
            "the web page print; absent in runs stored before them"
        },
    )
    assumptions = fields.List(fields.Nested(AssumptionSchema), required=True)

    @pre_load
    def _old_unit_cost(self, data: Any, **kwargs: Any) -> Any:
        """A training result names its unit cost ``cost_per_reference_gpu_hour`` as well (the
        only name in results stored before ``cost_per_unit``): read it as the unit cost in
        reference GPU-hours when ``cost_per_unit`` is absent, and drop it."""
        if not isinstance(data, Mapping) or "cost_per_reference_gpu_hour" not in data:
            return data
        data = dict(data)
        old = data.pop("cost_per_reference_gpu_hour")
        if "cost_per_unit" not in data and isinstance(old, Mapping):
            data["cost_per_unit"] = {"unit": "reference_gpu_hour", **old}
        return data

    @validates_schema
    def _aligned(self, data: dict, **kwargs: Any) -> None:
        n = len(data["utilisation"])
        errors = {}
        for path, node in _walk(data, _ALIGNED):
            if len(node) != n:
                errors[path] = [f"{len(node)} values for {n} utilisation levels"]
        precision = {"convergence": data.get("convergence")}
        for i, rival in enumerate(data.get("rivals") or ()):
            precision[f"rivals.{i}.convergence"] = rival.convergence
        for path, convergence in precision.items():
            for name in ("gap_mean_se", "prob_buy_cheaper_se", "prob_buy_cheaper_ci95"):
                values = None if convergence is None else getattr(convergence, name)
                if values is not None and len(values) != n:
                    errors[f"{path}.{name}"] = [f"{len(values)} values for {n} utilisation levels"]
        if errors:
            raise ValidationError(errors)

    absent = _ADDED

    @post_dump
    def _drop_absent(self, data: dict, **kwargs: Any) -> dict:
        """A result loaded from a file written before ``convergence``, ``tornado`` and
        ``value_of_information`` existed is written back without them, as it was; the API's
        keys are written only with an API, ``availability`` only for a build with downtime;
        a training result's unit cost is written under its old name as well."""
        unit = data["cost_per_unit"]
        if unit["unit"] == "reference_gpu_hour":
            data["cost_per_reference_gpu_hour"] = {"buy": unit["buy"], "rent": unit["rent"]}
        if not data.get("rivals"):
            data["rivals"] = None
        return super()._drop_absent(data)

    @post_load
    def _make(self, data: dict, **kwargs: Any) -> Answer:
        if data["sensitivity"] is None:
            data["sensitivity"] = Sensitivity(
                data["cumulative_cost"].utilisation, "buy_tco - rent_tco", ()
            )
        data["rivals"] = tuple(data["rivals"])
        return self.answer(Result, data)
