"""The buyer's-guide advice as structured warnings: one small function per rule.

Each rule looks at one resolved side (:mod:`scenarios.sides`), or at the whole question, with
the median values of uncertain inputs, and yields :class:`~costmodel.result.Advice` with severity
``info`` (worth knowing), ``warning`` (the build or the comparison is likely wrong as stated) or
``error`` (the build cannot work as described), and the key of the side it is about.
:data:`RULES` lists them in the order warnings are reported, each with what it looks at.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from costmodel.cashflows import term_end
from costmodel.inputs import MAX_SAMPLES
from costmodel.plan_result import Precision
from costmodel.result import Advice, Convergence, Origin
from costmodel.sides import side as side_of
from present.formatting import (
    fmt_margin,
    fmt_mix,
    fmt_share,
    fmt_usd,
    fmt_usd_margin,
    fmt_utilisation,
    missing,
)
from present.verdict import OBJECTIVE_WORDS
from pricing import RESERVATION_MONTHS
from pricing.estimated import EstimatedServing, error_words
from pricing.prices import STALE_AFTER_MONTHS
from pricing.serving_options import Z90
from pricing.text import counted
from pricing.training_error import published as training_error

from .plausible import TYPICAL
from .sides import Hosted, Inference, Owned, Rented, Training, Work
from .userprices import FAR, GPU_HOUR_KEY, SERVER_KEY

__all__ = [
    "CIRCUIT_15A_W",
    "CIRCUIT_20A_W",
    "RULES",
    "Question",
    "WEIGHTS_SHARE",
    "advise",
    "close_call_advice",
    "convergence_advice",
]

#: Continuous load on a US 120 V branch circuit: 80 % of the breaker (NEC 210.19/210.20) [W].
CIRCUIT_15A_W = 1440.0
CIRCUIT_20A_W = 1920.0
#: Peak draw per GPU that typical power supplies are sized for [W].
_PEAK_GPU_W = 350.0


@dataclass(frozen=True)
class Question:
    """What the advice looks at: the horizon [month], the workload and the resolved sides in
    the order of the document (``buy``, ``rent`` and ``api``; ``own``, ``reserve``,
    ``burst``)."""

    horizon_months: int
    work: Work
    sides: tuple[Owned | Rented | Hosted, ...]


SideRule = Callable[[Any, Question], Iterator[Advice]]
DocumentRule = Callable[[Question], Iterator[Advice]]


def _busy_w(o: Owned) -> float:
    return o.inputs.gpu_power_w.p50()


def _peak_w(o: Owned) -> float:
    return o.inputs.gpu_count * _busy_w(o) + o.inputs.platform_power_w.p50()


def _hosted(o: Owned) -> bool:
    return o.inputs.hosting_usd_per_kw_month.p50() > 0


def _consumer(o: Owned) -> bool:
    return o.gpu.cooling in ("open-air", "blower")


def gpu_memory(side: Owned | Rented, q: Question) -> Iterator[Advice]:
    """GPU memory should be at least 4 GB, and 8 GB is better."""
    g = side.gpu
    if g.memory_gb < 4:
        yield Advice(
            "gpu_memory_low",
            "warning",
            f"{side.path}: {g.name} has {g.memory_gb:g} GB; deep-learning GPUs need at least "
            "4 GB, and 8 GB is better",
            side.path,
        )
    elif g.memory_gb < 8:
        yield Advice(
            "gpu_memory_small",
            "info",
            f"{side.path}: {g.name} has {g.memory_gb:g} GB; 8 GB or more is recommended",
            side.path,
        )


def gpu_power_high(o: Owned, q: Question) -> Iterator[Advice]:
    """Consumer cards above ~350 W peak need a power supply sized for their peak (said where
    the build's tier has none that holds it)."""
    sized = o.platform is not None and _peak_w(o) <= o.platform.psu_w
    if _consumer(o) and _busy_w(o) > _PEAK_GPU_W and not sized:
        yield Advice(
            "gpu_power_high",
            "info",
            f"each GPU draws {_busy_w(o):.0f} W busy, above the ~350 W per GPU that typical "
            "power supplies are sized for; size the PSU from the card's peak, not typical, draw",
            o.path,
        )


def psu_undersized(o: Owned, q: Question) -> Iterator[Advice]:
    """An office build's peak draw must fit its tier's power supply."""
    tier = o.platform
    if tier is not None and not _hosted(o) and _peak_w(o) > tier.psu_w:
        yield Advice(
            "psu_undersized",
            "warning",
            f"peak draw {_peak_w(o):.0f} W exceeds the {tier.name} tier's {tier.psu_w:.0f} W "
            "power supply; an unstable supply makes the system unstable",
            o.path,
        )


def office_circuit(o: Owned, q: Question) -> Iterator[Advice]:
    """An office build's peak draw must fit a branch circuit."""
    peak = _peak_w(o)
    if not _hosted(o) and peak > CIRCUIT_15A_W:
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
            o.path,
        )


def cooling_open_air(o: Owned, q: Question) -> Iterator[Advice]:
    """Multi-fan consumer cards packed together throttle."""
    n = o.inputs.gpu_count
    if n >= 2 and o.gpu.cooling == "open-air" and o.inputs.thermal_derate.p50() >= 0.95:
        yield Advice(
            "cooling_open_air",
            "warning",
            f"{n} multi-fan consumer cards packed together starve for air; use blower or "
            f"water-cooled cards or set {o.path}.thermal_derate (one report: training ran at "
            "half speed)",
            o.path,
        )


def chassis_fit(o: Owned, q: Question) -> Iterator[Advice]:
    """More than four consumer cards need a server chassis they may not fit."""
    n = o.inputs.gpu_count
    if n > 4 and _consumer(o):
        yield Advice(
            "chassis_fit",
            "warning",
            f"{n} consumer cards need a server chassis with redundant PSUs; consumer cards "
            "may not physically fit server chassis",
            o.path,
        )


#: How the advice names each form factor.
_FORM_NAMES = {"pcie": "PCIe card", "sxm": "SXM module", "oam": "OAM module"}


def form_factor(o: Owned, q: Question) -> Iterator[Advice]:
    """An SXM or OAM module mounts only on a baseboard of its kind, which the 1- and 2-GPU
    tiers do not have: such a build cannot be put together."""
    tier, gpu = o.platform, o.gpu
    if tier is None or tier.takes(gpu):
        return
    boards = sorted({t.gpu_count for t in q.work.catalog.tiers if t.takes(gpu)})
    fits = f"give {o.path}.gpu_count {' or '.join(map(str, boards))}, or " if boards else ""
    takes = " and ".join(f"{_FORM_NAMES[f]}s" for f in tier.form_factors)
    yield Advice(
        "form_factor",
        "error",
        f"{gpu.name} is an {_FORM_NAMES[gpu.form_factor]}, which mounts only on a baseboard "
        f"of modules; the {tier.name} tier takes {takes} only: {fits}choose a PCIe GPU",
        o.path,
    )


def pcie_lanes(o: Owned, q: Question) -> Iterator[Advice]:
    """Boards that drop to x8 or x4 cost multi-GPU throughput."""
    if o.inputs.gpu_count >= 2 and o.interconnect in ("pcie-x8", "pcie-x4"):
        yield Advice(
            "pcie_lanes",
            "info",
            f"GPUs on {o.interconnect} lose multi-GPU throughput; boards with many PCIe "
            "lanes (e.g. Threadripper) or PLX switches keep x16",
            o.path,
        )


#: A count read with a vowel sound first ("an 8-GPU box", "an 11-GPU box").
_VOWEL_SOUND = re.compile(r"8|11$|18$|11\d\d$|18\d\d$")


def loud_hot(o: Owned, q: Question) -> Iterator[Advice]:
    """A four-GPU office box is loud and hot and needs a workstation platform (a baseboard
    server, which takes no PCIe cards, is a data-centre machine that has one)."""
    n = o.inputs.gpu_count
    server = o.platform is not None and "pcie" not in o.platform.form_factors
    if n >= 4 and not _hosted(o) and not server:
        yield Advice(
            "loud_hot",
            "info",
            f"{'an' if _VOWEL_SOUND.match(str(n)) else 'a'} {n}-GPU box is loud and hot; it "
            "needs NVMe storage, a high-clock CPU with "
            "many PCIe lanes and 128 GB or more DRAM",
            o.path,
        )


def _work(q: Question) -> str:
    precision = q.work.precision
    return f"{precision} {'inference' if precision == 'int8' else 'training'}"


def precision_support(side: Owned | Rented, q: Question) -> Iterator[Advice]:
    """GPUs without tensor cores at the workload's precision run it at a lower rate (training
    work: serving throughput is measured at its precision)."""
    if not isinstance(q.work, Training):
        return
    precision, g = q.work.precision, side.gpu
    if precision == "fp16" and g.fp16_tflops is None and g.fp32_tflops is not None:
        yield Advice(
            "no_tensor_cores",
            "info",
            f"{side.path}: {g.name} has no tensor cores; FP16 work runs near its FP32 rate",
            side.path,
        )
    if precision == "int8" and g.int8_tops is None:
        yield Advice(
            "no_int8",
            "info",
            f"{side.path}: {g.name} has no INT8 tensor figure; INT8 work is taken to run at its "
            "FP16 rate",
            side.path,
        )


#: How a training throughput that is not measured was found, by its basis: the advice's code
#: and its words.
_UNMEASURED = {
    "estimated": (
        "throughput_estimated",
        "the catalog's estimate is used (the GPU's catalog note says how: another benchmark's "
        "published result, as MLPerf Training's for the MI300X, or a measured GPU of the same "
        "kind scaled by like-for-like peaks), which can be off",
    ),
    "peaks": (
        "throughput_from_peaks",
        "the ratio of the two GPUs' like-for-like peak figures is used, which can overstate "
        "real speed",
    ),
}


def throughput_estimated(q: Question) -> Iterator[Advice]:
    """Once for each way a side's training throughput was found without a measurement: the
    catalog's estimate (``throughput_estimated``), or the two GPUs' like-for-like peaks
    (``throughput_from_peaks``, an inline GPU)."""
    if not isinstance(q.work, Training):
        return
    for basis, (code, how) in _UNMEASURED.items():
        sides = [
            s
            for s in q.sides
            if getattr(s, "throughput", None) is not None and s.throughput.basis == basis
        ]
        if sides:
            which = " and ".join(f"{s.path} ({s.gpu.name})" for s in sides)
            yield Advice(
                code,
                "info",
                f"no measured {_work(q)} throughput for {which} against "
                f"{q.work.reference.name}; {how}; its error is drawn "
                f"({', '.join(s.path + '.throughput_error' for s in sides)}, "
                f"{error_words(training_error().sigma, 'peak ratios')}; give "
                "relative_throughput to override)",
                sides[0].path if len(sides) == 1 else None,
            )


def estimated_throughput(q: Question) -> Iterator[Advice]:
    """Once, where a side's serving throughput is the calibrated estimate (nothing measured
    applies): what it rests on and how far off it may be."""
    if not isinstance(q.work, Inference):
        return
    sides = [s for s in q.sides if isinstance(getattr(s, "throughput", None), EstimatedServing)]
    if not sides:
        return
    which = "; ".join(
        f"{s.path} ({s.gpu.name}): {s.throughput.value:,.0f} tokens/s per GPU" for s in sides
    )
    sigma = sides[0].throughput.sigma
    yield Advice(
        "estimated_throughput",
        "info",
        f"no measured operating point of {q.work.model.name} applies to {which}: the "
        f"throughput is estimated from the model's architecture and the GPU's specifications "
        f"({error_words(sigma)}), drawn as a lognormal factor (P10-P90 x"
        f"{math.exp(-Z90 * sigma):.2f} to x{math.exp(Z90 * sigma):.2f}, "
        f"{', '.join(s.path + '.throughput_error' for s in sides)}); measure it (--serving) "
        "or give tokens_per_s_per_gpu to remove that uncertainty",
        sides[0].path if len(sides) == 1 else None,
    )


#: Share of a server's GPU memory the weights may take, leaving room for the KV cache and
#: activations [-].
WEIGHTS_SHARE = 0.9


def model_does_not_fit(side: Owned | Rented, q: Question) -> Iterator[Advice]:
    """Memory decides what a server can run: the model's weights must fit in 90 % of the GPU
    memory of one server or instance (inference work)."""
    w = q.work
    if not isinstance(w, Inference):
        return
    count = side.inputs.gpu_count
    weights, memory = w.model.weights_gb(w.precision), count * side.gpu.memory_gb
    if weights > WEIGHTS_SHARE * memory:
        yield Advice(
            "model_does_not_fit",
            "warning",
            f"{side.path}: {w.model.name} at {w.precision} needs {weights:,.0f} GB for its "
            f"weights, more than {WEIGHTS_SHARE:.0%} of the {memory:,.0f} GB of {count} x "
            f"{side.gpu.name}; it does not fit with room for the KV cache",
            side.path,
        )


def serving_shape_differs(q: Question) -> Iterator[Advice]:
    """Once, where a side's serving throughput was measured at another request shape."""
    w = q.work
    if not isinstance(w, Inference):
        return
    for side in q.sides:
        t = getattr(side, "throughput", None)
        if t is not None and t.shape_differs:
            yield Advice(
                "serving_shape_differs",
                "info",
                f"{side.path}: the nearest measured request shape for {side.gpu.name} is "
                f"{t.row.input_tokens} input / {t.row.output_tokens} output tokens, not the "
                f"workload's {w.input_tokens} / {w.output_tokens}; throughput at another shape "
                f"differs (give {side.path}.tokens_per_s_per_gpu to override)",
                side.path,
            )


def serving_conditions_differ(q: Question) -> Iterator[Advice]:
    """Once, where a side's serving throughput rests on a row measured under other conditions
    than serving the workload: offline (no latency bound), a single stream, or a replica size
    not stated (the shape has :func:`serving_shape_differs`)."""
    if not isinstance(q.work, Inference):
        return
    for side in q.sides:
        t = getattr(side, "throughput", None)
        caveats = [c for c in getattr(t, "caveats", ()) if not c.startswith("measured at ")]
        if caveats:
            yield Advice(
                "serving_conditions_differ",
                "info",
                f"{side.path}: the throughput of {side.gpu.name} rests on a measurement that "
                f"may not hold for serving this workload: {'; '.join(caveats)} (row "
                f"{t.row.id}); give {side.path}.tokens_per_s_per_gpu or your own measurement "
                "(--serving) to override",
                side.path,
            )


def api_model_differs(api: Hosted, q: Question) -> Iterator[Advice]:
    """An API offer of another model than the workload's does other work."""
    w, offer = q.work, api.offer
    if offer is None or not isinstance(w, Inference) or offer.model == w.model.id:
        return
    served = f"serves {offer.model}" if offer.model else "serves a proprietary model"
    yield Advice(
        "api_model_differs",
        "warning" if offer.model else "info",
        f"{api.path}: {offer.id} {served}, not the workload's {w.model.id}; its tokens are "
        "compared as if they did the same work",
        api.path,
    )


def price_estimated(o: Owned, q: Question) -> Iterator[Advice]:
    """A catalog GPU price without an official list price is an estimate."""
    key = f"{o.path}.gpu_price_usd"
    from_catalog = any(a.key == key and a.origin != Origin.GIVEN for a in o.assumptions)
    if o.gpu.price_estimated and from_catalog:
        yield Advice(
            "price_estimated",
            "info",
            f"the catalog price of {o.gpu.name} is an estimate with no official list "
            f"price; give {key} as a distribution",
            o.path,
        )


@dataclass(frozen=True)
class _Reading:
    """A price as one key reads it: ``value`` in the catalog's unit, ``text`` how."""

    key: str
    value: float
    text: str


def _given_source(side: Owned | Rented, key: str) -> str | None:
    """How the block gave input ``key`` (its assumption's words), or None when not given."""
    name = f"{side.path}.{key}"
    return next(
        (a.source for a in side.assumptions if a.key == name and a.origin == Origin.GIVEN), None
    )


def _far(
    side: Owned | Rented, given: _Reading, other: _Reading | None, catalog: float, what: str
) -> Iterator[Advice]:
    """``price_far_from_catalog`` when ``given`` is more than :data:`FAR` times away from the
    catalog's price, saying what ``other``, the other reading, gives. A price of 0 (a donated
    GPU, a cloud credit) is no price typed in other terms: no reading makes it near."""
    ratio = given.value / catalog
    if ratio == 0 or 1 / FAR <= ratio <= FAR:
        return
    far = f"{ratio:.1f} times" if ratio > 1 else f"1/{1 / ratio:.1f} of"
    hint = "check the price and its unit"
    if other is not None and 1 / FAR <= other.value / catalog <= FAR:
        hint = f"read as {other.key}, {other.text} is near it"
    yield Advice(
        "price_far_from_catalog",
        "warning",
        f"{given.key} gives {given.text}, {far} the catalog's {catalog:,.2f} {what}; {hint}",
        side.path,
    )


def price_far_from_catalog(side: Owned | Rented, q: Question) -> Iterator[Advice]:
    """A price given in the scenario more than twice or less than half the catalog's, for the
    same GPU or instance and pricing, was perhaps typed in other terms (per GPU for per
    instance, one GPU for a server)."""
    if isinstance(side, Owned):
        yield from _far_owned(side)
        return
    offer, pricing, p = side.offer, side.inputs.pricing, side.path
    catalog, source = offer.prices.get(pricing), _given_source(side, "price_usd_per_hour")
    if offer.id is None or catalog is None or source is None:
        return
    n, price = offer.gpu_count, side.inputs.price_usd_per_hour.p50()
    per_gpu = f"{price / n:,.2f} x {n} = {price:,.2f}"
    readings = [
        _Reading(f"{p}.price_usd_per_hour", price, f"{price:,.2f}"),
        _Reading(f"{p}.{GPU_HOUR_KEY}", price * n, f"{price:,.2f} x {n} = {price * n:,.2f}"),
    ]
    if GPU_HOUR_KEY in source:
        readings = [
            _Reading(f"{p}.{GPU_HOUR_KEY}", price, per_gpu),
            _Reading(f"{p}.price_usd_per_hour", price / n, f"{price / n:,.2f}"),
        ]
    other = readings[1] if n > 1 else None
    yield from _far(
        side, readings[0], other, catalog, f"USD per instance-hour of {offer.id} ({pricing})"
    )


def _far_owned(o: Owned) -> Iterator[Advice]:
    gpu, n, p, tier = o.gpu, o.inputs.gpu_count, o.path, o.platform
    if gpu.is_inline or gpu.price_usd is None:
        return
    price = o.inputs.gpu_price_usd.p50()
    if _given_source(o, "gpu_price_usd") is not None:
        other = _Reading(f"{p}.{SERVER_KEY}", price / n, f"{price:,.0f} / {n} = {price / n:,.0f}")
        yield from _far(
            o,
            _Reading(f"{p}.gpu_price_usd", price, f"{price:,.0f}"),
            other if n > 1 else None,
            gpu.price_usd,
            f"USD for one {gpu.id}",
        )
    source = _given_source(o, "platform_price_usd")
    if tier is None or source is None or SERVER_KEY not in source:
        return
    server = o.inputs.platform_price_usd.p50() + n * price
    catalog = n * gpu.price_usd + tier.price_usd
    one = _Reading(
        f"{p}.gpu_price_usd",
        n * server + tier.price_usd,
        f"{n} x {server:,.0f} + the platform {tier.price_usd:,.0f} = "
        f"{n * server + tier.price_usd:,.0f}",
    )
    yield from _far(
        o,
        _Reading(f"{p}.{SERVER_KEY}", server, f"{server:,.0f}"),
        one if n > 1 else None,
        catalog,
        f"USD for {n} x {gpu.id} in the {tier.name} tier",
    )


def _middle(value: Any) -> float:
    """The median of a number or a distribution (read from its ``ppf``: a lognormal given by
    its median holds ``median`` as a number, not the method)."""
    if hasattr(value, "ppf"):
        return float(value.ppf(np.array([0.5]))[0])
    return float(value)


def _typed(side: Owned | Rented | Hosted, key: str) -> float | None:
    """The median of input ``key`` where the block gives it (a grid intensity as a number),
    else None."""
    if key == "grid":
        value = side.block.get("grid")
        return None if value is None or isinstance(value, str) else _middle(value)
    if not hasattr(side.inputs, key) or _given_source(side, key) is None:
        return None
    return _middle(getattr(side.inputs, key))


def input_far_from_typical(side: Owned | Rented | Hosted, q: Question) -> Iterator[Advice]:
    """An input the scenario gives far outside the range the reference data gives
    (:data:`scenarios.plausible.TYPICAL`): cents typed as dollars, a percent as a share, a
    year's cost as a month's."""
    for row in TYPICAL:
        value = _typed(side, row.key)
        if value is None or not row.far(value):
            continue
        unit = f" {row.unit}" if row.unit else ""
        hint = row.reading(value) or "check the value and its unit"
        yield Advice(
            "input_far_from_typical",
            "warning",
            f"{side.path}.{row.key} = {value:,.6g}{unit} is far outside the typical "
            f"{row.low:,.6g}-{row.high:,.6g}{unit}, from {row.source}; {hint}",
            side.path,
        )


def spot_overhead(r: Rented, q: Question) -> Iterator[Advice]:
    """Spot work is interrupted and partly redone."""
    if r.inputs.pricing == "spot" and r.inputs.spot_interruption_overhead.p50() == 0:
        yield Advice(
            "spot_overhead",
            "info",
            "spot pricing with no interruption overhead assumes no work is ever redone",
            r.path,
        )


def reservation_outlives_horizon(r: Rented, q: Question) -> Iterator[Advice]:
    """A reservation is owed to the end of its term, past the horizon."""
    horizon = q.horizon_months
    term = RESERVATION_MONTHS.get(r.inputs.pricing)
    if not term or r.inputs.committed_instances == 0:
        return
    end = term_end(term, horizon)
    if end > horizon:
        yield Advice(
            "reservation_outlives_horizon",
            "warning",
            f"the {term}-month reservation running at month {horizon} ends at month {end}; "
            f"the {end - horizon} months after the horizon are still owed and are counted in "
            "the rent TCO",
            r.path,
        )


def short_horizon(q: Question) -> Iterator[Advice]:
    """Rent when use is short-term."""
    if q.horizon_months < 12:
        yield Advice(
            "short_horizon",
            "info",
            "horizons under a year favour renting: rent when use is short-term or uncertain",
        )


def resale_optimistic(o: Owned, q: Question) -> Iterator[Advice]:
    """GPUs lose value fast: newer generations give more FLOPS per dollar."""
    if o.inputs.resale_annual_decay.p50() < 0.1 and q.horizon_months >= 36:
        yield Advice(
            "resale_optimistic",
            "info",
            "resale losing under 10 % a year is optimistic: GPU price-performance doubles "
            "every 2-2.5 years (Epoch AI)",
            o.path,
        )


def stale_price(side: Owned | Rented, q: Question, today: dt.date | None = None):
    """A price of the user's prices file quoted more than 12 months before ``today`` (default:
    the date today) is likely out of date."""
    today = today or dt.date.today()
    for key, entry in side.prices.items():
        if entry.stale(today):
            yield Advice(
                "stale_price",
                "warning",
                f"{key} = {entry.value:g} comes from {entry.origin}, more than "
                f"{STALE_AFTER_MONTHS} months before {today.isoformat()}; check that it is "
                "still current",
                side.path,
            )


#: Every rule in the order warnings are reported, with what it looks at: ``"owned"``,
#: ``"rented"`` or ``"hosted"`` (API) sides, ``"side"`` (owned or rented), ``"any"`` side or the
#: whole ``"question"``.
RULES: tuple[tuple[str, Callable[..., Iterator[Advice]]], ...] = (
    ("side", gpu_memory),
    ("owned", gpu_power_high),
    ("owned", psu_undersized),
    ("owned", office_circuit),
    ("owned", cooling_open_air),
    ("owned", chassis_fit),
    ("owned", form_factor),
    ("owned", pcie_lanes),
    ("owned", loud_hot),
    ("side", precision_support),
    ("question", throughput_estimated),
    ("question", estimated_throughput),
    ("side", model_does_not_fit),
    ("question", serving_shape_differs),
    ("question", serving_conditions_differ),
    ("hosted", api_model_differs),
    ("owned", price_estimated),
    ("side", price_far_from_catalog),
    ("any", input_far_from_typical),
    ("rented", spot_overhead),
    ("rented", reservation_outlives_horizon),
    ("question", short_horizon),
    ("owned", resale_optimistic),
    ("side", stale_price),
)
_KINDS = {
    "owned": (Owned,),
    "rented": (Rented,),
    "hosted": (Hosted,),
    "side": (Owned, Rented),
    "any": (Owned, Rented, Hosted),
}


def advise(q: Question) -> tuple[Advice, ...]:
    """Every rule's warnings for the question, in the order of :data:`RULES`, each side in
    the order of ``q.sides``."""
    out: list[Advice] = []
    for scope, rule in RULES:
        if scope == "question":
            out += rule(q)
        else:
            out += [a for side in q.sides if isinstance(side, _KINDS[scope]) for a in rule(side, q)]
    return tuple(out)


def convergence_advice(c: Convergence | None, versus: str = "rent") -> tuple[Advice, ...]:
    """After a run: a ``convergence`` warning when the break-even P50 against side ``versus``
    (renting, ``"api"`` or a further side) is less precise than
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
    against = "" if versus == "rent" else f" against {side_of(versus).doing}"
    if cap >= MAX_SAMPLES:
        advice = "loosen the target, or read the break-even with that margin"
    else:
        advice = "raise it, or read the break-even with that margin"
    return (
        Advice(
            "convergence",
            "warning",
            f"the 95 % interval of the break-even P50{against} {reached} after {c.samples:,} "
            f"draws, wider than simulation.target_halfwidth = {target * 100:.3g} %; doubling "
            f"again would pass simulation.max_samples = {cap:,}: {advice}",
        ),
    )


def close_call_advice(p: Precision | None, samples: int, best: float) -> tuple[Advice, ...]:
    """After a plan's run of ``samples`` draws: a ``plan_close_call`` warning when the 95 %
    interval of the difference between the best candidate and the runner-up reaches 0 (or is
    unknown, from one draw), so that these draws do not tell which of the two is cheaper;
    ``best`` [USD] is the best candidate's cost by the objective, which the warning sets the
    difference against."""
    if p is None or not p.close_call:
        return ()
    draws = counted(samples, "draw")
    if missing(p.difference_se):
        differs = f"{fmt_usd(p.difference)}, with no margin from {draws}"
        most = p.difference
    else:
        differs = f"{fmt_usd_margin(p.difference, p.halfwidth)} (95 %)"
        most = p.difference + p.halfwidth
    if best > 0:
        differs += f", up to {fmt_share(most / best)} of the best's"
    if samples < MAX_SAMPLES:
        advice = "take either, or raise simulation.samples to tell them apart"
    else:
        advice = "at the most draws a run takes, read them as equally good"
    return (
        Advice(
            "plan_close_call",
            "warning",
            f"the best plan ({fmt_mix(p.first)}) and the runner-up ({fmt_mix(p.second)}) are not "
            f"told apart by {draws}: their {OBJECTIVE_WORDS.get(p.objective, p.objective)} "
            f"differs by {differs}; {advice}",
        ),
    )
