"""The deadline of a request: ``COSTMODEL_DEADLINE`` seconds from its start, below the server's
own timeout.

A server that kills a worker at its timeout answers with its own HTML page, and whatever the
request had written stays written. So the application stops first: the views check the deadline
between the phases of a request (parsing, each chunk of draws of the engine, summarising,
writing the answer, storing it) and one that has passed is answered 503 in the error shape, with
``Retry-After``, before anything is stored. The check is cooperative: a phase already running
finishes (the work limits keep each phase short).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from flask import current_app, g
from werkzeug.exceptions import ServiceUnavailable

__all__ = [
    "RETRY_AFTER_S",
    "DeadlineExceeded",
    "check_deadline",
    "engine_progress",
    "start_deadline",
]

#: Seconds a client of a 503 is told to wait before it tries again [s].
RETRY_AFTER_S = 5


def _clock() -> float:
    """Seconds of a monotonic clock [s] (patched in tests)."""
    return time.monotonic()


class DeadlineExceeded(ServiceUnavailable):
    """503 in the error shape: the request ran past ``COSTMODEL_DEADLINE``."""

    def __init__(self, phase: str, limit: float) -> None:
        super().__init__()
        message = (
            f"the request took longer than this service allows ({limit:g} s, "
            f"COSTMODEL_DEADLINE) and was stopped while {phase}; nothing was stored. Ask for "
            "less work (fewer samples or candidates) or try again later"
        )
        self.data = {
            "message": message,
            "errors": [{"path": "", "message": f"deadline passed while {phase}"}],
            "headers": {"Retry-After": str(RETRY_AFTER_S)},
        }


def start_deadline() -> None:
    """Start the request's clock (a ``before_request`` hook)."""
    g.costmodel_deadline = _clock() + current_app.config["DEADLINE"]


def check_deadline(phase: str) -> None:
    """Raise :class:`DeadlineExceeded` naming ``phase`` ("evaluating the scenario") when the
    request's deadline has passed."""
    deadline = g.get("costmodel_deadline")
    if deadline is not None and _clock() > deadline:
        raise DeadlineExceeded(phase, current_app.config["DEADLINE"])


def engine_progress(phase: str) -> Callable[[float], None]:
    """A progress callback for :func:`scenarios.evaluate`: the deadline is checked after each
    chunk of draws."""
    return lambda done: check_deadline(phase)
