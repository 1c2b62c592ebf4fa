"""``costmodel compare``: rank every owned and rented option by cost per reference GPU-hour."""

from __future__ import annotations

import argparse
import json
import sys

from cli.common import UsageError, catalog, print_rendered
from cli.options import (
    add_format,
    add_prices,
    add_samples,
    add_seed,
    add_tier,
    add_verbose,
    command,
)

__all__ = ["add_parser", "execute"]

#: The option of ``costmodel compare`` that sets each key of a comparison request.
_FLAGS = {
    "utilisation": "--utilisation",
    "precision": "--precision",
    "horizon_months": "--horizon",
    "min_memory_gb": "--min-memory",
    "tier": "--tier",
    "samples": "--samples",
    "seed": "--seed",
}


def add_parser(sub) -> None:
    p = command(
        sub,
        "compare",
        help="rank every owned and rented option by cost per reference GPU-hour",
        description="Rank every way the catalog offers the compute at one utilisation: each "
        "priced GPU owned at 1, 2, 4 and 8 per server (its catalog platform tier) and each "
        "instance rented on demand, spot or reserved for 1 or 3 years, by cost per reference "
        "GPU-hour, P50 with P10-P90 under a default uncertainty of +-10 % on prices, +-20 % "
        "on electricity and +-25 % on resale decay. Options the buyer's-guide advice rules out "
        "are left out. Also prints the cheapest owned and rented option and the utilisation "
        "at which they break even.",
        examples=(
            "costmodel compare --utilisation 0.5",
            "costmodel compare --utilisation 0.25 --min-memory 24 --tier neocloud",
            "costmodel compare -u 0.8 --horizon 24 --prices my-prices.csv --format json > c.json",
        ),
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
    add_tier(p)
    add_prices(p)
    add_samples(p, "Monte Carlo draws per option (default 2,000)")
    add_seed(p, "random seed (default 0)")
    add_format(
        p,
        ("table", "json", "csv"),
        "table for people (default), json or csv with every option",
        default="table",
    )
    p.add_argument(
        "--top",
        type=int,
        metavar="N",
        help="table: show the N cheapest options (default 30; 0: all)",
    )
    add_verbose(p, "print the time on stderr")
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    import time

    from cli.tables import compare_csv, print_compare
    from scenarios.compare import compare

    request = _request(args)
    if args.top is not None and args.top < 0:
        raise UsageError("--top must be 0 (all) or more")
    market = catalog(args.prices)
    start = time.perf_counter()
    result = compare(request, market)
    elapsed = time.perf_counter() - start
    if args.format == "json":
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n")
    elif args.format == "csv":
        sys.stdout.write(compare_csv(result))
    else:
        top = args.top if args.top is not None else 30
        print_rendered(lambda console: print_compare(result, console, top or None))
    if args.verbose:
        t = result.timings
        print(
            f"compare time: {elapsed:.2f} s for {len(result.options)} options x "
            f"{request.samples:,} samples (resolving {t['resolve_s']:.2f} s, engine "
            f"{t['engine_s']:.2f} s)",
            file=sys.stderr,
        )
    return 0


def _request(args: argparse.Namespace):
    """The comparison request of the options given; a bad value names its option."""
    from scenarios.compare import load_request
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
        return load_request({k: v for k, v in given.items() if v is not None})
    except ScenarioError as exc:
        raise UsageError(
            "; ".join(f"{_FLAGS.get(e['path'], e['path'])}: {e['message']}" for e in exc.errors)
        ) from None
