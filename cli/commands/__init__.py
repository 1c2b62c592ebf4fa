"""One module per ``costmodel`` command, in the order ``costmodel --help`` lists them. Each
has ``add_parser(sub)``, which adds the command and its options to the subparsers ``sub`` (with
``func`` set to its ``execute(args)``, which returns the exit status)."""

from . import batch, catalog, compare, examples, plan, prices, report, run, schema, serve

__all__ = ["COMMANDS"]

COMMANDS = (run, plan, examples, batch, report, catalog, prices, compare, schema, serve)
