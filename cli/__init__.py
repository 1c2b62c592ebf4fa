"""The ``costmodel`` command line: run, plan, examples, batch, report, catalog, compare, schema
and serve."""

from .main import main

__all__ = ["main"]
