"""Scenarios: load (a YAML file or a mapping), resolve against a catalog, key and evaluate.

>>> import scenarios
>>> answer = scenarios.evaluate("scenarios/examples/worked-example.yaml")
>>> answer.verdict                           # one sentence
>>> answer.breakeven_utilisation.p50         # [-], a figure of answer.result
>>> answer.to_frame()                        # one row per utilisation level (pandas)
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from costmodel.engine import Progress, simulate, summarise
from costmodel.inputs import MAX_SAMPLES
from costmodel.result import Advice, CatalogRef
from present.answer import Answer
from present.verdict import verdict
from present.wording import wording
from pricing import Catalog, load_catalog

from .advice import advise, convergence_advice
from .errors import ScenarioError, by_line
from .loader import load_documents, validate, with_lines
from .modelconfig import with_model_config
from .resolve import Keyed, Plan, Resolved, resolve, with_sampling
from .sides import unknown_ids

__all__ = ["Scenario", "evaluate", "load_document", "load_file", "load_files", "load_mapping"]


@dataclass(frozen=True)
class Scenario(Keyed):
    """A validated scenario resolved against a catalog, ready to evaluate."""

    source: str
    resolved: Resolved
    warnings: tuple[Advice, ...]

    @property
    def name(self) -> str:
        return self.resolved.scenario["name"]

    @property
    def document(self) -> dict[str, Any]:
        """The scenario with every default filled in (itself a valid version-1 scenario)."""
        return self.resolved.scenario

    @property
    def samples(self) -> int:
        return self.resolved.inputs.samples

    @property
    def seed(self) -> int:
        return self.resolved.inputs.seed

    def max_draws(self, samples: int | None = None) -> int:
        """The most draws an evaluation makes [draw] (with ``samples`` overriding the
        scenario's): ``samples``, or with ``simulation.target_halfwidth`` the cap the draws may
        be doubled up to (``simulation.max_samples``, by default the engine's limit, never
        below ``samples``). What a service should check against its own limits."""
        inputs = self.resolved.inputs
        wanted = samples or inputs.samples
        if inputs.target_halfwidth is None:
            return wanted
        return max(inputs.max_samples or MAX_SAMPLES, wanted)

    @property
    def catalog(self) -> Catalog:
        return self.resolved.catalog


def load_document(
    data: Any,
    source: str,
    lines: dict[str, int] | None = None,
    catalog: Catalog | None = None,
    base_dir: str | os.PathLike | None = None,
) -> Scenario | Plan:
    """Validate and resolve one parsed document, a scenario or a plan (``kind: plan``);
    ``lines`` maps key paths to YAML lines. ``catalog`` defaults to the shipped one.
    ``base_dir`` is the folder of the document's file, which an inline model's ``config``
    is read relative to (``None``: a document without a file, which cannot name one).
    """
    catalog = catalog or load_catalog()
    try:
        valid = validate(data, source, lines)
    except ScenarioError as exc:  # the ids too, so that one run reports every problem
        errors = exc.errors + with_lines(unknown_ids(data, catalog, exc.errors), lines)
        raise ScenarioError(source, by_line(errors)) from None
    try:
        valid = with_model_config(valid, base_dir, catalog)
        if valid.get("kind") == "plan":
            from .plan import resolve_plan  # a scenario's run needs none of the plans' code

            return resolve_plan(valid, source, catalog)
        resolved = resolve(valid, source, catalog)
    except ScenarioError as exc:
        raise ScenarioError(source, by_line(with_lines(exc.errors, lines))) from None
    carbon = resolved.emitting.advice if resolved.emitting else ()
    return Scenario(source=source, resolved=resolved, warnings=advise(resolved.question) + carbon)


def load_mapping(
    data: Any, source: str = "<request>", catalog: Catalog | None = None
) -> Scenario | Plan:
    """Validate and resolve a scenario or plan given as a mapping (e.g. a JSON request body)."""
    return load_document(data, source, catalog=catalog)


def load_files(path: str | os.PathLike, catalog: Catalog | None = None) -> list[Scenario | Plan]:
    """Every scenario or plan of a YAML file holding one document or a list of them."""
    folder = Path(path).parent
    return [
        load_document(data, source, lines, catalog, folder)
        for source, data, lines in load_documents(path)
    ]


def load_file(path: str | os.PathLike, catalog: Catalog | None = None) -> Scenario | Plan:
    """The scenario or plan of a YAML file holding exactly one document."""
    docs = load_documents(path)
    if len(docs) != 1:
        message = f"expected one scenario, found a list of {len(docs)}; use 'costmodel batch'"
        raise ScenarioError(str(path), [{"path": "", "message": message}])
    source, data, lines = docs[0]
    return load_document(data, source, lines, catalog, Path(path).parent)


def evaluate(
    scenario: Scenario | Plan | Mapping[str, Any] | str | os.PathLike,
    *,
    samples: int | None = None,
    seed: int | None = None,
    catalog: Catalog | None = None,
    timings: dict[str, float] | None = None,
    progress: Progress | None = None,
) -> Answer:
    """Run the Monte Carlo model on a scenario or a plan: a :class:`Scenario` or
    :class:`~scenarios.plan.Plan`, a mapping in either format, or the path of a YAML file
    holding one. The :class:`~present.answer.Answer` carries the engine's result (a
    :class:`~costmodel.result.Result`, or for a plan a
    :class:`~costmodel.plan_result.PlanResult`) with its document, catalog, warnings,
    assumptions, verdict and (a scenario's) further sentences.

    ``samples`` and ``seed`` override the scenario's ``simulation`` block; ``catalog`` (for a
    mapping or a path) defaults to the shipped one; ``timings``, when given, receives
    ``engine_s`` [s], the time spent sampling, evaluating and summarising; ``progress``, when
    given, is called with the share of the simulation done, from 0 to 1. Raises
    :class:`ScenarioError` for a scenario that cannot be run.
    """
    if isinstance(scenario, Mapping):
        scenario = load_mapping(scenario, catalog=catalog)
    elif not isinstance(scenario, Scenario | Plan):
        scenario = load_file(scenario, catalog=catalog)
    if isinstance(scenario, Plan):
        from .plan import evaluate_plan

        start = time.perf_counter()
        plan_result = evaluate_plan(scenario, samples=samples, seed=seed, progress=progress)
        if timings is not None:
            timings["engine_s"] = time.perf_counter() - start
        return plan_result
    inputs = scenario.resolved.inputs
    changes = {k: v for k, v in (("samples", samples), ("seed", seed)) if v is not None}
    if changes:
        inputs = dataclasses.replace(inputs, **changes)
    start = time.perf_counter()
    result = summarise(simulate(inputs, progress))
    if timings is not None:
        timings["engine_s"] = time.perf_counter() - start
    document = with_sampling(scenario.document, inputs.samples, inputs.seed)
    cat = scenario.catalog
    return Answer(
        result,
        verdict=verdict(result),
        wording=wording(result),
        document=document,
        catalog=CatalogRef(cat.version, cat.as_of),
        warnings=scenario.warnings
        + convergence_advice(result.convergence)
        + sum((convergence_advice(r.convergence, r.versus) for r in result.rivals), ()),
        assumptions=scenario.resolved.assumptions,
    )
