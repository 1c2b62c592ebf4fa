"""The market evaluated: each option of the catalog resolved alone, its cost and carbon per unit
of work at one utilisation over draws shared by all, and the ranking (:func:`compare`;
:func:`option_count` counts the options without resolving any).

What the options are and the unit of work they are compared by are told in
:mod:`scenarios.compare`. Each option is resolved from its catalog row by the sides' keyword
constructors (:func:`~scenarios.sides.owned_of`, :func:`~scenarios.sides.rented_of`,
:func:`~scenarios.sides.hosted_of`), no document loaded. By model, each owned build and
rented instance serves at its measured or estimated throughput (:mod:`.speeds`); an
estimated one's error is drawn with the other uncertain inputs
(:class:`costmodel.options.ThroughputError`), so its cost's P10-P90 carries it.

Cost is per unit of work done at utilisation u [USD/unit]:

- owned: ``TCO_buy(u) / (u * 730 * H * T_own)``, the engine's closed-form TCO line of the
  build over the horizon H, divided by the work the build does at u;
- rented: ``TCO_rent(u) / (u * 730 * H * T_inst)`` for one instance doing work at u, so on
  demand and spot cost their hourly price over the instance's throughput whatever u is, while a
  reservation is paid for every hour of its term and costs more per hour of work at low u;
- an API offer: the same as a rented option, the API being an "instance" that does one M
  tokens an hour at the blended price p_api (:meth:`~costmodel.cashflows.ApiDraws.as_rented`):
  ``p_api * sum_m (1 + g_api)^((m - 1)/12) / H``, the same at every u.

Beside its cost, each option's emissions per unit of work [g CO2e/unit] at u, from the same
carbon inputs and engine lines as a scenario's (:func:`scenarios.emissions.side_carbon`,
:mod:`costmodel.carbon`), undiscounted:

- owned: ``E_buy(u) / (u * 730 * H * T_own)``, the build's operational carbon on the request's
  ``grid`` (a catalog grid id, default the US average) at its PUE plus its embodied carbon's
  share of the service life;
- rented: ``E_rent(u) / (u * 730 * H * T_inst)``, the instance's power at its provider's PUE on
  its region's grid plus its share of the host's embodied carbon, for the hours used (the same
  at every u);
- an API offer: unknown (its provider publishes none), never zero.

Every option is evaluated on the same draws of the default uncertainty (:data:`UNCERTAINTY`,
and :data:`API_UNCERTAINTY` for the API offers; triangular around each catalog value) and given
as P10, P50 and P90, undiscounted and before tax. Options are ranked by P50 cost, cheapest first
(or with ``sort="carbon"`` by P50 carbon, lowest first, the unknown last). The
break-even utilisation between the cheapest owned and the cheapest rented option (and, by model,
the cheapest API offer) is found draw by draw from their lines, each per unit of throughput.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from costmodel.api_price import blended_price
from costmodel.cashflows import BuyLine, RentLine
from costmodel.distributions import Fixed, draws_at
from costmodel.inputs import ApiInputs
from costmodel.options import Evaluated, OptionInputs, breakeven_between, evaluate_options
from costmodel.result import Advice, CatalogRef
from costmodel.sides import side as side_of
from costmodel.stats import percentiles
from pricing import GPU, PRICING_MODELS, Catalog, CatalogError, Model, load_catalog
from pricing.carbon import GridIntensity
from pricing.estimate import Estimate
from pricing.estimated import conditions, fitted_error_words
from pricing.serving import gpus_with_rows

from ..advice import WEIGHTS_SHARE, Question, advise
from ..emissions import side_carbon
from ..errors import ScenarioError
from ..sides import Hosted, Inference, Owned, Rented, Work, hosted_of, owned_of, rented_of, work
from .inline import inline_model
from .request import TRAINING_PRECISION, CompareRequest
from .result import (
    ESTIMATE_ID,
    PER_TOKEN,
    PROVIDER_SERVICE_LIFE_YEARS,
    PURCHASE,
    SERVICE_LIFE_YEARS,
    Citation,
    Comparison,
    Cost,
    Grams,
    LeftOut,
    Option,
    OwnedGrid,
    Reach,
    ServedModel,
    Unserved,
)
from .speeds import MISSES_TARGETS, TOO_BIG, TOO_SLOW, UNMEASURED, Speed, Speeds

__all__ = [
    "API_UNCERTAINTY",
    "GPU_COUNTS",
    "UNCERTAINTY",
    "compare",
    "option_count",
    "option_counts",
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
#: The default uncertainty of an API offer, added to :data:`UNCERTAINTY` in a comparison by
#: model: +-10 % on its input and output prices, as on a rental price (list prices of hosted
#: models move by that much within months) [-].
API_UNCERTAINTY: Mapping[str, float] = MappingProxyType(
    {"api.input_usd_per_mtok": 0.10, "api.output_usd_per_mtok": 0.10}
)
#: GPUs per owned server compared (by model, those of them the catalog's platform tiers
#: build with the GPU).
GPU_COUNTS: tuple[int, ...] = (1, 2, 4, 8)

# ---------------------------------------------------------------------------------------------
# the options


@dataclass(frozen=True)
class _Candidate:
    side: str
    id: str
    pricing: str
    gpu: str | None
    gpu_count: int | None
    memory_gb: float  # of one GPU [GB]; 0 for an API
    tier: str | None = None  # a rented instance's kind of provider


def _counts(catalog: Catalog, gpu: GPU, counts: Sequence[int], w: Work) -> list[int]:
    """The GPUs per owned server of ``gpu`` compared: ``counts``, by model only those the
    catalog's platform tiers build with it."""
    if not isinstance(w, Inference):
        return list(counts)
    built = {t.gpu_count for t in catalog.tiers if t.takes(gpu)}
    return [n for n in counts if n in built]


def _candidates(catalog: Catalog, counts: Sequence[int], w: Work) -> list[_Candidate]:
    """Every option of ``catalog`` (all tiers), and by model the API offers of the model."""
    out = [
        _Candidate("buy", g.id, PURCHASE, g.id, n, g.memory_gb)
        for g in catalog.gpus.values()
        if g.price_usd is not None
        for n in _counts(catalog, g, counts, w)
    ]
    for inst in catalog.instances.values():
        memory = catalog.gpus[inst.gpu].memory_gb
        for pricing in PRICING_MODELS:
            if getattr(inst, f"{pricing}_usd_per_hour") is not None:
                out.append(
                    _Candidate(
                        "rent", inst.id, pricing, inst.gpu, inst.gpu_count, memory, inst.tier
                    )
                )
    if isinstance(w, Inference):
        out += [
            _Candidate("api", o.id, PER_TOKEN, None, None, 0.0)
            for o in catalog.api_offers.values()
            if o.model == w.model.id
        ]
    return out


def _measured(w: Work) -> frozenset[str]:
    """By model, the GPUs with a serving measurement of it (empty for training work and an
    inline model)."""
    if not isinstance(w, Inference) or w.model.is_inline:
        return frozenset()
    found = gpus_with_rows(w.catalog, w.model.id, w.precision, w.min_tokens_per_s_per_user)
    return frozenset(found)


def _speed(c: _Candidate, w: Work, speeds: Speeds | None) -> Speed | str | None:
    """By model, an owned or rented option's throughput (:mod:`.speeds`), or why it is left
    out unresolved: no throughput to be had, too little GPU memory for the weights (section
    9's rule before the estimate's), too slow for the floor. ``None`` otherwise."""
    if speeds is None or c.side == "api":
        return None
    found = speeds.of(w.catalog.gpus[c.gpu], c.gpu_count)
    if found == UNMEASURED:
        return found
    if w.model.weights_gb(w.precision) > WEIGHTS_SHARE * c.gpu_count * c.memory_gb:
        return TOO_BIG
    return found


def _asked(c: _Candidate, r: CompareRequest) -> bool:
    """Whether ``c`` is of the tier asked for (rented options only)."""
    return r.tier is None or c.side != "rent" or c.tier == r.tier


def _big_enough(c: _Candidate, r: CompareRequest) -> bool:
    """Whether ``c``'s GPU has the memory asked for (an API has no GPU to filter)."""
    return r.min_memory_gb is None or c.side == "api" or c.memory_gb >= r.min_memory_gb


def _model(r: CompareRequest, catalog: Catalog) -> Model:
    """The model compared: a catalog id, or inline with its architecture; a
    :class:`ScenarioError` at ``model`` (or its key) otherwise."""
    if isinstance(r.model, Mapping):
        return inline_model(r.model, catalog)
    try:
        return catalog.model(r.model)
    except CatalogError as exc:
        raise ScenarioError(None, [{"path": "model", "message": exc.problem}]) from None


def _work(r: CompareRequest, catalog: Catalog) -> Work:
    """The work the request compares (by default at the first precision the catalog measures
    the model at, else the first it is served at); a :class:`ScenarioError` at its key paths
    for an unknown model, or a precision the catalog does not serve the model at."""
    if r.model is None:
        training = {"precision": r.precision or TRAINING_PRECISION}
        return work({**training, "reference_gpu": catalog.reference_gpu}, catalog)
    model = _model(r, catalog)
    measured = {p.precision for p in catalog.serving if p.model == model.id}
    first = next((p for p in model.precisions if p in measured), model.precisions[0])
    precision = r.precision or first
    if precision not in model.precisions:
        message = f"the catalog serves {model.id} at {', '.join(model.precisions)}, not {precision}"
        raise ScenarioError(None, [{"path": "precision", "message": message}])
    return Inference(
        catalog=catalog,
        precision=precision,
        model=model,
        input_tokens=r.input_tokens,
        output_tokens=r.output_tokens,
        min_tokens_per_s_per_user=r.min_tokens_per_s_per_user,
        max_tpot_ms=r.max_tpot_ms,
        max_ttft_ms=r.max_ttft_ms,
    )


def _grid(r: CompareRequest, catalog: Catalog) -> GridIntensity | None:
    """The owned options' grid; ``None`` for a catalog without grid intensities. A
    :class:`ScenarioError` at ``grid`` for an unknown id, naming the closest ids."""
    if not catalog.grids:
        return None
    try:
        return catalog.grid(r.grid)
    except CatalogError as exc:
        raise ScenarioError(None, [{"path": "grid", "message": exc.problem}]) from None


def _listed(
    catalog: Catalog, request: CompareRequest, counts: Sequence[int], w: Work
) -> tuple[int, list[tuple[_Candidate, Speed | str | None]], Speeds | None]:
    """How many candidates are of the tier asked for, and those of them with the memory asked
    for, each with its throughput by model (:func:`_speed`), in catalog order; and the speeds
    found (by model)."""
    speeds = Speeds(w) if isinstance(w, Inference) else None
    asked = [c for c in _candidates(catalog, counts, w) if _asked(c, request)]
    kept = [(c, _speed(c, w, speeds)) for c in asked if _big_enough(c, request)]
    return len(asked), kept, speeds


def option_counts(request: CompareRequest, catalog: Catalog) -> tuple[int, int]:
    """How many options :func:`compare` evaluates or rules out for ``request``, and how many
    of them are owned builds [count]: the candidates of the tier and memory asked for, less
    those a comparison by model leaves out unresolved (their throughputs found, none
    resolved). Raises :class:`ScenarioError` as :func:`compare` does."""
    w = _work(request, catalog)
    _grid(request, catalog)
    _, kept, _ = _listed(catalog, request, GPU_COUNTS, w)
    counted = [c for c, speed in kept if not isinstance(speed, str)]
    return len(counted), sum(c.side == "buy" for c in counted)


def option_count(request: CompareRequest, catalog: Catalog) -> int:
    """How many options :func:`compare` evaluates or rules out for ``request`` [count]
    (:func:`option_counts`)."""
    return option_counts(request, catalog)[0]


def _given(speed: Speed | None) -> dict[str, Any]:
    """The inputs an option's block gives: an estimated throughput [tokens/s per GPU] (a
    measured one the side finds itself, with its row)."""
    if speed is None or speed.estimate is None:
        return {}
    return {"tokens_per_s_per_gpu": Fixed(speed.value)}


def _side(c: _Candidate, w: Work, speed: Speed | None) -> Owned | Rented | Hosted:
    """The option resolved alone, as the ``buy``, ``rent`` or ``api`` block of a scenario
    naming it is, from keywords."""
    if c.side == "buy":
        return owned_of(w, c.id, c.gpu_count, **_given(speed))
    if c.side == "rent":
        return rented_of(w, c.id, c.pricing, **_given(speed))
    return hosted_of(w, c.id)


def _reason(errors: list[dict]) -> str:
    return "; ".join(
        f"{e['path']}: {e['message']}" if e.get("path") else e["message"] for e in errors
    )


@dataclass(frozen=True, eq=False)
class _Resolved:
    """An option's side, the advice about it and (by model) its throughput."""

    side: Owned | Rented | Hosted
    warnings: tuple[Advice, ...]
    speed: Speed | None = None


def _resolve(c: _Candidate, w: Work, horizon: int, speed: Speed | None) -> _Resolved | LeftOut:
    try:
        side = _side(c, w, speed)
    except ScenarioError as exc:
        return LeftOut(c.id, c.side, c.pricing, c.gpu_count, _reason(exc.errors))
    warnings = advise(Question(horizon, w, (side,)))
    errors = [a for a in warnings if a.severity == "error"]
    if errors:
        return LeftOut(c.id, c.side, c.pricing, c.gpu_count, errors[0].message)
    return _Resolved(side, warnings, speed)


#: An option's carbon inputs by key path (``"buy.grid"``), the catalog's fixed figures.
_Carbon = Mapping[str, float] | None


def _carbon_of(r: _Resolved, catalog: Catalog, grid: str | None) -> _Carbon:
    """A resolved owned or rented option's carbon inputs, the owned on ``grid``; ``None``
    without a grid (a catalog without grid intensities), for an API offer (not published)
    and for one the catalog lacks a carbon figure of."""
    if grid is None or side_of(r.side.path).emissions is None:
        return None
    try:
        found = side_carbon(r.side, catalog, grid)
    except ScenarioError:
        return None
    path = r.side.path
    return MappingProxyType(draws_at({f"{path}.{k}": v for k, v in vars(found).items()}, {}))


def _median(spec: Any) -> float:
    """The median of an assumption's value (a number or a distribution mapping)."""
    if isinstance(spec, int | float):
        return float(spec)
    from ..distspec import from_spec

    return from_spec(spec).p50()


def _blended(api: ApiInputs) -> float:
    """The API's blended price at the medians of its inputs [USD/M tokens]."""
    cached = api.cached_input_usd_per_mtok
    return float(
        blended_price(
            api.input_tokens,
            api.output_tokens,
            api.input_usd_per_mtok.p50(),
            api.output_usd_per_mtok.p50(),
            None if cached is None else cached.p50(),
            api.cached_input_share.p50(),
        )
    )


def _grams(g: np.ndarray | None, samples: int) -> Grams | None:
    """Emissions per unit of work [g CO2e/unit], P10/P50/P90 over the draws of ``g`` (one
    value when fixed); ``None`` when unknown."""
    if g is None:
        return None
    if g.ndim == 0:
        return Grams(float(g), float(g), float(g))
    out = np.empty(samples)
    out[...] = g
    return Grams(**percentiles(out))


def _citation(r: _Resolved, w: Work) -> tuple[float | None, Citation | None]:
    """By model, the throughput [tokens/s per GPU] and what the option rests on: the API
    offer, the measured row with its conditions, or the estimate with its error."""
    side, speed = r.side, r.speed
    if isinstance(side, Hosted):
        o = side.offer
        return None, Citation(o.id, o.as_of, o.source, "published")
    if speed is None:
        return None, None
    if speed.measured is not None:
        t = speed.measured
        row = t.row
        return t.value, Citation(row.id, row.as_of, row.source, t.origin, t.conditions, t.caveats)
    e, fit = speed.estimate, speed.fit
    where = f"{conditions(e)}, {e.bound}-bound, {w.input_tokens}/{w.output_tokens} tokens"
    source = fitted_error_words(speed.sigma, fit)
    cited = Citation(ESTIMATE_ID, fit.as_of, source, "estimated", where, sigma=speed.sigma)
    return speed.value, cited


@dataclass(frozen=True, eq=False)
class _Evaluated:
    option: Option
    line: BuyLine | RentLine  # per unit of capacity: TCO / (730 * H * T)


def _evaluate(
    c: _Candidate, resolved: _Resolved, w: Work, request: CompareRequest, fig: Evaluated
) -> _Evaluated:
    """One option with the engine's figures of it (:func:`costmodel.evaluate_options`): its
    cost and carbon per unit of work, its price and where that came from, and its source."""
    side = resolved.side
    key = f"{side.path}.{side_of(c.side).price}"
    price = next(a for a in side.assumptions if a.key == key)
    throughput, source = _citation(resolved, w)
    option = Option(
        id=c.id,
        side=c.side,
        pricing=c.pricing,
        gpu=c.gpu,
        gpu_count=c.gpu_count,
        cost=Cost(**percentiles(fig.cost)),
        price_usd=_blended(side.inputs) if c.side == "api" else _median(price.value),
        price_source=price.source,
        price_origin=price.origin,
        warnings=resolved.warnings,
        unit=request.unit,
        tokens_per_s_per_gpu=throughput,
        source=source,
        carbon=_grams(fig.grams, request.samples),
    )
    return _Evaluated(option, fig.line)


def _breakeven(buy: _Evaluated | None, other: _Evaluated | None, samples: int):
    """Break-even utilisation per draw between an owned option and a rented one (or an API)
    (:func:`costmodel.options.breakeven_between`); ``None`` without both."""
    if buy is None or other is None:
        return None
    assert isinstance(buy.line, BuyLine) and isinstance(other.line, RentLine)
    return breakeven_between(buy.line, other.line, samples)


def _rank(e: _Evaluated) -> tuple:
    """Cheapest P50 first; ties by P90, then side, id, GPU count and pricing model."""
    o = e.option
    pricing = PRICING_MODELS.index(o.pricing) if o.pricing in PRICING_MODELS else -1
    return (o.cost.p50, o.cost.p90, o.side, o.id, o.gpu_count or 0, pricing)


def _by_carbon(e: _Evaluated) -> tuple:
    """Lowest P50 carbon first, the options of unknown carbon last; ties by P90 carbon
    (a stable sort of the cost ranking keeps the cheaper first)."""
    g = e.option.carbon
    return (True, 0.0, 0.0) if g is None else (False, g.p50, g.p90)


def _unserved(
    skipped: list[tuple[_Candidate, str]],
    w: Work,
    measured: frozenset[str],
    speeds: Speeds | None,
) -> Unserved | None:
    """The counts of the options a comparison by model left out unresolved, and the best
    that those left out for the latency targets reach."""
    if not isinstance(w, Inference):
        return None

    def count(why: str, side: str, key: Any) -> int:
        return len({key(c) for c, reason in skipped if reason == why and c.side == side})

    def build(c: _Candidate) -> tuple:
        return (c.gpu, c.gpu_count)

    def instance(c: _Candidate) -> str:
        return c.id

    return Unserved(
        no_measurement_gpus=count(UNMEASURED, "buy", lambda c: c.gpu),
        no_measurement_instances=count(UNMEASURED, "rent", instance),
        does_not_fit_servers=count(TOO_BIG, "buy", build),
        does_not_fit_instances=count(TOO_BIG, "rent", instance),
        measured_gpus=tuple(sorted(measured)),
        too_slow_servers=count(TOO_SLOW, "buy", build),
        too_slow_instances=count(TOO_SLOW, "rent", instance),
        misses_targets_servers=count(MISSES_TARGETS, "buy", build),
        misses_targets_instances=count(MISSES_TARGETS, "rent", instance),
        misses_targets_best=_reach(list(speeds.short.values()) if speeds else []),
    )


def _reach(short: list[Estimate]) -> Reach | None:
    """The best the options left out for missing the latency targets reach: the least TPOT
    and TTFT [ms] and the most tokens/s per user of any; ``None`` when none is left out so."""
    if not short:
        return None
    return Reach(
        tpot_ms=min(e.tpot_ms for e in short),
        ttft_ms=min(e.ttft_ms for e in short),
        tokens_per_s_per_user=max(e.tokens_per_s_per_user for e in short),
    )


def _served(w: Work) -> ServedModel | None:
    if not isinstance(w, Inference):
        return None
    m = w.model
    return ServedModel(m.id, m.name, m.params_b, m.weights_gb(w.precision))


def _inputs(
    chosen: list[tuple[_Candidate, _Resolved]], catalog: Catalog, grid: str | None
) -> list[OptionInputs]:
    """Each resolved option's engine inputs: its side's, its carbon inputs on ``grid`` and,
    where its throughput is estimated, the error the ranking draws."""
    return [
        OptionInputs(
            c.side,
            r.side.inputs,
            _carbon_of(r, catalog, grid),
            r.speed and r.speed.error(c.gpu, c.gpu_count),
        )
        for c, r in chosen
    ]


def _evaluated(
    chosen: list[tuple[_Candidate, _Resolved]],
    inputs: list[OptionInputs],
    w: Work,
    request: CompareRequest,
    uncertainty: Mapping[str, float],
) -> list[_Evaluated]:
    """The options with the engine's figures of them, on draws they share
    (:func:`costmodel.evaluate_options`), in the order given."""
    figures = evaluate_options(
        inputs,
        utilisation=request.utilisation,
        horizon=request.horizon_months,
        samples=request.samples,
        seed=request.seed,
        spreads=uncertainty,
        lives=(SERVICE_LIFE_YEARS, PROVIDER_SERVICE_LIFE_YEARS),
    )
    return [_evaluate(c, r, w, request, f) for (c, r), f in zip(chosen, figures, strict=True)]


def compare(
    request: CompareRequest,
    catalog: Catalog | None = None,
    *,
    uncertainty: Mapping[str, float] | None = None,
    counts: Sequence[int] = GPU_COUNTS,
) -> Comparison:
    """Rank every option of ``catalog`` (default: the shipped one) by cost per unit of work at
    ``request.utilisation``: owned and rented for training work, and by model the API offers
    of the model too.

    ``uncertainty`` maps input keys to the relative half-width of their triangular
    distribution (default :data:`UNCERTAINTY`, with :data:`API_UNCERTAINTY` by model; ``{}``
    holds every input at its value); ``counts`` are the GPUs per owned server compared. The
    result's ``request`` has the precision and model id resolved; its ``timings`` hold the
    seconds spent resolving the options' scenarios (``resolve_s``) and evaluating them
    (``engine_s``).

    Raises:
        ScenarioError: an unknown model or grid (the closest ids named), or a precision the
            catalog does not measure the model at, at its key path.
    """
    catalog = catalog or load_catalog()
    start = time.perf_counter()
    w = _work(request, catalog)
    served, grid = _served(w), _grid(request, catalog)
    request = replace(
        request,
        precision=w.precision,
        model=served and (request.model if w.model.is_inline else served.id),
        grid=grid.id if grid else request.grid,
    )
    if uncertainty is None:
        uncertainty = UNCERTAINTY if served is None else {**UNCERTAINTY, **API_UNCERTAINTY}
    asked, kept, speeds = _listed(catalog, request, counts, w)
    resolved = [
        (c, speed if isinstance(speed, str) else _resolve(c, w, request.horizon_months, speed))
        for c, speed in kept
    ]
    chosen = [(c, r) for c, r in resolved if isinstance(r, _Resolved)]
    inputs = _inputs(chosen, catalog, grid and grid.id)
    middle = time.perf_counter()
    evaluated = _evaluated(chosen, inputs, w, request, uncertainty)
    resolve_s, engine_s = middle - start, time.perf_counter() - middle
    evaluated.sort(key=_rank)
    best = {
        side: next((e for e in evaluated if e.option.side == side), None)
        for side in ("buy", "rent", "api")
    }
    if request.sort == "carbon":
        evaluated.sort(key=_by_carbon)
    return Comparison(
        request=request,
        reference_gpu=catalog.reference_gpu,
        catalog=CatalogRef(catalog.version, catalog.as_of),
        uncertainty=MappingProxyType(dict(uncertainty)),
        options=tuple(e.option for e in evaluated),
        cheapest_buy=best["buy"] and best["buy"].option,
        cheapest_rent=best["rent"] and best["rent"].option,
        breakeven_utilisation=_breakeven(best["buy"], best["rent"], request.samples),
        left_out_by_min_memory=asked - len(kept),
        ruled_out=tuple(r for _, r in resolved if isinstance(r, LeftOut)),
        model=served,
        cheapest_api=best["api"] and best["api"].option,
        breakeven_vs_api=_breakeven(best["buy"], best["api"], request.samples),
        unserved=_unserved(
            [(c, r) for c, r in resolved if isinstance(r, str)], w, _measured(w), speeds
        ),
        grid=grid and OwnedGrid(grid.id, grid.name, grid.g_co2e_per_kwh),
        timings={
            "resolve_s": resolve_s,
            "engine_s": engine_s,
            "total_s": time.perf_counter() - start,
        },
    )
