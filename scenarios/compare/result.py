"""What a market comparison answers, in numbers: each :class:`Option` with its cost
[USD/unit of work] and carbon [g CO2e/unit of work] as P10/P50/P90, the options left out
(:class:`LeftOut`, and by model :class:`Unserved`), and the :class:`Comparison` that ranks them
with the break-evens.

The unit of work is the request's (:attr:`~.request.CompareRequest.unit`): a reference
GPU-hour of training work, or a million tokens (input + output) of serving a model. Costs are
undiscounted and before tax. Carbon counts the operational emissions at the utilisation
compared and the embodied carbon spread over :data:`SERVICE_LIFE_YEARS` (an owned build) or
:data:`PROVIDER_SERVICE_LIFE_YEARS` (a provider's host); it is ``None`` when not known (an API
offer), never zero. A comparison holds numbers only: its sentences are
:func:`.wording.wording`'s and its JSON form :class:`.schema.ComparisonSchema`'s, functions of
it that its callers use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from costmodel.inputs import CarbonInputs, input_fields
from costmodel.result import Advice, Breakeven, CatalogRef, Origin

from .request import TRAINING_UNIT, CompareRequest

__all__ = [
    "Citation",
    "Comparison",
    "Cost",
    "Grams",
    "LeftOut",
    "Option",
    "OwnedGrid",
    "ServedModel",
    "Unserved",
]

#: The pricing of an owned option, and of an API offer.
PURCHASE = "purchase"
PER_TOKEN = "per_token"
#: The service lives embodied carbon is spread over [year]: the owned build's and a provider's
#: host's, the scenario format's defaults.
SERVICE_LIFE_YEARS = input_fields(CarbonInputs)["service_life_years"].default
PROVIDER_SERVICE_LIFE_YEARS = input_fields(CarbonInputs)["provider_service_life_years"].default


@dataclass(frozen=True)
class Cost:
    """Cost per unit of work [USD/unit]: P10, P50, P90."""

    p10: float
    p50: float
    p90: float


@dataclass(frozen=True)
class Grams:
    """Emissions per unit of work [g CO2e/unit]: P10, P50, P90."""

    p10: float
    p50: float
    p90: float


@dataclass(frozen=True)
class OwnedGrid:
    """The grid the owned options' electricity comes from: catalog ``id``, ``name`` and its
    carbon intensity [g CO2e/kWh]."""

    id: str
    name: str
    g_co2e_per_kwh: float


@dataclass(frozen=True)
class Citation:
    """What an option of a comparison by model rests on: the serving row (owned and rented)
    or the API offer, by catalog ``id``, its date ``as_of`` and its ``source``; ``origin``:
    ``"measured"`` (a catalog serving row), ``"yours"`` (a row of the user's serving file) or
    ``"published"`` (an API offer's price list); a serving row's ``conditions`` in words and
    the ``caveats``: those of its conditions that differ from the question."""

    id: str
    as_of: str
    source: str
    origin: str = "measured"
    conditions: str = ""
    caveats: tuple[str, ...] = ()


@dataclass(frozen=True)
class Option:
    """One way to get the work done, with its cost at the requested utilisation.

    Attributes:
        id: the GPU id (owned), the instance id (rented) or the API offer id.
        side: ``"buy" | "rent" | "api"``. pricing: ``"purchase"`` (owned), the pricing model
            (rented) or ``"per_token"`` (an API).
        gpu: GPU id. gpu_count: GPUs per server or per instance (``None`` for an API).
        cost: P10/P50/P90 [USD/unit of work]; unit: ``"reference_gpu_hour"`` or
            ``"million_tokens"``.
        price_usd: the option's price [USD/GPU], [USD/instance-hour] or, for an API, its
            blended price [USD/M tokens]; price_source: where it came from, in words;
            price_origin: its kind (the catalog, or the user's prices).
        warnings: the buyer's-guide advice about this option.
        tokens_per_s_per_gpu: the measured serving throughput [tokens/s per GPU] (owned and
            rented, by model). source: the serving row or API offer (by model).
        carbon: P10/P50/P90 emissions [g CO2e/unit of work]; ``None`` when not known (an API
            offer: not published), never zero.
    """

    id: str
    side: str
    pricing: str
    gpu: str | None
    gpu_count: int | None
    cost: Cost
    price_usd: float
    price_source: str
    price_origin: Origin = Origin.CATALOG
    warnings: tuple[Advice, ...] = ()
    unit: str = TRAINING_UNIT
    tokens_per_s_per_gpu: float | None = None
    source: Citation | None = None
    carbon: Grams | None = None

    @property
    def cost_per_reference_gpu_hour(self) -> Cost:
        """:attr:`cost` under the name it has for training work."""
        return self.cost

    @property
    def key(self) -> str:
        """The option's id, unique in a comparison (its JSON and CSV ``id``; :attr:`id` is the
        catalog's): ``rtx-4090:4x`` (owned, 4 GPUs per server), ``aws/p3.2xlarge:spot``
        (rented at that pricing) or an API offer's id."""
        if self.side == "buy":
            return f"{self.id}:{self.gpu_count}x"
        return f"{self.id}:{self.pricing}" if self.side == "rent" else self.id


@dataclass(frozen=True)
class LeftOut:
    """An option ruled out by the advice (an ``error``) or that cannot be resolved."""

    id: str
    side: str
    pricing: str
    gpu_count: int | None
    reason: str


@dataclass(frozen=True)
class ServedModel:
    """The model of a comparison by model: catalog ``id``, ``name``, ``params_b`` [billion
    parameters] and the memory its weights take at the precision compared [GB]."""

    id: str
    name: str
    params_b: float
    weights_gb: float


@dataclass(frozen=True)
class Unserved:
    """What a comparison by model leaves out before resolving it: the GPUs (of owned options)
    and instances without a serving measurement of the model at the precision (and the
    interactivity floor), the owned servers (a GPU at a count) and instances too small for the
    weights; and the GPUs that do have a measurement."""

    no_measurement_gpus: int
    no_measurement_instances: int
    does_not_fit_servers: int
    does_not_fit_instances: int
    measured_gpus: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    """Every option ranked by P50 cost per unit of work, cheapest first.

    ``unit`` is the request's; ``model``, ``cheapest_api``, ``breakeven_vs_api`` (between the
    cheapest owned option and the cheapest API offer) and ``unserved`` are for a comparison by
    model, ``None`` otherwise. The cheapest options and the break-evens are by cost whatever
    the request's ``sort``. ``grid`` is the owned options' (``None``: a catalog without grid
    intensities, every option's carbon unknown).
    """

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
    model: ServedModel | None = None
    cheapest_api: Option | None = None
    breakeven_vs_api: Breakeven | None = None
    unserved: Unserved | None = None
    grid: OwnedGrid | None = None
    timings: Mapping[str, float] = field(default_factory=dict, compare=False)

    @property
    def unit(self) -> str:
        return self.request.unit
