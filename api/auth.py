"""API keys: ``Authorization: Bearer <key>`` when ``COSTMODEL_API_KEYS`` is set.

Runs are owned by ``"sha256:" + sha256(key)``; the key itself is never stored or logged. Keys
are compared in constant time (digests of equal length through :func:`hmac.compare_digest`).
"""

from __future__ import annotations

import hashlib
import hmac

from flask import current_app, request
from flask_smorest import abort

__all__ = ["owner_of_key", "require_owner"]


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def owner_of_key(key: str) -> str:
    """The owner id stored with a key's runs: ``sha256:<hex digest of the key>``."""
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def _unauthorised(message: str, error: str | None = None) -> None:
    challenge = 'Bearer realm="costmodel"' + (f', error="{error}"' if error else "")
    abort(
        401,
        message=message,
        errors=[{"path": "headers.Authorization", "message": message}],
        headers={"WWW-Authenticate": challenge},
    )


def require_owner() -> str | None:
    """The owner of the request, or ``None`` when the service runs without API keys.

    With keys configured, a request without a valid ``Authorization: Bearer <key>`` header is
    answered 401 with a ``WWW-Authenticate: Bearer`` challenge.
    """
    keys: tuple[str, ...] = current_app.config.get("API_KEYS", ())
    if not keys:
        return None
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        _unauthorised("an API key is required: send 'Authorization: Bearer <key>'")
    given = _digest(token)
    matched = False
    for key in keys:  # no early exit: time does not depend on which key matched
        matched |= hmac.compare_digest(given, _digest(key))
    if not matched:
        _unauthorised("the API key is not valid", "invalid_token")
    return owner_of_key(token)
