"""The HTTP service: ``create_app()`` builds the Flask app (flask-smorest blueprints for
evaluate, runs, catalog and health; OpenAPI 3 at ``/openapi.json``).

Run it with ``costmodel serve`` (development) or ``gunicorn -c python:api.gunicorn_conf
"api:create_app()"`` (production). ``create_app`` is imported when first asked for, so that
gunicorn's master process, which reads :mod:`api.gunicorn_conf`, does not load the app.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
