"""The ``costmodel`` command line.

It sits above the scenario layer and the HTTP API (``costmodel serve``), so it lives in a package
of its own that may import both; neither imports it. Each command is a module of
:mod:`cli.commands`; this one builds the parser from them (from the one being run alone, so that
a run imports no other command) and dispatches. Exit status: 0 on
success, 2 for bad input (scenario, arguments, catalog ids, result files), 1 when a scenario of
a batch failed or standard output could not be written (a full disk). Bad input is reported as
``file:line: key.path: message`` lines on stderr, never as a traceback.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence

from cli.commands import COMMANDS, command_module
from cli.common import UsageError
from cli.options import HelpFormatter, epilog

__all__ = ["console", "main"]


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked for (importing
    ``importlib.metadata`` costs a plain run some 10 ms)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(
            option_strings, dest, nargs=0, help="show program's version number and exit"
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from importlib import metadata

        try:
            version = metadata.version("gpu-costmodel")
        except metadata.PackageNotFoundError:
            version = "0+unknown"
        sys.stdout.write(f"{parser.prog} {version}\n")
        parser.exit()


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone when it names one (the command
    being run: the other commands' modules are then not imported)."""
    parser = argparse.ArgumentParser(
        prog="costmodel",
        description="Rent or buy GPUs for deep learning? A Monte Carlo cost model of owned GPU "
        "servers against cloud instances, with break-even utilisation, payback and the "
        "probability that buying is cheaper.",
        epilog=epilog(
            "costmodel examples",
            "costmodel run lab-4x-rtx2080ti-vs-p3-8xlarge",
            "costmodel COMMAND --help",
        ),
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in (command,) if command in COMMANDS else COMMANDS:
        command_module(name).add_parser(sub)
    return parser


def _stand_in_for_what_cannot_be_shown() -> None:
    """Standard output writes "?" for a character its encoding lacks (an ASCII or a Windows
    code page terminal: the tables' "±" and "–", a name in another script), not a
    UnicodeEncodeError; standard error already writes an escape."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None and sys.stdout.errors == "strict":
        reconfigure(errors="replace")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``costmodel`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    _stand_in_for_what_cannot_be_shown()
    args = _parser(argv[0] if argv else None).parse_args(argv)
    from costmodel.threads import pin_threads
    from pricing import CatalogError
    from scenarios.errors import ScenarioError

    pin_threads()  # one BLAS thread: more burn CPU for little on the few large products
    try:
        return args.func(args)
    except (ScenarioError, CatalogError, UsageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into e.g. head: stop quietly, as Unix tools do
        _drop_output()
        return 1
    except OSError as exc:  # standard output failed (a full disk); files are the commands' own
        _drop_output()
        print(f"error: {exc.filename or 'standard output'}: {exc.strerror or exc}", file=sys.stderr)
        return 1


def _drop_output() -> None:
    """Send what is left of standard output to the null device, so that the flush at exit does
    not fail again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def console() -> None:
    """The ``costmodel`` console script and ``python -m cli``: :func:`main`, then exit with its
    status.

    Before the interpreter shuts down, :func:`gc.freeze` moves every object into the permanent
    generation, so that the interpreter's last collections pass over them: the process is
    ending, and walking the objects start-up made (some 30,000) took about a tenth of a
    ``costmodel run`` on the worked example (``benchmarks/bench_startup.py``). ``main`` alone,
    as tests and notebooks call it, leaves the collector as it is.
    """
    status = main()
    gc.freeze()
    sys.exit(status)
