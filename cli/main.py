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
from typing import Any

__all__ = ["main"]

#: Report formats and their file extensions (``costmodel.present.reports.FORMATS``, kept here so
#: that ``--help`` needs no engine import).
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


def _catalog(prices: str | None):
    """The shipped catalog, with the user's prices file (``--prices``) laid over it."""
    from pricing import apply_prices, load_catalog, read_prices

    return apply_prices(load_catalog(), read_prices(prices)) if prices else load_catalog()


def _load(path: str, kind: str, prices: str | None = None):
    """The scenario or plan of ``path``, which must be of ``kind`` (the command's), resolved
    with the user's ``prices`` file laid over the catalog."""
    import scenarios

    loaded = scenarios.load_file(path, catalog=_catalog(prices))
    found = "plan" if isinstance(loaded, scenarios.Plan) else "scenario"
    if found != kind:
        command = "plan" if found == "plan" else "run"
        raise _Usage(f"{path}: is a {found}; evaluate it with 'costmodel {command} {path}'")
    return loaded


def _write_json(result) -> None:
    from costmodel.present import to_json

    sys.stdout.buffer.write(to_json(result) + b"\n")
    sys.stdout.flush()


def _cmd_run(args: argparse.Namespace) -> int:
    import scenarios
    from cli.progress import ProgressBar
    from cli.tables import print_result

    scenario = _load(args.file, "scenario", args.prices)
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

    plan = _load(args.file, "plan", args.prices)
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


def _choice(kind: str, value: str, valid: Sequence[str]) -> str:
    """``value`` lowercased when it is one of ``valid``; else a usage error listing them."""
    import difflib

    key = value.strip().casefold()
    if key in valid:
        return key
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise _Usage(f"unknown {kind} {value!r}; valid: {', '.join(valid)}{hint}")


def _cmd_catalog_chart(args: argparse.Namespace) -> int:
    from pricing.charts import CHARTS, write_chart

    if args.chart is None or args.output is None:
        raise _Usage(
            f"catalog chart needs a chart ({', '.join(CHARTS)}) and -o FILE.png|.svg, e.g. "
            "'costmodel catalog chart gflops-per-dollar -o chart.svg'"
        )
    chart = _choice("chart", args.chart, CHARTS)
    if Path(args.output).suffix.lower() not in (".png", ".svg"):
        raise _Usage(f"{args.output}: a chart is written as .png or .svg")
    _check_output(args.output, Path(args.output).suffix.lstrip("."))
    try:
        written = write_chart(_catalog(args.prices), chart, args.output, args.precision)
    except OSError as exc:
        raise _Usage(f"{args.output}: cannot write the chart: {exc.strerror or exc}") from None
    print(written)
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    from cli.tables import catalog_csv, catalog_items, catalog_json, print_catalog
    from pricing.vocabulary import TIERS

    if args.table == "chart":
        return _cmd_catalog_chart(args)
    if args.chart is not None or args.output is not None or args.precision is not None:
        raise _Usage("a chart name, -o and --precision apply to 'costmodel catalog chart' only")
    catalog = _catalog(args.prices)
    providers = sorted({i.provider for i in catalog.instances.values()})
    provider = None if args.provider is None else _choice("provider", args.provider, providers)
    tier = None if args.tier is None else _choice("tier", args.tier, TIERS)
    items = catalog_items(catalog, args.table, provider, tier)
    if args.format == "json":
        sys.stdout.write(catalog_json(catalog, args.table, items))
    elif args.format == "csv":
        sys.stdout.write(catalog_csv(args.table, items))
    else:
        _print(lambda console: print_catalog(catalog, args.table, console, items))
    return 0


#: The option of ``costmodel compare`` that sets each key of a comparison request.
_COMPARE_FLAGS = {
    "utilisation": "--utilisation",
    "precision": "--precision",
    "horizon_months": "--horizon",
    "min_memory_gb": "--min-memory",
    "tier": "--tier",
    "samples": "--samples",
    "seed": "--seed",
}


def _cmd_compare(args: argparse.Namespace) -> int:
    import time

    from cli.tables import compare_csv, print_compare
    from scenarios.compare import compare, load_request
    from scenarios.errors import ScenarioError

    given = {
        "utilisation": args.utilisation,
        "precision": args.precision and args.precision.strip().casefold(),
        "horizon_months": args.horizon,
        "min_memory_gb": args.min_memory,
        "tier": args.tier and args.tier.strip().casefold(),
        "samples": args.samples,
        "seed": args.seed,
    }
    try:
        request = load_request({k: v for k, v in given.items() if v is not None})
    except ScenarioError as exc:
        raise _Usage(
            "; ".join(f"{_COMPARE_FLAGS.get(e['path'], e['path'])}: {e['message']}"
                      for e in exc.errors)
        ) from None  # fmt: skip
    if args.top is not None and args.top < 0:
        raise _Usage("--top must be 0 (all) or more")
    catalog = _catalog(args.prices)
    start = time.perf_counter()
    result = compare(request, catalog)
    elapsed = time.perf_counter() - start
    if args.format == "json":
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n")
    elif args.format == "csv":
        sys.stdout.write(compare_csv(result))
    else:
        top = args.top if args.top is not None else 30
        _print(lambda console: print_compare(result, console, top or None))
    if args.verbose:
        t = result.timings
        print(
            f"compare time: {elapsed:.2f} s for {len(result.options)} options x "
            f"{request.samples:,} samples (resolving {t['resolve_s']:.2f} s, engine "
            f"{t['engine_s']:.2f} s)",
            file=sys.stderr,
        )
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from scenarios.jsonschema import scenario_json_schema

    print(json.dumps(scenario_json_schema(), indent=2))
    return 0


def _cmd_batch(args: argparse.Namespace) -> int:
    from pricing import read_prices
    from scenarios.batch import BatchError, run_batch
    from scenarios.store import StoreError

    if args.workers is not None and args.workers < 1:
        raise _Usage("--workers must be at least 1")
    prices = read_prices(args.prices) if args.prices else ()
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
            prices=prices,
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
    """A result JSON file, validated: a plan's (``kind: plan``) or a scenario's; any other JSON
    is ``None`` (read as a scenario or a plan)."""
    from marshmallow import ValidationError

    from costmodel.present import from_dict
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
        return from_dict(data)
    except ValidationError as exc:
        raise ScenarioError(str(source), flatten_messages(exc.messages)) from None


def _cmd_report(args: argparse.Namespace) -> int:
    import scenarios
    from costmodel.present.reports import write

    _check_output(args.output, args.format)
    out, fmt = _report_target(args.output, args.format)
    source = Path(args.input)
    result = _read_result(source) if source.suffix.lower() == ".json" else None
    if result is None:
        result = scenarios.evaluate(
            source, samples=args.samples, seed=args.seed, catalog=_catalog(args.prices)
        )
    elif args.samples is not None or args.seed is not None or args.prices is not None:
        raise _Usage(
            "--samples/--seed/--prices apply to a scenario or a plan, not to a result JSON"
        )
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


def _add_prices(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--prices",
        metavar="FILE",
        help="your own prices (CSV or YAML: negotiated or current instance and GPU prices) "
        "laid over the catalog's; see docs/prices.md",
    )


def _add_evaluation(
    sub: Any,
    name: str,
    func: Any,
    *,
    help: str,
    description: str,
    examples: tuple[str, ...],
    document: tuple[str, str],
) -> None:
    """A command that evaluates one document (``run``, ``plan``): FILE, the sampling
    overrides, --prices, --format table|json and --verbose."""
    p = sub.add_parser(
        name,
        help=help,
        description=description,
        epilog=_examples(*examples),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what, block = document
    p.add_argument("file", metavar="FILE", help=what)
    _add_overrides(p, block)
    _add_prices(p)
    p.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table for people (default), json for the full result",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="print the engine time on stderr")
    p.set_defaults(func=func)


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

    _add_evaluation(
        sub,
        "run",
        _cmd_run,
        help="evaluate one scenario file and print the answer",
        description="Evaluate one scenario YAML file: verdict, break-even utilisation and a "
        "table of total cost by utilisation.",
        examples=(
            "costmodel run scenario.yaml",
            "costmodel run scenario.yaml --samples 100000 --seed 7 --format json > result.json",
        ),
        document=("scenario YAML file", "the scenario's simulation block"),
    )
    _add_evaluation(
        sub,
        "plan",
        _cmd_plan,
        help="evaluate a fleet plan: how many servers to own, reserve and burst",
        description="Evaluate a plan file (kind: plan): every mix of owned servers and "
        "reserved instances against a growing, uncertain demand, the rest burst to on-demand "
        "or spot instances; prints the best mix, the cost-versus-risk frontier and each "
        "candidate's cost.",
        examples=(
            "costmodel plan scenarios/examples/plan-lab-rtx4090-growth.yaml",
            "costmodel plan plan.yaml --samples 20000 --format json > plan-result.json",
        ),
        document=("plan YAML file (kind: plan)", "the plan's simulation block"),
    )

    p = sub.add_parser(
        "batch",
        help="evaluate many scenario and plan files into results and reports",
        description="Evaluate scenario and plan files, folders and globs in parallel, "
        "resumably, and write a result JSON and reports per document plus summary.csv.",
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
    _add_prices(p)
    p.add_argument(
        "--format",
        nargs="+",
        action="extend",
        choices=_FORMATS,
        help="report formats (default: html)",
    )
    p.add_argument(
        "--db",
        metavar="PATH|URL",
        help="run store: a SQLite file or a postgresql:// URL (default: $COSTMODEL_DB)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_batch)

    p = sub.add_parser(
        "report",
        help="write a report of a scenario, a plan or a result JSON",
        description="Write an HTML, Markdown, CSV, XLSX or JSON report of a scenario or plan "
        "YAML (evaluated first) or of a result JSON written by 'run', 'plan' or 'batch'.",
        epilog=_examples(
            "costmodel report scenario.yaml -o report.html",
            "costmodel report result.json --format xlsx -o report",
        ),
        formatter_class=fmt,
    )
    p.add_argument("input", metavar="FILE", help="scenario or plan YAML, or result JSON")
    p.add_argument(
        "--format",
        choices=_FORMATS,
        help="report format (default: from OUT's extension)",
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="report file to write")
    _add_overrides(p, "the scenario's simulation block; scenarios only")
    _add_prices(p)
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser(
        "catalog",
        help="list the GPU or cloud instance catalog",
        description="List the shipped catalog of GPUs or cloud instances with its version, as a "
        "table, JSON (every field, with sources and price history) or CSV. --provider and "
        "--tier keep the instances of one provider or kind of provider (for gpus: the GPUs "
        "they rent out). 'chart' draws the catalog as the buyer's guide did, to a PNG or SVG.",
        epilog=_examples(
            "costmodel catalog gpus",
            "costmodel catalog instances --tier neocloud",
            "costmodel catalog instances --provider lambda --format csv > lambda.csv",
            "costmodel catalog gpus --provider runpod --format json",
            "costmodel catalog chart gflops-per-dollar -o gflops-per-dollar.svg",
            "costmodel catalog chart cost-per-hour --prices my-prices.csv -o cost.png",
        ),
        formatter_class=fmt,
    )
    p.add_argument(
        "table",
        choices=("gpus", "instances", "chart"),
        help="which catalog to list, or chart to draw a chart of it",
    )
    p.add_argument(
        "chart",
        nargs="?",
        metavar="CHART",
        help="with 'chart': gflops-per-dollar (throughput against price, by series), "
        "gflops-per-watt (energy against compute) or cost-per-hour (rented cost per "
        "reference GPU-hour by provider tier)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="with 'chart': the .png or .svg to write")
    p.add_argument(
        "--precision",
        choices=("fp32", "fp16"),
        help="with 'chart': FP32 or the dense FP16 tensor peak (default: fp32 for the GPU "
        "charts, fp16 for cost-per-hour)",
    )
    _add_prices(p)
    p.add_argument(
        "--format",
        choices=("table", "json", "csv"),
        default="table",
        help="output format (default: table)",
    )
    p.add_argument(
        "--provider",
        metavar="P",
        help="only this provider's instances (aws, gcp, azure, lambda, coreweave, ...)",
    )
    p.add_argument(
        "--tier",
        metavar="T",
        help="only instances of this tier: hyperscaler, neocloud or marketplace",
    )
    p.set_defaults(func=_cmd_catalog)

    p = sub.add_parser(
        "compare",
        help="rank every owned and rented option by cost per reference GPU-hour",
        description="Rank every way the catalog offers the compute at one utilisation: each "
        "priced GPU owned at 1, 2, 4 and 8 per server (its catalog platform tier) and each "
        "instance rented on demand, spot or reserved for 1 or 3 years, by cost per reference "
        "GPU-hour, P50 with P10-P90 under a default uncertainty of +-10 % on prices, +-20 % "
        "on electricity and +-25 % on resale decay. Options the buyer's-guide advice rules out "
        "are left out. Also prints the cheapest owned and rented option and the utilisation "
        "at which they break even.",
        epilog=_examples(
            "costmodel compare --utilisation 0.5",
            "costmodel compare --utilisation 0.25 --min-memory 24 --tier neocloud",
            "costmodel compare --utilisation 0.8 --horizon 24 --prices my-prices.csv "
            "--format json > compare.json",
        ),
        formatter_class=fmt,
    )
    p.add_argument(
        "--utilisation",
        "-u",
        required=True,
        type=float,
        metavar="U",
        help="busy share of wall-clock hours, in (0, 1]",
    )
    p.add_argument(
        "--precision", metavar="P", help="fp32, fp16 (default) or int8: picks the throughput"
    )
    p.add_argument("--horizon", type=int, metavar="H", help="months owned or rented (default 36)")
    p.add_argument("--min-memory", type=float, metavar="GB", help="leave out GPUs with less memory")
    p.add_argument(
        "--tier",
        metavar="T",
        help="only instances of this tier: hyperscaler, neocloud or marketplace",
    )
    _add_prices(p)
    p.add_argument(
        "--samples",
        type=_samples,
        metavar="N",
        help="Monte Carlo draws per option (default 2,000)",
    )
    p.add_argument("--seed", type=_seed, metavar="S", help="random seed (default 0)")
    p.add_argument(
        "--format",
        choices=("table", "json", "csv"),
        default="table",
        help="table for people (default), json or csv with every option",
    )
    p.add_argument(
        "--top",
        type=int,
        metavar="N",
        help="table: show the N cheapest options (default 30; 0: all)",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="print the time on stderr")
    p.set_defaults(func=_cmd_compare)

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
