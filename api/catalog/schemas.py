"""Schemas of the catalog endpoints: GPUs, cloud instances, served models, hosted API offers
and grid carbon intensities of the dated pricing catalog."""

from __future__ import annotations

from marshmallow import Schema, fields

from pricing.carbon import GRID_KINDS

__all__ = [
    "ApiOfferListSchema",
    "ApiOfferSchema",
    "GPUListSchema",
    "GPUSchema",
    "GridListSchema",
    "GridSchema",
    "InstanceListSchema",
    "InstanceSchema",
    "ModelListSchema",
    "ModelSchema",
]


def _num(description: str) -> fields.Float:
    return fields.Float(allow_none=True, metadata={"description": description})


class GPUSchema(Schema):
    """One catalog GPU; every row cites its source."""

    id = fields.String(required=True, metadata={"example": "rtx-2080-ti"})
    name = fields.String(required=True)
    family = fields.String(allow_none=True)
    arch = fields.String(allow_none=True)
    year = fields.Integer(allow_none=True)
    fp32_tflops = _num("FP32 peak [TFLOPS]")
    tf32_tflops = _num("dense TF32 tensor peak [TFLOPS], the rate of fp32 training on it")
    fp16_tflops = _num("dense FP16 tensor peak [TFLOPS]")
    int8_tops = _num("dense INT8 peak [TOPS]")
    memory_gb = _num("memory [GB]")
    bandwidth_gbs = _num("memory bandwidth [GB/s]")
    tdp_w = _num("board power [W]")
    idle_w = _num("idle draw [W]")
    idle_w_estimated = fields.Boolean()
    price_usd = _num("launch or street price [USD]")
    price_estimated = fields.Boolean()
    cooling = fields.String(allow_none=True, metadata={"example": "blower"})
    form_factor = fields.String(
        allow_none=True, metadata={"description": "pcie, sxm or oam", "example": "pcie"}
    )
    measured = fields.Dict(
        keys=fields.String(),
        values=fields.Float(),
        metadata={
            "description": "measured throughput by precision, relative to v100-sxm2-16gb [-]"
        },
    )
    measured_source = fields.String(allow_none=True)
    source = fields.String(allow_none=True)
    note = fields.String(allow_none=True)


class InstanceSchema(Schema):
    """One catalog cloud instance with its hourly prices."""

    id = fields.String(required=True, metadata={"example": "aws/p3.8xlarge"})
    provider = fields.String()
    name = fields.String()
    gpu = fields.String(metadata={"description": "catalog GPU id"})
    gpu_count = fields.Integer()
    vcpus = fields.Integer(allow_none=True)
    ram_gib = _num("memory [GiB]")
    region = fields.String(allow_none=True)
    as_of = fields.String(allow_none=True, metadata={"description": "ISO date of the prices"})
    on_demand_usd_per_hour = _num("[USD/instance-hour]")
    reserved_1y_usd_per_hour = _num("[USD/instance-hour]")
    reserved_3y_usd_per_hour = _num("[USD/instance-hour]")
    spot_usd_per_hour = _num("[USD/instance-hour]")
    interconnect = fields.String(allow_none=True)
    source = fields.String(allow_none=True)
    note = fields.String(allow_none=True)


def _int(description: str) -> fields.Integer:
    return fields.Integer(allow_none=True, metadata={"description": description})


class ModelSchema(Schema):
    """One served model: its parameters and architecture, each with its source, and where the
    catalog measures it: the GPUs with a measured operating point at each precision (a scenario
    of the model on another GPU gives its throughput)."""

    id = fields.String(required=True, metadata={"example": "llama-3.3-70b"})
    name = fields.String()
    params_b = _num("parameters, every expert counted [billion]")
    active_params_b = _num("parameters active per token of a mixture of experts [billion]")
    precisions = fields.List(
        fields.String(), metadata={"description": "the precisions it is commonly served at"}
    )
    measured_on = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String()),
        metadata={
            "description": "catalog GPU ids with a measured operating point, by precision (only "
            "the precisions the catalog measures it at)",
            "example": {"fp8": ["h100-sxm5-80gb", "h200-sxm-141gb"]},
        },
    )
    source = fields.String(allow_none=True)
    note = fields.String(allow_none=True)
    layers = _int("transformer layers [-]")
    kv_heads = _int("key/value heads [-]; null for compressed attention")
    head_dim = _int("values per head [-]; null for compressed attention")
    kv_dim_per_layer = _int(
        "values cached per token and layer by compressed attention (DeepSeek's MLA: 576) [-]"
    )
    sliding_window_layers = _int("layers that attend to a sliding window only [-]")
    sliding_window = _int("that window [tokens]")
    arch_source = fields.String(
        allow_none=True, metadata={"description": "where the architecture values come from"}
    )


class ApiOfferSchema(Schema):
    """One hosted API's dated prices per million tokens."""

    id = fields.String(required=True, metadata={"example": "together/llama-3.3-70b-instruct-turbo"})
    provider = fields.String()
    name = fields.String(metadata={"description": "the provider's name of the model"})
    model = fields.String(
        metadata={"description": "the catalog model it serves, empty for a closed model"}
    )
    input_usd_per_mtok = _num("[USD/M tokens]")
    cached_input_usd_per_mtok = _num("input read from the prompt cache [USD/M tokens]")
    output_usd_per_mtok = _num("[USD/M tokens]")
    as_of = fields.String(allow_none=True, metadata={"description": "ISO date of the prices"})
    estimated_fields = fields.List(fields.String())
    source = fields.String(allow_none=True)
    note = fields.String(allow_none=True)


class GridSchema(Schema):
    """The carbon intensity of one grid's electricity, a scenario's ``buy.grid`` or
    ``rent.grid`` (lookups are case-insensitive)."""

    id = fields.String(
        required=True,
        metadata={
            "description": "an ISO country code, a US eGRID subregion or a cloud region",
            "example": "US",
        },
    )
    kind = fields.String(
        metadata={"description": ", ".join(GRID_KINDS), "example": "country"},
    )
    name = fields.String()
    g_co2e_per_kwh = _num("carbon intensity [gCO2e/kWh]")
    year = fields.Integer(metadata={"description": "the year the figure describes"})
    basis = fields.String(
        metadata={
            "description": "lifecycle (generation, upstream fuel and supply chain) or "
            "operational (combustion at the plant only)",
            "example": "lifecycle",
        }
    )
    estimated = fields.Boolean(
        metadata={"description": "derived or mapped by the catalog, not read from the source"}
    )
    source = fields.String(allow_none=True)
    note = fields.String(allow_none=True)


class _CatalogList(Schema):
    version = fields.String(required=True, metadata={"example": "2026.11.29"})
    as_of = fields.String(required=True, metadata={"description": "ISO date of the catalog"})


class GPUListSchema(_CatalogList):
    """Every catalog GPU."""

    items = fields.List(fields.Nested(GPUSchema), required=True)


class InstanceListSchema(_CatalogList):
    """Every catalog instance."""

    items = fields.List(fields.Nested(InstanceSchema), required=True)


class ModelListSchema(_CatalogList):
    """Every served model."""

    items = fields.List(fields.Nested(ModelSchema), required=True)


class ApiOfferListSchema(_CatalogList):
    """Every hosted API offer."""

    items = fields.List(fields.Nested(ApiOfferSchema), required=True)


class GridListSchema(_CatalogList):
    """Every catalog grid."""

    items = fields.List(fields.Nested(GridSchema), required=True)
