"""The buyer's-guide advice of DESIGN section 1 as structured warnings.

Each check looks at the resolved scenario (median values of uncertain inputs) and, when it fires,
yields ``{code, severity, message}`` with severity ``info`` (worth knowing), ``warning`` (the build
or the comparison is likely wrong as stated) or ``error`` (the build cannot work as described).
"""

from __future__ import annotations

from collections.abc import Iterator

from costmodel.cashflows import term_end
from pricing import RESERVATION_MONTHS

from .resolve import Resolved

__all__ = ["advise", "CIRCUIT_15A_W", "CIRCUIT_20A_W"]

#: Continuous load on a US 120 V branch circuit: 80 % of the breaker (NEC 210.19/210.20).
CIRCUIT_15A_W = 1440.0
CIRCUIT_20A_W = 1920.0
_PEAK_GPU_W = 350.0


def _w(code: str, severity: str, message: str) -> dict[str, str]:
    return {"code": code, "severity": severity, "message": message}


def advise(r: Resolved) -> list[dict[str, str]]:
    """Warnings for the resolved scenario, in a stable order."""
    return list(_checks(r))


def _checks(r: Resolved) -> Iterator[dict[str, str]]:
    buy, rent, inputs = r.inputs.buy, r.inputs.rent, r.inputs
    gpu, n = r.buy_gpu, buy.gpu_count
    busy_w = buy.gpu_power_w.median()
    peak_w = n * busy_w + buy.platform_power_w.median()
    hosted = buy.hosting_usd_per_kw_month.median() > 0

    for side, g in (("buy", gpu), ("rent", r.rent_gpu)):
        if g.memory_gb < 4:
            yield _w(
                "gpu_memory_low",
                "warning",
                f"{side}: {g.name} has {g.memory_gb:g} GB; deep-learning GPUs need at least "
                "4 GB, and 8 GB is better",
            )
        elif g.memory_gb < 8:
            yield _w(
                "gpu_memory_small",
                "info",
                f"{side}: {g.name} has {g.memory_gb:g} GB; 8 GB or more is recommended",
            )
    consumer = gpu.cooling in ("open-air", "blower")
    if consumer and busy_w > _PEAK_GPU_W:
        yield _w(
            "gpu_power_high",
            "info",
            f"each GPU draws {busy_w:.0f} W busy, above the ~350 W per GPU that typical "
            "power supplies are sized for; size the PSU from the card's peak, not typical, draw",
        )
    if not hosted and peak_w > r.platform.psu_w:
        yield _w(
            "psu_undersized",
            "warning",
            f"peak draw {peak_w:.0f} W exceeds the {r.platform.name} tier's "
            f"{r.platform.psu_w:.0f} W power supply; an unstable supply makes the system "
            "unstable",
        )
    if not hosted and peak_w > CIRCUIT_15A_W:
        limit = (
            "even a 20 A office circuit (1920 W continuous)"
            if peak_w > CIRCUIT_20A_W
            else "a 15 A office circuit (1440 W continuous)"
        )
        yield _w(
            "office_circuit",
            "warning",
            f"peak draw {peak_w:.0f} W exceeds {limit}; plan a dedicated circuit or a "
            "data centre (then set pue and hosting_usd_per_kw_month)",
        )
    if n >= 2 and gpu.cooling == "open-air" and buy.thermal_derate.median() >= 0.95:
        yield _w(
            "cooling_open_air",
            "warning",
            f"{n} multi-fan consumer cards packed together starve for air; use blower or "
            "water-cooled cards or set buy.thermal_derate (one report: training ran at half "
            "speed)",
        )
    if n > 4 and consumer:
        yield _w(
            "chassis_fit",
            "warning",
            f"{n} consumer cards need a server chassis with redundant PSUs; consumer cards "
            "may not physically fit server chassis",
        )
    if n >= 2 and r.interconnect in ("pcie-x8", "pcie-x4"):
        yield _w(
            "pcie_lanes",
            "info",
            f"GPUs on {r.interconnect} lose multi-GPU throughput; boards with many PCIe "
            "lanes (e.g. Threadripper) or PLX switches keep x16",
        )
    if n >= 4 and not hosted:
        yield _w(
            "loud_hot",
            "info",
            f"a {n}-GPU box is loud and hot; it needs NVMe storage, a high-clock CPU with "
            "many PCIe lanes and 128 GB or more DRAM",
        )
    precision = r.scenario["workload"]["precision"]
    for side, g, measured in (("buy", gpu, r.buy_measured), ("rent", r.rent_gpu, r.rent_measured)):
        if precision == "fp16" and g.fp16_tflops is None and g.fp32_tflops is not None:
            yield _w(
                "no_tensor_cores",
                "info",
                f"{side}: {g.name} has no tensor cores; FP16 work runs near its FP32 rate",
            )
        if precision == "int8" and g.int8_tops is None:
            yield _w(
                "no_int8",
                "info",
                f"{side}: no INT8 figure for {g.name}; its FP16 rule is used instead",
            )
        overridden = any(
            a["key"] == f"{side}.relative_throughput" and a["source"] == "scenario"
            for a in r.assumptions
        )
        if not measured and not overridden:
            yield _w(
                "throughput_from_peaks",
                "info",
                f"{side}: no measured {precision} training throughput for {g.name}; the "
                "ratio of peak figures is used, which can overstate real speed",
            )
    if gpu.price_estimated and any(
        a["key"] == "buy.gpu_price_usd" and a["source"] != "scenario" for a in r.assumptions
    ):
        yield _w(
            "price_estimated",
            "info",
            f"the catalog price of {gpu.name} is an estimate with no official list price; "
            "give buy.gpu_price_usd as a distribution",
        )
    if rent.pricing == "spot" and rent.spot_interruption_overhead.median() == 0:
        yield _w(
            "spot_overhead",
            "info",
            "spot pricing with no interruption overhead assumes no work is ever redone",
        )
    term = RESERVATION_MONTHS.get(rent.pricing)
    if term and rent.committed_instances != 0:
        end = term_end(term, inputs.horizon_months)
        if end > inputs.horizon_months:
            yield _w(
                "reservation_outlives_horizon",
                "warning",
                f"the {term}-month reservation running at month {inputs.horizon_months} ends at "
                f"month {end}; the {end - inputs.horizon_months} months after the horizon are "
                "still owed and are counted in the rent TCO",
            )
    if inputs.horizon_months < 12:
        yield _w(
            "short_horizon",
            "info",
            "horizons under a year favour renting: rent when use is short-term or uncertain",
        )
    if buy.resale_annual_decay.median() < 0.1 and inputs.horizon_months >= 36:
        yield _w(
            "resale_optimistic",
            "info",
            "resale losing under 10 % a year is optimistic: GPU price-performance doubles "
            "every 2-2.5 years (Epoch AI)",
        )
