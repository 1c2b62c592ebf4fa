"""What the views share: the run store of the app, and the limited evaluation of a request body
with its cache of answers."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict

from flask import Flask, Response, current_app, request
from flask_smorest import abort
from werkzeug.exceptions import HTTPException, ServiceUnavailable

from present import Answer, to_dict
from pricing import (
    Catalog,
    CatalogError,
    PriceEntry,
    ServingPoint,
    apply_prices,
    apply_serving,
    load_catalog,
    read_prices,
    read_serving,
)
from pricing.text import counted
from scenarios import Plan, Scenario, ScenarioError, evaluate, load_mapping
from scenarios.store import MaybeStored, RunStore, StoreError

from .deadline import RETRY_AFTER_S, check_deadline, engine_progress
from .jsonio import parse_json_body, request_body, require_json_content_type
from .limits import check_document

__all__ = [
    "ResultCache",
    "evaluate_body",
    "get_catalog",
    "get_store",
    "json_response",
    "priced_catalog",
    "request_document",
    "result_json",
    "store_unavailable",
    "store_write_problem",
]

_log = logging.getLogger("api")
_STORE_LOCK = threading.Lock()


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


#: How long the outcome of a write probe of the run store is trusted [s].
_PROBE_TTL_S = 5.0


def store_write_problem(app: Flask | None = None) -> StoreError | None:
    """Why the run store refuses writes, or ``None`` when it takes them: a probe write
    (:meth:`RunStore.check_writable`) at most every few seconds per process. A store that
    cannot even be opened or read raises :class:`StoreError`."""
    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    state = app.extensions["costmodel"]
    store = get_store(app)
    store.count()  # reads first: a store that does not answer at all is "unavailable"
    now = time.monotonic()
    probed = state.get("probe")
    if probed is None or now - probed[0] > _PROBE_TTL_S:
        try:
            store.check_writable()
            problem = None
        except StoreError as exc:
            problem = exc
        probed = state["probe"] = (now, problem)
    return probed[1]


def priced_catalog(
    prices: str | None, serving: str | None = None
) -> tuple[Catalog, tuple[PriceEntry, ...], tuple[ServingPoint, ...]]:
    """The shipped catalog with the operator's prices file (``COSTMODEL_PRICES``) and serving
    file (``COSTMODEL_SERVING``, its rows before the catalog's) laid over it, and the entries
    of those files (which a job's worker lays over its own catalog); read at start-up. Raises
    ``ValueError`` naming the setting, the file and the row when a file cannot be used, so
    that a misconfigured server does not start."""
    try:
        entries = read_prices(prices) if prices else ()
        catalog = apply_prices(load_catalog(), entries)
    except CatalogError as exc:
        raise ValueError(f"COSTMODEL_PRICES: {exc}") from None
    try:
        points = read_serving(serving) if serving else ()
        catalog = apply_serving(catalog, points)
    except CatalogError as exc:
        raise ValueError(f"COSTMODEL_SERVING: {exc}") from None
    return catalog, entries, points


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
    message = "the run store is unavailable, so the request was not completed; try again later"
    if isinstance(exc, MaybeStored):
        message = (
            "the run store failed while committing the run and could not be asked afterwards "
            f"whether it took it: the run may be stored as {exc.run_id}. GET "
            f"/v1/runs/{exc.run_id} before sending the request again, or send it again with "
            "the same Idempotency-Key, which stores it once"
        )
    error.data = {  # type: ignore[attr-defined]  # read by ApiWithErrors, as abort() sets it
        "message": message,
        "headers": {"Retry-After": str(RETRY_AFTER_S)},
    }
    return error


class ResultCache:
    """A small thread-safe LRU of results as the JSON the API answers with (one per process;
    workers do not share it), bounded by ``entries`` results and ``size`` bytes.

    A result is a pure function of the scenario, seed, samples and catalog version, so an
    identical request can be answered from memory, without evaluating or serialising it again.
    A result is kept under :meth:`scenarios.Scenario.key` (a hit skips the engine for a body that
    differs only in formatting) and found also by the SHA-256 of the raw body plus the query
    overrides (a hit skips parsing and validation). The scenario or plan of a body is kept too,
    by the SHA-256 of the body alone (up to ``entries`` of them), so that the same body with
    other ``samples`` or ``seed`` is not parsed, validated and resolved again. ``entries`` or
    ``size`` 0 disables caching; a result larger than ``size`` is not kept.
    """

    def __init__(self, entries: int, size: int) -> None:
        self.entries = entries
        self.size = size
        self._results: OrderedDict[str, bytes] = OrderedDict()
        self._aliases: OrderedDict[str, str] = OrderedDict()
        self._documents: OrderedDict[str, Scenario | Plan] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        """Bytes of the results kept [byte]."""
        return self._bytes

    def get(self, key: str) -> bytes | None:
        """The cached JSON for a document key or a body key, or ``None``."""
        with self._lock:
            key = self._aliases.get(key, key)
            payload = self._results.get(key)
            if payload is not None:
                self._results.move_to_end(key)
            return payload

    def put(self, payload: bytes, key: str, *aliases: str) -> None:
        """Keep ``payload`` under ``key``, found also by ``aliases``; the least recently used
        results go when there are more than ``entries`` or more than ``size`` bytes."""
        if self.entries <= 0 or len(payload) > self.size:
            return
        with self._lock:
            old = self._results.pop(key, None)
            self._bytes += len(payload) - (len(old) if old is not None else 0)
            self._results[key] = payload
            for alias in aliases:
                self._aliases[alias] = key
                self._aliases.move_to_end(alias)
            while len(self._results) > self.entries or self._bytes > self.size:
                _, dropped = self._results.popitem(last=False)
                self._bytes -= len(dropped)
            while len(self._aliases) > self.entries:
                self._aliases.popitem(last=False)

    def document(self, body: str) -> Scenario | Plan | None:
        """The scenario or plan parsed from the body of hash ``body``, or ``None``."""
        with self._lock:
            document = self._documents.get(body)
            if document is not None:
                self._documents.move_to_end(body)
            return document

    def keep_document(self, body: str, document: Scenario | Plan) -> None:
        """Keep the ``document`` parsed from the body of hash ``body`` (the last ``entries``)."""
        if self.entries <= 0 or self.size <= 0:
            return
        with self._lock:
            self._documents[body] = document
            self._documents.move_to_end(body)
            while len(self._documents) > self.entries:
                self._documents.popitem(last=False)


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
            f"({counted(count, 'problem')}): " + shown + (" ..." if count > 5 else ""),
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


def result_json(result: Answer) -> bytes:
    """The JSON answer of a result, as Flask writes it (compact, UTF-8, a final newline)."""
    text = current_app.json.dumps(to_dict(result), separators=(",", ":"))
    return (text + "\n").encode("utf-8")


def json_response(payload: bytes, headers: dict[str, str] | None = None) -> Response:
    """A 200 response of JSON already written (:func:`result_json`)."""
    return current_app.response_class(payload, mimetype="application/json", headers=headers)


def _body_hash(kind: str | None) -> str:
    """What identifies the JSON body as a document of ``kind``: its bytes and the catalog."""
    require_json_content_type()
    return _sha256(str(kind).encode(), load_catalog().version.encode(), request_body())


def request_document(kind: str | None = "scenario") -> Scenario | Plan:
    """The scenario or plan of the JSON body (``kind``; ``None``: either), validated and
    resolved once per body (:class:`ResultCache`); 415 for another content type, 400 for
    malformed JSON, 422 with every key path for an invalid document."""
    cache = _cache()
    body = _body_hash(kind)
    document = cache.document(body)
    if document is None:
        document = _document(parse_json_body(request_body()), kind)
        cache.keep_document(body, document)
    return document


def evaluate_body(
    samples: int | None = None, seed: int | None = None, kind: str | None = "scenario"
) -> tuple[bytes, bool]:
    """Validate the JSON body as a scenario or plan (``kind``; ``None``: either), check the
    limits and evaluate it, within the request's deadline.

    ``samples`` [draws] and ``seed`` override the ``simulation`` block. Returns the result as
    JSON (:func:`result_json`) and whether it came from the :class:`ResultCache`. An invalid
    body is answered 422 with every key path, a request over a limit 422 naming it, and one
    past its deadline 503 (:mod:`api.deadline`).
    """
    cache = _cache()
    body_key = "body:" + _sha256(
        str(samples).encode(), str(seed).encode(), _body_hash(kind).encode()
    )
    payload = cache.get(body_key)
    if payload is not None:
        return payload, True
    document = request_document(kind)
    check_document(document, samples)
    what = "plan" if isinstance(document, Plan) else "scenario"
    check_deadline(f"validating the {what}")
    document_key = "document:" + document.key(samples, seed)
    payload = cache.get(document_key)
    hit = payload is not None
    if payload is None:
        phase = f"evaluating the {what}"
        result = evaluate(document, samples=samples, seed=seed, progress=engine_progress(phase))
        check_deadline(phase)
        payload = result_json(result)
        check_deadline("writing the result")
    cache.put(payload, document_key, body_key)
    return payload, hit


def _sha256(*parts: bytes) -> str:
    """SHA-256 (hex) of ``parts`` joined by NUL bytes."""
    return hashlib.sha256(b"\0".join(parts)).hexdigest()
