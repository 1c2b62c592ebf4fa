"""One module per ``costmodel`` command, named in :data:`COMMANDS` in the order ``costmodel
--help`` lists them. Each has ``add_parser(sub)``, which adds the command and its options to the
subparsers ``sub`` (with ``func`` set to its ``execute(args)``, which returns the exit status).
A command's module is imported when its parser is built: a run builds only its own."""

import importlib
from types import ModuleType

__all__ = ["COMMANDS", "command_module"]

COMMANDS = (
    "run",
    "plan",
    "examples",
    "batch",
    "report",
    "catalog",
    "prices",
    "serving",
    "compare",
    "throughput",
    "schema",
    "serve",
)


def command_module(name: str) -> ModuleType:
    """The module of command ``name``, one of :data:`COMMANDS`."""
    return importlib.import_module(f"{__name__}.{name}")
