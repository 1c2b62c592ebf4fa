"""Strict JSON in and out: no NaN/Infinity, no duplicate keys, UTF-8, JSON content types only.

Python's ``json`` accepts ``NaN``, ``Infinity`` and ``1e999`` (which becomes ``inf``) by default;
none of them is JSON (RFC 8259), and none is a meaningful price or rate, so a request holding one
is answered 400 with the position of the offending token.

A body may be sent gzip-compressed (``Content-Encoding: gzip``); it is decoded once, before any
view reads it, and the decoded body is held to the same ``MAX_CONTENT_LENGTH`` as a plain one
(so a small "gzip bomb" is refused after that many bytes). Any other encoding is 415.
"""

from __future__ import annotations

import json
import math
import zlib
from typing import Any

from flask import request
from flask.json.provider import DefaultJSONProvider
from flask_smorest import abort
from werkzeug.exceptions import RequestEntityTooLarge

__all__ = [
    "StrictJSONProvider",
    "decode_content_encoding",
    "parse_json_body",
    "read_json_body",
    "request_body",
    "require_json_content_type",
    "strict_loads",
]

_MAX_INT_DIGITS = 300  # larger integers overflow a float [-]


class _NotJSON(ValueError):
    """A token that Python's json module accepts but RFC 8259 does not."""


def _reject_constant(name: str) -> Any:
    raise _NotJSON(f"{name} is not valid JSON; numbers must be finite")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJSON(f"number {text} is out of range; numbers must be finite")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise _NotJSON(f"integer with {len(text.lstrip('-'))} digits is out of range")
    return int(text)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _NotJSON(f"duplicate key {key!r} in a JSON object")
        out[key] = value
    return out


def strict_loads(text: str | bytes) -> Any:
    """Parse RFC 8259 JSON; raises ``ValueError`` for NaN/Infinity, out-of-range numbers,
    duplicate keys and malformed text."""
    return json.loads(
        text,
        parse_constant=_reject_constant,
        parse_float=_finite_float,
        parse_int=_bounded_int,
        object_pairs_hook=_unique_keys,
    )


class StrictJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider with strict parsing and ``allow_nan=False`` output.

    Keys keep their insertion order so that results read in the contract's order.
    """

    sort_keys = False
    compact = True

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        """Serialise ``obj``; NaN or Infinity raise ``ValueError`` (answered as a logged 500)."""
        kwargs.setdefault("allow_nan", False)
        return super().dumps(obj, **kwargs)

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        """Parse strictly (see :func:`strict_loads`)."""
        return strict_loads(s)


def _is_json_mimetype(mimetype: str) -> bool:
    return mimetype == "application/json" or (
        mimetype.startswith("application/") and mimetype.endswith("+json")
    )


def require_json_content_type() -> None:
    """Abort with 415 unless the request declares a JSON body in UTF-8."""
    mimetype = request.mimetype
    if not _is_json_mimetype(mimetype):
        got = f"{request.content_type!r}" if request.content_type else "no Content-Type"
        abort(
            415,
            message="the request body must be JSON: send 'Content-Type: application/json' "
            f"(got {got})",
            errors=[_whole("unsupported media type")],
        )
    charset = request.mimetype_params.get("charset", "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        abort(
            415,
            message=f"the request body must be UTF-8 encoded JSON (got charset {charset!r})",
            errors=[_whole("unsupported charset")],
        )


def parse_json_body(raw: bytes) -> Any:
    """Parse a request body as strict JSON; 400 for an empty, undecodable or malformed body,
    NaN/Infinity, out-of-range numbers or duplicate keys."""
    if not raw.strip():
        _bad("the request body is empty; send a scenario as JSON", "empty body")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        _bad("the request body is not valid UTF-8", f"byte {exc.start}: {exc.reason}")
    try:
        return strict_loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        _bad(f"malformed JSON at {where}: {exc.msg}", f"{where}: {exc.msg}")
    except RecursionError:
        _bad("malformed JSON: nested too deeply", "nested too deeply")
    except ValueError as exc:  # _NotJSON and int-conversion limits
        _bad(f"invalid JSON: {exc}", str(exc))


def request_body() -> bytes:
    """The request body; 413 when it is longer than ``MAX_CONTENT_LENGTH``, however it is sent.

    Werkzeug refuses a declared ``Content-Length`` over the limit, but reads a chunked body
    (no length) only up to the limit and stops there without an error, so a longer body
    would be cut and parsed; the server's own stream is asked for one byte more.
    """
    data = request.get_data(cache=True)
    limit = request.max_content_length
    at_limit = limit is not None and request.content_length is None and len(data) >= limit
    if at_limit and request.environ["wsgi.input"].read(1):
        raise RequestEntityTooLarge()
    return data


#: Content-Encoding values of a body this service decodes ("identity": none).
_GZIP = ("gzip", "x-gzip")
_ENCODING_PATH = "headers.Content-Encoding"


def decode_content_encoding() -> None:
    """Decode a gzip-compressed request body in place (a ``before_request`` hook), so that
    every view and parser reads the plain JSON.

    415 for another ``Content-Encoding``; 400 for a body that is not valid gzip; 413 when the
    decoded body exceeds ``MAX_CONTENT_LENGTH``, checked as it is decoded.
    """
    encoding = request.headers.get("Content-Encoding", "").strip().lower()
    if encoding in ("", "identity"):
        return
    if encoding not in _GZIP:
        message = (
            f"Content-Encoding {encoding!r} is not supported; send the body as it is or "
            "compressed with gzip (Content-Encoding: gzip)"
        )
        abort(415, message=message, errors=[{"path": _ENCODING_PATH, "message": message}])
    raw = request_body()
    if raw:
        request._cached_data = _gunzip(raw, request.max_content_length)  # type: ignore[attr-defined]


def _gunzip(raw: bytes, limit: int | None) -> bytes:
    """The gzip stream ``raw`` decoded, at most ``limit`` bytes of it."""
    decoder = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    room = -1 if limit is None else limit + 1
    try:
        out = decoder.decompress(raw, max(room, 0))
    except zlib.error as exc:
        message = f"the body is not valid gzip ({exc}); send it as it is without Content-Encoding"
        abort(400, message=message, errors=[{"path": _ENCODING_PATH, "message": message}])
    if limit is not None and len(out) > limit:
        message = (
            f"the body decoded from gzip exceeds the limit of {limit} bytes "
            "(COSTMODEL_MAX_CONTENT_LENGTH)"
        )
        abort(413, message=message, errors=[{"path": "", "message": message}])
    if not decoder.eof or decoder.unused_data:
        message = "the gzip body is cut short or followed by other data"
        abort(400, message=message, errors=[{"path": _ENCODING_PATH, "message": message}])
    return out


def read_json_body() -> Any:
    """The request body parsed as strict JSON.

    Aborts with 415 for a content type other than JSON (or a charset other than UTF-8), 413 for
    a body over ``MAX_CONTENT_LENGTH`` (:func:`request_body`) and 400 as :func:`parse_json_body`
    says.
    """
    require_json_content_type()
    return parse_json_body(request_body())


def _whole(message: str) -> dict[str, str]:
    return {"path": "", "message": message}


def _bad(message: str, problem: str) -> None:
    abort(400, message=message, errors=[_whole(problem)])
