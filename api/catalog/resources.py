"""The dated pricing catalog: ``GET /v1/catalog/gpus[/<id>]`` and
``GET /v1/catalog/instances[/<id>]``."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint, abort

from pricing import UnknownIdError

from ..openapi import error_responses
from ..service import get_catalog
from .schemas import GPUListSchema, GPUSchema, InstanceListSchema, InstanceSchema

__all__ = ["blp"]

blp = Blueprint(
    "catalog",
    __name__,
    url_prefix="/v1/catalog",
    description="The dated, versioned GPU and cloud-instance catalog the model resolves ids in, "
    "with the server's own prices (COSTMODEL_PRICES) laid over it.",
)


def _not_found(exc: UnknownIdError, param: str) -> None:
    abort(404, message=str(exc), errors=[{"path": param, "message": str(exc)}])


@blp.route("/gpus", methods=["GET"])
@blp.response(200, GPUListSchema)
@blp.doc(operationId="listGpus", summary="List catalog GPUs")
def list_gpus() -> dict[str, Any]:
    """Every GPU of the catalog, with the catalog version."""
    cat = get_catalog()
    return {"version": cat.version, "as_of": str(cat.as_of), "items": list(cat.gpus.values())}


@blp.route("/gpus/<gpu_id>", methods=["GET"])
@blp.response(200, GPUSchema)
@error_responses(blp, 404)
@blp.doc(operationId="getGpu", summary="Fetch one catalog GPU")
def get_gpu(gpu_id: str) -> Any:
    """One GPU; an unknown id is answered 404 with the closest valid ids."""
    try:
        return get_catalog().gpu(gpu_id)
    except UnknownIdError as exc:
        _not_found(exc, "gpu_id")


@blp.route("/instances", methods=["GET"])
@blp.response(200, InstanceListSchema)
@blp.doc(operationId="listInstances", summary="List catalog cloud instances")
def list_instances() -> dict[str, Any]:
    """Every cloud instance of the catalog, with the catalog version."""
    cat = get_catalog()
    return {
        "version": cat.version,
        "as_of": str(cat.as_of),
        "items": list(cat.instances.values()),
    }


@blp.route("/instances/<path:instance_id>", methods=["GET"])
@blp.response(200, InstanceSchema)
@error_responses(blp, 404)
@blp.doc(operationId="getInstance", summary="Fetch one catalog cloud instance")
def get_instance(instance_id: str) -> Any:
    """One instance (ids hold a slash: ``aws/p3.8xlarge``); unknown ids answer 404."""
    try:
        return get_catalog().instance(instance_id)
    except UnknownIdError as exc:
        _not_found(exc, "instance_id")
