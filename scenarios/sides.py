"""Each side of a question resolved once: an owned build or a rented offer, at its key path.

A scenario is an owned side (``buy``) against a rented one (``rent``); a plan is an owned
server (``own``) with reserved and burst instances (``reserve``, ``burst``); a comparison is
every owned and rented option of the catalog alone. All of them compose the sides made here:
:func:`owned` and :func:`rented` take a validated block, its key path and the :class:`Work`,
and return the engine inputs of that side with every default filled in, where each value came
from and the catalog rows it rests on. Errors name the block's own key paths.

Every input a block leaves out comes from one row of :data:`OWNED` or :data:`RENTED`: where its
value comes from (a catalog figure of the GPU, the platform tier, the interconnect table or the
instance, or a documented constant) and the origin recorded in the result's ``assumptions``.
The same tables write the "default" column of the format's key reference. Where the question
counts carbon, the side's carbon inputs are resolved in the same call, from the rows of
:mod:`scenarios.sidecarbon` (``Owned.carbon``, ``Rented.carbon``).

The unit of work is the workload's (:class:`Work`): a side's per-GPU throughput is in units of
work per GPU-hour, and its capacity in units of work per hour; for training the unit is the
reference GPU-hour.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from costmodel.distributions import Distribution, Fixed, LogNormal
from costmodel.inputs import (
    FINANCING_KEYS,
    THROUGHPUT_ERROR_BOUND,
    ApiInputs,
    BuyInputs,
    Financing,
    RentInputs,
    input_fields,
)
from costmodel.result import Assumption, Origin
from pricing import (
    GPU,
    PRICING_MODELS,
    RESERVED_PRICINGS,
    ApiOffer,
    Catalog,
    CatalogError,
    Instance,
    Model,
    PlatformTier,
    PriceEntry,
    ServingThroughput,
    Throughput,
    relative_throughput,
    tokens_per_s,
)
from pricing.errors import ServingUnavailableError
from pricing.estimate import Targets, TargetsUnmetError
from pricing.estimated import (
    EstimatedServing,
    error_words,
    fitted_error_words,
    lognormal_p90,
    serving_estimate,
)
from pricing.text import counted
from pricing.training_error import ESTIMATED_BASES
from pricing.training_error import published as training_error
from pricing.vocabulary import ARCHITECTURE

from .errors import ScenarioError
from .sidecarbon import SideCarbon, hosted_carbon, owned_carbon, rented_carbon
from .sources import Source, built, field_defaults
from .userprices import GPU_HOUR_KEY, SERVER_KEY, instance_price, platform_price

__all__ = [
    "DOC_LABELS",
    "HOSTED",
    "Hosted",
    "Inference",
    "OWNED",
    "RENTED",
    "Offer",
    "Owned",
    "Rented",
    "Source",
    "Training",
    "Work",
    "gathered",
    "hosted",
    "hosted_of",
    "model_of",
    "owned",
    "owned_of",
    "rented",
    "rented_of",
    "unknown_ids",
    "work",
]


#: The side keys of one GPU's throughput: in units of training work, or in tokens per second.
_THROUGHPUT_KEYS = ("relative_throughput", "tokens_per_s_per_gpu")


@dataclass(frozen=True, kw_only=True)
class Work:
    """The workload: what one unit of work is, and the catalog that knows the hardware.

    ``precision`` picks the catalog's throughput; GPUs below ``min_memory_gb`` [GB] are
    refused. :class:`Training` counts reference GPU-hours, :class:`Inference` million tokens;
    ``kind`` is the workload's kind, ``unit`` its unit of work and ``throughput_key`` the
    side key of one GPU's throughput.
    """

    kind: ClassVar[str]
    unit: ClassVar[str]
    throughput_key: ClassVar[str]
    catalog: Catalog
    precision: str
    min_memory_gb: float | None = None

    def per_gpu(
        self, gpu: GPU, gpus: int | None = None
    ) -> Throughput | ServingThroughput | EstimatedServing:
        """Throughput of one ``gpu`` of a build or instance of ``gpus`` GPUs [in the unit of
        ``throughput_key``] and how it was found."""
        raise NotImplementedError

    def sigma(self, found: Throughput | ServingThroughput | EstimatedServing) -> float | None:
        """The lognormal sigma of the error of a throughput ``per_gpu`` found [-]; ``None``
        for a measured one."""
        raise NotImplementedError

    def labels(self) -> dict[str, str]:
        """Values of the workload's placeholders of :attr:`Source.origin` templates."""
        return {"precision": self.precision}

    def misplaced(self, block: Mapping[str, Any], path: str) -> list[dict]:
        """The problem of a side block at ``path`` that gives its throughput in the other
        kind of work's terms, if any."""
        other = next(k for k in _THROUGHPUT_KEYS if k != self.throughput_key)
        if block.get(other) is None:
            return []
        message = (
            f"counts {'tokens' if self.kind == 'training' else 'reference GPU-hours'}, not "
            f"this {self.kind} work; give {path}.{self.throughput_key}"
        )
        return [{"path": f"{path}.{other}", "message": message}]

    def check_memory(self, gpu: GPU, path: str) -> list[dict]:
        """The problem of a GPU below ``min_memory_gb``, at ``path``, if any."""
        least = self.min_memory_gb
        if least is None or gpu.memory_gb >= least:
            return []
        message = (
            f"{gpu.name} has {gpu.memory_gb:g} GB of memory, below "
            f"workload.min_gpu_memory_gb = {least:g} GB"
        )
        return [{"path": path, "message": message}]


@dataclass(frozen=True, kw_only=True)
class Training(Work):
    """Training work, counted in hours of the ``reference`` GPU's work (reference GPU-hours)."""

    kind: ClassVar[str] = "training"
    unit: ClassVar[str] = "reference_gpu_hour"
    throughput_key: ClassVar[str] = "relative_throughput"
    reference: GPU

    def per_gpu(self, gpu: GPU, gpus: int | None = None) -> Throughput:
        """Throughput of one ``gpu`` [reference GPU-hours per GPU-hour] and how it was found
        (the same at any ``gpus``: scaling is its own input)."""
        return relative_throughput(gpu, self.reference, self.precision)

    def sigma(self, found: Throughput) -> float | None:
        """The training estimation rule's leave-one-out sigma for a throughput that is not
        measured (:data:`pricing.training_error.ESTIMATED_BASES`), else ``None``."""
        return training_error().sigma if found.basis in ESTIMATED_BASES else None

    def labels(self) -> dict[str, str]:
        return {**super().labels(), "reference_gpu": self.reference.id}


@dataclass(frozen=True, kw_only=True)
class Inference(Work):
    """Serving ``model`` for requests of ``input_tokens`` and ``output_tokens`` tokens, counted
    in millions of tokens (input + output); a GPU's throughput is the catalog's measured
    serving throughput [tokens/s per GPU], at ``min_tokens_per_s_per_user`` [tokens/s] or
    faster when given (:func:`pricing.tokens_per_s`), else the calibrated estimate at the
    targets. Under a latency target (``max_tpot_ms``, ``max_ttft_ms`` [ms]) a measured row
    applies only where it measured that latency and meets it
    (:func:`pricing.estimated.serving_estimate`)."""

    kind: ClassVar[str] = "inference"
    unit: ClassVar[str] = "million_tokens"
    throughput_key: ClassVar[str] = "tokens_per_s_per_gpu"
    model: Model
    input_tokens: int
    output_tokens: int
    min_tokens_per_s_per_user: float | None = None
    max_tpot_ms: float | None = None
    max_ttft_ms: float | None = None

    @property
    def targets(self) -> Targets:
        """What each user's service must meet."""
        return Targets(self.min_tokens_per_s_per_user, self.max_tpot_ms, self.max_ttft_ms)

    def measured(self, gpu: GPU, gpus: int | None = None) -> ServingThroughput:
        """The catalog's measured serving throughput of one catalog ``gpu`` [tokens/s per GPU]
        of a build or instance of ``gpus`` GPUs at the workload's shape and targets
        (:func:`pricing.tokens_per_s`).

        Raises:
            ServingUnavailableError: no measured row holds for this build (why, in words).
        """
        return tokens_per_s(
            self.catalog,
            self.model.id,
            self.precision,
            gpu.id,
            self.input_tokens,
            self.output_tokens,
            self.min_tokens_per_s_per_user,
            gpus,
            max_tpot_ms=self.max_tpot_ms,
            max_ttft_ms=self.max_ttft_ms,
        )

    def per_gpu(self, gpu: GPU, gpus: int | None = None) -> ServingThroughput | EstimatedServing:
        """The measured serving throughput of one ``gpu`` [tokens/s per GPU] of a build or
        instance of ``gpus`` GPUs (rows measured on a replica size ``gpus`` is no multiple of
        do not apply), else the estimate at the workload's shape and targets.

        Raises:
            TargetsUnmetError: no batch of the estimate meets the targets (with its best).
            CatalogError: nothing measured applies and the estimate cannot be made (both said).
        """
        inline = next((w for w, r in (("model", self.model), ("GPU", gpu)) if r.is_inline), None)
        if inline:
            unmeasured = f"the catalog has no serving rows for an inline {inline}"
        else:
            try:
                return self.measured(gpu, gpus)
            except ServingUnavailableError as exc:
                unmeasured = exc.problem
        try:
            return serving_estimate(
                self.model,
                gpu,
                gpus or 1,
                self.precision,
                self.input_tokens,
                self.output_tokens,
                self.targets,
            )
        except TargetsUnmetError:
            raise
        except CatalogError as exc:
            raise CatalogError(f"{unmeasured}, and no estimate: {exc.problem}") from None

    def sigma(self, found: ServingThroughput | EstimatedServing) -> float | None:
        """The estimate's sigma (the calibration's, for the model's kind), ``None`` for a
        measured row."""
        return found.sigma if isinstance(found, EstimatedServing) else None

    def labels(self) -> dict[str, str]:
        return {**super().labels(), "model": self.model.id}


def work(workload: Mapping[str, Any], catalog: Catalog) -> Work:
    """The :class:`Work` of a validated ``workload`` block."""
    common = {
        "catalog": catalog,
        "precision": workload["precision"],
        "min_memory_gb": workload.get("min_gpu_memory_gb"),
    }
    if workload.get("kind", "training") == "training":
        reference = _gpu(catalog, workload["reference_gpu"], "workload.reference_gpu")
        return Training(reference=reference, **common)
    return Inference(
        model=model_of(catalog, workload["model"], "workload.model"),
        input_tokens=workload["input_tokens"],
        output_tokens=workload["output_tokens"],
        min_tokens_per_s_per_user=workload.get("min_tokens_per_s_per_user"),
        max_tpot_ms=workload.get("max_tpot_ms"),
        max_ttft_ms=workload.get("max_ttft_ms"),
        **common,
    )


@dataclass(frozen=True)
class Offer:
    """A rented instance, from the catalog (``id``) or inline (``id`` ``None``)."""

    id: str | None
    name: str
    gpu: GPU
    gpu_count: int
    interconnect: str
    prices: Mapping[str, float | None]
    source: str

    @property
    def label(self) -> str:
        return self.id or f"inline instance {self.name!r}"


def _serving_origin(t: Throughput | ServingThroughput | EstimatedServing | None) -> str:
    """Whose a serving throughput is: the catalog's, the user's serving file's, or estimated."""
    if isinstance(t, EstimatedServing):
        return t.source
    if isinstance(t, ServingThroughput) and t.row.file:
        return f"yours ({Path(t.row.file).name})"
    return "catalog"


@dataclass
class _Context:
    """What the default of a left-out input of one side may depend on."""

    work: Work
    gpu: GPU
    gpu_count: int
    tier: PlatformTier | None = None
    interconnect: str = "pcie-x16"
    offer: Offer | None = None
    pricing: str = "purchase"
    throughput: Throughput | ServingThroughput | EstimatedServing | None = None

    def per_gpu(self) -> float:
        """Throughput of one GPU of the side; remembered for the origin."""
        self.throughput = self.work.per_gpu(self.gpu, self.gpu_count)
        return self.throughput.value

    def labels(self) -> dict[str, str]:
        """Values of the placeholders of :attr:`Source.origin` templates."""
        gpu, offer = self.gpu, self.offer
        labels = {
            **self.work.labels(),
            "gpu": f"inline GPU {gpu.name!r}" if gpu.is_inline else gpu.id,
            "price_note": " (estimated)" if gpu.price_estimated else "",
            "idle_note": " (estimated: 10 % of TDP)" if gpu.idle_w_estimated else "",
            "tier": self.tier.name if self.tier else "",
            "tiers": ", ".join(str(n) for n in self.work.catalog.tier_counts),
            "interconnect": self.interconnect,
            "gpus": counted(self.gpu_count, "GPU"),
            "pricing": self.pricing,
            "throughput": self.throughput.how if self.throughput else "",
            "serving": self.throughput.how if self.throughput else "",
            "serving_origin": _serving_origin(self.throughput),
        }
        if offer is not None:
            labels |= {
                "instance": offer.label,
                "instance_source": offer.source,
                "available": ", ".join(k for k, v in offer.prices.items() if v is not None),
            }
        return labels


_NO_TIER = "no platform tier of the catalog holds {gpus} (tiers: {tiers})"
_THROUGHPUT = "catalog: {precision} throughput of {gpu} relative to {reference_gpu} ({throughput})"
_SERVING = "{serving_origin}: {model} at {precision} on {gpu}: {serving}"


def _trains(c: _Context) -> bool:
    return isinstance(c.work, Training)


def _serves(c: _Context) -> bool:
    return isinstance(c.work, Inference)


#: A side's GPU throughput and multi-GPU scaling, by the kind of work (owned and rented alike).
_WORK_ROWS = (
    Source("relative_throughput", _Context.per_gpu, _THROUGHPUT, applies=_trains, when="training"),
    Source("tokens_per_s_per_gpu", _Context.per_gpu, _SERVING, applies=_serves, when="inference"),
    Source(
        "scaling_efficiency",
        lambda c: c.work.catalog.scaling_efficiency(c.interconnect, c.gpu_count),
        "catalog: {interconnect} scaling, {gpus}",
        applies=_trains,
        when="training",
    ),
    Source(
        "scaling_efficiency",
        1.0,
        "default: the measured serving throughput already includes its tensor-parallel group",
        applies=_serves,
        when="inference",
        kind=Origin.DEFAULT,
    ),
)

#: Every input an owned block may leave out, in the order of the result's assumptions.
OWNED: tuple[Source, ...] = (
    Source(
        "gpu_price_usd",
        lambda c: c.gpu.price_usd,
        "catalog: {gpu} price{price_note}",
        missing="the catalog has no price for {gpu}",
        price=lambda c: (c.gpu.id, "purchase"),
    ),
    Source(
        "platform_price_usd",
        lambda c: c.tier and c.tier.price_usd,
        "catalog: platform tier {tier}",
        missing=_NO_TIER,
    ),
    Source("gpu_power_w", lambda c: c.gpu.tdp_w, "catalog: {gpu} TDP"),
    Source("gpu_idle_w", lambda c: c.gpu.idle_w, "catalog: {gpu} idle draw{idle_note}"),
    Source(
        "platform_power_w",
        lambda c: c.tier and c.tier.power_w,
        "catalog: platform tier {tier}",
        missing=_NO_TIER,
    ),
    *_WORK_ROWS,
    *field_defaults(BuyInputs, quiet=("repair_days",)),
)


def _reserved(c: _Context) -> bool:
    return c.pricing in RESERVED_PRICINGS


#: Every input a rented block may leave out, in the order of the result's assumptions.
RENTED: tuple[Source, ...] = (
    Source(
        "price_usd_per_hour",
        lambda c: c.offer.prices[c.pricing],
        "{instance_source}, {pricing}",
        missing="{instance} has no {pricing} price; give it, or choose pricing from: {available}",
        price=lambda c: c.offer.id and (c.offer.id, c.pricing),
    ),
    Source(
        "on_demand_price_usd_per_hour",
        lambda c: c.offer.prices["on_demand"],
        "{instance_source}, on_demand",
        applies=_reserved,
        price=lambda c: c.offer.id and (c.offer.id, "on_demand"),
    ),
    *_WORK_ROWS,
    *field_defaults(RentInputs),
)

#: How the key reference reads each placeholder of an origin template, by side kind.
DOC_LABELS: Mapping[str, Mapping[str, str]] = {
    "buy": {
        "gpu": "`buy.gpu`",
        "model": "`workload.model`",
        "reference_gpu": "`workload.reference_gpu`",
        "precision": "`workload.precision`",
        "price_note": "",
        "idle_note": " (10 % of TDP where no figure is sourced)",
        "tier": "for `buy.gpu_count`",
        "tiers": "",
        "interconnect": "`buy.interconnect`",
        "gpus": "`buy.gpu_count` GPUs",
        "throughput": "measured, else scaled or peak ratios (their error: `throughput_error`)",
        "serving": "the measured operating point (a `--serving` file's first) on a replica size "
        "`buy.gpu_count` is a multiple of, at the request shape nearest the workload's, that "
        "meets `workload.min_tokens_per_s_per_user` and, having measured them, "
        "`workload.max_tpot_ms` and `max_ttft_ms`; else the calibrated estimate at the "
        "workload's shape and targets (its error: `buy.throughput_error`)",
        "serving_origin": "catalog",
    },
    "rent": {
        "gpu": "the instance's GPU",
        "model": "`workload.model`",
        "reference_gpu": "`workload.reference_gpu`",
        "precision": "`workload.precision`",
        "interconnect": "the instance's interconnect",
        "gpus": "the instance's GPUs",
        "instance": "`rent.instance`",
        "instance_source": "catalog: `rent.instance`",
        "pricing": "`rent.pricing` price",
        "throughput": "measured, else scaled or peak ratios (their error: `throughput_error`)",
        "serving": "the measured operating point (a `--serving` file's first) on a replica size "
        "the instance's GPU count is a multiple of, at the request shape nearest the "
        "workload's, that meets `workload.min_tokens_per_s_per_user` and, having measured "
        "them, `workload.max_tpot_ms` and `max_ttft_ms`; else the calibrated estimate at the "
        "workload's shape and targets (its error: `rent.throughput_error`)",
        "serving_origin": "catalog",
        "available": "",
    },
    "api": {"offer": "`api.model`", "as_of": "its date"},
}


@dataclass(frozen=True)
class _Filled:
    """A block's inputs with every default filled in, by field name, and where each came from."""

    values: dict[str, Distribution]
    assumptions: tuple[Assumption, ...]
    prices: dict[str, PriceEntry]


@dataclass(frozen=True)
class Owned:
    """An owned build resolved at key path ``path``: its engine inputs, the GPU and platform
    tier it rests on, how its per-GPU throughput was found (``None`` when given), the block
    with every default filled in (``block``), the assumptions, the user's prices used and,
    where the question counts carbon, its carbon inputs (``carbon``)."""

    path: str
    inputs: BuyInputs
    gpu: GPU
    platform: PlatformTier | None
    interconnect: str
    throughput: Throughput | ServingThroughput | EstimatedServing | None
    block: dict[str, Any]
    assumptions: tuple[Assumption, ...]
    prices: Mapping[str, PriceEntry] = field(default_factory=dict)
    carbon: SideCarbon | None = None


@dataclass(frozen=True)
class Rented:
    """A rented offer resolved at key path ``path``: its engine inputs, the instance, how its
    per-GPU throughput was found (``None`` when given), the block with every default filled in,
    the assumptions, the user's prices used and, where the question counts carbon, its carbon
    inputs (``carbon``)."""

    path: str
    inputs: RentInputs
    offer: Offer
    throughput: Throughput | ServingThroughput | EstimatedServing | None
    block: dict[str, Any]
    assumptions: tuple[Assumption, ...]
    prices: Mapping[str, PriceEntry] = field(default_factory=dict)
    carbon: SideCarbon | None = None

    @property
    def gpu(self) -> GPU:
        return self.offer.gpu


def model_of(catalog: Catalog, ref: str | Mapping, path: str) -> Model:
    """The model a document names at ``path``: a catalog id, or a validated inline mapping
    (its keys' problems at ``path.<key>``)."""
    if isinstance(ref, Mapping):
        given = {k: v for k, v in ref.items() if v is not None and k != "config"}
        if any(k in given for k in ARCHITECTURE) and "arch_source" not in given:
            given["arch_source"] = f"scenario: inline model {ref['name']!r}"
        try:
            return Model.inline(**given)
        except CatalogError as exc:
            where = f"{path}.{exc.column}" if exc.column else path
            raise ScenarioError(None, [{"path": where, "message": exc.problem}]) from None
    try:
        return catalog.model(ref)
    except CatalogError as exc:
        raise ScenarioError(None, [{"path": path, "message": exc.problem}]) from None


def _gpu(catalog: Catalog, ref: str | Mapping, path: str) -> GPU:
    if isinstance(ref, Mapping):
        return GPU.inline(**ref)
    try:
        return catalog.gpu(ref)
    except CatalogError as exc:
        raise ScenarioError(None, [{"path": path, "message": exc.problem}]) from None


def _offer(catalog: Catalog, ref: str | Mapping, path: str) -> Offer:
    if isinstance(ref, Mapping):
        return Offer(
            id=None,
            name=ref["name"],
            gpu=_gpu(catalog, ref["gpu"], f"{path}.gpu"),
            gpu_count=ref["gpu_count"],
            interconnect=ref.get("interconnect") or "pcie-x16",
            prices={p: ref.get(f"{p}_usd_per_hour") for p in PRICING_MODELS},
            source=f"scenario: inline instance {ref['name']!r}",
        )
    try:
        inst: Instance = catalog.instance(ref)
    except CatalogError as exc:
        raise ScenarioError(None, [{"path": path, "message": exc.problem}]) from None
    return Offer(
        id=inst.id,
        name=inst.name,
        gpu=catalog.gpu(inst.gpu),
        gpu_count=inst.gpu_count,
        interconnect=inst.interconnect,
        prices={p: getattr(inst, f"{p}_usd_per_hour") for p in PRICING_MODELS},
        source=f"catalog: {inst.id} ({inst.region}, as of {inst.as_of})",
    )


def _fill(block: Mapping[str, Any], path: str, c: _Context, table: tuple[Source, ...], cls: type):
    """Every input of ``table`` that applies, as given in ``block`` or by its default, with its
    assumption; every missing catalog figure is reported at once."""
    values: dict[str, Distribution] = {}
    given: set[str] = set()
    pending: list[tuple[Source, float | None]] = []
    problems: list[dict] = []
    for src in table:
        if not src.applies(c) or (src.quiet and block.get(src.key) is None):
            continue
        if block.get(src.key) is not None:
            values[src.key] = block[src.key]
            given.add(src.key)
            continue
        try:
            pending.append((src, src.resolve(c)))
        except CatalogError as exc:
            key = f"{path}.{src.key}"
            problems.append({"path": key, "message": f"{exc.problem}; give {key}"})
    labels = c.labels()  # after the throughput lookups, whose descriptions it carries
    origins: dict[str, tuple[str, Origin]] = {}
    priced: dict[str, PriceEntry] = {}
    for src, value in pending:
        key = f"{path}.{src.key}"
        if value is None:
            message = src.missing.format(**labels)
            problems.append({"path": key, "message": f"{message}; give {key}"})
            continue
        entry = src.overlaid(c)
        if entry is not None:
            priced[key] = entry
            origins[src.key] = (entry.origin, Origin.PRICES)
        else:
            origins[src.key] = (src.origin.format(**labels), src.kind)
        values[src.key] = Fixed(float(value))
    if problems:
        raise ScenarioError(None, problems)
    values = {src.key: values[src.key] for src in table if src.key in values}
    units = {name: f.metadata.get("unit", "") for name, f in input_fields(cls).items()}
    notes = tuple(
        Assumption(
            f"{path}.{name}",
            _spec(value),
            units[name],
            *(("scenario", Origin.GIVEN) if name in given else origins[name]),
        )
        for name, value in values.items()
    )
    return _Filled(values, notes, priced)


#: The key of the factor on a side's per-GPU throughput: an estimated throughput's error.
_ERROR_KEY = "throughput_error"


def _error_source(c: _Context, sigma: float) -> str:
    """Where an estimated throughput's error comes from, in words."""
    if isinstance(c.throughput, EstimatedServing):
        return fitted_error_words(sigma, c.throughput.fit)
    scored = training_error()
    basis = f"{len(scored.loo)} measured figures, as of {scored.as_of}"
    return error_words(sigma, "scaled or like-for-like peak ratios", basis)


def _erred(filled: _Filled, block: Mapping[str, Any], path: str, c: _Context) -> _Filled:
    """``filled`` with the side's throughput error: as the block gives it; else, for an
    estimated throughput, E ~ LogNormal(0, sigma) (its assumption after the throughput's);
    else left out (1: exact)."""
    given = block.get(_ERROR_KEY)
    sigma = None if c.throughput is None else c.work.sigma(c.throughput)
    if given is None and not sigma:
        return filled
    key = f"{path}.{_ERROR_KEY}"
    if given is not None:
        value, source, origin = given, "scenario", Origin.GIVEN
    else:
        bound = THROUGHPUT_ERROR_BOUND
        value = LogNormal(median=1.0, p90=lognormal_p90(sigma), low=bound.low, high=bound.high)
        source, origin = _error_source(c, sigma), Origin.CATALOG
    note = Assumption(key, _spec(value), "[-]", source, origin)
    rate = f"{path}.{c.work.throughput_key}"
    at = next((i + 1 for i, a in enumerate(filled.assumptions) if a.key == rate), None)
    at = len(filled.assumptions) if at is None else at
    notes = (*filled.assumptions[:at], note, *filled.assumptions[at:])
    return _Filled({**filled.values, _ERROR_KEY: value}, notes, filled.prices)


def _given(filled: _Filled, path: str, key: str, value: Distribution, source: str) -> _Filled:
    """``filled`` with input ``key`` set to ``value``, which the block gave in other terms
    (``source`` says which)."""
    name = f"{path}.{key}"
    notes = tuple(
        replace(a, value=_spec(value), source=source, origin=Origin.GIVEN) if a.key == name else a
        for a in filled.assumptions
    )
    return _Filled({**filled.values, key: value}, notes, filled.prices)


def _spec(value: Distribution) -> Any:
    from .distspec import to_spec

    return to_spec(value)


@dataclass(frozen=True)
class _Paid:
    """How an owned block pays and what it keeps in spare: the engine inputs they add, the
    block's financing with its defaults filled in (``None`` when left out: cash) and their
    assumptions (none for what is left out)."""

    inputs: dict[str, Any]
    financing: dict[str, Any] | None
    assumptions: tuple[Assumption, ...]


def _paid(block: Mapping[str, Any], path: str) -> _Paid:
    """The spares and financing of an owned ``block`` at key path ``path``: a loan's down
    payment defaults to none; engine errors at the financing's key paths."""
    meta = input_fields(Financing)
    inputs: dict[str, Any] = {}
    notes = []
    if block.get("spare_gpus") is not None:
        inputs["spare_gpus"] = block["spare_gpus"]
        unit = input_fields(BuyInputs)["spare_gpus"].metadata["unit"]
        notes.append(Assumption(f"{path}.spare_gpus", block["spare_gpus"], unit, "scenario"))
    given = block.get("financing")
    if given is None:
        return _Paid(inputs, None, tuple(notes))
    kind = given["kind"]
    filled = {"kind": kind}
    notes.append(Assumption(f"{path}.financing.kind", kind, "", "scenario"))
    for key in FINANCING_KEYS[kind]:
        default = meta[key].default
        value = given.get(key)
        filled[key] = default if value is None else value
        source = ("scenario", Origin.GIVEN)
        if value is None:
            source = (f"default: {meta[key].metadata['origin']}", Origin.DEFAULT)
        shown = _spec(filled[key]) if isinstance(filled[key], Distribution) else filled[key]
        notes.append(
            Assumption(f"{path}.financing.{key}", shown, meta[key].metadata["unit"], *source)
        )
    inputs["financing"] = built(Financing, path, {}, **filled)
    return _Paid(inputs, filled, tuple(notes))


def owned(block: Mapping[str, Any], path: str, w: Work, carbon: str | None = None) -> Owned:
    """The owned build of a validated ``buy`` (or ``own``) block at key path ``path``, with its
    carbon inputs when ``carbon`` says whose a given carbon value is (``"scenario"`` or
    ``"plan"``; ``None``: the question counts no carbon).

    Raises :class:`ScenarioError` at ``path``'s keys for an unknown GPU, a GPU below the
    workload's memory floor, missing catalog figures and inputs the engine rejects.
    """
    gpu = _gpu(w.catalog, block["gpu"], f"{path}.gpu")
    problems = w.misplaced(block, path) + w.check_memory(gpu, f"{path}.gpu")
    if problems:
        raise ScenarioError(None, problems)
    try:
        tier = w.catalog.platform_tier(block["gpu_count"], gpu)
    except CatalogError:  # more GPUs than the largest tier: its figures must be given
        tier = None
    default_link = tier.interconnect if tier else "pcie-x16"
    c = _Context(
        work=w,
        gpu=gpu,
        gpu_count=block["gpu_count"],
        tier=tier,
        interconnect=block.get("interconnect")
        or ("nvlink" if gpu.cooling == "sxm" else default_link),
    )
    server = block.get(SERVER_KEY)
    placeholder = {"platform_price_usd": Fixed(0.0)} if server is not None else {}
    filled = _erred(_fill({**block, **placeholder}, path, c, OWNED, BuyInputs), block, path, c)
    platform = platform_price(block, path, c.gpu_count, filled.values["gpu_price_usd"])
    if platform is not None:
        each = float(filled.values["gpu_price_usd"].p50())
        gpus = counted(c.gpu_count, "GPU")
        source = f"scenario: {path}.{SERVER_KEY} less {gpus} at {each:,.2f} USD"
        filled = _given(filled, path, "platform_price_usd", platform, source)
        block = {k: v for k, v in block.items() if k != SERVER_KEY}
    paid = _paid(block, path)
    inputs = built(
        BuyInputs,
        path,
        {},
        gpu_count=c.gpu_count,
        powered_when_idle=block["powered_when_idle"],
        depreciation=block["depreciation"],
        depreciation_years=block["depreciation_years"],
        **paid.inputs,
        **filled.values,
    )
    return Owned(
        path=path,
        inputs=inputs,
        gpu=gpu,
        platform=tier,
        interconnect=c.interconnect,
        throughput=c.throughput,
        block={
            **block,
            "interconnect": c.interconnect,
            **filled.values,
            "financing": paid.financing,
        },
        assumptions=filled.assumptions + paid.assumptions,
        prices=filled.prices,
        carbon=carbon and owned_carbon(block, path, gpu, w.catalog, carbon),
    )


def rented(
    block: Mapping[str, Any],
    path: str,
    w: Work,
    keys: Collection[str] | None = None,
    carbon: str | None = None,
) -> Rented:
    """The rented offer of a validated ``rent`` (or ``reserve``, ``burst``) block at key path
    ``path``; ``committed_instances`` is read where the block has it. ``keys``, when given, are
    the inputs the block may hold (those of a plan's ``reserve`` or ``burst``): the others take
    their defaults but are not among the assumptions. Its carbon inputs as :func:`owned`'s.

    Raises :class:`ScenarioError` at ``path``'s keys for an unknown instance, a GPU below the
    workload's memory floor, a price the instance lacks and inputs the engine rejects.
    """
    offer = _offer(w.catalog, block["instance"], f"{path}.instance")
    problems = w.misplaced(block, path) + w.check_memory(offer.gpu, f"{path}.instance")
    if problems:
        raise ScenarioError(None, problems)
    c = _Context(
        work=w,
        gpu=offer.gpu,
        gpu_count=offer.gpu_count,
        interconnect=offer.interconnect,
        offer=offer,
        pricing=block["pricing"],
    )
    per_gpu = block.get(GPU_HOUR_KEY) is not None
    block = instance_price(block, path, offer.gpu_count)
    filled = _erred(_fill(block, path, c, RENTED, RentInputs), block, path, c)
    if per_gpu:
        gpus = counted(offer.gpu_count, "GPU")
        source = f"scenario: {path}.{GPU_HOUR_KEY} x the instance's {gpus}"
        filled = _given(filled, path, "price_usd_per_hour", block["price_usd_per_hour"], source)
        block = {k: v for k, v in block.items() if k != GPU_HOUR_KEY}
    inputs = built(
        RentInputs,
        path,
        {"gpu_count": f"{path}.instance.gpu_count"},
        gpu_count=offer.gpu_count,
        pricing=c.pricing,
        committed_instances=block.get("committed_instances"),
        **filled.values,
    )
    return Rented(
        path=path,
        inputs=inputs,
        offer=offer,
        throughput=c.throughput,
        block={**block, **filled.values},
        assumptions=tuple(
            a for a in filled.assumptions if keys is None or a.key.partition(".")[2] in keys
        ),
        prices=filled.prices,
        carbon=carbon
        and rented_carbon(block, path, offer.id, offer.gpu, offer.gpu_count, w.catalog, carbon),
    )


#: The plain (not distributed) inputs of an owned block, at their engine defaults: what a
#: ``buy`` block that leaves them out holds once validated.
_PLAIN_OWNED = ("powered_when_idle", "depreciation", "depreciation_years")


def owned_of(w: Work, gpu: str, gpu_count: int, path: str = "buy", **given: Any) -> Owned:
    """The owned build of ``gpu_count`` catalog GPUs ``gpu`` at key path ``path``, made from
    keywords as :func:`owned` resolves a block of these keys alone: ``given`` are engine
    inputs given (distributions), every other input takes its default. No document is loaded
    (a comparison resolves hundreds of these)."""
    meta = input_fields(BuyInputs)
    plain = {name: meta[name].default for name in _PLAIN_OWNED}
    return owned({**plain, "gpu": gpu, "gpu_count": gpu_count, **given}, path, w)


def rented_of(w: Work, instance: str, pricing: str, path: str = "rent", **given: Any) -> Rented:
    """The catalog ``instance`` rented at ``pricing`` at key path ``path``, made from keywords
    as :func:`rented` resolves a block of these keys alone (``given``: engine inputs given)."""
    return rented({"instance": instance, "pricing": pricing, **given}, path, w)


@dataclass
class _Hosting:
    """What the default of a left-out input of an API side may depend on: its offer, and
    whether the block gives a cached-input price (the input price is the default of one the
    offer does not publish)."""

    work: Work
    offer: ApiOffer | None
    cached_given: bool

    def labels(self) -> dict[str, str]:
        o = self.offer
        return {"offer": o.id, "as_of": o.as_of} if o else {}


def _offered(column: str) -> Callable[[_Hosting], float | None]:
    return lambda c: c.offer and getattr(c.offer, column)


_OFFER = "catalog: {offer} (as of {as_of})"
_NO_OFFER = "no catalog offer is named (api.model)"

#: Every input an API block may leave out, in the order of the result's assumptions.
HOSTED: tuple[Source, ...] = (
    Source("input_usd_per_mtok", _offered("input_usd_per_mtok"), _OFFER, missing=_NO_OFFER),
    Source("output_usd_per_mtok", _offered("output_usd_per_mtok"), _OFFER, missing=_NO_OFFER),
    *field_defaults(ApiInputs),
    Source(
        "cached_input_usd_per_mtok",
        _offered("cached_input_usd_per_mtok"),
        _OFFER,
        applies=lambda c: (
            c.cached_given or bool(c.offer and c.offer.cached_input_usd_per_mtok is not None)
        ),
    ),
)


@dataclass(frozen=True)
class Hosted:
    """A hosted API resolved at key path ``path``: its engine inputs, the catalog offer it
    rests on (``None`` for inline prices), the block with every default filled in, the
    assumptions, the user's prices used (none: the prices file holds GPUs and instances) and,
    where the question counts carbon and the block gives its emissions, its carbon inputs
    (``carbon``; ``None``: unknown)."""

    path: str
    inputs: ApiInputs
    offer: ApiOffer | None
    block: dict[str, Any]
    assumptions: tuple[Assumption, ...]
    prices: Mapping[str, PriceEntry] = field(default_factory=dict)
    carbon: SideCarbon | None = None

    @property
    def label(self) -> str:
        return self.offer.id if self.offer else "inline API prices"


def hosted(block: Mapping[str, Any], path: str, w: Work, carbon: str | None = None) -> Hosted:
    """The hosted API of a validated ``api`` block at key path ``path``, serving the
    workload's requests (:class:`Inference`); its carbon inputs as :func:`owned`'s.

    Raises :class:`ScenarioError` at ``path``'s keys for an unknown offer and inputs the
    engine rejects.
    """
    offer = None
    if block.get("model") is not None:
        try:
            offer = w.catalog.api_offer(block["model"])
        except CatalogError as exc:
            raise ScenarioError(None, [{"path": f"{path}.model", "message": exc.problem}]) from None
    cached = block.get("cached_input_usd_per_mtok") is not None
    filled = _fill(block, path, _Hosting(w, offer, cached), HOSTED, ApiInputs)
    inputs = built(
        ApiInputs,
        path,
        {},
        input_tokens=w.input_tokens,
        output_tokens=w.output_tokens,
        **filled.values,
    )
    return Hosted(
        path=path,
        inputs=inputs,
        offer=offer,
        block={**block, **filled.values},
        assumptions=filled.assumptions,
        carbon=carbon and hosted_carbon(block, path, carbon),
    )


def hosted_of(w: Work, offer: str, path: str = "api") -> Hosted:
    """The catalog API ``offer`` at key path ``path``, made from keywords as :func:`hosted`
    resolves a block naming it alone."""
    return hosted({"model": offer}, path, w)


def gathered(*steps: Callable[[], Any]) -> list[Any]:
    """Each step's result; the problems of every step that fails are raised together."""
    out, problems = [], []
    for step in steps:
        try:
            out.append(step())
        except ScenarioError as exc:
            problems += exc.errors
            out.append(None)
    if problems:
        raise ScenarioError(None, problems)
    return out


#: The catalog ids a document may name, by key path (an inline instance's GPU included), and
#: what each is.
_IDS = {
    "workload.reference_gpu": "gpu",
    "demand.gpu": "gpu",
    "workload.model": "model",
    "api.model": "api_offer",
    "buy.gpu": "gpu",
    "own.gpu": "gpu",
    "rent.instance": "instance",
    "rent.instance.gpu": "gpu",
    "buy.grid": "grid",
    "rent.grid": "grid",
    "reserve.instance": "instance",
    "burst.instance": "instance",
    "reserve.instance.gpu": "gpu",
    "burst.instance.gpu": "gpu",
    "own.grid": "grid",
    "reserve.grid": "grid",
    "burst.grid": "grid",
}


def unknown_ids(data: Any, catalog: Catalog, known: list[dict] = ()) -> list[dict]:
    """The catalog ids of a document that fails validation, looked up anyway (at key paths
    ``known`` does not already name), so that one run reports the schema's problems and the
    ids' together."""
    named = {e.get("path") for e in known}
    out = []
    for path, kind in _IDS.items():
        value = data
        for key in path.split("."):
            value = value.get(key) if isinstance(value, Mapping) else None
        if not isinstance(value, str) or path in named:
            continue
        try:
            getattr(catalog, kind)(value)
        except CatalogError as exc:
            out.append({"path": path, "message": exc.problem})
    return out
