"""``costmodel prices``: prices that stay current. ``import`` turns public price files into a
prices file, ``pull`` downloads them first, ``history`` shows how a price moved and its trend.

Every import is kept in the run store (``--db``, default ``$COSTMODEL_DB``); the prices file is
written only once every source has been read, matched and checked, and never in part.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from cli.common import UsageError, check_output, choice
from cli.options import command
from pricing.text import counted

__all__ = ["add_parser", "execute"]

#: Providers ``pull`` can download: the SkyPilot catalog's folder of each, or the Azure API.
PULL_SOURCES = {
    "aws": "aws",
    "azure": None,
    "gcp": "gcp",
    "lambda": "lambda",
    "nebius": "nebius",
    "runpod": "runpod",
    "vastai": "vast",
}
_TIMEOUT_S = 30.0
#: The longest wait for one download a --timeout may ask [s].
_MAX_TIMEOUT_S = 3600
#: The formats of ``import --from`` (pricing.importers.FORMATS, kept here so that ``--help``
#: imports nothing; tests/test_prices_import.py checks that the two agree).
IMPORT_FORMATS = ("aws-offer", "azure", "skypilot")


def _add_common(p: argparse.ArgumentParser) -> None:
    """-o, --region and --db: where the prices go, which region's price, which store."""
    p.add_argument(
        "-o", "--output", metavar="PRICES", required=True, help="the prices file to write (.csv)"
    )
    p.add_argument(
        "--region",
        metavar="R",
        help="the region whose price to keep: a region name, or 'cheapest' for the lowest of "
        "any region (default: each catalog row's own region)",
    )
    p.add_argument(
        "--db",
        metavar="PATH|URL",
        help="run store keeping the price history: a SQLite file or a postgresql:// URL "
        "(default: $COSTMODEL_DB)",
    )


def _add_import(sub) -> None:
    p = command(
        sub,
        "import",
        help="write a prices file from public price files",
        description="Read machine-readable public price files, match their rows to catalog "
        "instance ids and write them as a prices file (see docs/prices.md). Rows that match "
        "no catalog instance are listed with the closest ids. SkyPilot files take their "
        "provider from their folder (catalogs/v8/aws/vms.csv) or --provider.",
        examples=(
            "costmodel prices import --from skypilot catalogs/v8/aws/vms.csv -o prices.csv",
            "costmodel prices import --from azure page1.json page2.json -o azure.csv",
            "costmodel prices import --from aws-offer index.json -o aws.csv --region cheapest",
        ),
    )
    p.add_argument("--from", dest="format", required=True, choices=IMPORT_FORMATS,
                   help="the format of the files")  # fmt: skip
    p.add_argument("paths", nargs="+", metavar="PATH", help="the files to read")
    p.add_argument(
        "--provider", metavar="P", help="with --from skypilot: the provider of every file"
    )
    _add_common(p)


def _add_pull(sub) -> None:
    p = command(
        sub,
        "pull",
        help="download public price files and import them",
        description="Download the public price files of the providers (the SkyPilot catalog's "
        "vms.csv; for azure the Retail Prices API) and import them as 'prices import' does. "
        "Offline or on a timeout it stops with exit status 2 and writes nothing.",
        examples=(
            "costmodel prices pull aws lambda nebius -o prices.csv",
            "costmodel prices pull azure -o azure.csv --region eastus",
        ),
    )
    p.add_argument("providers", nargs="+", metavar="PROVIDER",
                   help=f"providers to download: {', '.join(PULL_SOURCES)}")  # fmt: skip
    p.add_argument("--timeout", type=float, default=_TIMEOUT_S, metavar="S",
                   help=f"seconds to wait for each download, at most {_MAX_TIMEOUT_S:,} "
                        f"(default {_TIMEOUT_S:g})")  # fmt: skip
    p.add_argument("--base-url", metavar="URL",
                   help="download from this mirror instead of the public locations")  # fmt: skip
    _add_common(p)


def _add_history(sub) -> None:
    p = command(
        sub,
        "history",
        help="show how a price moved, with its trend",
        description="List every imported price of a catalog id from the run store, fit a "
        "least-squares line to the logarithm of the price against time, and print the annual "
        "change with its standard error as a price_annual_change a scenario can use.",
        examples=(
            "costmodel prices history aws/p3.2xlarge",
            "costmodel prices history lambda/gpu_1x_a100 --pricing on_demand --chart a100.png",
        ),
    )
    p.add_argument("id", metavar="ID", help="catalog instance id, e.g. aws/p3.2xlarge")
    p.add_argument("--pricing", metavar="P", help="on_demand, spot, reserved_1y or reserved_3y")
    p.add_argument("--chart", metavar="FILE", help="also draw the history to a .png or .svg")
    p.add_argument("--db", metavar="PATH|URL", help="run store (default: $COSTMODEL_DB)")


def add_parser(sub) -> None:
    p = command(
        sub,
        "prices",
        help="import current prices from public catalogs, keep and fit their history",
        description="Keep prices current: 'import' writes a prices file (--prices) from public "
        "price files, 'pull' downloads them first, 'history' shows how a price moved and its "
        "trend. Every import is kept in the run store.",
        examples=(
            "costmodel prices pull aws lambda -o prices.csv",
            "costmodel catalog instances --prices prices.csv",
            "costmodel prices history aws/p3.2xlarge",
        ),
    )
    actions = p.add_subparsers(
        dest="action", required=True, metavar="ACTION", help="import, pull or history"
    )
    for add in (_add_import, _add_pull, _add_history):
        add(actions)
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    if args.action == "history":
        return _history(args)
    if Path(args.output).suffix.lower() != ".csv":
        raise UsageError(f"{args.output}: the prices file is written as .csv")
    check_output(args.output, "csv", args.paths if args.action == "import" else ())
    batches = _read_files(args) if args.action == "import" else _pull(args)
    return _finish(args, batches)


# ---------------------------------------------------------------------------------------------
# import


def _read_files(args: argparse.Namespace) -> list:
    from pricing import load_catalog
    from pricing.importers import files, skypilot

    if args.provider and args.format != skypilot.FORMAT:
        raise UsageError("--provider applies to --from skypilot only")
    providers = {i.provider for i in load_catalog().instances.values()}
    return [
        files.read(args.format, name, providers=providers, provider=args.provider)
        for name in args.paths
    ]


def _finish(args: argparse.Namespace, batches: list) -> int:
    """Match, check, keep in the history, then write the prices file whole."""
    from pricing import CatalogError, apply_prices, load_catalog
    from pricing.importers import CHEAPEST, match
    from pricing.prices import write_prices

    catalog = load_catalog()
    region = args.region.strip() if args.region else None
    if region and region.casefold() == CHEAPEST:
        region = CHEAPEST
    imported = match(catalog, batches, region=region)
    if not imported.entries:
        _report_unmapped(imported.unmapped)
        files = ", ".join(b.file for b in batches)
        raise UsageError(f"no price of a catalog instance in {files}; nothing was written")
    try:  # the catalog's ranges, before anything is kept
        apply_prices(catalog, imported.entries)
    except CatalogError as exc:  # located at the source row; say which price it was
        raise CatalogError(exc.problem, file=exc.file, row_id=exc.row_id) from None
    _keep(args.db, imported.entries)
    try:
        write_prices(args.output, imported.entries)
    except OSError as exc:
        raise UsageError(f"{args.output}: cannot write the prices: {exc.strerror or exc}") from None
    _report(args.output, imported)
    return 0


def _keep(db: str | None, entries) -> None:
    from scenarios.store import RunStore, StoreError

    try:
        with RunStore(db) as store:
            store.add_prices(entries)
    except StoreError as exc:
        raise UsageError(f"{exc}; nothing was written") from None


def _report(output: str, imported) -> None:
    instances = len({e.id for e in imported.entries})
    prices = counted(len(imported.entries), "price")
    print(f"wrote {output}: {prices} of {counted(instances, 'catalog instance')}")
    for e in imported.entries:
        print(f"  {e.id:<40} {e.pricing:<12} {e.value:>10.4f}  {e.note}")
    if imported.skipped:
        print(f"skipped {counted(imported.skipped, 'row')} that price no GPU instance")
    _report_unmapped(imported.unmapped)


def _report_unmapped(unmapped) -> None:
    if not unmapped:
        return
    print(f"not imported ({len(unmapped)}):")
    for u in unmapped:
        more = f" and {u.rows - 1} more row{'s' if u.rows > 2 else ''}" if u.rows > 1 else ""
        print(f"  {u.file}, row {u.row!r}{more}: {u.reason}")


# ---------------------------------------------------------------------------------------------
# pull


class _Offline(UsageError):
    """A download failed: offline, a timeout, an HTTP error, or too much data."""


def _download(url: str, timeout: float, limit: int = 256 * 2**20) -> str:
    """The text at ``url`` [at most ``limit`` bytes], or :class:`_Offline`."""
    import http.client
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"User-Agent": "costmodel (prices pull)"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            data = response.read(limit + 1)
            missing = response.length or 0  # bytes the server announced and did not send
    except urllib.error.HTTPError as exc:
        raise _Offline(f"cannot download {url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
            reason = f"no answer within {timeout:g} s"
        raise _Offline(f"cannot download {url}: {reason} (offline?)") from None
    if missing:
        raise _Offline(f"cannot download {url}: cut short, {missing} bytes missing")
    if len(data) > limit:
        raise _Offline(f"cannot download {url}: more than {limit // 2**20} MiB")
    return data.decode("utf-8-sig")


def _azure_pages(base: str | None, timeout: float, today: str) -> list:
    import json
    import urllib.parse

    from pricing import load_catalog
    from pricing.importers import azure

    names = sorted(i.name for i in load_catalog().instances.values() if i.provider == "azure")
    wanted = " or ".join(f"armSkuName eq '{n}'" for n in names)
    query = urllib.parse.urlencode(
        {"$filter": f"serviceName eq 'Virtual Machines' and ({wanted})"},
        quote_via=urllib.parse.quote,
    )
    start = (
        f"{(base or azure.URL.removesuffix('/api/retail/prices')).rstrip('/')}/api/retail/prices"
    )
    url, pages, origin = f"{start}?{query}", [], urllib.parse.urlsplit(start)[:2]
    while url and len(pages) < 200:
        text = _download(url, timeout)
        pages.append(azure.parse(text, file=url, source_url=azure.URL, file_date=today))
        link = json.loads(text).get("NextPageLink")
        if link and urllib.parse.urlsplit(link)[:2] != origin:
            raise _Offline(f"{url}: NextPageLink {link!r} leaves {origin[1]}; stopped")
        url = link
    return pages


def _check_mirror(base: str) -> None:
    """A usage error unless ``base`` reads as a URL (urllib refuses the others with a
    ValueError before any download)."""
    import urllib.parse

    try:
        problem = None if urllib.parse.urlsplit(base).scheme else "no scheme"
    except ValueError as exc:
        problem = str(exc)
    if problem:
        raise UsageError(
            f"--base-url {base!r}: not a URL of a mirror ({problem}); e.g. "
            "https://mirror.example/skypilot-catalog"
        )


def _pull(args: argparse.Namespace) -> list:
    from pricing.importers import skypilot

    if not 0 < args.timeout <= _MAX_TIMEOUT_S:  # the socket takes no infinite timeout
        raise UsageError(
            f"--timeout must be a positive number of seconds, at most {_MAX_TIMEOUT_S:,}"
        )
    if args.base_url:
        _check_mirror(args.base_url)
    providers = [choice("provider", p, tuple(PULL_SOURCES)) for p in args.providers]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    batches = []
    for provider in dict.fromkeys(providers):
        folder = PULL_SOURCES[provider]
        if folder is None:
            batches += _azure_pages(args.base_url, args.timeout, today)
            continue
        public = skypilot.url(folder)
        url = skypilot.url(folder, base=args.base_url) if args.base_url else public
        text = _download(url, args.timeout)
        batches.append(skypilot.parse(text, file=url, provider=provider, source_url=public,
                                      file_date=today))  # fmt: skip
    return batches


# ---------------------------------------------------------------------------------------------
# history


def _history(args: argparse.Namespace) -> int:
    from pricing.vocabulary import PRICING_MODELS
    from scenarios.store import RunStore, StoreError

    pricing = None if args.pricing is None else choice("pricing", args.pricing, PRICING_MODELS)
    try:
        with RunStore(args.db) as store:
            kept = store.price_history(args.id, pricing)
            where = store.location
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    if not kept:
        _no_history(args.id, pricing, where)
    series: dict[str, list] = {}
    for obs in sorted(kept, key=lambda o: PRICING_MODELS.index(o.pricing)):  # stable: by date
        series.setdefault(obs.pricing, []).append(obs)
    for name, observations in series.items():
        _print_series(args.id.casefold(), name, observations)
    if args.chart:
        _chart(args, series)
    return 0


def _no_history(item: str, pricing: str | None, where: str):
    from pricing import load_catalog
    from pricing.suggest import did_you_mean

    which = f" {pricing}" if pricing else ""
    missing = f"no{which} price of {item!r} in the price history of {where}"
    ids = sorted(load_catalog().instances)
    if item.casefold() not in ids:
        hint = did_you_mean(item.casefold(), ids)
        raise UsageError(
            f"{missing}: it is no catalog instance id{hint} (see 'costmodel catalog instances')"
        )
    raise UsageError(
        f"{missing} (import prices with 'costmodel prices import' or 'costmodel prices pull')"
    )


def _print_series(item: str, pricing: str, observations) -> None:
    from pricing.trend import fit, suggestion

    print(f"{item} {pricing} [USD/h]")
    previous = None
    for o in observations:
        change = "" if previous is None else f"{o.usd / previous - 1:+8.1%}"
        print(f"  {o.as_of}  {o.usd:>10.4f}  {change:>8}  {o.source}")
        previous = o.usd
    trend = fit([o.date for o in observations], [o.usd for o in observations])
    if trend is None:
        print("  trend: one date only, no trend yet (import again later)")
    elif trend.annual_change_se is None:
        print(f"  trend: {trend.annual_change:+.1%} a year from two dates (no standard error "
              "below three dates)")  # fmt: skip
    else:
        print(f"  trend: {trend.annual_change:+.1%} a year, standard error "
              f"{trend.annual_change_se:.1%}, from {trend.dates} dates over "
              f"{trend.span_years:.1f} years")  # fmt: skip
        print("  for a scenario's rent block (or a plan's reserve or burst block):")
        print(f"    {suggestion(trend, 'price_annual_change')}")
    print()


def _chart(args: argparse.Namespace, series) -> None:
    from pricing.trend import write_history_chart

    if Path(args.chart).suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"{args.chart}: a chart is written as .png or .svg")
    check_output(args.chart, Path(args.chart).suffix.lstrip("."))
    points = {name: [(o.date, o.usd) for o in obs] for name, obs in series.items()}
    try:
        written = write_history_chart(args.chart, points, f"{args.id}: imported prices")
    except OSError as exc:
        raise UsageError(f"{args.chart}: cannot write the chart: {exc.strerror or exc}") from None
    print(written)
