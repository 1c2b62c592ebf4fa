"""Scenarios: load (file or mapping), key, and run into the result contract (DESIGN section 5)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from costmodel.engine import simulate, summarise
from costmodel.verdict import verdict
from pricing import load_catalog

from .advice import advise
from .errors import ScenarioError
from .loader import load_documents, validate
from .resolve import Resolved, resolve

__all__ = [
    "Scenario",
    "load_document",
    "load_file",
    "load_files",
    "load_mapping",
    "run",
    "RESULT_SCHEMA_VERSION",
]

RESULT_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Scenario:
    """A validated, catalog-resolved scenario ready to run."""

    source: str
    resolved_inputs: Resolved
    warnings: tuple[dict[str, str], ...]

    @property
    def name(self) -> str:
        return self.resolved_inputs.scenario["name"]

    @property
    def resolved(self) -> dict[str, Any]:
        """The scenario with every default filled in (itself a valid version-1 scenario)."""
        return self.resolved_inputs.scenario

    @property
    def samples(self) -> int:
        return self.resolved_inputs.inputs.samples

    @property
    def seed(self) -> int:
        return self.resolved_inputs.inputs.seed

    def key(self, samples: int | None = None, seed: int | None = None) -> str:
        """SHA-256 of the resolved scenario, seed, samples and catalog version (cache key)."""
        doc = dict(self.resolved)
        doc["simulation"] = {
            **doc["simulation"],
            "samples": samples or self.samples,
            "seed": self.seed if seed is None else seed,
        }
        doc["catalog_version"] = load_catalog().version
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_document(data: Any, source: str, lines: dict[str, int] | None = None) -> Scenario:
    """Validate and resolve one parsed document; ``lines`` maps key paths to YAML lines."""
    valid = validate(data, source, lines)
    try:
        resolved = resolve(valid, source)
    except ScenarioError as exc:
        if lines:
            exc = ScenarioError(
                source,
                [
                    {**e, **({"line": lines[e["path"]]} if e["path"] in lines else {})}
                    for e in exc.errors
                ],
            )
        raise exc from None
    return Scenario(source=source, resolved_inputs=resolved, warnings=tuple(advise(resolved)))


def load_mapping(data: Any, source: str = "<request>") -> Scenario:
    """Validate and resolve a scenario given as a mapping (e.g. a JSON request body)."""
    return load_document(data, source)


def load_files(path: str | os.PathLike) -> list[Scenario]:
    """Every scenario of a YAML file holding one scenario or a list of them."""
    return [load_document(data, source, lines) for source, data, lines in load_documents(path)]


def load_file(path: str | os.PathLike) -> Scenario:
    """The scenario of a YAML file holding exactly one scenario."""
    docs = load_documents(path)
    if len(docs) != 1:
        raise ScenarioError(
            str(path),
            [
                {
                    "path": "",
                    "message": f"expected one scenario, found "
                    f"a list of {len(docs)}; use 'costmodel batch'",
                }
            ],
        )
    source, data, lines = docs[0]
    return load_document(data, source, lines)


def run(
    scenario: Scenario,
    samples: int | None = None,
    seed: int | None = None,
    timings: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Run the Monte Carlo model; returns the result contract as a JSON-ready dict.

    ``samples``/``seed`` override the scenario's ``simulation`` block; ``timings``, when given,
    receives ``engine_s`` [s], the time spent sampling, evaluating and summarising.
    """
    inputs = scenario.resolved_inputs.inputs
    changes = {k: v for k, v in (("samples", samples), ("seed", seed)) if v is not None}
    if changes:
        inputs = dataclasses.replace(inputs, **changes)
    start = time.perf_counter()
    summary = summarise(simulate(inputs))
    if timings is not None:
        timings["engine_s"] = time.perf_counter() - start
    cat = load_catalog()
    resolved = dict(scenario.resolved)
    resolved["simulation"] = {
        **resolved["simulation"],
        "samples": inputs.samples,
        "seed": inputs.seed,
    }
    result: dict[str, Any] = {
        "schema_version": RESULT_SCHEMA_VERSION,
        "scenario": resolved,
        "seed": inputs.seed,
        "samples": inputs.samples,
        "method": inputs.method,
        "catalog": {"version": cat.version, "as_of": cat.as_of},
    }
    result.update(summary)
    result["warnings"] = [dict(w) for w in scenario.warnings]
    result["verdict"] = verdict(summary)
    result["assumptions"] = [dict(a) for a in scenario.resolved_inputs.assumptions]
    return result
