"""The market at one utilisation: every way the catalog offers GPU compute, ranked by cost.

The options are each catalog GPU with a price, owned at 1, 2, 4 and 8 per server on the
catalog's platform tier for that count, and each rented instance at each pricing model the
catalog prices (on demand, spot, 1- and 3-year reservations). Each option is one side resolved
alone, as a scenario's ``buy`` or ``rent`` block is (:mod:`scenarios.sides`), so it gets the
catalog's defaults, the user's prices laid over the catalog and the buyer's-guide advice; an
option the advice rules out (an ``error``) or that cannot be resolved is left out and listed
with the reason.

Cost is per reference GPU-hour of work done at utilisation u [USD/reference GPU-hour]:

- owned: ``TCO_buy(u) / (u * 730 * H * T_own)``, the engine's closed-form TCO line of the
  build over the horizon H, divided by the work the build does at u;
- rented: ``TCO_rent(u) / (u * 730 * H * T_inst)`` for one instance doing work at u, so on
  demand and spot cost their hourly price over the instance's throughput whatever u is, while a
  reservation is paid for every hour of its term and costs more per hour of work at low u.

Every option is evaluated on the same draws of the default uncertainty (:data:`UNCERTAINTY`,
triangular around each catalog value) and given as P10, P50 and P90. Options are ranked by
P50, cheapest first. The break-even utilisation between the cheapest owned and the cheapest
rented option is found draw by draw from the two lines, each per unit of throughput.

>>> from scenarios.compare import CompareRequest, compare
>>> result = compare(CompareRequest(utilisation=0.5, samples=200))
>>> result.options[0].side in ("buy", "rent")
True
"""

from __future__ import annotations

import datetime as dt
import functools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np
from marshmallow import Schema, ValidationError, fields, post_load, validate

from costmodel.cashflows import (
    BuyDraws,
    BuyLine,
    RentDraws,
    RentLine,
    Terms,
    buy_line,
    capacity,
    rent_line,
)
from costmodel.distributions import Distribution, Fixed, Triangular, draws_at
from costmodel.inputs import MAX_SAMPLES, BuyInputs, ModelInputs, RentInputs, input_fields
from costmodel.outcomes import breakeven_utilisation
from costmodel.present.schema import AdviceSchema, BreakevenSchema, CatalogRefSchema, Number
from costmodel.result import Advice, Breakeven, CatalogRef, Origin
from costmodel.sampling import sample
from costmodel.stats import breakeven, percentiles
from pricing import PRECISIONS, PRICING_MODELS, Catalog, load_catalog
from pricing.vocabulary import GPU_LIMITS, TIERS

from .advice import Question, advise
from .errors import ScenarioError, flatten_messages
from .schema import BuySchema, RentSchema, UtilisationFloor
from .sides import Owned, Rented, Work, owned, rented, work

__all__ = [
    "GPU_COUNTS",
    "UNCERTAINTY",
    "CompareRequest",
    "CompareSchema",
    "Comparison",
    "ComparisonSchema",
    "Cost",
    "LeftOut",
    "Option",
    "Wording",
    "compare",
    "load_request",
]

#: The default uncertainty of every option: the relative half-width of a symmetric triangular
#: distribution around the catalog's (or the user's) value of each input [-]. Purchase and
#: rental prices +-10 % (street prices and quotes move about that much), electricity +-20 %
#: (tariffs differ that much between places and years), resale decay +-25 % (a catalog value of
#: 20 %/year becomes 15-25 %/year). Every other input is held at its value.
UNCERTAINTY: Mapping[str, float] = MappingProxyType(
    {
        "buy.gpu_price_usd": 0.10,
        "buy.platform_price_usd": 0.10,
        "buy.electricity_usd_per_kwh": 0.20,
        "buy.resale_annual_decay": 0.25,
        "rent.price_usd_per_hour": 0.10,
        "rent.on_demand_price_usd_per_hour": 0.10,
    }
)
#: GPUs per owned server compared.
GPU_COUNTS: tuple[int, ...] = (1, 2, 4, 8)
#: Draws per option unless asked otherwise.
DEFAULT_SAMPLES = 2000
#: The pricing of an owned option.
PURCHASE = "purchase"

_HORIZON = input_fields(ModelInputs)["horizon_months"].metadata["bound"]
_SEED = input_fields(ModelInputs)["seed"].metadata["bound"]
_MEMORY = GPU_LIMITS["memory_gb"]

# ---------------------------------------------------------------------------------------------
# the request


@dataclass(frozen=True)
class CompareRequest:
    """What to compare.

    Attributes:
        utilisation: busy share of wall-clock hours [-], in (0, 1].
        precision: ``"fp32" | "fp16" | "int8"``; picks the catalog throughput.
        horizon_months: months of ownership or rental [month].
        min_memory_gb: GPUs with less memory are left out [GB]; ``None``: none.
        tier: keep the rented instances of this kind of provider (``"hyperscaler" |
            "neocloud" | "marketplace"``); ``None``: all. Owned options are not filtered.
        samples: draws per option [draw]. seed: random seed [-].
    """

    utilisation: float
    precision: str = "fp16"
    horizon_months: int = 36
    min_memory_gb: float | None = None
    tier: str | None = None
    samples: int = DEFAULT_SAMPLES
    seed: int = 0


class CompareSchema(Schema):
    """The options of a comparison (the body of ``POST /v1/compare``)."""

    utilisation = fields.Float(
        required=True,
        allow_nan=False,
        validate=[validate.Range(0, 1, min_inclusive=False), UtilisationFloor(zero=False)],
        metadata={
            "description": "busy share of wall-clock hours, in (0, 1]",
            "unit": "[-]",
            "example": 0.5,
        },
    )
    precision = fields.String(
        load_default="fp16",
        validate=validate.OneOf(PRECISIONS),
        metadata={"description": "numeric precision of the work; picks the catalog throughput"},
    )
    horizon_months = fields.Integer(
        load_default=36,
        strict=True,
        validate=validate.Range(int(_HORIZON.low), int(_HORIZON.high)),
        metadata={"description": "months of ownership or rental", "unit": "[month]"},
    )
    min_memory_gb = fields.Float(
        load_default=None,
        allow_none=True,
        allow_nan=False,
        validate=validate.Range(_MEMORY.low, _MEMORY.high),
        metadata={"description": "leave out GPUs with less memory", "unit": "[GB]"},
    )
    tier = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.OneOf(TIERS),
        metadata={"description": "keep the rented instances of this kind of provider"},
    )
    samples = fields.Integer(
        load_default=DEFAULT_SAMPLES,
        strict=True,
        validate=validate.Range(1, MAX_SAMPLES),
        metadata={"description": "Monte Carlo draws per option", "unit": "[draw]"},
    )
    seed = fields.Integer(
        load_default=0,
        strict=True,
        validate=validate.Range(int(_SEED.low), int(_SEED.high)),
        metadata={"description": "random seed", "unit": "[-]"},
    )

    @post_load
    def _request(self, data: dict, **kwargs: Any) -> CompareRequest:
        return CompareRequest(**data)


def load_request(data: Mapping[str, Any], source: str = "<request>") -> CompareRequest:
    """A :class:`CompareRequest` from a mapping; a :class:`ScenarioError` with every key path
    when it is invalid."""
    schema = CompareSchema()
    try:
        return schema.load(data)
    except ValidationError as exc:
        raise ScenarioError(source, flatten_messages(exc.messages, schema)) from None


# ---------------------------------------------------------------------------------------------
# the result


@dataclass(frozen=True)
class Cost:
    """Cost per reference GPU-hour [USD/reference GPU-hour]: P10, P50, P90."""

    p10: float
    p50: float
    p90: float


@dataclass(frozen=True)
class Option:
    """One way to get the compute, with its cost at the requested utilisation.

    Attributes:
        id: the GPU id (owned) or the instance id (rented).
        side: ``"buy" | "rent"``. pricing: ``"purchase"`` (owned) or the pricing model.
        gpu: GPU id. gpu_count: GPUs per server or per instance.
        cost_per_reference_gpu_hour: P10/P50/P90 [USD/reference GPU-hour].
        price_usd: the option's price [USD/GPU] or [USD/instance-hour]; price_source: where it
            came from, in words; price_origin: its kind (the catalog, or the user's prices).
        warnings: the buyer's-guide advice about this option.
    """

    id: str
    side: str
    pricing: str
    gpu: str
    gpu_count: int
    cost_per_reference_gpu_hour: Cost
    price_usd: float
    price_source: str
    price_origin: Origin = Origin.CATALOG
    warnings: tuple[Advice, ...] = ()


@dataclass(frozen=True)
class LeftOut:
    """An option ruled out by the advice (an ``error``) or that cannot be resolved."""

    id: str
    side: str
    pricing: str
    gpu_count: int
    reason: str


@dataclass(frozen=True)
class Comparison:
    """Every option ranked by P50 cost per reference GPU-hour, cheapest first."""

    request: CompareRequest
    reference_gpu: str
    catalog: CatalogRef
    uncertainty: Mapping[str, float]
    options: tuple[Option, ...]
    cheapest_buy: Option | None
    cheapest_rent: Option | None
    breakeven_utilisation: Breakeven | None  # between the cheapest owned and rented option
    left_out_by_min_memory: int
    ruled_out: tuple[LeftOut, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (:class:`ComparisonSchema`); no value is ``null``."""
        return ComparisonSchema().dump(self)

    @property
    def wording(self) -> Wording:
        """The sentences the comparison is read by (the CLI and the page print them)."""
        return wording(self)


# ---------------------------------------------------------------------------------------------
# the words


#: The footnote to the dagger that marks an option whose speed comes from peak ratios.
PEAKS_NOTE = (
    "† speed from the ratio of peak figures, not measured training throughput: it can "
    "overstate real speed (give relative_throughput in a scenario to check)."
)


def option_name(o: Option) -> str:
    """ "4 x rtx-4090" (owned: GPUs per server and the GPU) or the instance id."""
    return f"{o.gpu_count} x {o.id}" if o.side == "buy" else o.id


def pricing_name(o: Option) -> str:
    """ "own", or the pricing model in words ("on demand")."""
    return "own" if o.side == "buy" else o.pricing.replace("_", " ")


def from_peaks(o: Option) -> bool:
    """Whether the option's speed comes from the ratio of peak figures."""
    return any(w.code == "throughput_from_peaks" for w in o.warnings)


@dataclass(frozen=True)
class Wording:
    """The sentences of a comparison, written once: ``heading`` (what was compared and how),
    ``summary`` (the cheapest owned and rented option and their break-even, one line each),
    ``peaks_note`` (the footnote to the dagger of options whose speed is from peak ratios,
    shown under a table that has one)."""

    heading: str
    summary: tuple[str, ...]
    peaks_note: str = PEAKS_NOTE


def wording(result: Comparison) -> Wording:
    """The :class:`Wording` of ``result``."""
    from costmodel.present.formatting import fmt_unit_cost, fmt_utilisation

    r = result.request
    tier = f", {r.tier} instances" if r.tier else ""
    memory = f", at least {r.min_memory_gb:g} GB" if r.min_memory_gb is not None else ""
    heading = (
        f"Cost per reference GPU-hour at {fmt_utilisation(r.utilisation)} utilisation "
        f"({r.precision}, {r.horizon_months} months{tier}{memory}; samples {r.samples:,}, seed "
        f"{r.seed}, catalog {result.catalog.version}; one reference GPU-hour is an hour of "
        f"{result.reference_gpu})"
    )
    lines = []
    for label, o in (("owned", result.cheapest_buy), ("rented", result.cheapest_rent)):
        if o is None:
            lines.append(f"Cheapest {label}: none")
        else:
            cost = fmt_unit_cost(o.cost_per_reference_gpu_hour.p50)
            lines.append(
                f"Cheapest {label}: {option_name(o)} ({pricing_name(o)}), {cost} per reference "
                "GPU-hour"
            )
    be = result.breakeven_utilisation
    if be is not None:
        lines.append(
            f"Break-even utilisation between them: {fmt_utilisation(be.p50)} "
            f"(P10–P90 {fmt_utilisation(be.p10)}–{fmt_utilisation(be.p90)})"
        )
    return Wording(heading, tuple(lines))


# ---------------------------------------------------------------------------------------------
# evaluation


@dataclass(frozen=True)
class _Candidate:
    side: str
    id: str
    pricing: str
    gpu: str
    gpu_count: int
    memory_gb: float


def _candidates(catalog: Catalog, tier: str | None, counts: Sequence[int]) -> list[_Candidate]:
    out = [
        _Candidate("buy", g.id, PURCHASE, g.id, n, g.memory_gb)
        for g in catalog.gpus.values()
        if g.price_usd is not None
        for n in counts
    ]
    for inst in catalog.instances.values():
        if tier is not None and inst.tier != tier:
            continue
        memory = catalog.gpus[inst.gpu].memory_gb
        for pricing in PRICING_MODELS:
            if getattr(inst, f"{pricing}_usd_per_hour") is not None:
                out.append(_Candidate("rent", inst.id, pricing, inst.gpu, inst.gpu_count, memory))
    return out


def _side(c: _Candidate, w: Work) -> Owned | Rented:
    """The option resolved alone, as the ``buy`` or ``rent`` block of a scenario is."""
    if c.side == "buy":
        return owned(BuySchema().load({"gpu": c.id, "gpu_count": c.gpu_count}), "buy", w)
    return rented(RentSchema().load({"instance": c.id, "pricing": c.pricing}), "rent", w)


def _reason(errors: list[dict]) -> str:
    return "; ".join(
        f"{e['path']}: {e['message']}" if e.get("path") else e["message"] for e in errors
    )


@dataclass(frozen=True, eq=False)
class _Resolved:
    """An option's side and the advice about it."""

    side: Owned | Rented
    warnings: tuple[Advice, ...]


@functools.lru_cache(maxsize=8)
def _resolved(
    catalog: Catalog, precision: str, horizon: int, counts: tuple[int, ...], day: dt.date
) -> tuple[tuple[_Candidate, _Resolved | LeftOut], ...]:
    """Every option of ``catalog`` (all tiers) resolved, or left out with the reason. Kept for
    a few (catalog, precision, horizon, counts) per process, for the day (the advice on stale
    prices depends on it): resolving is most of the time of a comparison."""
    w = work({"precision": precision, "reference_gpu": catalog.reference_gpu}, catalog)
    out: list[tuple[_Candidate, _Resolved | LeftOut]] = []
    for c in _candidates(catalog, None, counts):
        try:
            side = _side(c, w)
        except ScenarioError as exc:
            out.append((c, LeftOut(c.id, c.side, c.pricing, c.gpu_count, _reason(exc.errors))))
            continue
        warnings = advise(Question(horizon, w, (side,)))
        errors = [a for a in warnings if a.severity == "error"]
        if errors:
            out.append((c, LeftOut(c.id, c.side, c.pricing, c.gpu_count, errors[0].message)))
            continue
        out.append((c, _Resolved(side, warnings)))
    return tuple(out)


def _widened(dist: Distribution, spread: float, bound: Any) -> Distribution:
    """A fixed value ``v`` as triangular(v - spread*v, v, v + spread*v), kept in ``bound``."""
    if not isinstance(dist, Fixed) or spread <= 0 or dist.value == 0:
        return dist
    v = float(dist.value)
    low = max(v - spread * abs(v), bound.low)
    high = min(v + spread * abs(v), bound.high)
    return Triangular(low, v, high) if low < high else dist


def _uncertain(side: Owned | Rented, spreads: Mapping[str, float]) -> BuyInputs | RentInputs:
    """The side's inputs with the default uncertainty on each value the catalog gave."""
    obj = side.inputs
    meta = input_fields(type(obj))
    changes = {}
    for key, spread in spreads.items():
        prefix, name = key.split(".")
        value = getattr(obj, name, None) if prefix == side.path else None
        if value is not None:
            changes[name] = _widened(value, spread, meta[name].metadata["bound"])
    return replace(obj, **changes) if changes else obj


def _median(spec: Any) -> float:
    """The median of an assumption's value (a number or a distribution mapping)."""
    if isinstance(spec, int | float):
        return float(spec)
    from .distspec import from_spec

    return from_spec(spec).median()


@dataclass(frozen=True, eq=False)
class _Evaluated:
    option: Option
    line: BuyLine | RentLine  # per unit of capacity: TCO / (730 * H * T)


def _evaluate(
    c: _Candidate,
    resolved: _Resolved,
    request: CompareRequest,
    q: Mapping[str, np.ndarray],
    spreads: Mapping[str, float],
) -> _Evaluated:
    """One option's cost per reference GPU-hour over the shared draws ``q``, with ``spreads``
    of uncertainty on the values the catalog gave.

    Owned: the build's TCO line over its capacity; rented: one instance doing the work, so a
    reservation is a reservation of one (:meth:`~costmodel.cashflows.BuyLine.per_unit`)."""
    side = resolved.side
    key = f"{side.path}.{'gpu_price_usd' if c.side == 'buy' else 'price_usd_per_hour'}"
    price = next(a for a in side.assumptions if a.key == key)
    inputs = _uncertain(side, spreads)
    values = draws_at({f"{side.path}.{k}": v for k, v in vars(inputs).items()}, q)
    h, u = request.horizon_months, request.utilisation
    terms = Terms(h, 0.0, 0.0)  # a comparison of hourly costs: undiscounted, before tax
    if c.side == "buy":
        b = BuyDraws.sampled(inputs, values)
        unit: BuyLine | RentLine = buy_line(b, terms).per_unit(capacity(b), h)
    else:
        r = RentDraws.sampled(inputs, values)
        t = capacity(r)
        unit = rent_line(r, t, t, terms).per_unit(t, h)
    cost = np.empty(request.samples)
    cost[...] = np.asarray(unit.tco(u), dtype=float) / u
    option = Option(
        id=c.id,
        side=c.side,
        pricing=c.pricing,
        gpu=c.gpu,
        gpu_count=c.gpu_count,
        cost_per_reference_gpu_hour=Cost(**percentiles(cost)),
        price_usd=_median(price.value),
        price_source=price.source,
        price_origin=price.origin,
        warnings=resolved.warnings,
    )
    return _Evaluated(option, unit)


def _breakeven(buy: _Evaluated, rent: _Evaluated, samples: int) -> Breakeven:
    """Break-even utilisation per draw between two options, from their lines per unit of
    capacity (equal cost per unit of capacity means equal cost per reference GPU-hour)."""
    assert isinstance(buy.line, BuyLine) and isinstance(rent.line, RentLine)
    return breakeven(np.array(breakeven_utilisation(buy.line, rent.line, samples), dtype=float))


def _rank(e: _Evaluated) -> tuple:
    """Cheapest P50 first; ties by P90, then side, id, GPU count and pricing model."""
    o = e.option
    c = o.cost_per_reference_gpu_hour
    pricing = PRICING_MODELS.index(o.pricing) if o.pricing in PRICING_MODELS else -1
    return (c.p50, c.p90, o.side, o.id, o.gpu_count, pricing)


def compare(
    request: CompareRequest,
    catalog: Catalog | None = None,
    *,
    uncertainty: Mapping[str, float] = UNCERTAINTY,
    counts: Sequence[int] = GPU_COUNTS,
) -> Comparison:
    """Rank every owned and rented option of ``catalog`` (default: the shipped one) by cost per
    reference GPU-hour at ``request.utilisation``.

    ``uncertainty`` maps input keys to the relative half-width of their triangular
    distribution (default :data:`UNCERTAINTY`; ``{}`` holds every input at its value);
    ``counts`` are the GPUs per owned server compared. The result's ``timings`` hold the
    seconds spent resolving the options' scenarios (``resolve_s``) and evaluating them
    (``engine_s``).
    """
    catalog = catalog or load_catalog()
    start = time.perf_counter()
    resolved = _resolved(
        catalog, request.precision, request.horizon_months, tuple(counts), dt.date.today()
    )
    tiers = {i.id: i.tier for i in catalog.instances.values()}
    candidates = [
        (c, r)
        for c, r in resolved
        if request.tier is None or c.side == "buy" or tiers[c.id] == request.tier
    ]
    least = request.min_memory_gb
    kept = [(c, r) for c, r in candidates if least is None or c.memory_gb >= least]
    names = sorted(k for k, v in uncertainty.items() if v > 0)
    q = sample(names, request.samples, request.seed, "lhs").q if names else {}
    middle = time.perf_counter()
    evaluated = [
        _evaluate(c, r, request, q, uncertainty) for c, r in kept if isinstance(r, _Resolved)
    ]
    ruled_out = [r for _, r in kept if isinstance(r, LeftOut)]
    resolve_s, engine_s = middle - start, time.perf_counter() - middle
    evaluated.sort(key=_rank)
    best = {
        side: next((e for e in evaluated if e.option.side == side), None)
        for side in ("buy", "rent")
    }
    breakeven = None
    if best["buy"] is not None and best["rent"] is not None:
        breakeven = _breakeven(best["buy"], best["rent"], request.samples)
    return Comparison(
        request=request,
        reference_gpu=catalog.reference_gpu,
        catalog=CatalogRef(catalog.version, catalog.as_of),
        uncertainty=MappingProxyType(dict(uncertainty)),
        options=tuple(e.option for e in evaluated),
        cheapest_buy=best["buy"].option if best["buy"] else None,
        cheapest_rent=best["rent"].option if best["rent"] else None,
        breakeven_utilisation=breakeven,
        left_out_by_min_memory=len(candidates) - len(kept),
        ruled_out=tuple(ruled_out),
        timings={
            "resolve_s": resolve_s,
            "engine_s": engine_s,
            "total_s": time.perf_counter() - start,
        },
    )


# ---------------------------------------------------------------------------------------------
# JSON


def _money(description: str) -> Number:
    return Number(metadata={"description": description})


class CompareCostSchema(Schema):
    """Cost per reference GPU-hour [USD/reference GPU-hour] under the default uncertainty."""

    p10 = _money("10th percentile [USD/reference GPU-hour]")
    p50 = _money("median [USD/reference GPU-hour]; the options are ranked by it")
    p90 = _money("90th percentile [USD/reference GPU-hour]")


class CompareOptionSchema(Schema):
    """One owned or rented option."""

    id = fields.String(
        required=True,
        metadata={"description": "GPU id (owned) or instance id (rented)", "example": "rtx-4090"},
    )
    side = fields.String(required=True, validate=validate.OneOf(("buy", "rent")))
    pricing = fields.String(
        required=True,
        validate=validate.OneOf((PURCHASE, *PRICING_MODELS)),
        metadata={"description": "purchase (owned) or the pricing model (rented)"},
    )
    gpu = fields.String(required=True, metadata={"description": "GPU id"})
    gpu_count = fields.Integer(
        required=True, metadata={"description": "GPUs per server or per instance"}
    )
    cost_per_reference_gpu_hour = fields.Nested(CompareCostSchema, required=True)
    price_usd = _money("the option's price [USD/GPU] (owned) or [USD/instance-hour] (rented)")
    price_source = fields.String(
        required=True,
        metadata={"description": "where the price came from, in words"},
    )
    price_origin = fields.Enum(
        Origin,
        by_value=True,
        required=True,
        metadata={"description": "catalog, or prices: the user's prices file laid over it"},
    )
    warnings = fields.List(fields.Nested(AdviceSchema), required=True)
    name = fields.Function(
        option_name, metadata={"description": "the option in words: '4 x rtx-4090' or the id"}
    )
    pricing_name = fields.Function(
        pricing_name, metadata={"description": "'own', or the pricing model in words"}
    )
    from_peaks = fields.Function(
        from_peaks,
        metadata={"description": "its speed comes from peak ratios, not a measurement (†)"},
    )


class WordingSchema(Schema):
    """The sentences the comparison is read by, as the CLI prints them."""

    heading = fields.String(required=True, metadata={"description": "what was compared and how"})
    summary = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "the cheapest owned and rented option and their break-even"},
    )
    peaks_note = fields.String(
        required=True, metadata={"description": "the footnote to the † of an option's name"}
    )


class CompareLeftOutSchema(Schema):
    """An option left out, and why."""

    id = fields.String(required=True)
    side = fields.String(required=True, validate=validate.OneOf(("buy", "rent")))
    pricing = fields.String(required=True)
    gpu_count = fields.Integer(required=True)
    reason = fields.String(required=True)


class ComparisonSchema(Schema):
    """Every option ranked by P50 cost per reference GPU-hour, cheapest first."""

    request = fields.Nested(
        CompareSchema, required=True, metadata={"description": "the options, defaults filled in"}
    )
    reference_gpu = fields.String(
        required=True, metadata={"description": "the GPU one reference GPU-hour is the work of"}
    )
    catalog = fields.Nested(CatalogRefSchema, required=True)
    uncertainty = fields.Dict(
        keys=fields.String(),
        values=fields.Float(),
        metadata={
            "description": "relative half-width of the triangular distribution around each "
            "input's value [-]"
        },
    )
    options = fields.List(fields.Nested(CompareOptionSchema), required=True)
    cheapest_buy = fields.Nested(CompareOptionSchema, allow_none=True)
    cheapest_rent = fields.Nested(CompareOptionSchema, allow_none=True)
    breakeven_utilisation = fields.Nested(
        BreakevenSchema,
        allow_none=True,
        metadata={"description": "between the cheapest owned and rented option"},
    )
    left_out_by_min_memory = fields.Integer(
        required=True, metadata={"description": "options left out by min_memory_gb"}
    )
    ruled_out = fields.List(
        fields.Nested(CompareLeftOutSchema),
        required=True,
        metadata={"description": "options the advice rules out or that cannot be resolved"},
    )
    wording = fields.Nested(WordingSchema, required=True)
