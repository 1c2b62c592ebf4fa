"""What the views share: the run store of the app and the limited evaluation of a request body."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict

from flask import Flask, current_app, request

from pricing import CatalogError, load_catalog
from scenarios import Scenario, ScenarioError, load_mapping, run
from scenarios.store import RunStore, StoreError

from .errors import fail
from .jsonio import parse_json_body, require_json_content_type

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
                state["store"] = RunStore(app.config.get("COSTMODEL_DB"))
            except StoreError as exc:
                _log.error("run store unavailable: %s", exc)
                fail(503, "the run store is unavailable; see the server log")
        return state["store"]


def _check_limits(scenario: Scenario, samples: int | None) -> None:
    """422 naming the limit when the request asks for more work than the service allows.

    Work [draw-level-months] = samples x utilisation levels x horizon months bounds the time a
    request can hold a worker.
    """
    config = current_app.config
    wanted = scenario.samples if samples is None else samples
    horizon = scenario.resolved["horizon_months"]
    levels = len(scenario.resolved_inputs.inputs.utilisation)
    checks = (
        (
            "simulation.samples" if samples is None else "query.samples",
            wanted,
            "COSTMODEL_MAX_SAMPLES",
            "samples per request",
        ),
        ("horizon_months", horizon, "COSTMODEL_MAX_HORIZON", "months"),
        ("utilisation", levels, "COSTMODEL_MAX_LEVELS", "utilisation levels"),
        (
            "simulation.samples",
            wanted * levels * horizon,
            "COSTMODEL_MAX_WORK",
            "draw-level-months (samples x levels x months)",
        ),
    )
    problems = [
        {"path": path, "message": f"{value:,} exceeds the limit of {config[key]:,} {what} ({key})"}
        for path, value, key, what in checks
        if value > config[key]
    ]
    if problems:
        fail(
            422,
            "the request exceeds a limit of this service: "
            + "; ".join(p["message"] for p in problems),
            problems,
        )


class ResultCache:
    """A small thread-safe LRU of result JSON texts (one per process; workers do not share it).

    A result is a pure function of the scenario, seed, samples and catalog version (DESIGN
    practice 3), so an identical request can be answered from memory. Entries are keyed twice:
    by the SHA-256 of the raw body plus the query overrides (a hit skips parsing and
    validation), and by :meth:`scenarios.Scenario.key` (a hit skips the engine for a body that
    differs only in formatting). ``size`` 0 disables caching.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        """The cached JSON text for ``key``, or ``None``."""
        if self.size <= 0:
            return None
        with self._lock:
            text = self._items.get(key)
            if text is not None:
                self._items.move_to_end(key)
            return text

    def put(self, keys: tuple[str, ...], text: str) -> None:
        """Remember ``text`` under every key of ``keys``, evicting the least recently used."""
        if self.size <= 0:
            return
        with self._lock:
            for key in keys:
                self._items[key] = text
                self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def _cache() -> ResultCache:
    return current_app.extensions["costmodel"]["cache"]


def evaluate_body(samples: int | None = None, seed: int | None = None) -> tuple[str, bool]:
    """Validate the JSON body as a scenario, check the limits and run it.

    ``samples`` [draws] and ``seed`` override the scenario's ``simulation`` block. Returns the
    result contract (DESIGN sec. 5) as JSON text and whether it came from the
    :class:`ResultCache`. Invalid scenarios raise :class:`scenarios.ScenarioError`, which the
    error handlers answer 422 with every key path.
    """
    require_json_content_type()
    raw = request.get_data(cache=True)
    cache = _cache()
    version = load_catalog().version
    body_key = (
        "body:"
        + hashlib.sha256(
            b"%s\0%s\0%s\0%s" % (str(samples).encode(), str(seed).encode(), version.encode(), raw)
        ).hexdigest()
    )
    text = cache.get(body_key)
    if text is not None:
        return text, True
    data = parse_json_body(raw)
    try:
        scenario = load_mapping(data, source="<request>")
    except CatalogError as exc:
        # The catalog loaded (above), so this is a lookup the scenario asked for and the
        # catalog cannot answer (e.g. no scaling data for that GPU count): the client's to fix.
        raise ScenarioError("<request>", [{"path": "", "message": str(exc)}]) from None
    except ArithmeticError as exc:
        # Extreme but finite numbers (e.g. a lognormal with sd/mean ~ 1e200) overflow while
        # the inputs are checked; the input is out of range, not the server broken.
        _log.warning("scenario validation overflowed: %r", exc)
        raise ScenarioError(
            "<request>",
            [{"path": "", "message": f"a number is out of the range the model handles: {exc}"}],
        ) from None
    _check_limits(scenario, samples)
    scenario_key = "scenario:" + scenario.key(samples, seed)
    text = cache.get(scenario_key)
    hit = text is not None
    if text is None:
        result = run(scenario, samples=samples, seed=seed)
        text = current_app.json.dumps(result)
    cache.put((body_key, scenario_key), text)
    return text, hit
