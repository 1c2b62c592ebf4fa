"""Configuration of the HTTP service: defaults, environment variables and app-config overrides.

Precedence: the ``config`` mapping given to :func:`api.create_app` wins over the environment,
which wins over :data:`DEFAULTS`. Every limit is named in the 4xx message it causes, so a client
can tell which setting refused the request.

============================== ================================ ===========================
app config key                 environment variable             default
============================== ================================ ===========================
``COSTMODEL_DB``               ``COSTMODEL_DB``                 per-user data directory
``COSTMODEL_API_KEYS``         ``COSTMODEL_API_KEYS``           none (open service)
``MAX_CONTENT_LENGTH``         ``COSTMODEL_MAX_CONTENT_LENGTH`` 1 MiB [byte]
``COSTMODEL_MAX_SAMPLES``      ``COSTMODEL_MAX_SAMPLES``        200,000 [draws per request]
``COSTMODEL_MAX_HORIZON``      ``COSTMODEL_MAX_HORIZON``        240 [month]
``COSTMODEL_MAX_LEVELS``       ``COSTMODEL_MAX_LEVELS``         101 [utilisation levels]
``COSTMODEL_MAX_WORK``         ``COSTMODEL_MAX_WORK``           5e8 [samples x levels x months]
``COSTMODEL_MAX_PAGE_SIZE``    ``COSTMODEL_MAX_PAGE_SIZE``      100 [runs per page]
``COSTMODEL_RESULT_CACHE``     ``COSTMODEL_RESULT_CACHE``       128 [results per process]; 0: off
============================== ================================ ===========================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULTS", "load_config", "parse_api_keys"]

#: Numeric limits and their defaults. Horizon and levels default to the scenario schema's own
#: caps (240 months, 101 levels); a deployment may only tighten them.
DEFAULTS: dict[str, int] = {
    "MAX_CONTENT_LENGTH": 1024 * 1024,
    "COSTMODEL_MAX_SAMPLES": 200_000,
    "COSTMODEL_MAX_HORIZON": 240,
    "COSTMODEL_MAX_LEVELS": 101,
    "COSTMODEL_MAX_WORK": 500_000_000,
    "COSTMODEL_MAX_PAGE_SIZE": 100,
    "COSTMODEL_RESULT_CACHE": 128,
}

_ENV_NAMES = {
    "MAX_CONTENT_LENGTH": "COSTMODEL_MAX_CONTENT_LENGTH",
    "COSTMODEL_MAX_SAMPLES": "COSTMODEL_MAX_SAMPLES",
    "COSTMODEL_MAX_HORIZON": "COSTMODEL_MAX_HORIZON",
    "COSTMODEL_MAX_LEVELS": "COSTMODEL_MAX_LEVELS",
    "COSTMODEL_MAX_WORK": "COSTMODEL_MAX_WORK",
    "COSTMODEL_MAX_PAGE_SIZE": "COSTMODEL_MAX_PAGE_SIZE",
    "COSTMODEL_RESULT_CACHE": "COSTMODEL_RESULT_CACHE",
}
_MINIMA = {"COSTMODEL_RESULT_CACHE": 0}

# Ceilings that the engine's schema enforces anyway; a larger setting would be meaningless.
_CEILINGS = {"COSTMODEL_MAX_HORIZON": 240, "COSTMODEL_MAX_LEVELS": 101}


def parse_api_keys(value: Any) -> tuple[str, ...]:
    """API keys from a comma-separated string or a sequence of strings; blanks are dropped."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    keys = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"COSTMODEL_API_KEYS entries must be strings, got {item!r}")
        if item.strip():
            keys.append(item.strip())
    return tuple(keys)


def _checked_int(key: str, value: Any) -> int:
    minimum = _MINIMA.get(key, 1)
    what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be {what}, got {value!r}") from None
    if isinstance(value, bool) or number < minimum:
        raise ValueError(f"{key} must be {what}, got {value!r}")
    ceiling = _CEILINGS.get(key)
    if ceiling is not None and number > ceiling:
        raise ValueError(f"{key} must be at most {ceiling} (the scenario schema's cap)")
    return number


def load_config(overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The service settings: defaults, then environment variables, then ``overrides``.

    Returns a dict ready for ``app.config.update``. Raises ``ValueError`` naming the setting
    when a limit is not a valid integer, so a misconfigured server fails at start-up.
    """
    overrides = dict(overrides or {})
    config: dict[str, Any] = {}
    for key, default in DEFAULTS.items():
        env = os.environ.get(_ENV_NAMES[key], "").strip()
        raw = overrides.get(key, env or default)
        config[key] = _checked_int(key, raw)
    db = overrides.get("COSTMODEL_DB", os.environ.get("COSTMODEL_DB", "").strip() or None)
    config["COSTMODEL_DB"] = os.fspath(db) if db is not None else None
    config["COSTMODEL_API_KEYS"] = parse_api_keys(
        overrides.get("COSTMODEL_API_KEYS", os.environ.get("COSTMODEL_API_KEYS"))
    )
    for key, value in overrides.items():
        config.setdefault(key, value)
    return config
