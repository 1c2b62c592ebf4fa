"""A model the catalog lacks, compared by its architecture: the inline ``model`` of a comparison
request (a mapping of a scenario's inline model keys: ``name``, ``params_b``, the architecture)
and the one ``costmodel compare --model-config`` reads from a Hugging Face ``config.json``.

Its options serve at the estimated throughput (the catalog measures no inline model), so it
needs its architecture: layers and the KV cache's shape (``kv_heads`` and ``head_dim``, or
``kv_dim_per_layer``). A request cannot name a file: the command line reads the config and
sends the figures.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pricing import Catalog, Model
from pricing.vocabulary import ARCHITECTURE

from ..errors import ScenarioError
from ..modelconfig import with_model_config
from ..sides import model_of

__all__ = ["inline_model", "model_from_config"]

_PATH = "model"


def inline_model(given: Mapping[str, Any], catalog: Catalog) -> Model:
    """The :class:`~pricing.Model` of a validated inline ``model`` of a request.

    Raises:
        ScenarioError: at ``model.config`` (a request names no file), at ``model.layers``
            without an architecture to estimate from, or at the key a value is wrong at.
    """
    if given.get("config") is not None:
        message = (
            "a request cannot name a file: give the architecture keys (costmodel compare "
            "--model-config FILE reads them from a config.json)"
        )
        raise ScenarioError(None, [{"path": f"{_PATH}.config", "message": message}])
    model = model_of(catalog, given, _PATH)
    if model.layers is None:
        message = (
            "an inline model is compared at its estimated throughput, which needs its "
            "architecture: give layers and kv_heads and head_dim (or kv_dim_per_layer)"
        )
        raise ScenarioError(None, [{"path": f"{_PATH}.layers", "message": message}])
    return model


def model_from_config(
    path: str | os.PathLike[str],
    catalog: Catalog,
    name: str | None = None,
    params_b: float | None = None,
    active_params_b: float | None = None,
) -> dict[str, Any]:
    """The inline ``model`` of a request read from the Hugging Face ``config.json`` at
    ``path``: its architecture, and its parameters [billions] as given, else the catalog's
    for a model of that ``name`` (default: the folder of a file named ``config.json``, else
    the file's stem), else counted from the config.

    Raises:
        ScenarioError: at ``model.config`` when the file cannot be read or lacks a key, at
            ``model.params_b`` when its family's parameters are not counted and none is given.
    """
    path = Path(path)
    if name is None:
        name = path.parent.name if path.name == "config.json" and path.parent.name else path.stem
    blank = {key: None for key in (*ARCHITECTURE, "arch_source")}
    model = {
        **blank,
        "name": name,
        "config": path.name,
        "params_b": params_b,
        "active_params_b": active_params_b,
    }
    try:
        filled = with_model_config({"workload": {"model": model}}, path.parent, catalog)
    except ScenarioError as exc:
        errors = [{**e, "path": e["path"].replace("workload.model", _PATH)} for e in exc.errors]
        raise ScenarioError(exc.file, errors) from None
    return {k: v for k, v in filled["workload"]["model"].items() if k != "config"}
