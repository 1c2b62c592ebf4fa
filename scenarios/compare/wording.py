"""The words of a market comparison, written once for the command line, the JSON answer and the
web page: an option's name and pricing in words, the heading (what was compared and how), the
summary (the cheapest option of each side and the break-evens), what a comparison by model
left out, what the carbon column counts, and the footnotes to the dagger and the dash.

Costs are shown per unit of work as :func:`present.formatting.fmt_per_unit` writes
them [USD/reference GPU-hour or USD/M tokens], utilisations and shares as percentages, carbon
in [g CO2e per unit of work], weights in [GB]. The formatting is imported when a sentence is
written, not when the module is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from costmodel.result import Breakeven
from pricing.serving_options import Z90

from ..advice import WEIGHTS_SHARE
from .request import CompareRequest
from .result import (
    PROVIDER_SERVICE_LIFE_YEARS,
    SERVICE_LIFE_YEARS,
    Comparison,
    LeftOut,
    Option,
    Unserved,
)

__all__ = ["Wording", "estimated", "from_peaks", "option_name", "pricing_name", "wording"]


#: The footnote to the dagger that marks an option whose speed is not measured on its GPU.
PEAKS_NOTE = (
    "† speed not measured on this GPU: the catalog's estimate (its note says how: another "
    "benchmark's published result, or a measured GPU of the same kind scaled by peak figures); "
    "it can be off (give relative_throughput in a scenario to check)."
)


#: The advice codes of a speed that is not measured on the option's GPU.
UNMEASURED_CODES = ("throughput_estimated", "throughput_from_peaks")

#: The mark of an option whose serving throughput is estimated.
ESTIMATED = "§"

#: The footnote to the dash of an option whose carbon is not known.
UNKNOWN_CARBON_NOTE = (
    "— carbon not published: the provider gives no emissions per unit of work, so none is "
    "counted (never zero) and the option ranks last by carbon."
)


def option_name(o: Option | LeftOut) -> str:
    """ "4 x rtx-4090" (owned: GPUs per server and the GPU), or the instance or API offer id;
    of an option ranked or ruled out alike."""
    return f"{o.gpu_count} x {o.id}" if o.side == "buy" else o.id


def pricing_name(o: Option | LeftOut) -> str:
    """ "own", or the pricing model in words ("on demand", "per token"); of an option ranked or
    ruled out alike."""
    return "own" if o.side == "buy" else o.pricing.replace("_", " ")


def estimated(o: Option) -> bool:
    """Whether the option's serving throughput is estimated, not measured."""
    return o.source is not None and o.source.origin == "estimated"


def from_peaks(o: Option) -> bool:
    """Whether the option's speed is not measured on its GPU (the catalog's estimate, or the
    ratio of peak figures): the dagger of :data:`PEAKS_NOTE`."""
    return any(w.code in UNMEASURED_CODES for w in o.warnings)


@dataclass(frozen=True)
class Wording:
    """The sentences of a comparison, written once: ``heading`` (what was compared and how),
    ``summary`` (the cheapest option of each side and the break-evens, one line each),
    ``peaks_note`` (the footnote to the dagger of options whose speed is from peak ratios,
    shown under a table that has one), ``left_out`` (by model: the options without a
    measurement or estimate, too small for the weights or too slow, ``""`` when none is),
    ``carbon_note`` (what the carbon column counts, ``""`` when no option's carbon is known),
    ``unknown_carbon_note`` (the footnote to the dash of an option of unknown carbon, shown
    under a table that has one) and ``estimated_note`` (by model, the footnote to the section
    sign of an option whose throughput is estimated, ``""`` when none is)."""

    heading: str
    summary: tuple[str, ...]
    peaks_note: str = PEAKS_NOTE
    left_out: str = ""
    carbon_note: str = ""
    unknown_carbon_note: str = UNKNOWN_CARBON_NOTE
    estimated_note: str = ""


def _heading(result: Comparison) -> str:
    from present.formatting import fmt_utilisation

    r = result.request
    tier = f", {r.tier} instances" if r.tier else ""
    memory = f", at least {r.min_memory_gb:g} GB" if r.min_memory_gb is not None else ""
    run = f"samples {r.samples:,}, seed {r.seed}, catalog {result.catalog.version}"
    if r.sort == "carbon":
        run = f"lowest carbon first; {run}"
    at = f"at {fmt_utilisation(r.utilisation)} utilisation"
    if result.model is None:
        return (
            f"Cost per reference GPU-hour {at} ({r.precision}, {r.horizon_months} months"
            f"{tier}{memory}; {run}; one reference GPU-hour is an hour of {result.reference_gpu})"
        )
    floor = ", ".join(w for w in (_floor_words(r), _within_words(r)) if w)
    return (
        f"Cost per M tokens of {result.model.name} ({r.precision}) {at} ({r.input_tokens:,} "
        f"input / {r.output_tokens:,} output tokens per request{floor and ', ' + floor}, "
        f"{r.horizon_months} months{tier}{memory}; {run})"
    )


def _carbon_words(result: Comparison) -> str:
    """What the carbon column counts, in one sentence; ``""`` when no option's is known."""
    g = result.grid
    if g is None or all(o.carbon is None for o in result.options):
        return ""
    from costmodel.units import unit as unit_of
    from present.formatting import fmt_utilisation

    return (
        f"Carbon [g CO2e per {unit_of(result.unit).words}] at "
        f"{fmt_utilisation(result.request.utilisation)} utilisation: owned on grid {g.id} "
        f"({g.name}, {g.g_co2e_per_kwh:g} g/kWh) at the build's PUE, with its embodied carbon "
        f"spread over {SERVICE_LIFE_YEARS:g} years; rented on the instance's region grid at "
        f"the provider's PUE, with its share of the host's embodied carbon over "
        f"{PROVIDER_SERVICE_LIFE_YEARS:g} years."
    )


def _floor_words(r: CompareRequest) -> str:
    floor = r.min_tokens_per_s_per_user
    return "" if floor is None else f"serving at least {floor:g} tokens/s per user"


def _breakeven_line(label: str, be: Breakeven) -> str:
    from present.formatting import fmt_utilisation

    return (
        f"Break-even utilisation {label}: {fmt_utilisation(be.p50)} "
        f"(P10–P90 {fmt_utilisation(be.p10)}–{fmt_utilisation(be.p90)})"
    )


def _many(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _unserved_words(result: Comparison) -> str:
    """By model: which options have no measurement or are too small, in one sentence."""
    from present.formatting import fmt_share

    u, r, m = result.unserved, result.request, result.model
    if u is None or m is None:
        return ""
    parts = []
    floor = _floor_words(r)
    if u.no_measurement_gpus or u.no_measurement_instances:
        measured = (
            f"measured on {', '.join(u.measured_gpus)}" if u.measured_gpus else "no GPU has one"
        )
        gpus, instances = (
            _many(u.no_measurement_gpus, "GPU"),
            _many(u.no_measurement_instances, "instance"),
        )
        parts.append(
            f"{gpus} and {instances} have no measurement of {m.id} at {r.precision}"
            f"{floor and ' ' + floor} ({measured}) nor an estimate (it needs the model's "
            "architecture and the GPU's bandwidth and peak)"
        )
    if u.does_not_fit_servers or u.does_not_fit_instances:
        parts.append(
            f"{_many(u.does_not_fit_servers, 'server')} and "
            f"{_many(u.does_not_fit_instances, 'instance')} do not fit its {m.weights_gb:,.0f} GB "
            f"of weights (and one request's KV cache) in {fmt_share(WEIGHTS_SHARE)} of their "
            "GPU memory"
        )
    if u.too_slow_servers or u.too_slow_instances:
        parts.append(
            f"{_many(u.too_slow_servers, 'server')} and "
            f"{_many(u.too_slow_instances, 'instance')} are estimated to serve no request at "
            f"{r.min_tokens_per_s_per_user:g} tokens/s per user"
        )
    if u.misses_targets_servers or u.misses_targets_instances:
        parts.append(_misses_words(u, r))
    return "; ".join(parts) + "." if parts else ""


def _within_words(r: CompareRequest) -> str:
    """The latency targets in words, ``""`` without any."""
    targets = [
        f"{limit:g} ms {what}"
        for limit, what in ((r.max_tpot_ms, "per output token"), (r.max_ttft_ms, "to first token"))
        if limit is not None
    ]
    return f"within {' and '.join(targets)}" if targets else ""


def _misses_words(u: Unserved, r: CompareRequest) -> str:
    """The options that cannot meet the latency targets, and the best any of them reaches."""
    best = u.misses_targets_best
    reach = [
        f"{value:.3g} ms {what}"
        for limit, value, what in (
            (r.max_tpot_ms, best and best.tpot_ms, "per output token"),
            (r.max_ttft_ms, best and best.ttft_ms, "to first token"),
        )
        if limit is not None and value is not None
    ]
    if r.min_tokens_per_s_per_user is not None and best is not None:
        reach.append(f"{best.tokens_per_s_per_user:.3g} tokens/s per user")
    return (
        f"{_many(u.misses_targets_servers, 'server')} and "
        f"{_many(u.misses_targets_instances, 'instance')} cannot serve {_within_words(r)}"
        + (f" (the best any of them reaches: {', '.join(reach)})" if reach else "")
    )


def _estimated_words(result: Comparison) -> str:
    """By model, the footnote to the section sign of an estimated option; ``""`` when none is."""
    sigma = next((o.source.sigma for o in result.options if estimated(o)), None)
    if sigma is None:
        return ""
    factor = math.exp(Z90 * sigma)
    return (
        f"{ESTIMATED} throughput estimated from the model's architecture and the GPU's "
        "specifications (a roofline calibrated on the measured rows, see 'costmodel "
        f"throughput'), not measured: its error, lognormal with sigma {sigma:.2f} (P10-P90 "
        f"a factor {factor:.2f} either way), is drawn in the cost's P10-P90."
    )


def wording(result: Comparison) -> Wording:
    """The :class:`Wording` of ``result``."""
    from present.formatting import fmt_per_unit

    sides = [("owned", result.cheapest_buy), ("rented", result.cheapest_rent)]
    if result.model is not None:
        sides.append(("API", result.cheapest_api))
    lines = [
        f"Cheapest {label}: none"
        if o is None
        else f"Cheapest {label}: {option_name(o)} ({pricing_name(o)}), "
        f"{fmt_per_unit(o.cost.p50, result.unit)}"
        for label, o in sides
    ]
    be, api = result.breakeven_utilisation, result.breakeven_vs_api
    if result.model is None and be is not None:
        lines.append(_breakeven_line("between them", be))
    elif be is not None:
        lines.append(_breakeven_line("of the cheapest owned against the cheapest rented", be))
    if api is not None:
        lines.append(_breakeven_line("of the cheapest owned against the cheapest API", api))
    return Wording(
        _heading(result),
        tuple(lines),
        left_out=_unserved_words(result),
        carbon_note=_carbon_words(result),
        estimated_note=_estimated_words(result),
    )
