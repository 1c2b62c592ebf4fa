"""gunicorn's settings for the API, so that every answer is the service's own:

    gunicorn -c python:api.gunicorn_conf --workers 2 --timeout 120 "api:create_app()"

* ``limit_request_line`` is gunicorn's largest, 8,190 bytes (its default is 4,094). The API
  needs far less: its longest request lines are a run's report with both of its query
  parameters (``GET /v1/runs/<22-character id>/report?format=xlsx&disposition=attachment``,
  under 100 bytes) and a run with a 19-digit seed; the rest of the room is for the ids of the
  catalog's routes and for clients that add parameters of their own (which the API names in a
  400).
* What gunicorn answers itself, before the application sees the request (a request line or
  header over its limits, a request it cannot parse), is written in the API's one error shape
  with the API's security headers, rather than as gunicorn's HTML page: :func:`write_error`
  takes the place of ``gunicorn.util.write_error`` in every worker (``post_worker_init``).
  The status line's phrase is the body's ``status``.

Loading this module imports nothing of the app in gunicorn's master process (only
:mod:`api.requestline`, the limit and the 414's words); the workers import :mod:`api.errors`
and :mod:`api.app` when they write their first such error.
"""

from __future__ import annotations

import json
import re
import socket

import gunicorn.util

from api.requestline import LIMIT_REQUEST_LINE, request_line_too_long

__all__ = ["limit_request_line", "post_worker_init", "write_error"]

#: The longest request line gunicorn reads (its own maximum) [byte].
limit_request_line = LIMIT_REQUEST_LINE


def _message(code: int, detail: str) -> str:
    """What went wrong, in the words of the API's errors (``detail``: gunicorn's, e.g.
    "Request Line is too large (9024 > 8190)")."""
    if code == 414:
        size = re.search(r"\((\d+) > \d+\)", detail)
        return request_line_too_long(int(size.group(1)) if size else None)
    if code == 431:
        return f"the request's header fields exceed the server's limits ({detail})"
    if code >= 500:
        return "the server could not handle the request; try again later"
    return f"the request could not be parsed: {detail}"


def write_error(sock: socket.socket, code: int, reason: str, detail: str) -> None:
    """Answer a request gunicorn refused before the application saw it: the one error shape,
    the security headers, and the connection closed (``reason``, gunicorn's phrase, gives way
    to the body's)."""
    from api.app import SECURITY_HEADERS
    from api.errors import error_body

    message = _message(code, detail)
    body = error_body(code, message, [{"path": "", "message": message}])
    data = json.dumps(body).encode("utf-8")
    headers = {
        "Connection": "close",
        "Content-Type": "application/json",
        "Content-Length": str(len(data)),
        **SECURITY_HEADERS,
    }
    # the status line's phrase is the body's (gunicorn's own reason may read otherwise:
    # "URI Too Long" beside "Request-URI Too Long")
    lines = [f"HTTP/1.1 {code} {body['status']}", *(f"{k}: {v}" for k, v in headers.items())]
    head = "".join(f"{line}\r\n" for line in lines) + "\r\n"
    gunicorn.util.write_nonblock(sock, head.encode("latin-1") + data)


def post_worker_init(worker: object) -> None:
    """gunicorn's hook in each worker: its own answers are written by :func:`write_error`
    (so that importing this module changes nothing elsewhere)."""
    gunicorn.util.write_error = write_error
