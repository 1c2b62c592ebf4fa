"""The words and ranges of the catalogs, defined once for every package that needs them.

The scenario schema, the engine inputs and the HTTP API read the vocabularies (precisions,
interconnects, pricing models, cooling classes) and the catalog fields' ranges from here, so a
value the catalog would refuse is refused where it is typed, with the same message.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "BYTES_PER_PARAMETER",
    "API_LIMITS",
    "ARCHITECTURE",
    "Bound",
    "COOLING",
    "FORM_FACTORS",
    "GPU_LIMITS",
    "IDLE_FRACTION_OF_TDP",
    "INSTANCE_LIMITS",
    "INTERCONNECTS",
    "MODEL_LIMITS",
    "MODULES",
    "PLATFORM_LIMITS",
    "PRECISIONS",
    "PRICING_MODELS",
    "RESERVATION_MONTHS",
    "RESERVED_PRICINGS",
    "SERVING_LIMITS",
    "SERVING_PRECISIONS",
    "TIERS",
    "CARBON_LIMITS",
    "written",
]

#: Training/inference precisions; each picks a peak column and a measured column.
PRECISIONS: tuple[str, ...] = ("fp32", "fp16", "int8")
#: Precisions at which the serving catalog measures models (weights and tensor math).
SERVING_PRECISIONS: tuple[str, ...] = ("fp16", "fp8", "fp4")
#: Memory of one weight at each serving precision [byte/parameter].
BYTES_PER_PARAMETER: dict[str, float] = {"fp16": 2.0, "fp8": 1.0, "fp4": 0.5}
#: GPU-to-GPU links with a scaling-efficiency series.
INTERCONNECTS: tuple[str, ...] = ("nvlink", "pcie-x16", "pcie-x8", "pcie-x4")
#: Cloud pricing models of an instance.
PRICING_MODELS: tuple[str, ...] = ("on_demand", "spot", "reserved_1y", "reserved_3y")
#: Term of each reservation [month].
RESERVATION_MONTHS: dict[str, int] = {"reserved_1y": 12, "reserved_3y": 36}
#: The pricings that reserve instances for a term: the keys of :data:`RESERVATION_MONTHS`.
RESERVED_PRICINGS: frozenset[str] = frozenset(RESERVATION_MONTHS)
#: Kinds of cloud provider: hyperscalers (AWS, GCP, Azure), GPU neoclouds (Lambda, CoreWeave, ...),
#: and marketplaces whose prices are offers of many independent hosts (Vast.ai).
TIERS: tuple[str, ...] = ("hyperscaler", "neocloud", "marketplace")
#: Cooling classes of GPU boards.
COOLING: tuple[str, ...] = ("open-air", "blower", "passive", "sxm")
#: How a GPU mounts: a PCIe card, or a module (NVIDIA SXM, OCP OAM) on a multi-GPU baseboard.
FORM_FACTORS: tuple[str, ...] = ("pcie", "sxm", "oam")
#: The form factors that are modules: they mount only on a baseboard of their own kind.
MODULES: tuple[str, ...] = ("sxm", "oam")
#: Idle draw assumed when no sourced figure exists [-] (fraction of TDP); see data/NOTES.md.
IDLE_FRACTION_OF_TDP = 0.10


@dataclass(frozen=True)
class Bound:
    """A closed (or, with ``low_open``, half-open) range of valid values in ``unit``.

    ``problem(value)`` returns what is wrong with a number (``"must be <= 2,000 [W], got
    2,500"``) or ``None`` when it is in range.
    """

    low: float = -math.inf
    high: float = math.inf
    unit: str = ""
    low_open: bool = False
    integer: bool = False

    def problem(self, value: float) -> str | None:
        """What is wrong with ``value`` against this range, or ``None``."""
        unit = f" {self.unit}" if self.unit else ""
        if self.low_open and value <= self.low:
            return f"must be > {self._written(self.low)}{unit}, got {self._written(value)}"
        if value < self.low:
            return f"must be >= {self._written(self.low)}{unit}, got {self._written(value)}"
        if value > self.high:
            return f"must be <= {self._written(self.high)}{unit}, got {self._written(value)}"
        return None

    def text(self) -> str:
        """The range as ``[10, 2,000] [W]`` (``(0, 1]`` when the low end is open)."""
        left = "(" if self.low_open else "["
        unit = f" {self.unit}" if self.unit else ""
        return f"{left}{self._written(self.low)}, {self._written(self.high)}]{unit}"

    def _written(self, value: float) -> str:
        """A number of this range as the docs write it (a calendar year without a separator)."""
        return written(value, grouped=self.unit != "[year]")


#: The most digits an integer is shown with in a message; a longer one is shown by its count.
_MAX_DIGITS = 30


def written(value: float, *, grouped: bool = True) -> str:
    """``value`` as the docs write it: a whole number with thousands separators
    (``1,000,000``; none with ``grouped=False``, for calendar years), else as ``%g`` writes it
    (``0.001``, ``2.5e-07``, ``inf``); an integer exactly (a bound of 2**63 - 1 and a value of
    2**63 must not read alike), or by its digits when it has more than :data:`_MAX_DIGITS`."""
    sep = "," if grouped else ""
    if isinstance(value, int) and not isinstance(value, bool):
        digits = len(str(abs(value)))
        return f"{value:{sep}}" if digits <= _MAX_DIGITS else f"an integer of {digits} digits"
    if math.isfinite(value) and float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):{sep}}"
    return f"{value:g}"


#: GPU columns (catalog rows and inline GPUs of scenarios).
GPU_LIMITS: dict[str, Bound] = {
    "year": Bound(1990, 2100, "[year]", integer=True),
    "fp32_tflops": Bound(0, 10_000, "[TFLOPS]", low_open=True),
    "tf32_tflops": Bound(0, 100_000, "[TFLOPS]", low_open=True),
    "fp16_tflops": Bound(0, 100_000, "[TFLOPS]", low_open=True),
    "int8_tops": Bound(0, 100_000, "[TOPS]", low_open=True),
    "memory_gb": Bound(0.5, 512, "[GB]"),
    "bandwidth_gbs": Bound(0, 100_000, "[GB/s]", low_open=True),
    "tdp_w": Bound(10, 2000, "[W]"),
    "idle_w": Bound(0, 2000, "[W]"),
    "price_usd": Bound(0, 1_000_000, "[USD]"),
    "measured": Bound(0, 1000, "[-]", low_open=True),
}

#: Cloud instance columns (catalog rows and inline instances of scenarios).
INSTANCE_LIMITS: dict[str, Bound] = {
    "gpu_count": Bound(1, 64, "[GPU]", integer=True),
    "vcpus": Bound(1, 4096, "[vCPU]", integer=True),
    "ram_gib": Bound(0, 65_536, "[GiB]", low_open=True),
    "on_demand_usd_per_hour": Bound(0, 10_000, "[USD/h]", low_open=True),
    "usd_per_hour": Bound(0, 10_000, "[USD/h]"),
}

#: Platform tier columns (everything of an owned build but the GPUs).
PLATFORM_LIMITS: dict[str, Bound] = {
    "gpu_count": Bound(1, 64, "[GPU]", integer=True),
    "dram_gb": Bound(1, 65_536, "[GB]"),
    "psu_w": Bound(100, 100_000, "[W]"),
    "price_usd": Bound(0, 1_000_000, "[USD]"),
    "power_w": Bound(0, 100_000, "[W]"),
}

#: Model columns (the serving catalog's models).
MODEL_LIMITS: dict[str, Bound] = {
    "params_b": Bound(0, 100_000, "[billion parameters]", low_open=True),
    "layers": Bound(1, 1000, "[layers]", integer=True),
    "kv_heads": Bound(1, 1024, "[heads]", integer=True),
    "head_dim": Bound(1, 4096, "[values per head]", integer=True),
    "kv_dim_per_layer": Bound(1, 100_000, "[values per token and layer]", integer=True),
    "sliding_window_layers": Bound(1, 1000, "[layers]", integer=True),
    "sliding_window": Bound(1, 100_000_000, "[tokens]", integer=True),
}

#: Serving columns: one measured operating point of a model on a GPU.
SERVING_LIMITS: dict[str, Bound] = {
    "gpus_per_replica": Bound(1, 1024, "[GPU]", integer=True),
    "input_tokens": Bound(0, 10_000_000, "[tokens]", integer=True),
    "output_tokens": Bound(1, 10_000_000, "[tokens]", integer=True),
    "concurrency": Bound(1, 10_000_000, "[requests]", integer=True),
    "tokens_per_s_per_gpu": Bound(0, 10_000_000, "[tokens/s]", low_open=True),
    "tokens_per_s_per_user": Bound(0, 1_000_000, "[tokens/s]", low_open=True),
    "ttft_ms": Bound(0, 86_400_000, "[ms]", low_open=True),
    "tpot_ms": Bound(0, 3_600_000, "[ms]", low_open=True),
}

#: The architecture columns of a model (``models.csv`` and inline models), in file order.
ARCHITECTURE: tuple[str, ...] = (
    "layers",
    "kv_heads",
    "head_dim",
    "kv_dim_per_layer",
    "sliding_window_layers",
    "sliding_window",
)

#: Hosted API prices [USD per million tokens].
API_LIMITS: dict[str, Bound] = {
    "usd_per_mtok": Bound(0, 10_000, "[USD/M tokens]"),
}

#: Carbon columns (catalog rows and scenario inputs): grid intensity, data year, embodied
#: carbon, a provider's PUE.
CARBON_LIMITS: dict[str, Bound] = {
    "g_co2e_per_kwh": Bound(0, 2000, "[gCO2e/kWh]"),
    "year": Bound(1990, 2100, "[year]", integer=True),
    "kg_co2e": Bound(0, 1_000_000, "[kg CO2e]", low_open=True),
    "pue": Bound(1, 3, "[-]"),
}
