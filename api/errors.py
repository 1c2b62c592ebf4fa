"""The one error shape of the API, produced by flask-smorest's HTTP-exception handler.

Every 4xx and 5xx answer is ``{"code": 422, "status": "Unprocessable Entity", "message": "...",
"errors": [{"path": "buy.pue", "message": "..."}]}``; a 500 also carries ``error_id``, the
reference under which the traceback was logged. Views fail with
``flask_smorest.abort(code, message=..., errors=[...], headers={...})``; webargs' validation
errors and Werkzeug's own (404, 405, 413) arrive through the same handler. No traceback ever
leaves the server.
"""

from __future__ import annotations

import http
import logging
import secrets
from typing import Any

from flask import current_app, jsonify, request
from flask_smorest import Api
from marshmallow import Schema, fields
from werkzeug.exceptions import HTTPException

from scenarios.errors import flatten_messages

__all__ = ["ApiWithErrors", "ErrorSchema", "error_body", "unexpected_error"]

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
        metadata={"example": "values must lie in [1, 5] [-], but this input spans [0.9, 1.2]"},
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


def _phrase(code: int) -> str:
    try:
        return http.HTTPStatus(code).phrase
    except ValueError:
        return "Error"


def error_body(
    code: int, message: str, errors: Any = (), error_id: str | None = None
) -> dict[str, Any]:
    """The one error shape: ``code``, its phrase, ``message`` and every ``{path, message}`` of
    ``errors``; ``error_id`` for a 500 that was logged."""
    body: dict[str, Any] = {
        "code": code,
        "status": _phrase(code),
        "message": message,
        "errors": [{"path": str(e["path"]), "message": str(e["message"])} for e in errors or ()],
    }
    if error_id is not None:
        body["error_id"] = error_id
    return body


def unexpected_error(what: str, exc_info: Any = None, detail: str = "") -> dict[str, Any]:
    """Log an unexpected error of ``what`` (``"GET /v1/runs"``, ``"job <id>"``) with its
    traceback (``exc_info``, as :meth:`logging.Logger.error` takes it, or the text ``detail``)
    under a new id; the 500 that tells the client that id."""
    error_id = secrets.token_hex(8)
    _log.error("unexpected error %s on %s%s", error_id, what, detail and f"\n{detail}",
               exc_info=exc_info)  # fmt: skip
    message = f"internal server error; it was logged with id {error_id} (quote it when reporting)"
    return error_body(500, message, error_id=error_id)


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
        return f"request body exceeds the limit of {limit} bytes (COSTMODEL_MAX_CONTENT_LENGTH)"
    return _phrase(code).lower()


class ApiWithErrors(Api):
    """flask-smorest's Api answering every HTTP exception in the API's one error shape."""

    ERROR_SCHEMA = ErrorSchema

    def handle_http_exception(self, error: HTTPException) -> Any:
        """The one error shape for ``error``; unexpected 500s are logged with an id."""
        code = error.code or 500
        data: dict[str, Any] = getattr(error, "data", None) or {}
        if code == 500 and not data:
            return self._unexpected(error)
        headers = dict(data.get("headers") or {})
        if code == 405 and getattr(error, "valid_methods", None):
            headers["Allow"] = ", ".join(sorted(error.valid_methods))
        errors = data.get("errors")
        message = data.get("message")
        if errors is None and "messages" in data:  # webargs: {"query": {"page": [...]}}
            messages = {("" if k == "json" else k): v for k, v in data["messages"].items()}
            errors = flatten_messages(messages)
            message = "invalid request parameters: " + "; ".join(
                f"{e['path']}: {e['message']}" for e in errors
            )
        body = error_body(code, message or _default_message(error), errors)
        return jsonify(body), code, headers

    def _unexpected(self, error: HTTPException) -> Any:
        original = getattr(error, "original_exception", None) or error
        exc_info = (type(original), original, original.__traceback__)
        return jsonify(unexpected_error(f"{request.method} {request.path}", exc_info)), 500
