"""The Flask application factory."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from flask import Flask, Response
from werkzeug.exceptions import InternalServerError

from costmodel.allocator import keep_freed_memory
from costmodel.threads import pin_threads
from scenarios.store import StoreError

from .catalog import blp as catalog_blp
from .compare import blp as compare_blp
from .config import DEFAULTS, ENV_PREFIX, check_config
from .deadline import start_deadline
from .docs import blp as docs_blp
from .errors import ApiWithErrors
from .evaluate import blp as evaluate_blp
from .health import blp as health_blp
from .jsonio import StrictJSONProvider, decode_content_encoding
from .limits import write_limits
from .openapi import register_openapi, write_choices
from .plans import blp as plans_blp
from .query import check_query
from .requestline import LIMIT_REQUEST_LINE, request_line_too_long
from .runs import blp as runs_blp
from .runs.jobs import JobRunner
from .service import ResultCache, priced_catalog, store_unavailable
from .throughput import blp as throughput_blp
from .web import blp as web_blp

__all__ = ["SECURITY_HEADERS", "create_app"]

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
            "with errors a list of {path, message}, also those of the HTTP server itself: a "
            f"request line longer than {LIMIT_REQUEST_LINE:,} bytes is 414 ('"
            f"{request_line_too_long()}'), a header field longer than 8,190 bytes or more "
            "than 100 of them 431, a request it cannot parse 400.",
        },
        "servers": [{"url": "/"}],
    },
}


#: The headers of every answer: not sniffed as another type, never framed, no referrer, and a
#: Content-Security-Policy (JSON loads nothing) unless the view set its own (the web page, HTML
#: reports). gunicorn's own answers carry them too (:mod:`api.gunicorn_conf`).
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
}


def _secure(response: Response) -> Response:
    """:data:`SECURITY_HEADERS` on every answer, each unless the view set it."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def _configure_logging() -> None:
    """Under gunicorn, log the API's errors (with their ids) through gunicorn's error log."""
    log = logging.getLogger("api")
    server_log = logging.getLogger("gunicorn.error")
    if server_log.handlers and not log.handlers:
        log.handlers = list(server_log.handlers)
        log.setLevel(server_log.level)
        log.propagate = False


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the WSGI application.

    ``config`` overrides the ``COSTMODEL_*`` environment variables, which override the
    defaults of :mod:`api.config` (e.g. ``{"DB": path, "API_KEYS": "k1,k2", "MAX_SAMPLES":
    50_000}``). Serve it with ``costmodel serve`` (development) or ``gunicorn
    "api:create_app()"``.
    """
    keep_freed_memory()  # a worker evaluates request after request
    pin_threads()  # ... beside others: a BLAS thread per core only adds CPU
    app = Flask("api")
    app.json = StrictJSONProvider(app)
    app.config.update(_SPEC_CONFIG)
    app.config.update(DEFAULTS)
    app.config.from_prefixed_env(ENV_PREFIX)
    check_config(app.config, config or {})
    # COSTMODEL_PRICES and COSTMODEL_SERVING, read once
    catalog, prices, serving = priced_catalog(app.config["PRICES"], app.config["SERVING"])
    app.extensions["costmodel"] = {
        "store": None,
        "cache": ResultCache(app.config["RESULT_CACHE"], app.config["RESULT_CACHE_BYTES"]),
        "catalog": catalog,
        "prices": prices,
        "serving": serving,
        "jobs": JobRunner(app),
    }
    _configure_logging()
    app.before_request(start_deadline)
    app.before_request(decode_content_encoding)
    app.before_request(check_query)
    app.after_request(_secure)

    api = ApiWithErrors(app)
    # Any other exception is a 500 in the same shape, also when Flask would propagate it
    # (TESTING, PROPAGATE_EXCEPTIONS).
    app.register_error_handler(
        Exception,
        lambda exc: api.handle_http_exception(InternalServerError(original_exception=exc)),
    )
    # A run store that cannot be opened or does not answer is a 503 on every route using it.
    app.register_error_handler(
        StoreError, lambda exc: api.handle_http_exception(store_unavailable(exc))
    )
    register_openapi(api, app.config, catalog)
    blps = (evaluate_blp, plans_blp, compare_blp, throughput_blp, runs_blp, catalog_blp, health_blp)
    for blp in blps:
        api.register_blueprint(blp)
    write_limits(api.spec.components.schemas, app.config)  # the schemas the views added
    write_choices(api.spec.components.schemas, catalog)
    app.register_blueprint(web_blp)  # GET / and /assets/: the web page, not in the OpenAPI
    app.register_blueprint(docs_blp)  # GET /docs: the OpenAPI document in Swagger UI
    return app
