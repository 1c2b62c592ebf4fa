"""Laying imported quotes onto the catalog: which catalog instance each quote prices, which
region's price is kept, and the prices-file entries that result.

Rules:

* A quote prices the catalog instance ``provider/name`` (lowercase). A quote of an instance the
  catalog does not list is reported, with the closest catalog ids, and not imported.
* Where the source names accelerators, the name must be one the format knows and must fit the
  catalog instance's GPU; the GPU count, where given, must equal the instance's. Either is an
  error at the quote's row: the row prices something else than the catalog row.
* Region: by default the catalog row's region; ``"cheapest"`` the lowest price of any region;
  any other name that region (compared without case, spaces or hyphens). Several quotes of one
  region (zones) give its lowest. Where the wanted region is missing but every region quotes
  the same price, that price is kept (the price does not depend on the region); otherwise the
  instance is reported as not priced.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..catalog import Catalog
from ..errors import CatalogError
from ..prices import PriceEntry
from ..suggest import closest, closest_hint, closest_instances
from ..text import counted
from .quotes import Batch, Quote

__all__ = ["CHEAPEST", "Imported", "Unmapped", "match"]

#: The ``region`` that keeps the lowest price of any region.
CHEAPEST = "cheapest"
_PRICING_ORDER = ("on_demand", "spot", "reserved_1y", "reserved_3y")


@dataclass(frozen=True)
class Unmapped:
    """Rows that were not imported: ``name`` (``provider/name``), how many ``rows``, the first
    of them (``file``, ``row``) and why (``reason``)."""

    file: str
    row: str
    name: str
    rows: int
    reason: str


@dataclass(frozen=True)
class Imported:
    """What an import gives: the prices-file ``entries``, the ``unmapped`` rows and the count
    of ``skipped`` rows that price no GPU instance."""

    entries: tuple[PriceEntry, ...]
    unmapped: tuple[Unmapped, ...]
    skipped: int


def _region_key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.casefold())


def _check(batch: Batch, quote: Quote, gpu: str, gpu_count: int) -> None:
    """The quote's accelerator and GPU count fit the catalog instance, or an error at its row."""
    if batch.accelerators and quote.accelerator:
        prefix = batch.accelerators.get(quote.accelerator)
        if prefix is None:
            close = closest(quote.accelerator, sorted(batch.accelerators))
            hint = closest_hint(close)
            raise CatalogError(
                f"unknown accelerator name {quote.accelerator!r}{hint}",
                file=batch.file,
                row_id=quote.row,
                column="AcceleratorName",
            )
        if gpu != prefix and not gpu.startswith(prefix + "-"):
            raise CatalogError(
                f"accelerator {quote.accelerator!r} does not fit GPU {gpu!r} of catalog "
                f"instance {quote.id!r}",
                file=batch.file,
                row_id=quote.row,
                column="AcceleratorName",
            )
    if quote.gpu_count is not None and quote.gpu_count != gpu_count:
        raise CatalogError(
            f"{counted(quote.gpu_count, 'GPU')}, but catalog instance {quote.id!r} has {gpu_count}",
            file=batch.file,
            row_id=quote.row,
            column="AcceleratorCount" if batch.accelerators else "gpu",
        )


def _choose(
    by_region: Mapping[str, list[tuple[Batch, Quote]]], wanted: str
) -> tuple[Batch, Quote, str] | str:
    """The (batch, quote, note) kept for one price, or the reason none is."""
    lowest = {key: min(pairs, key=lambda p: p[1].usd_per_hour) for key, pairs in by_region.items()}
    if wanted == CHEAPEST:
        batch, quote = min(lowest.values(), key=lambda p: (p[1].usd_per_hour, p[1].region))
        return batch, quote, f"region {quote.region}, the cheapest of {len(lowest)}"
    pairs = by_region.get(_region_key(wanted))
    if pairs is not None:
        batch, quote = lowest[_region_key(wanted)]
        zones = f", the lowest of {len(pairs)} quotes" if len(pairs) > 1 else ""
        return batch, quote, f"region {quote.region}{zones}"
    values = {p[1].usd_per_hour for ps in by_region.values() for p in ps}
    if len(values) == 1:
        batch, quote = next(iter(lowest.values()))
        if len(lowest) == 1:
            return batch, quote, f"region {quote.region}, the only one quoted"
        every = counted(len(lowest), "region", every=True)
        return batch, quote, f"the same price in {every} quoted"
    regions = sorted({p[1].region for ps in by_region.values() for p in ps})
    shown = ", ".join(regions[:8]) + (", ..." if len(regions) > 8 else "")
    return (
        f"no price in region {wanted!r} and the regions' prices differ (the source has {shown}); "
        "give --region NAME or --region cheapest"
    )


def _entry(batch: Batch, quote: Quote, note: str) -> PriceEntry:
    """The prices-file entry of a chosen quote, located at its source file and row (so that a
    price the catalog refuses is reported there)."""
    if not batch.dated:
        note += "; dated by the file: the source has no date"
    return PriceEntry(
        "instance", quote.id, quote.pricing, quote.usd_per_hour, batch.as_of, batch.source,
        batch.file, quote.row, note,
    )  # fmt: skip


def _unmapped(file: str, pairs: Sequence[tuple[Batch, Quote]], reason: str) -> Unmapped:
    return Unmapped(file, pairs[0][1].row, pairs[0][1].id, len(pairs), reason)


def match(catalog: Catalog, batches: Iterable[Batch], *, region: str | None = None) -> Imported:
    """The prices-file entries the ``batches`` give for ``catalog``'s instances, each located
    at the source file and row it came from.

    ``region``: ``None`` for each catalog row's own region, :data:`CHEAPEST`, or a region name.

    Raises:
        CatalogError: an unknown accelerator name, or an accelerator or GPU count that does not
            fit the catalog instance (file and row named).
    """
    batches = tuple(batches)
    found: dict[tuple[str, str], dict[str, list]] = defaultdict(lambda: defaultdict(list))
    missing: dict[tuple[str, str], list] = defaultdict(list)
    for batch in batches:
        for quote in batch.quotes:
            instance = catalog.instances.get(quote.id)
            if instance is None:
                missing[(batch.file, quote.id)].append((batch, quote))
                continue
            _check(batch, quote, instance.gpu, instance.gpu_count)
            found[(quote.id, quote.pricing)][_region_key(quote.region)].append((batch, quote))
    entries, unmapped = [], []
    gpu_of = {i.id: i.gpu for i in catalog.instances.values()}
    for (file, name), pairs in missing.items():
        close = closest_instances(name, gpu_of)
        hint = closest_hint(close)
        unmapped.append(_unmapped(file, pairs, f"no catalog instance {name!r}{hint}"))
    for (name, pricing), by_region in sorted(
        found.items(), key=lambda kv: (kv[0][0], _PRICING_ORDER.index(kv[0][1]))
    ):
        wanted = region or catalog.instances[name].region
        chosen = _choose(by_region, wanted)
        if isinstance(chosen, str):
            pairs = [p for ps in by_region.values() for p in ps]
            unmapped.append(_unmapped(pairs[0][0].file, pairs, f"{pricing}: {chosen}"))
        else:
            entries.append(_entry(*chosen))
    skipped = sum(b.skipped for b in batches)
    return Imported(tuple(entries), tuple(unmapped), skipped)
