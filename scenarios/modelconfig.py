"""An inline model's ``config``: its architecture and parameter count read from a Hugging Face
``config.json`` that the scenario names, a path relative to the scenario's file.

:func:`with_model_config` fills the inline model's keys from the file (keys the scenario gives
win) and drops ``config``, so the resolved document holds the figures themselves and
``arch_source`` says where they come from. The parameter count is the catalog's where the
model is in the catalog (by id or name), else the one :mod:`pricing.hfconfig` counts, else the
scenario must give ``params_b``. A document without a file (an HTTP request) cannot name one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pricing import Catalog, Model
from pricing.hfconfig import COUNTED_FAMILIES, Architecture, ConfigError, read_config
from pricing.vocabulary import ARCHITECTURE

from .errors import ScenarioError

__all__ = ["names_config", "with_model_config"]

_PATH = "workload.model"


def with_model_config(valid: dict, base_dir: str | os.PathLike | None, catalog: Catalog) -> dict:
    """``valid`` (a validated scenario or plan) with its inline model's ``config`` read from
    ``base_dir`` / ``config`` and replaced by the figures; unchanged without a ``config``.

    Raises:
        ScenarioError: at ``workload.model.config`` when there is no file to read it relative
            to, or the file cannot be read or lacks a key; at ``workload.model.params_b`` when
            the family's parameters are not counted and the scenario does not give them.
    """
    workload = valid.get("workload") or {}
    model = workload.get("model")
    if not isinstance(model, Mapping) or model.get("config") is None:
        return valid
    name = model["config"]
    if base_dir is None:
        raise _error(
            "config",
            "a config.json is read relative to a scenario file, and this document has none "
            "(a request): give params_b and the architecture keys instead",
        )
    try:
        arch = read_config(Path(base_dir) / name)
    except ConfigError as exc:
        where = f" (its key {exc.key!r})" if exc.key else ""
        raise _error("config", f"{name}: {exc.problem}{where}") from None
    filled = {**model, "config": None}
    for key in ARCHITECTURE:
        if filled.get(key) is None:
            filled[key] = getattr(arch, key)
    filled.update(_parameters(model, arch, catalog.models))
    return {**valid, "workload": {**workload, "model": filled}}


def names_config(data: Any) -> bool:
    """Whether a parsed document's inline model names a ``config`` (a file it depends on)."""
    workload = data.get("workload") if isinstance(data, Mapping) else None
    model = workload.get("model") if isinstance(workload, Mapping) else None
    return isinstance(model, Mapping) and model.get("config") is not None


def _parameters(model: Mapping[str, Any], arch: Architecture, known: Mapping[str, Model]) -> dict:
    """``params_b``, ``active_params_b`` and ``arch_source`` of an inline model read from a
    config: the scenario's figures, else the catalog's for a model it has, else the count."""
    name = model["config"]
    source = f"the config.json {name!r} (model_type {arch.family or 'not given'})"
    listed = _catalog_model(model["name"], known)
    if model["params_b"] is not None:
        params, active, basis = model["params_b"], model["active_params_b"], "given"
    elif listed is not None:
        params, active = listed.params_b, listed.active_params_b
        counted = "" if arch.params_b is None else f"; the config counts {arch.params_b:.2f} B"
        basis = f"the catalog's figure for {listed.id}{counted}"
    elif arch.params_b is not None:
        params, active = round(arch.params_b, 3), _rounded(arch.active_params_b)
        basis = "counted from the config by the catalog's rule"
    else:
        raise _error(
            "params_b",
            f"{name} is a {arch.family or 'model without model_type'!r} config; parameters are "
            f"counted for {', '.join(COUNTED_FAMILIES)} only: give params_b (and "
            "active_params_b for a mixture of experts)",
        )
    if model["active_params_b"] is not None:
        active = model["active_params_b"]
    arch_source = model.get("arch_source") or f"{source}; parameters: {basis}"
    return {"params_b": params, "active_params_b": active, "arch_source": arch_source}


def _catalog_model(name: str, known: Mapping[str, Model]) -> Model | None:
    """The catalog model whose id or name is ``name`` (case-insensitive), if any."""
    key = name.strip().casefold()
    return known.get(key) or next((m for m in known.values() if m.name.casefold() == key), None)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _error(key: str, message: str) -> ScenarioError:
    return ScenarioError(None, [{"path": f"{_PATH}.{key}", "message": message}])
