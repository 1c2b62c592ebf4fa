"""The longest request line the service reads, and the words of its 414, shared by gunicorn's
settings (:mod:`api.gunicorn_conf`, loaded by gunicorn's master: this module imports nothing of
the app) and the OpenAPI document."""

from __future__ import annotations

__all__ = ["LIMIT_REQUEST_LINE", "request_line_too_long"]

#: The longest request line gunicorn reads (its own maximum) [byte].
LIMIT_REQUEST_LINE = 8190


def request_line_too_long(size: int | None = None) -> str:
    """The 414's message (and the spec's words for it): the limit, and ``size``, the bytes
    gunicorn had read of the line when it gave up (the line is at least as long)."""
    read = f" ({size:,} bytes or more)" if size else ""
    return (
        f"the request line (method, path and query) is longer than {LIMIT_REQUEST_LINE:,} "
        f"bytes{read}; no route of this API needs one as long"
    )
