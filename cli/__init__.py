"""The ``costmodel`` command line: run, batch, report, catalog, schema and serve."""

from .main import main

__all__ = ["main"]
