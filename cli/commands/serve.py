"""``costmodel serve``: the HTTP API on Flask's development server."""

from __future__ import annotations

import argparse

from cli.common import UsageError
from cli.options import command

__all__ = ["add_parser", "execute"]


def add_parser(sub) -> None:
    p = command(
        sub,
        "serve",
        help="serve the HTTP API (development server)",
        description="Serve the HTTP API with Flask's development server. In production run "
        'gunicorn "api:create_app()".',
        examples=("costmodel serve", "costmodel serve --port 5000 --debug"),
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--debug", action="store_true", help="Flask debug mode with the reloader")
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    """Serve the HTTP API with Flask's development server (production: gunicorn)."""
    from api import create_app

    try:
        app = create_app()
    except ValueError as exc:  # a limit or key setting in the environment is invalid
        raise UsageError(str(exc)) from None
    app.run(host=args.host, port=args.port, debug=args.debug, use_reloader=args.debug)
    return 0
