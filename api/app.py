"""The Flask application factory (DESIGN practice 10)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from flask import Flask
from flask_smorest import Api

from .catalog import blp as catalog_blp
from .config import load_config
from .errors import ErrorSchema, register_error_handlers
from .evaluate import blp as evaluate_blp
from .health import blp as health_blp
from .jsonio import StrictJSONProvider
from .openapi import register_openapi
from .runs import blp as runs_blp
from .service import ResultCache

__all__ = ["create_app"]

API_VERSION = "1"

_SPEC_CONFIG: dict[str, Any] = {
    "API_TITLE": "GPU rent-versus-buy cost model",
    "API_VERSION": API_VERSION,
    "OPENAPI_VERSION": "3.0.3",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "openapi.json",
    "API_SPEC_OPTIONS": {
        "info": {
            "description": "Monte Carlo rent-versus-buy model for deep-learning GPU compute. "
            "Money is in USD at present value; units are given in square brackets in each "
            "field's description. Every error is answered as {code, status, message, errors} "
            "with errors a list of {path, message}.",
        },
        "servers": [{"url": "/"}],
    },
}


def _configure_logging() -> None:
    """Under gunicorn, log the API's errors (with their ids) through gunicorn's error log."""
    log = logging.getLogger("api")
    server_log = logging.getLogger("gunicorn.error")
    if server_log.handlers and not log.handlers:
        log.handlers = list(server_log.handlers)
        log.setLevel(server_log.level)
        log.propagate = False


class _Api(Api):
    """flask-smorest's Api documenting errors with the API's one error shape."""

    ERROR_SCHEMA = ErrorSchema


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the WSGI application.

    ``config`` overrides the environment and the defaults of :mod:`api.config` (e.g.
    ``{"COSTMODEL_DB": path, "COSTMODEL_API_KEYS": "k1,k2", "COSTMODEL_MAX_SAMPLES": 50_000}``).
    Serve it with ``costmodel serve`` (development) or ``gunicorn "api:create_app()"``.
    """
    app = Flask("api")
    app.json = StrictJSONProvider(app)
    app.config.update(_SPEC_CONFIG)
    app.config.update(load_config(config))
    app.extensions["costmodel"] = {
        "store": None,
        "cache": ResultCache(app.config["COSTMODEL_RESULT_CACHE"]),
    }
    _configure_logging()

    api = _Api(app)
    register_openapi(api)
    for blp in (evaluate_blp, runs_blp, catalog_blp, health_blp):
        api.register_blueprint(blp)
    # After Api(): replaces flask-smorest's HTTPException handler with the one error shape.
    register_error_handlers(app)
    return app
