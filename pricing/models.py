"""Frozen records of the pricing catalogs: GPUs, cloud instances, price history, platform tiers,
and the inference catalogs: served models, measured serving throughput, hosted API prices.

Every record validates its own types, units and ranges in ``__post_init__`` and raises
:class:`~pricing.errors.CatalogError` naming the offending column; the CSV loaders add the file
name and row id. Money is US dollars, power watts, memory gigabytes, throughput TFLOPS/TOPS.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from .errors import CatalogError, UnknownIdError
from .suggest import closest
from .vocabulary import (
    API_LIMITS,
    ARCHITECTURE,
    BYTES_PER_PARAMETER,
    COOLING,
    FORM_FACTORS,
    GPU_LIMITS,
    IDLE_FRACTION_OF_TDP,
    INSTANCE_LIMITS,
    INTERCONNECTS,
    MODEL_LIMITS,
    MODULES,
    PLATFORM_LIMITS,
    PRECISIONS,
    PRICING_MODELS,
    SERVING_LIMITS,
    SERVING_PRECISIONS,
    TIERS,
    Bound,
)

__all__ = ["GPU", "ApiOffer", "Instance", "Model", "PlatformTier", "PriceRecord", "ServingPoint"]

_GPU_ID = re.compile(r"^[a-z0-9][a-z0-9._:-]*$")
_INSTANCE_ID = re.compile(r"^[a-z0-9-]+/[a-z0-9][a-z0-9._-]*$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _check_number(
    value: float | None, column: str, bound: Bound, *, optional: bool = False
) -> None:
    if value is None:
        if not optional:
            raise CatalogError("is required", column=column)
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CatalogError(f"expected a number, got {value!r}", column=column)
    if not math.isfinite(value):
        raise CatalogError(f"{value!r} is not finite", column=column)
    if bound.integer and not isinstance(value, int):
        raise CatalogError(f"expected an integer, got {value!r}", column=column)
    problem = bound.problem(value)
    if problem:
        raise CatalogError(problem, column=column)


def _check_date(value: str, column: str) -> None:
    """``value`` is an ISO calendar date ``YYYY-MM-DD`` (a real day, not only the shape)."""
    problem = f"{value!r} is not an ISO date (YYYY-MM-DD)"
    if not isinstance(value, str) or not _ISO_DATE.match(value):
        raise CatalogError(problem, column=column)
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise CatalogError(problem, column=column) from None


def _check_text(value: str, column: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise CatalogError("must be non-empty text", column=column)


def _check_choice(value: str, column: str, kind: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise CatalogError(f"unknown {kind} {value!r}; valid: {', '.join(choices)}", column=column)


def _check_estimated_fields(names: tuple[str, ...], allowed: set[str]) -> None:
    for name in names:
        if name not in allowed:
            raise CatalogError(
                f"unknown field {name!r} in estimated_fields; valid: {', '.join(sorted(allowed))}",
                column="estimated_fields",
            )


@dataclass(frozen=True)
class GPU:
    """One GPU model.

    Attributes:
        id: stable catalog id, lowercase (``"rtx-2080-ti"``).
        name, family, arch: display text.
        year: launch year [year] or None.
        fp32_tflops: peak FP32 [TFLOPS] (non-tensor).
        fp16_tflops: peak dense FP16 tensor [TFLOPS]; None for GPUs without tensor cores.
        int8_tops: peak dense INT8 tensor [TOPS].
        tf32_tflops: peak dense TF32 tensor [TFLOPS], the rate 32-bit training runs at on
            tensor cores that have TF32 (NVIDIA Ampere and later, AMD CDNA 3); None before.
        memory_gb: memory [GB], 0.5..512.
        bandwidth_gbs: memory bandwidth [GB/s].
        tdp_w: board power at peak [W], 10..2000.
        idle_w: draw when powered but idle [W]; ``idle_w_estimated`` when it is the
            documented fraction of TDP rather than a sourced figure.
        price_usd: launch/street price [USD/GPU] or None; ``price_estimated`` when estimated.
        cooling: ``"open-air" | "blower" | "passive" | "sxm"``.
        form_factor: ``"pcie"`` (a card) or a module on a baseboard, ``"sxm" | "oam"``;
            a module is cooled as one (``cooling == "sxm"``) and a card is not.
        measured: precision -> measured training throughput relative to v100-sxm2-16gb [-].
        measured_source, source, note: citations and remarks.
        estimated_fields: names of other fields that are estimated or derived (see ``note``).
    """

    id: str
    name: str
    family: str
    arch: str
    year: int | None
    fp32_tflops: float | None
    fp16_tflops: float | None
    int8_tops: float | None
    memory_gb: float
    bandwidth_gbs: float | None
    tdp_w: float
    idle_w: float
    idle_w_estimated: bool
    price_usd: float | None
    price_estimated: bool
    cooling: str
    measured: Mapping[str, float] = field(default_factory=dict, hash=False)
    measured_source: str = ""
    source: str = ""
    note: str = ""
    estimated_fields: tuple[str, ...] = ()
    tf32_tflops: float | None = None
    form_factor: str = "pcie"
    #: Described inline by a scenario (:meth:`inline`), not a catalog row.
    is_inline: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _GPU_ID.match(self.id):
            raise CatalogError(
                f"invalid GPU id {self.id!r} (lowercase letters, digits, '.', '_', ':', '-')",
                column="id",
            )
        _check_text(self.name, "name")
        peaks = ("fp32_tflops", "tf32_tflops", "fp16_tflops", "int8_tops")
        for column in (*peaks, "bandwidth_gbs", "year"):
            _check_number(getattr(self, column), column, GPU_LIMITS[column], optional=True)
        self._check_tf32()
        for column in ("memory_gb", "tdp_w", "idle_w"):
            _check_number(getattr(self, column), column, GPU_LIMITS[column])
        if self.idle_w > self.tdp_w:
            raise CatalogError(
                f"must be <= tdp_w ({self.tdp_w:g} [W]), got {self.idle_w:g}", column="idle_w"
            )
        _check_number(self.price_usd, "price_usd", GPU_LIMITS["price_usd"], optional=True)
        _check_choice(self.cooling, "cooling", "cooling", COOLING)
        _check_choice(self.form_factor, "form_factor", "form factor", FORM_FACTORS)
        if (self.form_factor in MODULES) != (self.cooling == "sxm"):
            raise CatalogError(
                f"a {self.form_factor} GPU must have cooling 'sxm' exactly when it is a module "
                f"({', '.join(MODULES)}), got cooling {self.cooling!r}",
                column="form_factor",
            )
        for name in ("idle_w_estimated", "price_estimated"):
            if not isinstance(getattr(self, name), bool):
                raise CatalogError("expected true or false", column=name)
        measured = dict(self.measured)
        for precision, value in measured.items():
            if precision not in PRECISIONS:
                raise CatalogError(f"unknown precision {precision!r}", column="measured")
            _check_number(value, f"measured_{precision}", GPU_LIMITS["measured"])
        object.__setattr__(self, "measured", MappingProxyType(measured))
        object.__setattr__(self, "estimated_fields", tuple(self.estimated_fields))
        allowed = {f.name for f in fields(self)} | {f"measured_{p}" for p in PRECISIONS}
        _check_estimated_fields(self.estimated_fields, allowed)

    def _check_tf32(self) -> None:
        """A TF32 peak needs FP16 tensor cores, and is at most their FP16 rate."""
        tf32, fp16 = self.tf32_tflops, self.fp16_tflops
        if tf32 is not None and (fp16 is None or tf32 > fp16):
            raise CatalogError(
                f"a TF32 tensor peak needs an FP16 tensor peak (fp16_tflops) at least as high; "
                f"got {tf32:g} against {'none' if fp16 is None else f'{fp16:g}'}",
                column="tf32_tflops",
            )

    @classmethod
    def inline(
        cls,
        name: str,
        memory_gb: float,
        tdp_w: float,
        price_usd: float | None,
        fp32_tflops: float | None = None,
        fp16_tflops: float | None = None,
        int8_tops: float | None = None,
        idle_w: float | None = None,
        *,
        cooling: str = "open-air",
        bandwidth_gbs: float | None = None,
        arch: str = "",
    ) -> GPU:
        """A GPU described inline by a scenario rather than taken from the catalog.

        Args:
            name: display name; the id becomes ``"inline:<slug of name>"``.
            memory_gb: memory [GB]. tdp_w: peak board power [W]. price_usd: price [USD/GPU].
            fp32_tflops, fp16_tflops, int8_tops: peaks [TFLOPS]/[TOPS]; without any of them the
                scenario must give ``relative_throughput`` explicitly.
            idle_w: idle draw [W]; default ``IDLE_FRACTION_OF_TDP * tdp_w`` (marked estimated).
            cooling: cooling class; default ``"open-air"`` (the consumer-card case).
            bandwidth_gbs: memory bandwidth [GB/s], for a serving estimate; None: unknown.
            arch: architecture (``"Hopper"``...: whether it has fp8 and fp4 tensor cores,
                :data:`pricing.estimate.LOW_PRECISION_ARCHS`); empty: unknown (none).

        Raises:
            CatalogError: a value is out of range (the message names the field).
        """
        slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-") or "gpu"
        estimated = idle_w is None
        try:
            if estimated:
                _check_number(tdp_w, "tdp_w", GPU_LIMITS["tdp_w"])
                idle_w = round(IDLE_FRACTION_OF_TDP * float(tdp_w), 1)
            return cls(
                id=f"inline:{slug}",
                name=str(name),
                family="inline",
                arch=str(arch or ""),
                year=None,
                fp32_tflops=fp32_tflops,
                fp16_tflops=fp16_tflops,
                int8_tops=int8_tops,
                memory_gb=memory_gb,
                bandwidth_gbs=bandwidth_gbs,
                tdp_w=tdp_w,
                idle_w=idle_w,
                idle_w_estimated=estimated,
                price_usd=price_usd,
                price_estimated=False,
                cooling=cooling,
                source="inline (scenario)",
                is_inline=True,
            )
        except CatalogError as exc:
            raise exc.located(file="<inline GPU>", row_id=str(name)) from None


@dataclass(frozen=True)
class PriceRecord:
    """A past price of a cloud instance.

    Attributes:
        id: instance id. pricing: ``"on_demand" | "spot" | "reserved_1y" | "reserved_3y"``.
        usd_per_hour: price [USD/h] per instance.
        valid_from, valid_to: ISO dates ``YYYY-MM-DD``; ``valid_from`` empty when unknown.
            ``valid_from`` may be the first observation rather than the start, ``valid_to`` the
            day the next price was first seen (data/NOTES.md).
        source, note: citation and remarks.
    """

    id: str
    pricing: str
    usd_per_hour: float
    valid_from: str
    valid_to: str
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        _check_choice(self.pricing, "pricing", "pricing", PRICING_MODELS)
        _check_number(self.usd_per_hour, "usd_per_hour", INSTANCE_LIMITS["usd_per_hour"])
        for name in ("valid_from", "valid_to"):
            value = getattr(self, name)
            if value or name == "valid_to":
                _check_date(value, name)
        if self.valid_from and self.valid_to and self.valid_to < self.valid_from:
            raise CatalogError(
                f"valid_to {self.valid_to!r} is before valid_from {self.valid_from!r}",
                column="valid_to",
            )
        _check_text(self.source, "source")


@dataclass(frozen=True)
class Instance:
    """A cloud instance type.

    Attributes:
        id: ``"<provider>/<name lowercased>"``, e.g. ``"aws/p3.8xlarge"``,
            ``"azure/standard_nc6s_v3"``. provider: lowercase provider key. tier: kind of
            provider, ``"hyperscaler" | "neocloud" | "marketplace"``. name: the provider's own
            spelling (``"Standard_NC6s_v3"``).
        gpu: catalog GPU id. gpu_count: GPUs per instance. vcpus: vCPUs. ram_gib: RAM [GiB].
        region: price region. as_of: ISO date ``YYYY-MM-DD`` of the on-demand price (the day
            the source observed it).
        on_demand_usd_per_hour, reserved_1y_usd_per_hour, reserved_3y_usd_per_hour,
        spot_usd_per_hour: prices [USD/h] per instance; None when unknown.
        interconnect: GPU-to-GPU link (``"nvlink"``, ``"pcie-x16"``, ...).
        history: superseded prices, oldest first.
        source, note: citations and remarks. estimated_fields: estimated/assumed fields.
    """

    id: str
    provider: str
    tier: str
    name: str
    gpu: str
    gpu_count: int
    vcpus: int
    ram_gib: float
    region: str
    as_of: str
    on_demand_usd_per_hour: float
    reserved_1y_usd_per_hour: float | None
    reserved_3y_usd_per_hour: float | None
    spot_usd_per_hour: float | None
    interconnect: str
    history: tuple[PriceRecord, ...] = ()
    source: str = ""
    note: str = ""
    estimated_fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _INSTANCE_ID.match(self.id):
            raise CatalogError(
                f"invalid instance id {self.id!r} (expected lowercase '<provider>/<name>')",
                column="id",
            )
        _check_text(self.provider, "provider")
        _check_choice(self.tier, "tier", "tier", TIERS)
        _check_text(self.name, "name")
        expected = f"{self.provider}/{self.name.casefold()}"
        if self.id != expected:
            raise CatalogError(
                f"id must be provider + '/' + name lowercased, i.e. {expected!r}", column="id"
            )
        _check_text(self.gpu, "gpu")
        for column in ("gpu_count", "vcpus", "ram_gib", "on_demand_usd_per_hour"):
            _check_number(getattr(self, column), column, INSTANCE_LIMITS[column])
        _check_text(self.region, "region")
        _check_date(self.as_of, "as_of")
        for pricing in ("reserved_1y", "reserved_3y", "spot"):
            column = f"{pricing}_usd_per_hour"
            _check_number(
                getattr(self, column), column, INSTANCE_LIMITS["usd_per_hour"], optional=True
            )
        _check_choice(self.interconnect, "interconnect", "interconnect", INTERCONNECTS)
        object.__setattr__(self, "history", tuple(self.history))
        for rec in self.history:
            if not isinstance(rec, PriceRecord) or rec.id != self.id:
                raise CatalogError("history records must belong to this instance", column="history")
        object.__setattr__(self, "estimated_fields", tuple(self.estimated_fields))
        _check_estimated_fields(self.estimated_fields, {f.name for f in fields(self)})

    def price(self, pricing: str) -> float:
        """Current price for a pricing model [USD/h per instance].

        Args:
            pricing: ``"on_demand" | "spot" | "reserved_1y" | "reserved_3y"``.

        Raises:
            UnknownIdError: ``pricing`` is not one of the four names.
            CatalogError: the catalog has no such price for this instance.
        """
        if pricing not in PRICING_MODELS:
            close = closest(str(pricing), PRICING_MODELS)
            raise UnknownIdError("pricing", str(pricing), close, PRICING_MODELS)
        value = getattr(self, f"{pricing}_usd_per_hour")
        if value is None:
            known = [p for p in PRICING_MODELS if getattr(self, f"{p}_usd_per_hour") is not None]
            raise CatalogError(
                f"instance {self.id!r} has no {pricing} price in the catalog "
                f"(known: {', '.join(known)})"
            )
        return float(value)


@dataclass(frozen=True)
class PlatformTier:
    """Everything in an owned build except the GPUs, for a GPU-count tier.

    Attributes:
        gpu_count: GPUs the tier holds (1, 2, 4, 8). name: display name.
        cpu, chassis, storage, network: description. dram_gb: host DRAM [GB].
        psu_w: usable power-supply capacity [W]. interconnect: GPU link the tier provides.
        price_usd: price of the platform without GPUs [USD]. power_w: platform draw under
            load, GPUs excluded [W].
        source: citations. estimated: True when any field is estimated
        (``estimated_fields`` lists them). note: derivations.
        form_factors: the GPU form factors the tier's builds take (:data:`FORM_FACTORS`): PCIe
            cards everywhere, SXM and OAM modules only where the tier has their baseboard.
    """

    gpu_count: int
    name: str
    cpu: str
    dram_gb: float
    psu_w: float
    chassis: str
    storage: str
    network: str
    interconnect: str
    price_usd: float
    power_w: float
    source: str
    estimated: bool
    estimated_fields: tuple[str, ...] = ()
    note: str = ""
    form_factors: tuple[str, ...] = ("pcie",)

    def __post_init__(self) -> None:
        object.__setattr__(self, "form_factors", tuple(self.form_factors))
        if not self.form_factors:
            raise CatalogError("must list at least one form factor", column="form_factors")
        for form in self.form_factors:
            _check_choice(form, "form_factors", "form factor", FORM_FACTORS)
        for name in ("name", "cpu", "chassis", "storage", "network", "source"):
            _check_text(getattr(self, name), name)
        for column, bound in PLATFORM_LIMITS.items():
            _check_number(getattr(self, column), column, bound)
        _check_choice(self.interconnect, "interconnect", "interconnect", INTERCONNECTS)
        object.__setattr__(self, "estimated_fields", tuple(self.estimated_fields))
        _check_estimated_fields(self.estimated_fields, {f.name for f in fields(self)})
        if self.estimated != bool(self.estimated_fields):
            raise CatalogError(
                "estimated must be true exactly when estimated_fields lists fields",
                column="estimated",
            )

    def takes(self, gpu: GPU) -> bool:
        """Whether ``gpu``'s form factor mounts in this tier's builds."""
        return gpu.form_factor in self.form_factors


@dataclass(frozen=True)
class Model:
    """A served model and its architecture.

    Attributes:
        id: stable catalog id, lowercase (``"llama-3.3-70b"``). name: display name.
        params_b: parameters [billions]; every expert of a mixture of experts (what the GPU
            memory must hold). active_params_b: parameters active per token [billions] for a
            mixture of experts, None for a dense model.
        precisions: the serving precisions the model is commonly served at (the catalog's
            measured rows are at some of them), in
            :data:`~pricing.vocabulary.SERVING_PRECISIONS` order.
        source, note: citations and remarks.
        layers: transformer layers [-]. kv_heads: key/value heads [-]. head_dim: values per
            head [-]. kv_dim_per_layer: values cached per token and layer by compressed
            attention (DeepSeek's MLA: kv_lora_rank + qk_rope_head_dim = 576), given instead of
            kv_heads and head_dim. sliding_window_layers: layers that attend to the last
            ``sliding_window`` tokens only [-]; sliding_window [tokens]. All None when the
            architecture is not known (an inline model given by its parameters alone).
        arch_source: where the architecture values come from (required with them).
    """

    id: str
    name: str
    params_b: float
    active_params_b: float | None
    precisions: tuple[str, ...]
    source: str
    note: str = ""
    #: Described inline by a scenario (:meth:`inline`), not a catalog row.
    is_inline: bool = False
    layers: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    kv_dim_per_layer: int | None = None
    sliding_window_layers: int | None = None
    sliding_window: int | None = None
    arch_source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _GPU_ID.match(self.id):
            raise CatalogError(
                f"invalid model id {self.id!r} (lowercase letters, digits, '.', '_', ':', '-')",
                column="id",
            )
        _check_text(self.name, "name")
        _check_number(self.params_b, "params_b", MODEL_LIMITS["params_b"])
        _check_number(
            self.active_params_b, "active_params_b", MODEL_LIMITS["params_b"], optional=True
        )
        if self.active_params_b is not None and self.active_params_b > self.params_b:
            raise CatalogError(
                f"must be <= params_b ({self.params_b:g}), got {self.active_params_b:g}",
                column="active_params_b",
            )
        object.__setattr__(self, "precisions", tuple(self.precisions))
        for precision in self.precisions:
            _check_choice(precision, "precisions", "precision", SERVING_PRECISIONS)
        ordered = tuple(p for p in SERVING_PRECISIONS if p in self.precisions)
        if not self.precisions or self.precisions != ordered:
            order = ", ".join(SERVING_PRECISIONS)
            raise CatalogError(
                f"must list each served precision once, in the order {order}", column="precisions"
            )
        _check_text(self.source, "source")
        self._check_architecture()

    def _check_architecture(self) -> None:
        """Each architecture value in range; given at all, the layers, one form of the KV
        cache (heads and head dim, or a compressed width), a window with its layers, and the
        source."""
        given = [c for c in ARCHITECTURE if getattr(self, c) is not None]
        for column in given:
            _check_number(getattr(self, column), column, MODEL_LIMITS[column])
        if not given:
            return
        if self.layers is None:
            raise CatalogError("is required with the other architecture values", column="layers")
        heads = (self.kv_heads is not None, self.head_dim is not None)
        if self.kv_dim_per_layer is not None and any(heads):
            raise CatalogError(
                "compressed attention caches kv_dim_per_layer values per layer instead of "
                "kv_heads x head_dim: give one or the other",
                column="kv_heads" if heads[0] else "head_dim",
            )
        if self.kv_dim_per_layer is None and not all(heads):
            missing = "kv_heads" if not heads[0] else "head_dim"
            raise CatalogError(
                "is required: the KV cache needs kv_heads and head_dim, or kv_dim_per_layer "
                "for compressed attention",
                column=missing,
            )
        self._check_window()
        _check_text(self.arch_source, "arch_source")

    def _check_window(self) -> None:
        window = (self.sliding_window_layers, self.sliding_window)
        if (window[0] is None) != (window[1] is None):
            raise CatalogError(
                "sliding_window_layers and sliding_window go together (both or neither)",
                column="sliding_window" if window[1] is None else "sliding_window_layers",
            )
        if window[0] is not None and self.layers is not None and window[0] > self.layers:
            raise CatalogError(
                f"must be <= layers ({self.layers}), got {window[0]}",
                column="sliding_window_layers",
            )

    @classmethod
    def inline(
        cls,
        name: str,
        params_b: float,
        active_params_b: float | None = None,
        *,
        source: str = "",
        **architecture: int | str | None,
    ) -> Model:
        """A model described inline by a scenario: ``params_b`` parameters [billions] (and
        ``active_params_b`` of a mixture of experts), and where known the architecture values
        (:data:`~pricing.vocabulary.ARCHITECTURE` and ``arch_source``). The catalog has no
        serving rows for it, so a scenario gives each side's throughput.

        Raises:
            CatalogError: a value is out of range (the message names the field).
        """
        slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-") or "model"
        return cls(
            id=f"inline:{slug}",
            name=str(name),
            params_b=params_b,
            active_params_b=active_params_b,
            precisions=SERVING_PRECISIONS,
            source=source or f"scenario: inline model {name!r}",
            is_inline=True,
            **architecture,
        )

    @property
    def kv_values_per_token(self) -> int | None:
        """Values the KV cache holds per token over every layer [-] (keys and values:
        2 x layers x kv_heads x head_dim, or layers x kv_dim_per_layer when compressed),
        without sliding windows; None when the architecture is not known."""
        if self.layers is None:
            return None
        if self.kv_dim_per_layer is not None:
            return self.layers * self.kv_dim_per_layer
        return 2 * self.layers * self.kv_heads * self.head_dim

    def weights_gb(self, precision: str) -> float:
        """Memory the weights take at ``precision`` [GB]: params_b * bytes per parameter."""
        return self.params_b * BYTES_PER_PARAMETER[precision]


@dataclass(frozen=True)
class ServingPoint:
    """One measured operating point: a model served at a precision on a GPU.

    Attributes:
        id: ``"<model>/<precision>/<gpu>/<input>x<output>/<setup>"``, e.g.
            ``"llama-3.3-70b/fp8/h100-sxm5-80gb/1024x1024/vllm"``.
        model: catalog model id. precision: ``"fp16" | "fp8" | "fp4"``. gpu: catalog GPU id.
        gpus_per_replica: GPUs serving one copy of the model [GPU], None when not stated.
        framework: the serving software, as the source names it.
        input_tokens, output_tokens: tokens per request of the measured shape [tokens].
        concurrency: requests in flight [requests], None when not stated or ``offline``.
        offline: an offline max-throughput run (every request queued at once, no latency target).
        tokens_per_s_per_gpu: total throughput [tokens/s per GPU, input + output].
        tokens_per_s_per_user: interactivity [output tokens/s per request], None when not
            measured.
        as_of: ISO date of the measurement (data/NOTES.md says how undated sources are dated).
        source, note: citations and remarks. estimated_fields: derived or estimated fields.
        ttft_ms, tpot_ms: median time to first token and per output token [ms], None when not
            measured (the catalog's rows do not carry them; an imported benchmark does).
        file: the user's serving file the row was read from; ``""`` for the catalog's rows.
    """

    id: str
    model: str
    precision: str
    gpu: str
    gpus_per_replica: int | None
    framework: str
    input_tokens: int
    output_tokens: int
    concurrency: int | None
    offline: bool
    tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float | None
    as_of: str
    source: str
    note: str = ""
    estimated_fields: tuple[str, ...] = ()
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    file: str = ""

    def __post_init__(self) -> None:
        _check_choice(self.precision, "precision", "precision", SERVING_PRECISIONS)
        for column in ("input_tokens", "output_tokens", "tokens_per_s_per_gpu"):
            _check_number(getattr(self, column), column, SERVING_LIMITS[column])
        for column in (
            "gpus_per_replica",
            "concurrency",
            "tokens_per_s_per_user",
            "ttft_ms",
            "tpot_ms",
        ):
            _check_number(getattr(self, column), column, SERVING_LIMITS[column], optional=True)
        if self.offline and self.concurrency is not None:
            raise CatalogError("an offline run has no concurrency", column="concurrency")
        prefix = (
            f"{self.model}/{self.precision}/{self.gpu}/{self.input_tokens}x{self.output_tokens}/"
        )
        if not isinstance(self.id, str) or not self.id.startswith(prefix) or self.id == prefix:
            raise CatalogError(
                f"id must be {prefix!r} followed by the setup, got {self.id!r}", column="id"
            )
        for name in ("framework", "source"):
            _check_text(getattr(self, name), name)
        _check_date(self.as_of, "as_of")
        object.__setattr__(self, "estimated_fields", tuple(self.estimated_fields))
        _check_estimated_fields(self.estimated_fields, {f.name for f in fields(self)})


@dataclass(frozen=True)
class ApiOffer:
    """A hosted model's API prices.

    Attributes:
        id: ``"<provider>/<model slug>"``, e.g. ``"together/llama-3.3-70b-instruct-turbo"``.
        provider: lowercase provider key. name: the provider's name of the model.
        model: the catalog model it serves (an open model the serving rows measure), else ``""``.
        input_usd_per_mtok, output_usd_per_mtok: prices [USD per million tokens].
        cached_input_usd_per_mtok: price of input tokens read from the provider's prompt cache
            [USD per million tokens], None when the provider publishes none.
        as_of: ISO date of the prices. source, note: citations and remarks.
        estimated_fields: estimated fields (see ``note``).
    """

    id: str
    provider: str
    name: str
    model: str
    input_usd_per_mtok: float
    cached_input_usd_per_mtok: float | None
    output_usd_per_mtok: float
    as_of: str
    source: str
    note: str = ""
    estimated_fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _INSTANCE_ID.match(self.id):
            raise CatalogError(
                f"invalid API offer id {self.id!r} (expected lowercase '<provider>/<model>')",
                column="id",
            )
        _check_text(self.provider, "provider")
        if not self.id.startswith(f"{self.provider}/"):
            raise CatalogError(
                f"id must start with the provider {self.provider!r} + '/'", column="id"
            )
        _check_text(self.name, "name")
        bound = API_LIMITS["usd_per_mtok"]
        for column in ("input_usd_per_mtok", "output_usd_per_mtok"):
            _check_number(getattr(self, column), column, bound)
        cached = self.cached_input_usd_per_mtok
        _check_number(cached, "cached_input_usd_per_mtok", bound, optional=True)
        if cached is not None and cached > self.input_usd_per_mtok:
            raise CatalogError(
                f"must be <= input_usd_per_mtok ({self.input_usd_per_mtok:g}), got {cached:g}",
                column="cached_input_usd_per_mtok",
            )
        _check_date(self.as_of, "as_of")
        _check_text(self.source, "source")
        object.__setattr__(self, "estimated_fields", tuple(self.estimated_fields))
        _check_estimated_fields(self.estimated_fields, {f.name for f in fields(self)})
