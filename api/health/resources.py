"""``GET /health``: 200 when the catalog loads and the run store answers and takes writes, else
503."""

from __future__ import annotations

import logging
from importlib import metadata
from typing import Any

from flask_smorest import Blueprint, abort

from pricing import load_catalog

from ..deadline import RETRY_AFTER_S
from ..openapi import error_responses
from ..service import store_write_problem
from .schemas import HealthSchema

__all__ = ["blp"]

_log = logging.getLogger("api")

blp = Blueprint("health", __name__, description="Liveness and readiness probe.")


def _version() -> str:
    try:
        return metadata.version("gpu-costmodel")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@blp.route("/health", methods=["GET"])
@blp.response(200, HealthSchema)
@error_responses(blp, 503)
@blp.doc(operationId="health", summary="Health check")
def health() -> dict[str, Any]:
    """Catalog version and run-store status; 503 in the error shape when either fails, the
    store also when it answers reads but refuses writes (a full disk, a read-only database)."""
    try:
        cat = load_catalog()
    except Exception:
        _log.exception("health: the catalog does not load")
        abort(503, message="the pricing catalog does not load; see the server log")
    problem = store_write_problem()  # a store that cannot be read raises: the app answers 503
    if problem is not None:
        _log.error("health: the run store refuses writes: %s", problem)
        message = (
            "the run store answers but refuses writes, so runs cannot be stored; see the server log"
        )
        abort(
            503,
            message=message,
            errors=[{"path": "store", "message": "writes fail"}],
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )
    return {
        "status": "ok",
        "version": _version(),
        "catalog": {"version": cat.version, "as_of": str(cat.as_of)},
        "store": "ok",
    }
