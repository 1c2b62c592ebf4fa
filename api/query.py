"""Query parameters an API route does not take are refused (400), before the view runs.

A mistyped ``?sample=100`` would otherwise be ignored and the scenario run with its own
samples, and ``GET /v1/catalog/instances?provider=aws`` answered with every provider's: a
silent guess. The parameters a route takes are those its OpenAPI document lists (its query
schema); the web page and the documentation pages, which are not the API, are not checked.

One rule holds for every query parameter: a value outside what the OpenAPI document states for
it is 400, whether the range is the parameter's own (``samples`` from 1), a limit of the
service (``samples`` up to ``COSTMODEL_MAX_SAMPLES``, ``page_size`` up to
``COSTMODEL_MAX_PAGE_SIZE``) or the catalog's ids (``GET /v1/throughput``'s ``model`` and
``gpu``). A request whose parameters are in range but whose work or memory
is over a limit is 422, like a document over one.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from flask import current_app, request
from flask_smorest import abort

from pricing.suggest import did_you_mean

from .limits import LIMITS

__all__ = ["check_query", "query_names"]

#: Where the routes of the API live; other paths (the web page, /docs, /health) take any query.
_PREFIX = "/v1/"


@cache  # a view's documentation does not change once its app is made
def query_names(view: Any) -> frozenset[str] | None:
    """The query parameters the flask-smorest view ``view`` documents, ``None`` when it is no
    documented view of the API."""
    doc = getattr(view, "_apidoc", None)
    if not isinstance(doc, Mapping):
        return None
    names: set[str] = set()
    for param in doc.get("arguments", {}).get("parameters", []):
        if param.get("in") == "query":
            schema = param["schema"]
            fields = (schema() if isinstance(schema, type) else schema).fields
            names.update(f.data_key or name for name, f in fields.items())
    return frozenset(names)


def check_query() -> None:
    """``before_request``: a 400 naming the first query parameter of a ``/v1`` request that
    its route does not take, with the closest it does."""
    if not request.path.startswith(_PREFIX) or not request.args:
        return
    view = current_app.view_functions.get(request.endpoint or "")
    valid = query_names(view)
    if valid is None:
        return
    unknown = next((name for name in request.args if name not in valid), None)
    if unknown is None:
        _check_maxima()
        return
    if valid:
        hint = did_you_mean(unknown, sorted(valid), sep=" (")
        hint = f"{hint})" if hint else ""
        problem = f"unknown query parameter{hint}; valid: {', '.join(sorted(valid))}"
    else:
        where = " (its options go in the body)" if request.method == "POST" else ""
        problem = f"{request.method} {request.url_rule} takes no query parameters{where}"
    errors = [{"path": f"query.{unknown}", "message": problem}]
    abort(400, message=f"invalid request parameters: query.{unknown}: {problem}", errors=errors)


def _check_maxima() -> None:
    """400 naming the first integer query parameter above the limit the service sets on it."""
    for setting, limit in LIMITS.items():
        for component, name in limit.places:
            text = request.args.get(name) if component == "query" else None
            if text is None or not text.strip().lstrip("+").isdigit():
                continue  # absent, or not an integer: the view's schema says what is wrong
            maximum = int(current_app.config[setting])
            if int(text) > maximum:
                problem = f"must be at most {maximum:,} (COSTMODEL_{setting}), got {int(text):,}"
                errors = [{"path": f"query.{name}", "message": problem}]
                abort(400, message=f"invalid request parameters: query.{name}: {problem}",
                      errors=errors)  # fmt: skip
