"""``costmodel batch``: evaluate many scenario and plan files into results and reports."""

from __future__ import annotations

import argparse
import sys

from cli.common import UsageError
from cli.options import FORMATS, add_format, add_overrides, add_prices, add_serving, command

__all__ = ["add_parser", "execute"]


def add_parser(sub) -> None:
    p = command(
        sub,
        "batch",
        help="evaluate many scenario and plan files into results and reports",
        description="Evaluate scenario and plan files, folders and globs in parallel, "
        "resumably, and write a result JSON and reports per document plus summary.csv.",
        examples=(
            "costmodel batch scenarios/examples --out out",
            "costmodel batch 'runs/**/*.yaml' --out out --format html xlsx --workers 4",
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="YAML files, folders or globs")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for results and reports")
    p.add_argument("--workers", type=int, metavar="N", help="worker processes (default: CPUs)")
    p.add_argument(
        "--dask-scheduler",
        metavar="ADDRESS",
        help="run on this Dask scheduler (needs the 'distributed' extra)",
    )
    add_overrides(p, "every scenario's simulation block")
    add_prices(p)
    add_serving(p)
    add_format(
        p,
        FORMATS,
        f"report formats: {', '.join(FORMATS)} (default: html)",
        nargs="+",
        action="extend",
        metavar="FORMAT",
    )
    p.add_argument(
        "--db",
        metavar="PATH|URL",
        help="run store: a SQLite file or a postgresql:// URL (default: $COSTMODEL_DB)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    from pricing import read_prices, read_serving
    from scenarios.batch import BatchError, run_batch
    from scenarios.store import StoreError

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    prices = read_prices(args.prices) if args.prices else ()
    serving = read_serving(args.serving) if args.serving else ()
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
            serving=serving,
        )
    except (BatchError, StoreError) as exc:
        raise UsageError(str(exc)) from None
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
        f"(already in the run store), {summary.failed} failed"
    )
    print(f"summary: {summary.summary_csv}")
    return 1 if summary.failed else 0
