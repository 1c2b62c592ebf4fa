"""The HTTP service: ``create_app()`` builds the Flask app (flask-smorest blueprints for
evaluate, runs, catalog and health; OpenAPI 3 at ``/openapi.json``).

Run it with ``costmodel serve`` (development) or ``gunicorn "api:create_app()"`` (production).
"""

from .app import create_app

__all__ = ["create_app"]
