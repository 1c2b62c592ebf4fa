"""Pages of the Azure Retail Prices API (``https://prices.azure.com/api/retail/prices``): JSON
objects with ``Items`` (one price meter each) and ``NextPageLink``.

Items read: ``serviceName`` ``"Virtual Machines"``, ``armSkuName`` (the instance type,
``Standard_NC6s_v3``), ``armRegionName`` (``eastus``), ``type`` (``Consumption`` or
``Reservation``), ``reservationTerm`` (``1 Year``, ``3 Years``), ``skuName`` (``... Spot``,
``... Low Priority``), ``productName`` (``... Windows`` for Windows prices), ``retailPrice``,
``currencyCode``, ``unitOfMeasure`` and ``tierMinimumUnits``. Only the N-series (Azure's GPU
sizes, ``Standard_N...``) are read. Linux consumption prices become
``on_demand``, their ``Spot`` meters ``spot``, and reservations ``reserved_1y``/``reserved_3y``:
a reservation's ``retailPrice`` is the price of its whole term, divided here by the term's hours
(8,760 a year). Windows, Low Priority, Dev/Test and tiered meters are skipped. The pages carry
no date of their own (``effectiveStartDate`` is when a price took effect, not when it was read),
so the caller's file date is used.
"""

from __future__ import annotations

from ..errors import CatalogError
from .jsondoc import load, mapping
from .quotes import Batch, Quote, choose, clean_text, price

__all__ = ["BASE_URL", "FORMAT", "URL", "parse"]

FORMAT = "azure"
BASE_URL = "https://prices.azure.com/"
URL = f"{BASE_URL}api/retail/prices"
_LABEL = "Azure Retail Prices API"
_HOURS_PER_YEAR = 8760
_GPU_SERIES = "Standard_N"  # Azure's N-series are its GPU sizes
_TERMS = {"1 Year": ("reserved_1y", 1), "3 Years": ("reserved_3y", 3)}


def _pricing(item: dict, file: str, row: str) -> tuple[str, float] | None:
    """(pricing, hours the retail price covers) of a Linux VM meter, or None to skip it."""
    sku = str(item.get("skuName", ""))
    if "Windows" in str(item.get("productName", "")) or sku.endswith("Low Priority"):
        return None
    kind = item.get("type")
    if kind == "Consumption":
        if item.get("unitOfMeasure") != "1 Hour" or item.get("tierMinimumUnits", 0):
            return None
        return ("spot" if sku.endswith(" Spot") else "on_demand"), 1.0
    if kind == "Reservation":
        term = item.get("reservationTerm")
        pricing, years = choose(term, _TERMS, file=file, row=row, column="reservationTerm")
        return pricing, float(_HOURS_PER_YEAR * years)
    return None  # DevTestConsumption and the like


def _quote(item: dict, file: str, row: str) -> Quote | None:
    if item.get("serviceName") != "Virtual Machines":
        return None
    if not str(item.get("armSkuName", "")).startswith(_GPU_SERIES):
        return None
    kind = _pricing(item, file, row)
    if kind is None:
        return None
    if item.get("currencyCode", "USD") != "USD":
        raise CatalogError(
            f"a price in {item.get('currencyCode')!r}: ask the API for USD (currencyCode='USD')",
            file=file,
            row_id=row,
            column="currencyCode",
        )
    region = item.get("armRegionName")
    if not isinstance(region, str) or not region:
        raise CatalogError("names no region", file=file, row_id=row, column="armRegionName")
    region = clean_text(region, file=file, row=row, column="armRegionName")
    value = price(item.get("retailPrice"), file=file, row=row, column="retailPrice")
    if value is None:
        raise CatalogError("has no price", file=file, row_id=row, column="retailPrice")
    pricing, hours = kind
    return Quote("azure", str(item["armSkuName"]), pricing, value / hours, region, row)


def parse(text: str, *, file: str, source_url: str = URL, file_date: str) -> Batch:
    """The VM prices of one page of the Azure Retail Prices API.

    Raises:
        CatalogError: invalid or truncated JSON, a page without ``Items``, a price in another
            currency, or a price that is not a positive number.
    """
    page = mapping(load(text, file), file, "the page", "a page of the Retail Prices API")
    items = page.get("Items")
    if not isinstance(items, list):
        raise CatalogError("has no 'Items' list: not a page of the Retail Prices API", file=file)
    quotes, skipped = [], 0
    for i, raw in enumerate(items):
        row = f"Items[{i}]"
        quote = _quote(mapping(raw, file, row, "a price item"), file, row)
        if quote is None:
            skipped += 1
        else:
            quotes.append(quote)
    return Batch(file, _LABEL, source_url, file_date, False, tuple(quotes), skipped)
