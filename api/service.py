"""What the views share: the run store of the app and the limited evaluation of a request body."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict

from flask import Flask, current_app
from flask_smorest import abort

from costmodel.result import Result
from pricing import load_catalog
from scenarios import Scenario, ScenarioError, evaluate, load_mapping
from scenarios.store import RunStore, StoreError

from .jsonio import parse_json_body, request_body, require_json_content_type

__all__ = ["ResultCache", "evaluate_body", "get_store"]

_log = logging.getLogger("api")
_STORE_LOCK = threading.Lock()


def get_store(app: Flask | None = None) -> RunStore:
    """The app's :class:`RunStore`, opened on first use at ``COSTMODEL_DB``.

    A store that cannot be opened is answered 503 (and retried on the next request).
    """
    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    state = app.extensions["costmodel"]
    store = state.get("store")
    if store is not None:
        return store
    with _STORE_LOCK:
        if state.get("store") is None:
            try:
                state["store"] = RunStore(app.config.get("DB"))
            except StoreError as exc:
                _log.error("run store unavailable: %s", exc)
                abort(503, message="the run store is unavailable; see the server log")
        return state["store"]


def _check_limits(scenario: Scenario, samples: int | None) -> None:
    """422 naming the limit when the request asks for more work than the service allows.

    Work [draw-level-months] = samples x utilisation levels x horizon months bounds the time a
    request can hold a worker.
    """
    config = current_app.config
    wanted = scenario.samples if samples is None else samples
    horizon = scenario.resolved.inputs.horizon_months
    levels = len(scenario.resolved.inputs.utilisation)
    checks = (
        (
            "simulation.samples" if samples is None else "query.samples",
            wanted,
            "MAX_SAMPLES",
            "samples per request",
        ),
        ("horizon_months", horizon, "MAX_HORIZON", "months"),
        ("utilisation", levels, "MAX_LEVELS", "utilisation levels"),
        (
            "simulation.samples",
            wanted * levels * horizon,
            "MAX_WORK",
            "draw-level-months (samples x levels x months)",
        ),
    )
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
        self._items: OrderedDict[str, Result] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Result | None:
        """The cached result for ``key``, or ``None``."""
        if self.size <= 0:
            return None
        with self._lock:
            result = self._items.get(key)
            if result is not None:
                self._items.move_to_end(key)
            return result

    def put(self, keys: tuple[str, ...], result: Result) -> None:
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


def _scenario(data: object) -> Scenario:
    """The scenario of a request body; 422 with every key path when it cannot be run."""
    try:
        return load_mapping(data, source="<request>")
    except ScenarioError as exc:
        count = len(exc.errors)
        shown = "; ".join(f"{e['path'] or '(body)'}: {e['message']}" for e in exc.errors[:5])
        abort(
            422,
            message=f"the scenario is invalid ({count} problem{'s' if count != 1 else ''}): "
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


def evaluate_body(samples: int | None = None, seed: int | None = None) -> tuple[Result, bool]:
    """Validate the JSON body as a scenario, check the limits and evaluate it.

    ``samples`` [draws] and ``seed`` override the scenario's ``simulation`` block. Returns the
    result and whether it came from the :class:`ResultCache`. An invalid scenario is answered
    422 with every key path.
    """
    require_json_content_type()
    raw = request_body()
    cache = _cache()
    version = load_catalog().version
    body_key = (
        "body:"
        + hashlib.sha256(
            b"%s\0%s\0%s\0%s" % (str(samples).encode(), str(seed).encode(), version.encode(), raw)
        ).hexdigest()
    )
    result = cache.get(body_key)
    if result is not None:
        return result, True
    scenario = _scenario(parse_json_body(raw))
    _check_limits(scenario, samples)
    scenario_key = "scenario:" + scenario.key(samples, seed)
    result = cache.get(scenario_key)
    hit = result is not None
    if result is None:
        result = evaluate(scenario, samples=samples, seed=seed)
    cache.put((body_key, scenario_key), result)
    return result, hit
