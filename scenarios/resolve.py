"""Resolve a validated scenario against a catalog into frozen engine inputs.

A scenario is two sides resolved once each (:mod:`scenarios.sides`): the owned build at
``buy`` and the rented offer at ``rent``, under the workload's unit of work, and for inference
work perhaps a hosted API at ``api``; this module adds the document's own settings (horizon,
money, utilisation, sampling) and the filled-in document.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass
from typing import Any

from costmodel.distributions import Distribution
from costmodel.inputs import InputError, ModelInputs, PlanInputs, input_fields
from costmodel.result import Advice, Assumption, Origin
from costmodel.sides import SIDES
from present.prebuilt import prebuilt
from pricing import Catalog, PriceEntry

from .advice import Question
from .distspec import to_spec
from .emissions import Emitting, emitting
from .errors import ScenarioError
from .schema import ScenarioSchema, further_sides
from .sides import Hosted, Owned, Rented, Work, gathered, hosted, owned, rented, work

__all__ = ["Keyed", "Plan", "Resolved", "resolve", "with_sampling"]


@dataclass(frozen=True)
class Resolved:
    """Engine inputs of a scenario, its document with every default filled in (``scenario``),
    the assumptions of every side and the resolved sides themselves (``api``: ``None``
    without one); ``emitting`` the sides' carbon inputs."""

    inputs: ModelInputs
    scenario: dict[str, Any]
    assumptions: tuple[Assumption, ...]
    catalog: Catalog
    work: Work
    buy: Owned
    rent: Rented
    api: Hosted | None = None
    emitting: Emitting | None = None

    @property
    def sides(self) -> tuple[Owned | Rented | Hosted, ...]:
        """The resolved sides in the order of the document."""
        return (self.buy, self.rent) if self.api is None else (self.buy, self.rent, self.api)

    @property
    def question(self) -> Question:
        """What the advice looks at."""
        return Question(self.inputs.horizon_months, self.work, self.sides)

    @property
    def prices(self) -> dict[str, PriceEntry]:
        """The inputs whose value is the user's price laid over the catalog, by key path."""
        return {k: v for side in self.sides for k, v in side.prices.items()}


#: Engine input names that differ from the scenario's key paths.
_SCENARIO_PATH = {
    "samples": "simulation.samples",
    "seed": "simulation.seed",
    "method": "simulation.method",
    "target_halfwidth": "simulation.target_halfwidth",
    "max_samples": "simulation.max_samples",
}


@dataclass(frozen=True)
class Further:
    """A further kind of side resolved at its key path: its engine inputs, the block with
    every default filled in and the assumptions (each value given, or its field's default)."""

    path: str
    inputs: Any
    block: dict[str, Any]
    assumptions: tuple[Assumption, ...]


def further(block: Mapping[str, Any], path: str) -> Further:
    """The further side of kind ``path`` (:data:`costmodel.sides.SIDES`) of a validated
    block: each input given, or its field's documented default; a :class:`ScenarioError` at
    the block's keys for one missing or one the engine rejects."""
    cls, values, notes, problems = SIDES[path].inputs, {}, [], []
    for name, f in input_fields(cls).items():
        given, meta = block.get(name), f.metadata
        if given is not None:
            values[name], origin = given, ("scenario", Origin.GIVEN)
        elif f.default is not MISSING:
            values[name] = f.default
            origin = (f"default: {meta.get('origin', 'none')}", Origin.DEFAULT)
        else:
            problems.append({"path": f"{path}.{name}", "message": "required"})
            continue
        if isinstance(values[name], Distribution):
            spec = to_spec(values[name])
            notes.append(Assumption(f"{path}.{name}", spec, meta.get("unit", ""), *origin))
    if problems:
        raise ScenarioError(None, problems)
    try:
        inputs = cls(**values)
    except InputError as exc:
        where = exc.path if exc.path.startswith(f"{path}.") else f"{path}.{exc.path}"
        raise ScenarioError(None, [{"path": where, "message": exc.message}]) from None
    return Further(path, inputs, {**block, **values}, tuple(notes))


def _inputs(
    data: Mapping[str, Any],
    w: Work,
    buy: Owned,
    rent: Rented,
    api: Hosted | None,
    emit: Emitting | None = None,
    more: tuple[Further, ...] = (),
) -> ModelInputs:
    sim = data["simulation"]
    try:
        return ModelInputs(
            horizon_months=data["horizon_months"],
            discount_rate=data["discount_rate"],
            tax_rate=data["tax_rate"],
            utilisation=tuple(data["utilisation"]),
            report_utilisation=data["report_utilisation"],
            samples=sim["samples"],
            seed=sim["seed"],
            method=sim["method"],
            target_halfwidth=sim.get("target_halfwidth"),
            max_samples=sim.get("max_samples"),
            correlations=tuple(tuple(x) for x in data["correlations"]),
            buy=buy.inputs,
            rent=rent.inputs,
            api=api and api.inputs,
            unit=w.unit,
            carbon=emit and emit.inputs,
            further=tuple((f.path, f.inputs) for f in more),
        )
    except InputError as exc:
        path = _SCENARIO_PATH.get(exc.path, exc.path)
        raise ScenarioError(None, [{"path": path, "message": exc.message}]) from None


def resolve(data: Mapping[str, Any], source: str, catalog: Catalog) -> Resolved:
    """Fill catalog defaults into a schema-validated scenario and build the engine inputs.

    Raises :class:`ScenarioError` naming the key path for unknown catalog ids, GPUs below
    ``workload.min_gpu_memory_gb``, missing catalog figures and inputs the engine rejects;
    every side's problems are reported together.
    """
    try:
        (w,) = gathered(lambda: work(data["workload"], catalog))
        buy, rent, api = gathered(
            lambda: owned(data["buy"], "buy", w, carbon="scenario"),
            lambda: rented(data["rent"], "rent", w, carbon="scenario"),
            lambda: data["api"] and hosted(data["api"], "api", w, carbon="scenario"),
        )
        more = gathered(*(_further(data, name) for name in further_sides() if data.get(name)))
        emit = emitting(data, (buy, rent, api))
        inputs = _inputs(data, w, buy, rent, api, emit, more)
    except ScenarioError as exc:
        raise ScenarioError(source, exc.errors) from None
    blocks = {
        "buy": {**buy.block, **emit.blocks["buy"]},
        "rent": {**rent.block, **emit.blocks["rent"]},
        "api": api and api.block,
        "carbon": emit.blocks["carbon"],
        **{f.path: f.block for f in more},
    }
    document = prebuilt(ScenarioSchema).dump({**data, **blocks})
    return Resolved(
        inputs=inputs,
        scenario=document,
        assumptions=(
            *(a for side in (buy, rent, api) if side for a in side.assumptions),
            *emit.assumptions,
            *(a for f in more for a in f.assumptions),
        ),
        catalog=catalog,
        work=w,
        buy=buy,
        rent=rent,
        api=api,
        emitting=emit,
    )


def _further(data: Mapping[str, Any], name: str) -> Callable[[], Further]:
    return lambda: further(data[name], name)


def with_sampling(document: Mapping[str, Any], samples: int, seed: int) -> dict[str, Any]:
    """A copy of a resolved document (scenario or plan) with ``samples`` and ``seed`` in its
    ``simulation`` block: the document a result of that many draws and that seed reports."""
    return {**document, "simulation": {**document["simulation"], "samples": samples, "seed": seed}}


class Keyed:
    """The cache key of a resolved document (a scenario or a plan, which give ``document``,
    ``catalog``, ``samples`` and ``seed``)."""

    def key(self, samples: int | None = None, seed: int | None = None) -> str:
        """SHA-256 of the resolved document with ``samples`` and ``seed`` (default: its own)
        and the catalog version: the cache key of its result."""
        doc = with_sampling(
            self.document,  # type: ignore[attr-defined]
            samples or self.samples,  # type: ignore[attr-defined]
            self.seed if seed is None else seed,  # type: ignore[attr-defined]
        )
        doc["catalog_version"] = self.catalog.version  # type: ignore[attr-defined]
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Plan(Keyed):
    """A validated plan resolved against a catalog, ready to evaluate.

    ``document`` is the plan with every default filled in (itself a valid plan).
    """

    source: str
    inputs: PlanInputs
    document: dict[str, Any]
    assumptions: tuple[Assumption, ...]
    warnings: tuple[Advice, ...]
    catalog: Catalog

    @property
    def name(self) -> str:
        return self.document["name"]

    @property
    def samples(self) -> int:
        return self.inputs.samples

    @property
    def seed(self) -> int:
        return self.inputs.seed

    def max_draws(self, samples: int | None = None) -> int:
        """The most draws an evaluation makes [draw]: ``samples``, else the plan's (a plan does
        not double its draws toward a target)."""
        return samples or self.samples
