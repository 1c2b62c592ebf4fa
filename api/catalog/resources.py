"""The dated pricing catalog: ``GET /v1/catalog/gpus[/<id>]``,
``GET /v1/catalog/instances[/<id>]``, ``GET /v1/catalog/models[/<id>]`` (the served models,
with the GPUs each is measured on), ``GET /v1/catalog/api-offers[/<id>]`` (hosted API
prices) and ``GET /v1/catalog/grids[/<id>]`` (the carbon intensity of each grid)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from flask_smorest import Blueprint, abort

from pricing import Catalog, Model, UnknownIdError

from ..openapi import error_responses
from ..service import get_catalog
from .schemas import (
    ApiOfferListSchema,
    ApiOfferSchema,
    GPUListSchema,
    GPUSchema,
    GridListSchema,
    GridSchema,
    InstanceListSchema,
    InstanceSchema,
    ModelListSchema,
    ModelSchema,
)

__all__ = ["blp"]

blp = Blueprint(
    "catalog",
    __name__,
    url_prefix="/v1/catalog",
    description="The dated, versioned catalog the model resolves ids in: GPUs and cloud "
    "instances, with the server's own prices (COSTMODEL_PRICES) laid over them, and for "
    "inference the served models and hosted API offers; for carbon the grids' intensities.",
)


def _one(find: Callable[[str], Any], raw_id: str, param: str) -> Any:
    """The row ``find`` gives for ``raw_id``; an unknown id is answered 404 at ``param``."""
    try:
        return find(raw_id)
    except UnknownIdError as exc:
        abort(404, message=str(exc), errors=[{"path": param, "message": str(exc)}])


def _listed(items: list[Any]) -> dict[str, Any]:
    cat = get_catalog()
    return {"version": cat.version, "as_of": str(cat.as_of), "items": items}


@blp.route("/gpus", methods=["GET"])
@blp.response(200, GPUListSchema)
@blp.doc(operationId="listGpus", summary="List catalog GPUs")
def list_gpus() -> dict[str, Any]:
    """Every GPU of the catalog, with the catalog version."""
    return _listed(list(get_catalog().gpus.values()))


@blp.route("/gpus/<gpu_id>", methods=["GET"])
@blp.response(200, GPUSchema)
@error_responses(blp, 404)
@blp.doc(operationId="getGpu", summary="Fetch one catalog GPU")
def get_gpu(gpu_id: str) -> Any:
    """One GPU; an unknown id is answered 404 with the closest valid ids."""
    return _one(get_catalog().gpu, gpu_id, "gpu_id")


@blp.route("/instances", methods=["GET"])
@blp.response(200, InstanceListSchema)
@blp.doc(operationId="listInstances", summary="List catalog cloud instances")
def list_instances() -> dict[str, Any]:
    """Every cloud instance of the catalog, with the catalog version."""
    return _listed(list(get_catalog().instances.values()))


@blp.route("/instances/<path:instance_id>", methods=["GET"])
@blp.response(200, InstanceSchema)
@error_responses(blp, 404)
@blp.doc(operationId="getInstance", summary="Fetch one catalog cloud instance")
def get_instance(instance_id: str) -> Any:
    """One instance (ids hold a slash: ``aws/p3.8xlarge``); unknown ids answer 404."""
    return _one(get_catalog().instance, instance_id, "instance_id")


def _served(cat: Catalog, model: Model) -> dict[str, Any]:
    """A model with the GPUs measured serving it, by precision (the precisions with rows)."""
    return {**asdict(model), "measured_on": cat.measured_on(model.id)}


@blp.route("/models", methods=["GET"])
@blp.response(200, ModelListSchema)
@blp.doc(operationId="listModels", summary="List catalog served models")
def list_models() -> dict[str, Any]:
    """Every served model with its architecture and the GPUs it is measured on, and the
    catalog version."""
    cat = get_catalog()
    return _listed([_served(cat, m) for m in cat.models.values()])


@blp.route("/models/<model_id>", methods=["GET"])
@blp.response(200, ModelSchema)
@error_responses(blp, 404)
@blp.doc(operationId="getModel", summary="Fetch one catalog served model")
def get_model(model_id: str) -> Any:
    """One model; an unknown id is answered 404 with the closest valid ids."""
    cat = get_catalog()
    return _one(lambda i: _served(cat, cat.model(i)), model_id, "model_id")


@blp.route("/api-offers", methods=["GET"])
@blp.response(200, ApiOfferListSchema)
@blp.doc(operationId="listApiOffers", summary="List catalog hosted API offers")
def list_api_offers() -> dict[str, Any]:
    """Every hosted API offer with its dated prices, and the catalog version."""
    return _listed(list(get_catalog().api_offers.values()))


@blp.route("/api-offers/<path:offer_id>", methods=["GET"])
@blp.response(200, ApiOfferSchema)
@error_responses(blp, 404)
@blp.doc(operationId="getApiOffer", summary="Fetch one catalog hosted API offer")
def get_api_offer(offer_id: str) -> Any:
    """One offer (ids hold a slash: ``together/llama-3.3-70b-instruct-turbo``); unknown ids
    answer 404 with the closest valid ids."""
    return _one(get_catalog().api_offer, offer_id, "offer_id")


@blp.route("/grids", methods=["GET"])
@blp.response(200, GridListSchema)
@blp.doc(operationId="listGrids", summary="List catalog grid carbon intensities")
def list_grids() -> dict[str, Any]:
    """Every grid a scenario's ``buy.grid`` or ``rent.grid`` may name (countries, US eGRID
    subregions, cloud regions) with its carbon intensity, and the catalog version."""
    return _listed(list(get_catalog().grids.values()))


@blp.route("/grids/<path:grid_id>", methods=["GET"])
@blp.response(200, GridSchema)
@error_responses(blp, 404)
@blp.doc(operationId="getGrid", summary="Fetch one catalog grid carbon intensity")
def get_grid(grid_id: str) -> Any:
    """One grid (case-insensitive; cloud regions hold a slash: ``aws/us-east-1``); unknown ids
    answer 404 with the closest valid ids."""
    return _one(get_catalog().grid, grid_id, "grid_id")
