"""The SkyPilot catalog's ``vms.csv`` files: one per provider, one row per instance type, region
(and zone, for AWS), with on-demand and spot prices.

Columns read (others are ignored, as their set differs between providers and schema versions):
``InstanceType``, ``AcceleratorName``, ``AcceleratorCount`` [GPU], ``Price`` and ``SpotPrice``
[USD/h per instance], ``Region``. A row without an accelerator (a CPU type) or without an
instance type (GCP lists attachable GPUs that way) prices no GPU instance and is skipped. The
files carry no date, so the caller's file date is used. ``AcceleratorName`` is one of SkyPilot's
names (:data:`ACCELERATORS`), mapped to the catalog GPU ids it may stand for.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import PurePath

from ..errors import CatalogError
from .quotes import Batch, Quote, clean_text, price

__all__ = ["ACCELERATORS", "BASE_URL", "FORMAT", "catalog_provider", "parse", "url", "version"]

FORMAT = "skypilot"
#: Where the SkyPilot catalog repository publishes its files.
BASE_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/"
#: The schema version of the catalog the public URL points at when a path does not say.
DEFAULT_VERSION = "v8"
_LABEL = "SkyPilot catalog"
_REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
_VERSION = re.compile(r"^v\d+$")
# SkyPilot's provider folder -> this catalog's provider id, where they differ.
_PROVIDERS = {"vast": "vastai"}

#: SkyPilot's accelerator names -> the prefix of the catalog GPU ids each may stand for (a
#: catalog id matches when it equals the prefix or starts with it and a hyphen).
ACCELERATORS: dict[str, str] = {
    "A10": "a10", "A10G": "a10g", "A100": "a100", "A100-80GB": "a100",
    "A100-80GB-SXM": "a100", "A40": "a40", "A4000": "rtx-a4000", "A6000": "rtx-a6000",
    "B200": "b200", "B300": "b300", "GB200": "gb200", "GH200": "gh200", "H100": "h100",
    "H100-MEGA": "h100", "H100-NVL": "h100", "H100-NVLINK": "h100", "H100-SXM": "h100",
    "H200": "h200", "H200-SXM": "h200", "K80": "tesla-k80", "L4": "l4", "L40": "l40",
    "L40S": "l40s", "M60": "m60", "MI300X": "mi300x", "P100": "p100", "P4": "p4",
    "Radeon Pro V520": "radeon-pro-v520", "RTX3060": "rtx-3060", "RTX3080": "rtx-3080",
    "RTX3090": "rtx-3090", "RTX4090": "rtx-4090", "RTX5090": "rtx-5090",
    "RTX6000": "quadro-rtx-6000", "RTX6000-Ada": "rtx-6000-ada", "RTX8000": "quadro-rtx-8000",
    "RTXA4000": "rtx-a4000", "RTXA5000": "rtx-a5000", "RTXA6000": "rtx-a6000", "T4": "t4",
    "T4g": "t4g", "V100": "v100", "V100-32GB": "v100",
}  # fmt: skip


def catalog_provider(folder: str) -> str:
    """This catalog's provider id for SkyPilot's provider folder name (``vast`` -> ``vastai``)."""
    key = folder.casefold()
    return _PROVIDERS.get(key, key)


def version(path: str) -> str:
    """The catalog schema version a path names: the folder above the provider's when it is one
    (``.../v9/aws/vms.csv`` -> ``v9``), else :data:`DEFAULT_VERSION`."""
    above = PurePath(path).parent.parent.name
    return above if _VERSION.match(above) else DEFAULT_VERSION


def url(provider_folder: str, schema: str = DEFAULT_VERSION, base: str = BASE_URL) -> str:
    """The URL of a provider's ``vms.csv`` of schema version ``schema`` under ``base``."""
    return f"{base.rstrip('/')}/catalogs/{schema}/{provider_folder.casefold()}/vms.csv"


def _records(text: str, file: str):
    """(line, cells) per data row, with the header's names; malformed rows are errors."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip() for h in next(reader, [])]
        if not header:
            raise CatalogError("the file is empty; expected a header row", file=file)
        twice = next((c for c in header if header.count(c) > 1), None)
        if twice is not None:
            raise CatalogError(f"the header names the column {twice!r} twice", file=file)
        missing = [c for c in _REQUIRED if c not in header]
        if missing:
            raise CatalogError(
                f"missing column(s) {', '.join(missing)}: not a SkyPilot vms.csv (header: "
                f"{', '.join(header[:12])})",
                file=file,
            )
        for cells in reader:
            line = f"line {reader.line_num}"
            if not cells:
                continue
            if len(cells) != len(header):
                raise CatalogError(
                    f"has {len(cells)} fields where the header has {len(header)}: a truncated "
                    "or malformed file",
                    file=file,
                    row_id=line,
                )
            yield line, dict(zip(header, cells, strict=True))
    except csv.Error as exc:
        raise CatalogError(
            f"malformed CSV ({exc}): a truncated file?", file=file, row_id=f"line {reader.line_num}"
        ) from None


def _count(text: str, file: str, line: str) -> float | None:
    if not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        raise CatalogError(
            f"{text!r} is not a number", file=file, row_id=line, column="AcceleratorCount"
        ) from None
    if not value >= 0:
        raise CatalogError(
            f"{text!r} is not a GPU count", file=file, row_id=line, column="AcceleratorCount"
        )
    return value


def parse(text: str, *, file: str, provider: str, source_url: str, file_date: str) -> Batch:
    """The GPU instance prices of one SkyPilot ``vms.csv``.

    ``provider`` is this catalog's provider id, ``source_url`` where the file is published,
    ``file_date`` the ISO date used as the prices' date (the files carry none).

    Raises:
        CatalogError: a missing column, a row with too few or too many fields (a truncated
            file), an unterminated quote, or a price that is not a positive number.
    """
    quotes: list[Quote] = []
    skipped = 0
    for line, cells in _records(text, file):
        name, accelerator = cells["InstanceType"].strip(), cells["AcceleratorName"].strip()
        if not name or not accelerator:
            skipped += 1
            continue
        region = clean_text(cells["Region"], file=file, row=line, column="Region")
        if not region:
            raise CatalogError("names no region", file=file, row_id=line, column="Region")
        count = _count(cells["AcceleratorCount"], file, line)
        for pricing, column in (("on_demand", "Price"), ("spot", "SpotPrice")):
            value = price(cells.get(column), file=file, row=line, column=column)
            if value is not None:
                quotes.append(
                    Quote(provider, name, pricing, value, region, line, accelerator, count)
                )
    return Batch(
        file=file,
        label=_LABEL,
        url=source_url,
        as_of=file_date,
        dated=False,
        quotes=tuple(quotes),
        skipped=skipped,
        accelerators=ACCELERATORS,
    )
