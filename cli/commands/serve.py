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
        'gunicorn -c python:api.gunicorn_conf "api:create_app()".',
        examples=("costmodel serve", "costmodel serve --port 5000 --debug"),
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8000, help="TCP port, 1 to 65535 (default 8000)")
    p.add_argument("--debug", action="store_true", help="Flask debug mode with the reloader")
    p.set_defaults(func=execute)


def _port(text: str) -> int:
    """A TCP port, 1 to 65535 (the development server reads a port out of range as one in use,
    or fails with a traceback)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"port must be an integer, got {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be in [1, 65,535], got {value}")
    return value


def _check_host(host: str, port: int) -> None:
    """A usage error unless ``host`` is an address this machine can resolve to serve on."""
    import socket

    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise UsageError(
            f"--host {host!r}: no such address to serve on ({reason}); e.g. 127.0.0.1 for this "
            "machine only, 0.0.0.0 for every interface"
        ) from None


def execute(args: argparse.Namespace) -> int:
    """Serve the HTTP API with Flask's development server (production: gunicorn)."""
    from api import create_app

    _check_host(args.host, args.port)
    try:
        app = create_app()
    except ValueError as exc:  # a limit or key setting in the environment is invalid
        raise UsageError(str(exc)) from None
    app.run(host=args.host, port=args.port, debug=args.debug, use_reloader=args.debug)
    return 0
