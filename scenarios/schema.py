"""The version-1 scenario schema (DESIGN section 3), shared by the YAML loader and the HTTP API.

Loading validates types, ranges and distribution forms and returns plain dicts whose *dist* fields
hold :class:`costmodel.distributions.Distribution` objects; fields left out are ``None`` (or their
fixed default) and are filled from the catalog by :mod:`scenarios.resolve`. Units are in square
brackets in each field's ``metadata["description"]``.
"""

from __future__ import annotations

import math
from typing import Any

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema

from costmodel.distributions import DIST_FORMS, DistributionError, from_spec
from costmodel.inputs import DEPRECIATION_METHODS, PRICING_MODELS
from costmodel.sampling import METHODS

__all__ = ["ScenarioSchema", "DistField", "PRECISIONS", "INTERCONNECTS", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
PRECISIONS = ("fp32", "fp16", "int8")
INTERCONNECTS = ("pcie-x16", "pcie-x8", "pcie-x4", "nvlink")


class DistField(fields.Field):
    """A number, or a distribution mapping ``{dist: ..., ...}``; every possible value in range.

    ``low``/``high`` bound the support of the distribution, so an unbounded normal for a
    bounded quantity is rejected with a hint to give ``low``/``high``.
    """

    def __init__(
        self,
        unit: str,
        description: str,
        low: float = -math.inf,
        high: float = math.inf,
        **kwargs: Any,
    ) -> None:
        self.low, self.high = low, high
        metadata = {
            "description": f"{description} {unit}",
            "unit": unit,
            "dist_forms": sorted(DIST_FORMS),
            "x-dist": True,
        }
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
        if lo < self.low or hi > self.high:
            span = f"[{lo:g}, {hi:g}]"
            rng = f"[{self.low:g}, {self.high:g}]"
            hint = (
                " (give low/high bounds to truncate it)" if math.isinf(lo) or math.isinf(hi) else ""
            )
            raise ValidationError(f"values must lie in {rng}, but this input spans {span}{hint}")
        return dist

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any):
        return None if value is None else value.to_spec()


class _Ref(fields.Field):
    """A catalog id (string) or an inline mapping validated by ``schema``."""

    def __init__(self, schema: type[Schema], description: str, **kwargs: Any) -> None:
        self.schema_cls = schema
        super().__init__(
            metadata={"description": description, "x-ref-or-inline": schema.__name__}, **kwargs
        )

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any):
        if isinstance(value, str):
            if not value.strip():
                raise ValidationError("must be a catalog id or an inline mapping, got ''")
            return value.strip()
        if isinstance(value, dict):
            return self.schema_cls().load(value)
        raise ValidationError(
            f"must be a catalog id (string) or an inline mapping, got {type(value).__name__}"
        )


def _range(low: float | None, high: float | None) -> validate.Range:
    return validate.Range(min=low, max=high, error="must be in [{min}, {max}], got {input}")


def _num(
    description: str, low: float | None = None, high: float | None = None, **kwargs: Any
) -> fields.Float:
    return fields.Float(
        allow_nan=False,
        validate=_range(low, high),
        metadata={"description": description},
        **kwargs,
    )


class _Base(Schema):
    class Meta:
        ordered = True


class InlineGPUSchema(_Base):
    """A GPU the catalog lacks."""

    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    memory_gb = _num("memory [GB]", 0.5, 1024, required=True)
    tdp_w = _num("board power [W]", 1, 3000, required=True)
    price_usd = _num("price [USD/GPU]", 0, 1e7, required=True)
    fp32_tflops = _num("FP32 peak [TFLOPS]", 0.001, 1e5, load_default=None)
    fp16_tflops = _num("dense FP16 tensor peak [TFLOPS]", 0.001, 1e5, load_default=None)
    int8_tops = _num("dense INT8 peak [TOPS]", 0.001, 1e6, load_default=None)
    idle_w = _num("idle draw [W]", 0, 3000, load_default=None)


class InlineInstanceSchema(_Base):
    """A cloud instance the catalog lacks."""

    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    gpu = _Ref(InlineGPUSchema, "catalog GPU id or inline GPU", required=True)
    gpu_count = fields.Integer(strict=True, required=True, validate=_range(1, 64))
    on_demand_usd_per_hour = _num("[USD/instance-hour]", 0, 1e5, required=True)
    spot_usd_per_hour = _num("[USD/instance-hour]", 0, 1e5, load_default=None)
    reserved_1y_usd_per_hour = _num("[USD/instance-hour]", 0, 1e5, load_default=None)
    reserved_3y_usd_per_hour = _num("[USD/instance-hour]", 0, 1e5, load_default=None)
    interconnect = fields.String(validate=validate.OneOf(INTERCONNECTS), load_default=None)


class UtilisationRangeSchema(_Base):
    start = _num("first level [-]", 0, 1, required=True)
    stop = _num("last level [-]", 0, 1, required=True)
    step = _num("step [-]", 0.001, 1, required=True)

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


class _Utilisation(fields.Field):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            metadata={
                "description": "utilisation levels [-]: a list of numbers in [0, 1] "
                "or {start, stop, step}; at most 101 levels"
            },
            **kwargs,
        )

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any):
        if isinstance(value, dict):
            levels = UtilisationRangeSchema().load(value)
        elif isinstance(value, list):
            levels = fields.List(_num("level", 0, 1), validate=validate.Length(min=1)).deserialize(
                value
            )
        else:
            raise ValidationError("must be a list of levels or {start, stop, step}")
        if len(levels) > 101:
            raise ValidationError(f"at most 101 utilisation levels, got {len(levels)}")
        return sorted(set(levels))


class SimulationSchema(_Base):
    samples = fields.Integer(
        strict=True,
        validate=_range(1, 1_000_000),
        load_default=10_000,
        metadata={"description": "Monte Carlo draws [-]"},
    )
    seed = fields.Integer(
        strict=True,
        validate=_range(0, 2**63 - 1),
        load_default=0,
        metadata={"description": "random seed; same seed, same result"},
    )
    method = fields.String(
        validate=validate.OneOf(METHODS),
        load_default="lhs",
        metadata={"description": "sampler: random | lhs | sobol"},
    )


class WorkloadSchema(_Base):
    precision = fields.String(
        validate=validate.OneOf(PRECISIONS),
        load_default="fp16",
        metadata={"description": "picks the catalog throughput column"},
    )
    reference_gpu = fields.String(
        load_default="v100-sxm2-16gb",
        metadata={"description": "catalog id: unit of normalised work"},
    )
    min_gpu_memory_gb = _num("reject GPUs with less memory [GB]", 0, 1024, load_default=None)


class _Side(_Base):
    """Inputs both sides share."""

    admin_usd_per_month = DistField("[USD/month]", "administration", 0)
    relative_throughput = DistField(
        "[reference GPU-hours/GPU-hour]",
        "per-GPU throughput override; default: catalog",
        1e-6,
        1000,
    )
    scaling_efficiency = DistField("[-]", "multi-GPU scaling; default: interconnect table", 1e-6, 1)


class BuySchema(_Side):
    gpu = _Ref(InlineGPUSchema, "catalog GPU id or inline GPU", required=True)
    gpu_count = fields.Integer(strict=True, required=True, validate=_range(1, 64))
    interconnect = fields.String(
        validate=validate.OneOf(INTERCONNECTS),
        load_default=None,
        metadata={"description": "GPU link; default: platform tier"},
    )
    gpu_price_usd = DistField("[USD/GPU]", "GPU price; default: catalog", 0)
    platform_price_usd = DistField(
        "[USD]", "CPU, board, RAM, PSU, chassis, storage; default: tier by GPU count", 0
    )
    setup_usd = DistField("[USD]", "one-off setup, not resold", 0)
    gpu_power_w = DistField("[W/GPU]", "busy draw; default: catalog TDP", 0, 5000)
    gpu_idle_w = DistField("[W/GPU]", "idle draw; default: catalog", 0, 5000)
    platform_power_w = DistField("[W]", "host draw without GPUs; default: tier", 0, 50_000)
    powered_when_idle = fields.Boolean(
        load_default=True, metadata={"description": "the build stays on when idle"}
    )
    electricity_usd_per_kwh = DistField("[USD/kWh]", "electricity price", 0, 10)
    electricity_annual_change = DistField("[1/year]", "annual electricity price change", -0.99, 10)
    pue = DistField("[-]", "power usage effectiveness, cooling and facility overhead", 1, 5)
    hosting_usd_per_kw_month = DistField("[USD/(kW*month)]", "colocation, on peak IT kW", 0, 10_000)
    maintenance_rate = DistField("[1/year]", "maintenance as a share of hardware price", 0, 1)
    gpu_annual_failure_rate = DistField("[1/year]", "GPU replacements at gpu_price_usd", 0, 1)
    resale_annual_decay = DistField("[1/year]", "market value lost per year (geometric)", 0, 1)
    depreciation = fields.String(
        validate=validate.OneOf(DEPRECIATION_METHODS),
        load_default="straight_line",
        metadata={"description": "tax depreciation method"},
    )
    depreciation_years = fields.Integer(
        strict=True,
        validate=_range(1, 40),
        load_default=5,
        metadata={"description": "straight-line life [year]"},
    )
    thermal_derate = DistField("[-]", "throughput kept under the build's cooling", 1e-6, 1)


class RentSchema(_Side):
    instance = _Ref(InlineInstanceSchema, "catalog instance id or inline instance", required=True)
    pricing = fields.String(
        validate=validate.OneOf(PRICING_MODELS),
        load_default="on_demand",
        metadata={"description": "on_demand | spot | reserved_1y | reserved_3y"},
    )
    price_usd_per_hour = DistField(
        "[USD/instance-hour]", "price for the pricing model; default: catalog", 0, 1e5
    )
    on_demand_price_usd_per_hour = DistField(
        "[USD/instance-hour]", "overflow above a reservation; default: catalog", 0, 1e5
    )
    committed_instances = fields.Integer(
        strict=True,
        validate=_range(0, 10_000),
        load_default=None,
        allow_none=True,
        metadata={"description": "reserved instances; default ceil(T_own / T_inst)"},
    )
    price_annual_change = DistField("[1/year]", "annual cloud price change", -0.99, 10)
    spot_interruption_overhead = DistField(
        "[-]", "share of hours redone after interruptions", 0, 10
    )
    storage_usd_per_month = DistField("[USD/month]", "storage", 0)
    egress_usd_per_month = DistField("[USD/month]", "data egress", 0)


class _Correlation(fields.Field):
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


class ScenarioSchema(_Base):
    """A whole scenario, version 1."""

    version = fields.Integer(
        strict=True,
        required=True,
        validate=validate.Equal(
            SCHEMA_VERSION, error="unsupported version {input}; this release reads version 1"
        ),
    )
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    description = fields.String(load_default="", validate=validate.Length(max=5000))
    horizon_months = fields.Integer(
        strict=True,
        load_default=36,
        validate=_range(1, 240),
        metadata={"description": "[month] 1..240"},
    )
    discount_rate = _num("[1/year] nominal annual", -0.49, 1, load_default=0.0)
    tax_rate = _num(
        "[-] 0..0.9; opex and depreciation deductible when > 0", 0, 0.9, load_default=0.0
    )
    utilisation = _Utilisation(load_default=lambda: [round(0.05 * i, 10) for i in range(1, 21)])
    report_utilisation = _num(
        "[-] level for the cumulative-cost-by-month chart", 0, 1, load_default=None
    )
    simulation = fields.Nested(SimulationSchema, load_default=lambda: SimulationSchema().load({}))
    workload = fields.Nested(WorkloadSchema, load_default=lambda: WorkloadSchema().load({}))
    buy = fields.Nested(BuySchema, required=True)
    rent = fields.Nested(RentSchema, required=True)
    correlations = fields.List(_Correlation(), load_default=list)
