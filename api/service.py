"""What the views share: the run store of the app and the limited evaluation of a request body."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence

from flask import Flask, current_app, request
from flask_smorest import abort
from werkzeug.exceptions import HTTPException, ServiceUnavailable

from costmodel.plan_result import PlanResult
from costmodel.result import Result
from pricing import Catalog, CatalogError, apply_prices, load_catalog, read_prices
from scenarios import Plan, Scenario, ScenarioError, evaluate, load_mapping
from scenarios.store import RunStore, StoreError

from .jsonio import parse_json_body, request_body, require_json_content_type

__all__ = [
    "abort_over_limits",
    "ResultCache",
    "evaluate_body",
    "get_catalog",
    "get_store",
    "priced_catalog",
    "store_unavailable",
]

_log = logging.getLogger("api")
_STORE_LOCK = threading.Lock()
_RETRY_AFTER_S = 5  # [s] suggested to clients of a 503


def get_store(app: Flask | None = None) -> RunStore:
    """The app's :class:`RunStore`, opened on first use at ``COSTMODEL_DB``.

    A store that cannot be opened raises :class:`StoreError`, which the app answers 503 (see
    :func:`store_unavailable`); the next request tries again.
    """
    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    state = app.extensions["costmodel"]
    store = state.get("store")
    if store is not None:
        return store
    with _STORE_LOCK:
        if state.get("store") is None:
            state["store"] = RunStore(app.config.get("DB"), pool_size=app.config["DB_POOL_SIZE"])
        return state["store"]


def priced_catalog(prices: str | None) -> Catalog:
    """The shipped catalog with the operator's prices file (``COSTMODEL_PRICES``) laid over it;
    read at start-up. Raises ``ValueError`` naming the setting, the file and the row when the
    file cannot be used, so that a misconfigured server does not start."""
    if not prices:
        return load_catalog()
    try:
        return apply_prices(load_catalog(), read_prices(prices))
    except CatalogError as exc:
        raise ValueError(f"COSTMODEL_PRICES: {exc}") from None


def get_catalog(app: Flask | None = None) -> Catalog:
    """The catalog every request of the app is resolved against (:func:`priced_catalog`)."""
    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    return app.extensions["costmodel"].get("catalog") or load_catalog()


def store_unavailable(exc: StoreError) -> HTTPException:
    """The 503 answering a request that needed the run store while it fails.

    The cause (with the database's location) goes to the log only; the client is told to retry.
    """
    _log.error("run store unavailable on %s %s: %s", request.method, request.path, exc)
    error = ServiceUnavailable()
    error.data = {  # type: ignore[attr-defined]  # read by ApiWithErrors, as abort() sets it
        "message": "the run store is unavailable, so the request was not completed; try again "
        "later",
        "headers": {"Retry-After": str(_RETRY_AFTER_S)},
    }
    return error


def _check_limits(document: Scenario | Plan, samples: int | None) -> None:
    """422 naming the limit when the request asks for more work than the service allows.

    Work = samples x utilisation levels (a plan: candidates) x horizon months bounds the time a
    request can hold a worker.
    """
    given = document.samples if samples is None else samples
    samples_path = "simulation.samples" if samples is None else "query.samples"
    wanted = document.max_draws(samples)  # doubling toward a target may add draws
    if wanted > given:
        samples_path = "simulation.max_samples"
    if isinstance(document, Plan):
        horizon, width = document.inputs.horizon_months, document.inputs.candidates
        what, where = "candidates", "own.servers"
    else:
        horizon = document.resolved.inputs.horizon_months
        width, what, where = len(document.resolved.inputs.utilisation), "levels", "utilisation"
    checks = [
        (samples_path, wanted, "MAX_SAMPLES", "samples per request"),
        ("horizon_months", horizon, "MAX_HORIZON", "months"),
        (
            where,
            wanted * width * horizon,
            "MAX_WORK",
            f"draw-{what[:-1]}-months (samples x {what} x months)",
        ),
    ]
    if not isinstance(document, Plan):
        checks.insert(2, ("utilisation", width, "MAX_LEVELS", "utilisation levels"))
    abort_over_limits(checks)


def abort_over_limits(checks: Sequence[tuple[str, int, str, str]]) -> None:
    """422 naming every limit exceeded: ``checks`` are (key path, value, setting, what is
    counted), the setting being the app config key of the limit (``MAX_SAMPLES``)."""
    config = current_app.config
    problems = [
        {
            "path": path,
            "message": f"{value:,} exceeds the limit of {config[key]:,} {what} (COSTMODEL_{key})",
        }
        for path, value, key, what in checks
        if value > config[key]
    ]
    if problems:
        abort(
            422,
            message="the request exceeds a limit of this service: "
            + "; ".join(p["message"] for p in problems),
            errors=problems,
        )


class ResultCache:
    """A small thread-safe LRU of results (one per process; workers do not share it).

    A result is a pure function of the scenario, seed, samples and catalog version, so an
    identical request can be answered from memory. Entries are keyed twice: by the SHA-256 of
    the raw body plus the query overrides (a hit skips parsing and validation), and by
    :meth:`scenarios.Scenario.key` (a hit skips the engine for a body that differs only in
    formatting). ``size`` 0 disables caching.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, Result | PlanResult] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Result | PlanResult | None:
        """The cached result for ``key``, or ``None``."""
        if self.size <= 0:
            return None
        with self._lock:
            result = self._items.get(key)
            if result is not None:
                self._items.move_to_end(key)
            return result

    def put(self, keys: tuple[str, ...], result: Result | PlanResult) -> None:
        """Remember ``result`` under every key of ``keys``, evicting the least recently used."""
        if self.size <= 0:
            return
        with self._lock:
            for key in keys:
                self._items[key] = result
                self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def _cache() -> ResultCache:
    return current_app.extensions["costmodel"]["cache"]


#: Where each kind of document is evaluated.
_ROUTES = {"scenario": "/v1/evaluate", "plan": "/v1/plans"}


def _document(data: object, kind: str | None) -> Scenario | Plan:
    """The scenario or plan of a request body; 422 with every key path when it cannot be run,
    or when it is not of ``kind`` (``None``: either)."""
    try:
        document = load_mapping(data, source="<request>", catalog=get_catalog())
    except ScenarioError as exc:
        count = len(exc.errors)
        shown = "; ".join(f"{e['path'] or '(body)'}: {e['message']}" for e in exc.errors[:5])
        abort(
            422,
            message=f"the {kind or 'document'} is invalid "
            f"({count} problem{'s' if count != 1 else ''}): "
            + shown
            + (" ..." if count > 5 else ""),
            errors=exc.errors,
        )
    except ArithmeticError as exc:
        # Extreme but finite numbers (e.g. a lognormal with sd/mean ~ 1e200) overflow while
        # the inputs are checked; the input is out of range, not the server broken.
        _log.warning("scenario validation overflowed: %r", exc)
        message = f"a number is out of the range the model handles: {exc}"
        abort(422, message=message, errors=[{"path": "", "message": message}])
    found = "plan" if isinstance(document, Plan) else "scenario"
    if kind is not None and found != kind:
        message = f"the body is a {found}; POST it to {_ROUTES[found]}"
        abort(422, message=message, errors=[{"path": "kind", "message": message}])
    return document


def evaluate_body(
    samples: int | None = None, seed: int | None = None, kind: str | None = "scenario"
) -> tuple[Result | PlanResult, bool]:
    """Validate the JSON body as a scenario or plan (``kind``; ``None``: either), check the
    limits and evaluate it.

    ``samples`` [draws] and ``seed`` override the ``simulation`` block. Returns the result and
    whether it came from the :class:`ResultCache`. An invalid body is answered 422 with every
    key path.
    """
    require_json_content_type()
    raw = request_body()
    cache = _cache()
    version = load_catalog().version
    body_key = (
        "body:"
        + hashlib.sha256(
            b"%s\0%s\0%s\0%s\0%s"
            % (str(samples).encode(), str(seed).encode(), str(kind).encode(), version.encode(), raw)
        ).hexdigest()
    )
    result = cache.get(body_key)
    if result is not None:
        return result, True
    document = _document(parse_json_body(raw), kind)
    _check_limits(document, samples)
    document_key = "document:" + document.key(samples, seed)
    result = cache.get(document_key)
    hit = result is not None
    if result is None:
        result = evaluate(document, samples=samples, seed=seed)
    cache.put((body_key, document_key), result)
    return result, hit
