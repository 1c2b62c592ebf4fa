"""The buyer's-guide advice as structured warnings: one small function per rule.

Each rule looks at the resolved scenario (median values of uncertain inputs) and yields
:class:`~costmodel.result.Advice` with severity ``info`` (worth knowing), ``warning`` (the build
or the comparison is likely wrong as stated) or ``error`` (the build cannot work as described).
:data:`RULES` lists them in the order warnings are reported.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator

from costmodel.cashflows import term_end
from costmodel.inputs import MAX_SAMPLES
from costmodel.present.formatting import fmt_margin, fmt_utilisation, missing
from costmodel.result import Advice, Convergence
from pricing import RESERVATION_MONTHS
from pricing.prices import STALE_AFTER_MONTHS

from .resolve import Resolved

__all__ = ["CIRCUIT_15A_W", "CIRCUIT_20A_W", "RULES", "advise", "convergence_advice"]

#: Continuous load on a US 120 V branch circuit: 80 % of the breaker (NEC 210.19/210.20) [W].
CIRCUIT_15A_W = 1440.0
CIRCUIT_20A_W = 1920.0
#: Peak draw per GPU that typical power supplies are sized for [W].
_PEAK_GPU_W = 350.0

Rule = Callable[[Resolved], Iterator[Advice]]


def _busy_w(r: Resolved) -> float:
    return r.inputs.buy.gpu_power_w.median()


def _peak_w(r: Resolved) -> float:
    buy = r.inputs.buy
    return buy.gpu_count * _busy_w(r) + buy.platform_power_w.median()


def _hosted(r: Resolved) -> bool:
    return r.inputs.buy.hosting_usd_per_kw_month.median() > 0


def _consumer(r: Resolved) -> bool:
    return r.buy_gpu.cooling in ("open-air", "blower")


def gpu_memory(r: Resolved) -> Iterator[Advice]:
    """GPU memory should be at least 4 GB, and 8 GB is better."""
    for side, g in (("buy", r.buy_gpu), ("rent", r.rent_gpu)):
        if g.memory_gb < 4:
            yield Advice(
                "gpu_memory_low",
                "warning",
                f"{side}: {g.name} has {g.memory_gb:g} GB; deep-learning GPUs need at least "
                "4 GB, and 8 GB is better",
            )
        elif g.memory_gb < 8:
            yield Advice(
                "gpu_memory_small",
                "info",
                f"{side}: {g.name} has {g.memory_gb:g} GB; 8 GB or more is recommended",
            )


def gpu_power_high(r: Resolved) -> Iterator[Advice]:
    """Consumer cards above ~350 W peak need a power supply sized for their peak."""
    if _consumer(r) and _busy_w(r) > _PEAK_GPU_W:
        yield Advice(
            "gpu_power_high",
            "info",
            f"each GPU draws {_busy_w(r):.0f} W busy, above the ~350 W per GPU that typical "
            "power supplies are sized for; size the PSU from the card's peak, not typical, draw",
        )


def psu_undersized(r: Resolved) -> Iterator[Advice]:
    """An office build's peak draw must fit its tier's power supply."""
    tier = r.platform
    if tier is not None and not _hosted(r) and _peak_w(r) > tier.psu_w:
        yield Advice(
            "psu_undersized",
            "warning",
            f"peak draw {_peak_w(r):.0f} W exceeds the {tier.name} tier's {tier.psu_w:.0f} W "
            "power supply; an unstable supply makes the system unstable",
        )


def office_circuit(r: Resolved) -> Iterator[Advice]:
    """An office build's peak draw must fit a branch circuit."""
    peak = _peak_w(r)
    if not _hosted(r) and peak > CIRCUIT_15A_W:
        limit = (
            "even a 20 A office circuit (1920 W continuous)"
            if peak > CIRCUIT_20A_W
            else "a 15 A office circuit (1440 W continuous)"
        )
        yield Advice(
            "office_circuit",
            "warning",
            f"peak draw {peak:.0f} W exceeds {limit}; plan a dedicated circuit or a data "
            "centre (then set pue and hosting_usd_per_kw_month)",
        )


def cooling_open_air(r: Resolved) -> Iterator[Advice]:
    """Multi-fan consumer cards packed together throttle."""
    n = r.inputs.buy.gpu_count
    if n >= 2 and r.buy_gpu.cooling == "open-air" and r.inputs.buy.thermal_derate.median() >= 0.95:
        yield Advice(
            "cooling_open_air",
            "warning",
            f"{n} multi-fan consumer cards packed together starve for air; use blower or "
            "water-cooled cards or set buy.thermal_derate (one report: training ran at half "
            "speed)",
        )


def chassis_fit(r: Resolved) -> Iterator[Advice]:
    """More than four consumer cards need a server chassis they may not fit."""
    n = r.inputs.buy.gpu_count
    if n > 4 and _consumer(r):
        yield Advice(
            "chassis_fit",
            "warning",
            f"{n} consumer cards need a server chassis with redundant PSUs; consumer cards "
            "may not physically fit server chassis",
        )


def pcie_lanes(r: Resolved) -> Iterator[Advice]:
    """Boards that drop to x8 or x4 cost multi-GPU throughput."""
    if r.inputs.buy.gpu_count >= 2 and r.interconnect in ("pcie-x8", "pcie-x4"):
        yield Advice(
            "pcie_lanes",
            "info",
            f"GPUs on {r.interconnect} lose multi-GPU throughput; boards with many PCIe "
            "lanes (e.g. Threadripper) or PLX switches keep x16",
        )


def loud_hot(r: Resolved) -> Iterator[Advice]:
    """A four-GPU office box is loud and hot and needs a workstation platform."""
    n = r.inputs.buy.gpu_count
    if n >= 4 and not _hosted(r):
        yield Advice(
            "loud_hot",
            "info",
            f"a {n}-GPU box is loud and hot; it needs NVMe storage, a high-clock CPU with "
            "many PCIe lanes and 128 GB or more DRAM",
        )


def _work(r: Resolved) -> str:
    precision = r.scenario["workload"]["precision"]
    return f"{precision} {'inference' if precision == 'int8' else 'training'}"


def precision_support(r: Resolved) -> Iterator[Advice]:
    """GPUs without tensor cores at the workload's precision run it at a lower rate."""
    precision = r.scenario["workload"]["precision"]
    for side, g in (("buy", r.buy_gpu), ("rent", r.rent_gpu)):
        if precision == "fp16" and g.fp16_tflops is None and g.fp32_tflops is not None:
            yield Advice(
                "no_tensor_cores",
                "info",
                f"{side}: {g.name} has no tensor cores; FP16 work runs near its FP32 rate",
            )
        if precision == "int8" and g.int8_tops is None:
            yield Advice(
                "no_int8",
                "info",
                f"{side}: {g.name} has no INT8 tensor figure; INT8 work is taken to run at its "
                "FP16 rate",
            )


def throughput_estimated(r: Resolved) -> Iterator[Advice]:
    """Once, where a side's throughput rests on peak figures rather than measurements."""
    sides = [side for side, t in r.throughput.items() if t.basis == "peaks"]
    if sides:
        which = " and ".join(
            f"{side} ({(r.buy_gpu if side == 'buy' else r.rent_gpu).name})" for side in sides
        )
        yield Advice(
            "throughput_from_peaks",
            "info",
            f"no measured {_work(r)} throughput for {which} against "
            f"{r.reference_gpu.name}; the ratio of like-for-like peak figures is used, which "
            "can overstate real speed (give relative_throughput to override)",
        )


def price_estimated(r: Resolved) -> Iterator[Advice]:
    """A catalog GPU price without an official list price is an estimate."""
    from_catalog = any(
        a.key == "buy.gpu_price_usd" and a.source != "scenario" for a in r.assumptions
    )
    if r.buy_gpu.price_estimated and from_catalog:
        yield Advice(
            "price_estimated",
            "info",
            f"the catalog price of {r.buy_gpu.name} is an estimate with no official list "
            "price; give buy.gpu_price_usd as a distribution",
        )


def spot_overhead(r: Resolved) -> Iterator[Advice]:
    """Spot work is interrupted and partly redone."""
    rent = r.inputs.rent
    if rent.pricing == "spot" and rent.spot_interruption_overhead.median() == 0:
        yield Advice(
            "spot_overhead",
            "info",
            "spot pricing with no interruption overhead assumes no work is ever redone",
        )


def reservation_outlives_horizon(r: Resolved) -> Iterator[Advice]:
    """A reservation is owed to the end of its term, past the horizon."""
    rent, horizon = r.inputs.rent, r.inputs.horizon_months
    term = RESERVATION_MONTHS.get(rent.pricing)
    if not term or rent.committed_instances == 0:
        return
    end = term_end(term, horizon)
    if end > horizon:
        yield Advice(
            "reservation_outlives_horizon",
            "warning",
            f"the {term}-month reservation running at month {horizon} ends at month {end}; "
            f"the {end - horizon} months after the horizon are still owed and are counted in "
            "the rent TCO",
        )


def short_horizon(r: Resolved) -> Iterator[Advice]:
    """Rent when use is short-term."""
    if r.inputs.horizon_months < 12:
        yield Advice(
            "short_horizon",
            "info",
            "horizons under a year favour renting: rent when use is short-term or uncertain",
        )


def resale_optimistic(r: Resolved) -> Iterator[Advice]:
    """GPUs lose value fast: newer generations give more FLOPS per dollar."""
    if r.inputs.buy.resale_annual_decay.median() < 0.1 and r.inputs.horizon_months >= 36:
        yield Advice(
            "resale_optimistic",
            "info",
            "resale losing under 10 % a year is optimistic: GPU price-performance doubles "
            "every 2-2.5 years (Epoch AI)",
        )


def stale_price(r: Resolved, today: dt.date | None = None) -> Iterator[Advice]:
    """A price of the user's prices file quoted more than 12 months before ``today`` (default:
    the date today) is likely out of date."""
    today = today or dt.date.today()
    for key, entry in r.prices.items():
        if entry.stale(today):
            yield Advice(
                "stale_price",
                "warning",
                f"{key} = {entry.value:g} comes from {entry.origin}, more than "
                f"{STALE_AFTER_MONTHS} months before {today.isoformat()}; check that it is "
                "still current",
            )


RULES: tuple[Rule, ...] = (
    gpu_memory,
    gpu_power_high,
    psu_undersized,
    office_circuit,
    cooling_open_air,
    chassis_fit,
    pcie_lanes,
    loud_hot,
    precision_support,
    throughput_estimated,
    price_estimated,
    spot_overhead,
    reservation_outlives_horizon,
    short_horizon,
    resale_optimistic,
    stale_price,
)


def advise(r: Resolved) -> tuple[Advice, ...]:
    """Every rule's warnings for the resolved scenario, in the order of :data:`RULES`."""
    return tuple(advice for rule in RULES for advice in rule(r))


def convergence_advice(c: Convergence | None) -> tuple[Advice, ...]:
    """After a run: a ``convergence`` warning when the break-even P50 is less precise than
    ``simulation.target_halfwidth`` asked, after doubling the draws up to the cap."""
    if c is None or c.met is not False:
        return ()
    lo, hi = c.breakeven_p50_ci95
    width = c.breakeven_p50_halfwidth
    if missing(width):  # the interval reaches "never", or there are too few draws for one
        reached = f"runs from {fmt_utilisation(lo, none='no value')} to {fmt_utilisation(hi)}"
    else:
        reached = f"is {fmt_margin((lo + hi) / 2, width)}"
    target = c.target_halfwidth or 0.0
    cap = c.max_samples or MAX_SAMPLES
    if cap >= MAX_SAMPLES:
        advice = "loosen the target, or read the break-even with that margin"
    else:
        advice = "raise it, or read the break-even with that margin"
    return (
        Advice(
            "convergence",
            "warning",
            f"the 95 % interval of the break-even P50 {reached} after {c.samples:,} draws, "
            f"wider than simulation.target_halfwidth = {target * 100:.3g} %; doubling again "
            f"would pass simulation.max_samples = {cap:,}: {advice}",
        ),
    )
