"""The one error shape of the API and the handlers that produce it (DESIGN practice 9).

Every 4xx and 5xx answer is ``{"code": 422, "status": "Unprocessable Entity", "message": "...",
"errors": [{"path": "buy.pue", "message": "..."}]}``; a 500 also carries ``error_id``, the
reference under which the traceback was logged. No traceback ever leaves the server.
"""

from __future__ import annotations

import http
import logging
import secrets
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

from flask import Flask, current_app, request
from marshmallow import Schema, fields
from werkzeug.exceptions import HTTPException, InternalServerError

from scenarios import ScenarioError

__all__ = ["ApiError", "ErrorSchema", "error_body", "fail", "register_error_handlers"]

_log = logging.getLogger("api")


class ErrorItemSchema(Schema):
    """One problem: where (dotted key path) and what."""

    path = fields.String(
        required=True,
        metadata={
            "description": "dotted key path into the request ('buy.pue', 'query.samples'); "
            "'' for the whole request",
            "example": "buy.pue",
        },
    )
    message = fields.String(
        required=True,
        metadata={"example": "values must lie in [1, 5], but this input spans [0.9, 1.2]"},
    )


class ErrorSchema(Schema):
    """The error payload of every 4xx and 5xx response."""

    code = fields.Integer(required=True, metadata={"description": "HTTP status code"})
    status = fields.String(
        required=True, metadata={"description": "HTTP status phrase", "example": "Not Found"}
    )
    message = fields.String(required=True, metadata={"description": "what went wrong"})
    errors = fields.List(
        fields.Nested(ErrorItemSchema),
        required=True,
        metadata={"description": "one entry per problem, with its key path"},
    )
    error_id = fields.String(
        metadata={"description": "500 only: the reference under which the error was logged"}
    )


class ApiError(HTTPException):
    """An HTTP error with the API's message, field errors and extra headers."""

    def __init__(
        self,
        code: int,
        message: str,
        errors: Iterable[Mapping[str, Any]] = (),
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(description=message)
        self.code = code
        self.message = message
        self.errors = [{"path": str(e["path"]), "message": str(e["message"])} for e in errors]
        self.extra_headers = dict(headers or {})

    @property
    def name(self) -> str:  # type: ignore[override]
        """The status phrase of ``code``."""
        return _phrase(self.code)


def _phrase(code: int) -> str:
    try:
        return http.HTTPStatus(code).phrase
    except ValueError:
        return "Error"


def fail(
    code: int,
    message: str,
    errors: Iterable[Mapping[str, Any]] = (),
    headers: Mapping[str, str] | None = None,
) -> NoReturn:
    """Abort the request with an :class:`ApiError`."""
    raise ApiError(code, message, errors, headers)


def error_body(
    code: int, message: str, errors: Iterable[Mapping[str, Any]] = (), **extra: Any
) -> dict[str, Any]:
    """The error payload for ``code``."""
    body = {
        "code": code,
        "status": _phrase(code),
        "message": message,
        "errors": [{"path": str(e["path"]), "message": str(e["message"])} for e in errors],
    }
    body.update(extra)
    return body


def _flatten(messages: Any, path: str, out: list[dict[str, str]]) -> None:
    """webargs/marshmallow messages ({"query": {"page": ["..."]}}) to [{path, message}]."""
    if isinstance(messages, Mapping):
        for key, value in messages.items():
            if key == "_schema":
                _flatten(value, path, out)
            else:
                if isinstance(key, int):
                    child = f"{path}[{key}]"
                else:
                    child = f"{path}.{key}" if path else str(key)
                _flatten(value, child, out)
    elif isinstance(messages, list | tuple):
        for item in messages:
            _flatten(item, path, out)
    else:
        out.append({"path": path, "message": str(messages)})


def _default_message(error: HTTPException) -> str:
    code = error.code or 500
    if code == 404:
        return f"{request.path} is not a resource of this API; see /openapi.json"
    if code == 405:
        allowed = ", ".join(sorted(getattr(error, "valid_methods", None) or ()))
        return f"method {request.method} is not allowed on {request.path}" + (
            f"; allowed: {allowed}" if allowed else ""
        )
    if code == 413:
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        return f"request body exceeds the limit of {limit} bytes (MAX_CONTENT_LENGTH)"
    if code == 400:
        return "bad request"
    return _phrase(code).lower()


def _handle_http(error: HTTPException) -> tuple[dict[str, Any], int, dict[str, str]]:
    code = error.code or 500
    if isinstance(error, ApiError):  # raised on purpose, e.g. 503 for an unusable store
        return error_body(code, error.message, error.errors), code, error.extra_headers
    if code >= 500:
        return _handle_unexpected(error)
    headers: dict[str, str] = {}
    if code == 405:
        valid = getattr(error, "valid_methods", None)
        if valid:
            headers["Allow"] = ", ".join(sorted(valid))
    data = getattr(error, "data", None) or {}  # webargs' abort (query-string validation)
    errors: list[dict[str, str]] = []
    if "messages" in data:
        for location, messages in data["messages"].items():
            _flatten(messages, location if location != "json" else "", errors)
        message = "invalid request parameters: " + "; ".join(
            f"{e['path']}: {e['message']}" for e in errors
        )
    else:
        message = _default_message(error)
    return error_body(code, message, errors), code, headers


def _handle_scenario(error: ScenarioError) -> tuple[dict[str, Any], int]:
    count = len(error.errors)
    message = (
        f"the scenario is invalid ({count} problem{'s' if count != 1 else ''}): "
        + "; ".join(f"{e['path'] or '(document)'}: {e['message']}" for e in error.errors[:5])
        + (" ..." if count > 5 else "")
    )
    return error_body(422, message, error.errors), 422


def _handle_unexpected(error: BaseException) -> tuple[dict[str, Any], int, dict[str, str]]:
    error_id = secrets.token_hex(8)
    original = getattr(error, "original_exception", None) or error
    _log.error(
        "unexpected error %s on %s %s",
        error_id,
        request.method,
        request.path,
        exc_info=(type(original), original, original.__traceback__),
    )
    body = error_body(
        500,
        f"internal server error; it was logged with id {error_id} (quote it when reporting)",
        error_id=error_id,
    )
    return body, 500, {}


def register_error_handlers(app: Flask) -> None:
    """Route every error of ``app`` to the one JSON error shape."""
    app.register_error_handler(HTTPException, _handle_http)
    app.register_error_handler(ScenarioError, _handle_scenario)
    app.register_error_handler(InternalServerError, _handle_unexpected)
    app.register_error_handler(Exception, _handle_unexpected)
