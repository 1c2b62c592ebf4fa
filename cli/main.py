"""The ``costmodel`` command line.

It sits above the scenario layer and the HTTP API (``costmodel serve``), so it lives in a package
of its own that may import both; neither imports it. Exit status: 0 on success, 2 for bad input
(scenario, arguments, catalog ids, result files), 1 when a scenario of a batch failed. Bad input
is reported as ``file:line: key.path: message`` lines on stderr, never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

__all__ = ["main"]

#: Report formats and their file extensions (``costmodel.reports.FORMATS``, kept here so that
#: ``--help`` needs no engine import).
_FORMATS = ("html", "md", "csv", "xlsx", "json")
_SUFFIXES = {".html": "html", ".htm": "html", ".md": "md", ".csv": "csv", ".xlsx": "xlsx",
             ".json": "json"}  # fmt: skip
_MAX_SAMPLES = 1_000_000
_MAX_SEED = 2**63 - 1


class _Usage(ValueError):
    """A command-line argument the command cannot use (exit status 2)."""


def _version() -> str:
    try:
        return metadata.version("gpu-costmodel")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _print(draw) -> None:
    """Print what ``draw(console)`` renders, fitted to the terminal, without trailing blanks."""
    from rich.console import Console

    console = Console(highlight=False)
    with console.capture() as capture:
        draw(console)
    lines = capture.get().splitlines()
    sys.stdout.write("".join(line.rstrip() + "\n" for line in lines))


def _load(path: str, kind: str):
    """The scenario or plan of ``path``, which must be of ``kind`` (the command's)."""
    import scenarios

    loaded = scenarios.load_file(path)
    found = "plan" if isinstance(loaded, scenarios.Plan) else "scenario"
    if found != kind:
        command = "plan" if found == "plan" else "run"
        raise _Usage(f"{path}: is a {found}; evaluate it with 'costmodel {command} {path}'")
    return loaded


def _write_json(result) -> None:
    sys.stdout.buffer.write(result.to_json() + b"\n")
    sys.stdout.flush()


def _cmd_run(args: argparse.Namespace) -> int:
    import scenarios
    from cli.progress import ProgressBar
    from cli.tables import print_result

    scenario = _load(args.file, "scenario")
    timings: dict[str, float] = {}
    with ProgressBar(sys.stderr) as bar:
        result = scenarios.evaluate(
            scenario, samples=args.samples, seed=args.seed, timings=timings, progress=bar
        )
    if args.format == "json":
        _write_json(result)
    else:
        _print(lambda console: print_result(result, console))
    if args.verbose:
        print(
            f"engine time: {timings['engine_s'] * 1000:.1f} ms for {result.samples} samples "
            f"x {len(result.utilisation)} utilisation levels",
            file=sys.stderr,
        )
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    import scenarios
    from cli.tables import print_plan

    plan = _load(args.file, "plan")
    timings: dict[str, float] = {}
    result = scenarios.evaluate(plan, samples=args.samples, seed=args.seed, timings=timings)
    if args.format == "json":
        _write_json(result)
    else:
        _print(lambda console: print_plan(result, console))
    if args.verbose:
        print(
            f"engine time: {timings['engine_s'] * 1000:.1f} ms for {result.samples} samples "
            f"x {len(result.candidates)} candidates",
            file=sys.stderr,
        )
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    from cli.tables import print_catalog
    from pricing import load_catalog

    _print(lambda console: print_catalog(load_catalog(), args.table, console))
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from scenarios.jsonschema import scenario_json_schema

    print(json.dumps(scenario_json_schema(), indent=2))
    return 0


def _cmd_batch(args: argparse.Namespace) -> int:
    from scenarios.batch import BatchError, run_batch
    from scenarios.store import StoreError

    if args.workers is not None and args.workers < 1:
        raise _Usage("--workers must be at least 1")
    try:
        summary = run_batch(
            args.paths,
            args.out,
            workers=args.workers,
            scheduler=args.dask_scheduler,
            samples=args.samples,
            seed=args.seed,
            formats=tuple(args.format or ("html",)),
            store=args.db,
            progress=not args.quiet,
        )
    except (BatchError, StoreError) as exc:
        raise _Usage(str(exc)) from None
    except KeyboardInterrupt:
        print(
            "interrupted: finished results are in the run store; rerun the same command to resume",
            file=sys.stderr,
        )
        return 130
    for item in summary.items:
        if item.status == "failed":
            print(f"FAILED {item.file}: {item.error}", file=sys.stderr)
    print(
        f"{len(summary.items)} scenario(s): {summary.ok} run, {summary.skipped} skipped "
        f"(already in the run store), {summary.failed} failed; summary: {summary.summary_csv}"
    )
    return 1 if summary.failed else 0


def _report_target(output: str, fmt: str | None) -> tuple[Path, str]:
    """The file to write and its format, from ``-o`` and ``--format``."""
    out = Path(output)
    known = _SUFFIXES.get(out.suffix.lower())
    if fmt is None:
        if known is None:
            raise _Usage(
                f"cannot tell the report format from {output!r}: give --format, or end the "
                f"file name in one of {', '.join(_SUFFIXES)}"
            )
        return out, known
    if known is None:
        return out.with_name(out.name + f".{fmt}"), fmt
    if known != fmt:
        raise _Usage(f"{output!r} ends in {out.suffix} but --format is {fmt}")
    return out, fmt


def _check_output(output: str, fmt: str | None) -> None:
    """Refuse, before any work, an ``-o`` that names a folder or lies under a file; a missing
    folder is fine (it is made)."""
    path = Path(output)
    if output.endswith(("/", os.sep)) or path.is_dir():
        example = path / f"report.{fmt or 'html'}"
        raise _Usage(f"{path}: is a folder; give the report's file name, e.g. {example}")
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise _Usage(f"{path}: cannot write the report: {parent} is not a folder")


def _read_result(source: Path):
    """A result JSON file, validated; any other JSON is ``None`` (read as a scenario)."""
    from marshmallow import ValidationError

    from costmodel.result import Result
    from scenarios.errors import ScenarioError, flatten_messages

    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        message = "file not found" if isinstance(exc, FileNotFoundError) else str(exc)
        raise ScenarioError(str(source), [{"path": "", "message": message}]) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ScenarioError(
            str(source), [{"path": "", "message": f"malformed JSON: {exc}"}]
        ) from None
    except RecursionError:
        raise ScenarioError(
            str(source), [{"path": "", "message": "malformed JSON: nested too deeply"}]
        ) from None
    if not (isinstance(data, dict) and "schema_version" in data):
        return None
    try:
        return Result.from_dict(data)
    except ValidationError as exc:
        raise ScenarioError(str(source), flatten_messages(exc.messages)) from None


def _cmd_report(args: argparse.Namespace) -> int:
    import scenarios
    from costmodel.reports import write

    _check_output(args.output, args.format)
    out, fmt = _report_target(args.output, args.format)
    source = Path(args.input)
    result = _read_result(source) if source.suffix.lower() == ".json" else None
    if result is None:
        result = scenarios.evaluate(source, samples=args.samples, seed=args.seed)
    elif args.samples is not None or args.seed is not None:
        raise _Usage("--samples/--seed apply to a scenario, not to a result JSON")
    try:
        written = write(result, fmt, out)
    except OSError as exc:
        raise _Usage(f"{out}: cannot write the report: {exc.strerror or exc}") from None
    for path in written:
        print(path)
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    """Serve the HTTP API with Flask's development server (production: gunicorn)."""
    from api import create_app

    try:
        app = create_app()
    except ValueError as exc:  # a limit or key setting in the environment is invalid
        raise _Usage(str(exc)) from None
    app.run(host=args.host, port=args.port, debug=args.debug, use_reloader=args.debug)
    return 0


def _count(text: str, what: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} must be an integer, got {text!r}") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{what} must be in [{low}, {high:,}], got {value}")
    return value


def _samples(text: str) -> int:
    return _count(text, "samples", 1, _MAX_SAMPLES)


def _seed(text: str) -> int:
    return _count(text, "seed", 0, _MAX_SEED)


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def _add_overrides(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--samples",
        type=_samples,
        metavar="N",
        help=f"Monte Carlo draws, 1 to {_MAX_SAMPLES:,} (overrides {what})",
    )
    p.add_argument("--seed", type=_seed, metavar="S", help=f"random seed (overrides {what})")


def _parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="costmodel",
        description="Rent or buy GPUs for deep learning? A Monte Carlo cost model of owned GPU "
        "servers against cloud instances, with break-even utilisation, payback and the "
        "probability that buying is cheaper.",
        epilog=_examples(
            "costmodel run scenarios/examples/lab-4x-rtx2080ti-vs-p3-8xlarge.yaml",
            "costmodel COMMAND --help",
        ),
        formatter_class=fmt,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "run",
        help="evaluate one scenario file and print the answer",
        description="Evaluate one scenario YAML file: verdict, break-even utilisation and a "
        "table of total cost by utilisation.",
        epilog=_examples(
            "costmodel run scenario.yaml",
            "costmodel run scenario.yaml --samples 100000 --seed 7 --format json > result.json",
        ),
        formatter_class=fmt,
    )
    p.add_argument("file", metavar="FILE", help="scenario YAML file")
    _add_overrides(p, "the scenario's simulation block")
    p.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table for people (default), json for the full result",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="print the engine time on stderr")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "plan",
        help="evaluate a fleet plan: how many servers to own, reserve and burst",
        description="Evaluate a plan file (kind: plan): every mix of owned servers and "
        "reserved instances against a growing, uncertain demand, the rest burst to on-demand "
        "or spot instances; prints the best mix, the cost-versus-risk frontier and each "
        "candidate's cost.",
        epilog=_examples(
            "costmodel plan scenarios/examples/plan-lab-rtx4090-growth.yaml",
            "costmodel plan plan.yaml --samples 20000 --format json > plan-result.json",
        ),
        formatter_class=fmt,
    )
    p.add_argument("file", metavar="FILE", help="plan YAML file (kind: plan)")
    _add_overrides(p, "the plan's simulation block")
    p.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table for people (default), json for the full result",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="print the engine time on stderr")
    p.set_defaults(func=_cmd_plan)

    p = sub.add_parser(
        "batch",
        help="evaluate many scenario files into results and reports",
        description="Evaluate scenario files, folders and globs in parallel, resumably, and "
        "write a result JSON and reports per scenario plus summary.csv.",
        epilog=_examples(
            "costmodel batch scenarios/examples --out out",
            "costmodel batch 'runs/**/*.yaml' --out out --format html xlsx --workers 4",
        ),
        formatter_class=fmt,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="YAML files, folders or globs")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for results and reports")
    p.add_argument("--workers", type=int, metavar="N", help="worker processes (default: CPUs)")
    p.add_argument(
        "--dask-scheduler",
        metavar="ADDRESS",
        help="run on this Dask scheduler (needs the 'distributed' extra)",
    )
    _add_overrides(p, "every scenario's simulation block")
    p.add_argument(
        "--format",
        nargs="+",
        action="extend",
        choices=_FORMATS,
        help="report formats (default: html)",
    )
    p.add_argument("--db", metavar="PATH", help="run store (default: $COSTMODEL_DB)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_batch)

    p = sub.add_parser(
        "report",
        help="write a report of a scenario or of a result JSON",
        description="Write an HTML, Markdown, CSV, XLSX or JSON report of a scenario YAML "
        "(evaluated first) or of a result JSON written by 'run --format json' or 'batch'.",
        epilog=_examples(
            "costmodel report scenario.yaml -o report.html",
            "costmodel report result.json --format xlsx -o report",
        ),
        formatter_class=fmt,
    )
    p.add_argument("input", metavar="FILE", help="scenario YAML or result JSON")
    p.add_argument(
        "--format",
        choices=_FORMATS,
        help="report format (default: from OUT's extension)",
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="report file to write")
    _add_overrides(p, "the scenario's simulation block; scenarios only")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser(
        "catalog",
        help="list the GPU or cloud instance catalog",
        description="List the shipped catalog of GPUs or cloud instances with its version.",
        epilog=_examples("costmodel catalog gpus", "costmodel catalog instances"),
        formatter_class=fmt,
    )
    p.add_argument("table", choices=("gpus", "instances"), help="which catalog to list")
    p.set_defaults(func=_cmd_catalog)

    p = sub.add_parser(
        "schema",
        help="print the JSON Schema of the scenario format",
        description="Print a JSON Schema (draft 2020-12) of the scenario format, for editors "
        "that complete and check YAML files.",
        epilog=_examples("costmodel schema > scenario.schema.json"),
        formatter_class=fmt,
    )
    p.set_defaults(func=_cmd_schema)

    p = sub.add_parser(
        "serve",
        help="serve the HTTP API (development server)",
        description="Serve the HTTP API with Flask's development server. In production run "
        'gunicorn "api:create_app()".',
        epilog=_examples("costmodel serve", "costmodel serve --port 5000 --debug"),
        formatter_class=fmt,
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--debug", action="store_true", help="Flask debug mode with the reloader")
    p.set_defaults(func=_cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``costmodel`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    from pricing import CatalogError
    from scenarios.errors import ScenarioError

    try:
        return args.func(args)
    except (ScenarioError, CatalogError, _Usage) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into e.g. head: stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
