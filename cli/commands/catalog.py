"""``costmodel catalog``: list the GPU, instance, grid, served-model or API-offer catalog, or draw
a chart of it."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

from cli.common import UsageError, catalog, check_output, choice, print_rendered
from cli.options import add_format, add_prices, add_tier, command

__all__ = ["add_parser", "execute"]


def add_parser(sub) -> None:
    p = command(
        sub,
        "catalog",
        help="list the GPU, cloud instance, grid carbon, model or API offer catalog",
        description="List the shipped catalog of GPUs, cloud instances, grids (carbon "
        "intensity of countries, US eGRID subregions and cloud regions), served models "
        "(parameters and architecture, the GPUs each is measured on) or hosted API offers "
        "(prices per million tokens) with its version, as a table, JSON (every field, with "
        "sources and price history; for models and API offers the records of the HTTP API's "
        "/v1/catalog/models and /v1/catalog/api-offers) or CSV. --provider and --tier keep the "
        "instances of one provider or kind of provider (for gpus: the GPUs they rent out; "
        "--provider also keeps one provider's API offers, --model one model's). 'chart' draws "
        "the catalog as the buyer's guide did, to a PNG or SVG.",
        examples=(
            "costmodel catalog gpus",
            "costmodel catalog instances --tier neocloud",
            "costmodel catalog instances --provider lambda --format csv > lambda.csv",
            "costmodel catalog gpus --provider runpod --format json",
            "costmodel catalog grids --format csv > grids.csv",
            "costmodel catalog models",
            "costmodel catalog api-offers --model llama-3.3-70b",
            "costmodel catalog chart gflops-per-dollar -o gflops-per-dollar.svg",
            "costmodel catalog chart cost-per-hour --prices my-prices.csv -o cost.png",
        ),
    )
    p.add_argument(
        "table",
        choices=("gpus", "instances", "grids", "models", "api-offers", "chart"),
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
    p.add_argument("--model", metavar="M", help="with api-offers: only the offers of this model")
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    from cli.tables import catalog_csv, catalog_items, catalog_json, print_catalog, print_grids
    from pricing.vocabulary import TIERS

    if args.table == "chart":
        return _chart(args)
    if args.chart is not None or args.output is not None or args.precision is not None:
        raise UsageError("a chart name, -o and --precision apply to 'costmodel catalog chart' only")
    listed = catalog(args.prices)
    if args.table in ("models", "api-offers"):
        return _served(args, listed)
    if args.model is not None:
        raise UsageError("--model keeps the offers of one model: 'costmodel catalog api-offers'")
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


def _served(args: argparse.Namespace, listed) -> int:
    """``catalog models`` and ``catalog api-offers``; --provider and --model keep API offers."""
    from cli.served import model_record, offer_record, print_api_offers, print_models

    models = args.table == "models"
    if args.tier is not None or (models and (args.provider or args.model) is not None):
        kept = "--provider and --model keep API offers" if models else "--tier keeps instances"
        raise UsageError(f"{kept}: not 'costmodel catalog {args.table}'")
    if models:
        items, record, show = list(listed.models.values()), model_record, print_models
    else:
        items, record, show = _offers(args, listed), offer_record, print_api_offers
    if args.format == "table":
        print_rendered(lambda console: show(listed, console, items))
        return 0
    rows = [record(listed, x) for x in items]
    if args.format == "json":
        doc = {"version": listed.version, "as_of": listed.as_of, "table": args.table}
        sys.stdout.write(json.dumps({**doc, "items": rows}, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_csv(rows))
    return 0


def _offers(args: argparse.Namespace, listed) -> list:
    """The API offers kept by --provider and --model (checked names, closest on a miss)."""
    from pricing.errors import CatalogError

    offers = list(listed.api_offers.values())
    if args.provider is not None:
        provider = choice("provider", args.provider, sorted({o.provider for o in offers}))
        offers = [o for o in offers if o.provider == provider]
    if args.model is not None:
        try:
            model = listed.model(args.model).id
        except CatalogError as exc:
            raise UsageError(f"--model: {exc.problem}") from None
        offers = [o for o in offers if o.model == model]
    return offers


def _csv(rows: list[dict]) -> str:
    """The records as CSV: lists joined by ';', the GPUs measured left out (JSON has them)."""
    out = io.StringIO()
    flat = [
        {k: ";".join(v) if isinstance(v, list | tuple) else ("" if v is None else v)
         for k, v in r.items() if k != "measured_on"}
        for r in rows
    ]  # fmt: skip
    writer = csv.DictWriter(out, fieldnames=list(flat[0]) if flat else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(flat)
    return out.getvalue()


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
