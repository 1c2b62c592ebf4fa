"""The ``costmodel`` command line (DESIGN section 6).

Exit status: 0 on success, 2 for bad input (scenario, arguments, catalog ids), 1 for failures of
a batch. Bad input is reported as ``file:line: key.path: message`` lines on stderr, never as a
traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from pricing import CatalogError, load_catalog

from .errors import ScenarioError
from .scenario import load_file, run

__all__ = ["main", "format_table"]


def _money(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def _pct(x: float | None) -> str:
    return "never" if x is None else f"{100 * x:.1f}%"


def format_table(result: dict) -> str:
    """A readable text summary of a result: verdict, break-even, per-utilisation table."""
    be = result["breakeven_utilisation"]
    lines = [
        f"{result['scenario']['name']}  (samples={result['samples']}, seed={result['seed']}, "
        f"method={result['method']}, catalog {result['catalog']['version']})",
        "",
        result["verdict"],
        "",
        f"Break-even utilisation  P10 {_pct(be['p10'])}  P50 {_pct(be['p50'])}  "
        f"P90 {_pct(be['p90'])}   (always: {100 * be['prob_always']:.0f}% of draws, "
        f"never: {100 * be['prob_never']:.0f}%)",
        "",
    ]
    head = (
        f"{'util':>6}  {'buy TCO P50 [USD]':>18} {'(P10 .. P90)':>23}  "
        f"{'rent TCO P50 [USD]':>18} {'(P10 .. P90)':>23}  {'P(buy<rent)':>11}  "
        f"{'payback P50 [mo]':>16}"
    )
    lines += [head, "-" * len(head)]
    buy, rent, pay = result["buy_tco"], result["rent_tco"], result["payback_months"]
    for j, u in enumerate(result["utilisation"]):
        payback = pay["p50"][j]
        lines.append(
            f"{100 * u:>5.0f}%  {_money(buy['p50'][j]):>18} "
            f"{'(' + _money(buy['p10'][j]) + ' .. ' + _money(buy['p90'][j]) + ')':>23}  "
            f"{_money(rent['p50'][j]):>18} "
            f"{'(' + _money(rent['p10'][j]) + ' .. ' + _money(rent['p90'][j]) + ')':>23}  "
            f"{100 * result['prob_buy_cheaper'][j]:>10.0f}%  "
            f"{'never' if payback is None else f'{payback:.1f}':>16}"
        )
    if result["warnings"]:
        lines += ["", "Warnings:"]
        lines += [f"  [{w['severity']}] {w['code']}: {w['message']}" for w in result["warnings"]]
    return "\n".join(lines)


def _cmd_run(args: argparse.Namespace) -> int:
    scenario = load_file(args.file)
    timings: dict[str, float] = {}
    result = run(scenario, samples=args.samples, seed=args.seed, timings=timings)
    if args.format == "json":
        print(json.dumps(result, indent=2, allow_nan=False))
    else:
        print(format_table(result))
    if args.verbose:
        print(
            f"engine time: {timings['engine_s'] * 1000:.1f} ms for {result['samples']} samples "
            f"x {len(result['utilisation'])} utilisation levels",
            file=sys.stderr,
        )
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    cat = load_catalog()
    if args.table == "gpus":
        rows = [
            (
                g.id,
                g.name,
                f"{g.memory_gb:g}",
                f"{g.tdp_w:g}",
                "-"
                if g.price_usd is None
                else f"{g.price_usd:,.0f}" + ("*" if g.price_estimated else ""),
                "-" if g.fp32_tflops is None else f"{g.fp32_tflops:g}",
                "-" if g.fp16_tflops is None else f"{g.fp16_tflops:g}",
                f"{g.measured['fp16']:.2f}" if "fp16" in g.measured else "-",
            )
            for g in cat.gpus.values()
        ]
        header = (
            "id",
            "name",
            "mem [GB]",
            "TDP [W]",
            "price [USD]",
            "FP32 [TFLOPS]",
            "FP16 [TFLOPS]",
            "fp16 vs V100",
        )
    else:

        def p(x: float | None) -> str:
            return "-" if x is None else f"{x:,.3f}"

        rows = [
            (
                i.id,
                i.gpu,
                str(i.gpu_count),
                p(i.on_demand_usd_per_hour),
                p(i.reserved_1y_usd_per_hour),
                p(i.reserved_3y_usd_per_hour),
                p(i.spot_usd_per_hour),
                i.region,
                str(i.as_of),
            )
            for i in cat.instances.values()
        ]
        header = (
            "id",
            "gpu",
            "GPUs",
            "on-demand [USD/h]",
            "1y [USD/h]",
            "3y [USD/h]",
            "spot [USD/h]",
            "region",
            "as of",
        )
    widths = [max(len(header[k]), *(len(r[k]) for r in rows)) for k in range(len(header))]
    for row in (header, *rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    print(
        f"\ncatalog {cat.version} (as of {cat.as_of})"
        + ("; * estimated price" if args.table == "gpus" else "")
    )
    return 0


def _cmd_batch(args: argparse.Namespace) -> int:
    from .batch import BatchError, run_batch
    from .store import StoreError

    if args.workers is not None and args.workers < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return 2
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
        print(f"error: {exc}", file=sys.stderr)
        return 2
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


_REPORT_SUFFIXES = {
    ".html": "html",
    ".htm": "html",
    ".md": "md",
    ".csv": "csv",
    ".xlsx": "xlsx",
    ".json": "json",
}


def _cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from costmodel.reports import ReportError, write

    source = Path(args.input)
    result = None
    if source.suffix.lower() == ".json":
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except OSError as exc:
            message = "file not found" if isinstance(exc, FileNotFoundError) else str(exc)
            raise ScenarioError(str(source), [{"path": "", "message": message}]) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ScenarioError(
                str(source), [{"path": "", "message": f"malformed JSON: {exc}"}]
            ) from None
        if isinstance(data, dict) and "schema_version" in data:
            result = data  # a result JSON; any other JSON is read as a scenario below
    if result is None:
        result = run(load_file(source), samples=args.samples, seed=args.seed)
    elif args.samples is not None or args.seed is not None:
        print("error: --samples/--seed apply to a scenario, not to a result JSON", file=sys.stderr)
        return 2
    fmt = args.format or _REPORT_SUFFIXES.get(Path(args.output).suffix.lower(), "html")
    try:
        written = write(result, fmt, args.output)
    except ReportError as exc:
        print(f"error: {source}: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    """Serve the HTTP API with Flask's development server (production: gunicorn)."""
    from api import create_app  # imported here: the CLI needs Flask only for this command

    try:
        app = create_app()
    except ValueError as exc:  # a limit or key setting in the environment is invalid
        print(f"error: {exc}", file=sys.stderr)
        return 2
    app.run(host=args.host, port=args.port, debug=args.debug, use_reloader=args.debug)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="costmodel", description="Rent-versus-buy cost model for deep-learning GPU compute."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run one scenario YAML file")
    p.add_argument("file")
    p.add_argument("--samples", type=int, help="Monte Carlo draws (overrides the scenario)")
    p.add_argument("--seed", type=int, help="random seed (overrides the scenario)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--verbose", "-v", action="store_true", help="print engine time on stderr")
    p.set_defaults(func=_cmd_run)
    p = sub.add_parser("catalog", help="list the GPU or cloud instance catalog")
    p.add_argument("table", choices=("gpus", "instances"))
    p.set_defaults(func=_cmd_catalog)
    from costmodel.reports import FORMATS

    p = sub.add_parser("batch", help="run scenario files, folders and globs into reports")
    p.add_argument("paths", nargs="+", metavar="PATH", help="YAML files, folders or globs")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for results and reports")
    p.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
    p.add_argument("--dask-scheduler", metavar="ADDRESS", help="run on this Dask scheduler")
    p.add_argument("--samples", type=int, help="Monte Carlo draws (overrides the scenarios)")
    p.add_argument("--seed", type=int, help="random seed (overrides the scenarios)")
    p.add_argument(
        "--format", nargs="+", action="extend", choices=FORMATS, help="report formats (html)"
    )
    p.add_argument("--db", metavar="PATH", help="run store (default: $COSTMODEL_DB)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_batch)
    p = sub.add_parser("report", help="write a report of a scenario YAML or a result JSON")
    p.add_argument("input", metavar="FILE", help="scenario YAML or result JSON")
    p.add_argument("--format", choices=FORMATS, help="default: from OUT's extension, else html")
    p.add_argument("-o", "--output", required=True, metavar="OUT")
    p.add_argument("--samples", type=int, help="Monte Carlo draws (scenario only)")
    p.add_argument("--seed", type=int, help="random seed (scenario only)")
    p.set_defaults(func=_cmd_report)
    p = sub.add_parser("serve", help="serve the HTTP API (development server)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--debug", action="store_true", help="Flask debug mode with reloader")
    p.set_defaults(func=_cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``costmodel`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    if getattr(args, "samples", None) is not None and not 1 <= args.samples <= 1_000_000:
        print("error: --samples must be in [1, 1000000]", file=sys.stderr)
        return 2
    if getattr(args, "seed", None) is not None and args.seed < 0:
        print("error: --seed must not be negative", file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except (ScenarioError, CatalogError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into e.g. head: stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
