"""``costmodel catalog``: list the GPU or instance catalog, or draw a chart of it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli.common import UsageError, catalog, check_output, choice, print_rendered
from cli.options import add_format, add_prices, add_tier, command

__all__ = ["add_parser", "execute"]


def add_parser(sub) -> None:
    p = command(
        sub,
        "catalog",
        help="list the GPU, cloud instance or grid carbon catalog",
        description="List the shipped catalog of GPUs, cloud instances or grids (carbon "
        "intensity of countries, US eGRID subregions and cloud regions) with its version, as a "
        "table, JSON (every field, with sources and price history) or CSV. --provider and "
        "--tier keep the instances of one provider or kind of provider (for gpus: the GPUs "
        "they rent out). 'chart' draws the catalog as the buyer's guide did, to a PNG or SVG.",
        examples=(
            "costmodel catalog gpus",
            "costmodel catalog instances --tier neocloud",
            "costmodel catalog instances --provider lambda --format csv > lambda.csv",
            "costmodel catalog gpus --provider runpod --format json",
            "costmodel catalog grids --format csv > grids.csv",
            "costmodel catalog chart gflops-per-dollar -o gflops-per-dollar.svg",
            "costmodel catalog chart cost-per-hour --prices my-prices.csv -o cost.png",
        ),
    )
    p.add_argument(
        "table",
        choices=("gpus", "instances", "grids", "chart"),
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
    add_prices(p)
    add_format(p, ("table", "json", "csv"), "output format (default: table)", default="table")
    p.add_argument(
        "--provider",
        metavar="P",
        help="only this provider's instances (aws, gcp, azure, lambda, coreweave, ...)",
    )
    add_tier(p)
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    from cli.tables import catalog_csv, catalog_items, catalog_json, print_catalog, print_grids
    from pricing.vocabulary import TIERS

    if args.table == "chart":
        return _chart(args)
    if args.chart is not None or args.output is not None or args.precision is not None:
        raise UsageError("a chart name, -o and --precision apply to 'costmodel catalog chart' only")
    listed = catalog(args.prices)
    if args.table == "grids":
        return _grids(args, listed, print_grids, catalog_json, catalog_csv)
    providers = sorted({i.provider for i in listed.instances.values()})
    provider = None if args.provider is None else choice("provider", args.provider, providers)
    tier = None if args.tier is None else choice("tier", args.tier, TIERS)
    items = catalog_items(listed, args.table, provider, tier)
    if args.format == "json":
        sys.stdout.write(catalog_json(listed, args.table, items))
    elif args.format == "csv":
        sys.stdout.write(catalog_csv(args.table, items))
    else:
        print_rendered(lambda console: print_catalog(listed, args.table, console, items))
    return 0


def _grids(args: argparse.Namespace, listed, show, as_json, as_csv) -> int:
    """``catalog grids``: every grid's carbon intensity; the instance filters do not apply."""
    if args.provider is not None or args.tier is not None:
        raise UsageError("--provider and --tier keep instances: they do not apply to grids")
    items = list(listed.grids.values())
    if args.format == "json":
        sys.stdout.write(as_json(listed, "grids", items))
    elif args.format == "csv":
        sys.stdout.write(as_csv("grids", items))
    else:
        print_rendered(lambda console: show(listed, console))
    return 0


def _chart(args: argparse.Namespace) -> int:
    from pricing.charts import CHARTS, write_chart

    if args.chart is None or args.output is None:
        raise UsageError(
            f"catalog chart needs a chart ({', '.join(CHARTS)}) and -o FILE.png|.svg, e.g. "
            "'costmodel catalog chart gflops-per-dollar -o chart.svg'"
        )
    chart = choice("chart", args.chart, CHARTS)
    if Path(args.output).suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"{args.output}: a chart is written as .png or .svg")
    check_output(args.output, Path(args.output).suffix.lstrip("."))
    try:
        written = write_chart(catalog(args.prices), chart, args.output, args.precision)
    except OSError as exc:
        raise UsageError(f"{args.output}: cannot write the chart: {exc.strerror or exc}") from None
    print(written)
    return 0
