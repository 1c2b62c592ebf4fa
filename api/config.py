"""Configuration of the HTTP service: defaults, ``COSTMODEL_*`` environment variables and the
``config`` mapping given to :func:`api.create_app`, in that order of precedence (last wins).

Environment variables are read with Flask's ``config.from_prefixed_env("COSTMODEL")``, so
``COSTMODEL_MAX_SAMPLES=50000`` sets ``MAX_SAMPLES``; values are JSON where they parse as JSON.
Every limit is named in the 4xx message it causes, so a client can tell which setting refused
the request.

``DB`` is a SQLite file path (also ``sqlite:///PATH``) or a ``postgresql://`` URL (the
``postgres`` extra); any other form stops the server at start-up. ``DB_POOL_SIZE`` bounds the
PostgreSQL connections of each worker process; SQLite ignores it.

``PRICES`` is the path of the operator's own prices file (CSV or YAML, see docs/prices.md), laid
over the shipped catalog for every request; it is read once, at start-up, and a file that cannot
be read or names an unknown id stops the server there. ``SERVING`` is likewise the path of the
operator's own serving measurements (a CSV written by ``costmodel serving import``, see
docs/serving-benchmarks.md), whose rows come before the catalog's.

======================= ================================== ==================================
app config key          environment variable               default
======================= ================================== ==================================
``DB``                  ``COSTMODEL_DB``                   per-user data directory
``DB_POOL_SIZE``        ``COSTMODEL_DB_POOL_SIZE``         4 [connections per process]
``API_KEYS``            ``COSTMODEL_API_KEYS``             none (an open service)
``MAX_CONTENT_LENGTH``  ``COSTMODEL_MAX_CONTENT_LENGTH``   1 MiB [byte]
``MAX_SAMPLES``         ``COSTMODEL_MAX_SAMPLES``          200,000 [draws per request]
``MAX_HORIZON``         ``COSTMODEL_MAX_HORIZON``          240 [month]
``MAX_LEVELS``          ``COSTMODEL_MAX_LEVELS``           101 [utilisation levels]
``MAX_WORK``            ``COSTMODEL_MAX_WORK``             5e8 [unit of work, see api.limits]
``MAX_CANDIDATES``      ``COSTMODEL_MAX_CANDIDATES``       10,201 [candidates per plan]
``MAX_RESULT_BYTES``    ``COSTMODEL_MAX_RESULT_BYTES``     16 MiB [byte of a plan's result]
``MAX_PAGE_SIZE``       ``COSTMODEL_MAX_PAGE_SIZE``        100 [runs per page]
``RESULT_CACHE``        ``COSTMODEL_RESULT_CACHE``         128 [results per process]; 0: off
``RESULT_CACHE_BYTES``  ``COSTMODEL_RESULT_CACHE_BYTES``   64 MiB [byte per process]
``DEADLINE``            ``COSTMODEL_DEADLINE``             20 [s per request]
``PRICES``              ``COSTMODEL_PRICES``               none (the catalog's prices)
``SERVING``             ``COSTMODEL_SERVING``              none (the catalog's measurements)
``MAX_JOB_WORK``        ``COSTMODEL_MAX_JOB_WORK``         5e10 [unit of work of a job]
``MAX_MEMORY``          ``COSTMODEL_MAX_MEMORY``           1 GiB [byte an evaluation holds]
``JOB_WORKERS``         ``COSTMODEL_JOB_WORKERS``          1 [jobs per process at once]; 0: off
``JOB_CONCURRENCY``     ``COSTMODEL_JOB_CONCURRENCY``      1 [jobs per server at once]
``MAX_QUEUED_JOBS``     ``COSTMODEL_MAX_QUEUED_JOBS``      4 [unfinished jobs per key or address]
``JOB_LEASE``           ``COSTMODEL_JOB_LEASE``            30 [s without a heartbeat]
``DASK_SCHEDULER``      ``COSTMODEL_DASK_SCHEDULER``       none (jobs run in local processes)
======================= ================================== ==================================

``DEADLINE`` must stay below the server's own timeout (gunicorn ``--timeout``, 30 s by default):
a request still running when it passes is answered 503 in the error shape and stores nothing,
rather than being killed by the server mid-way. A run asking for more work than ``MAX_WORK``
(up to ``MAX_JOB_WORK``) is a job instead (:mod:`api.runs.jobs`), which no deadline bounds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from typing import Any

from costmodel.inputs import MAX_LEVELS, ModelInputs, input_fields
from scenarios.store import DEFAULT_POOL_SIZE, parse_location

__all__ = ["DEFAULTS", "DEFAULT_DEADLINE_S", "ENV_PREFIX", "check_config", "parse_api_keys"]

ENV_PREFIX = "COSTMODEL"
_HORIZON = input_fields(ModelInputs)["horizon_months"].metadata["bound"]

#: Numeric limits and their defaults. Horizon and levels default to the engine's own caps;
#: a deployment may only tighten them.
DEFAULTS: dict[str, int] = {
    "MAX_CONTENT_LENGTH": 1024 * 1024,
    "MAX_SAMPLES": 200_000,
    "MAX_HORIZON": int(_HORIZON.high),
    "MAX_LEVELS": MAX_LEVELS,
    "MAX_WORK": 500_000_000,
    "MAX_CANDIDATES": 101 * 101,
    "MAX_RESULT_BYTES": 16 * 1024 * 1024,
    "MAX_PAGE_SIZE": 100,
    "RESULT_CACHE": 128,
    "RESULT_CACHE_BYTES": 64 * 1024 * 1024,
    "DB_POOL_SIZE": DEFAULT_POOL_SIZE,
    "MAX_JOB_WORK": 50_000_000_000,
    "MAX_MEMORY": 1024**3,
    "JOB_WORKERS": 1,
    "JOB_CONCURRENCY": 1,
    "MAX_QUEUED_JOBS": 4,
}
#: The deadline of a request [s], below gunicorn's default timeout of 30 s.
DEFAULT_DEADLINE_S = 20.0
#: How long a running job may go without a heartbeat before it is taken back [s].
DEFAULT_JOB_LEASE_S = 30.0
_SECONDS = {"DEADLINE": DEFAULT_DEADLINE_S, "JOB_LEASE": DEFAULT_JOB_LEASE_S}
_MINIMA = {"RESULT_CACHE": 0, "RESULT_CACHE_BYTES": 0, "JOB_WORKERS": 0}
_CEILINGS = {"MAX_HORIZON": int(_HORIZON.high), "MAX_LEVELS": MAX_LEVELS}


def parse_api_keys(value: Any) -> tuple[str, ...]:
    """API keys from a comma-separated string or a sequence of strings; blanks are dropped."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    keys = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"{ENV_PREFIX}_API_KEYS entries must be strings, got {item!r}")
        if item.strip():
            keys.append(item.strip())
    return tuple(keys)


def _checked_int(key: str, value: Any) -> int:
    minimum = _MINIMA.get(key, 1)
    what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    name = f"{ENV_PREFIX}_{key}"
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {what}, got {value!r}") from None
    if number < minimum:
        raise ValueError(f"{name} must be {what}, got {value!r}")
    ceiling = _CEILINGS.get(key)
    if ceiling is not None and number > ceiling:
        raise ValueError(f"{name} must be at most {ceiling} (the engine's own cap)")
    return number


def _checked_seconds(key: str, value: Any) -> float:
    name = f"{ENV_PREFIX}_{key}"
    number = None if isinstance(value, bool) else value
    try:
        number = float(number)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = None
    if number is None or not 0 < number < float("inf"):
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    return number


def check_config(config: MutableMapping[str, Any], overrides: Mapping[str, Any]) -> None:
    """Apply ``overrides`` and normalise the settings in place.

    Raises ``ValueError`` naming the setting when a limit is not a valid integer, the keys are
    not strings or the run store location is not a supported form (or needs a driver that is
    not installed), so a misconfigured server fails at start-up. Nothing is opened.
    """
    config.update(overrides)
    for key in DEFAULTS:
        config[key] = _checked_int(key, config[key])
    for key, default in _SECONDS.items():
        config[key] = _checked_seconds(key, config.get(key, default))
    db = config.get("DB")
    db = os.fspath(db) if isinstance(db, os.PathLike) else db
    config["DB"] = str(db).strip() if db is not None and str(db).strip() else None
    try:
        parse_location(config["DB"])
    except ValueError as exc:
        raise ValueError(f"{ENV_PREFIX}_DB: {exc}") from None
    config["API_KEYS"] = parse_api_keys(config.get("API_KEYS"))
    for key in ("PRICES", "SERVING"):  # a file's path, or None
        path = config.get(key)
        path = os.fspath(path) if isinstance(path, os.PathLike) else path
        config[key] = str(path).strip() if path is not None and str(path).strip() else None
    dask = config.get("DASK_SCHEDULER")
    config["DASK_SCHEDULER"] = str(dask).strip() if dask is not None and str(dask).strip() else None
