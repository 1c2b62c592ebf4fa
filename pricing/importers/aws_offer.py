"""The AWS Price List offer file of Amazon EC2 (JSON): ``products`` (SKU -> product family and
attributes) and ``terms`` (``OnDemand`` and ``Reserved``: SKU -> offer term -> price dimensions).

Products read: ``productFamily`` ``Compute Instance`` (or its bare-metal variant) with
attributes ``instanceType``, ``regionCode`` (else ``location``), ``gpu`` [GPU] above 0,
``operatingSystem`` ``Linux``, ``tenancy`` ``Shared``, ``preInstalledSw`` ``NA`` and
``capacitystatus`` ``Used`` (the plain Linux price of a GPU instance). Terms read: on demand, the
hourly (``Hrs``) dimension; reserved, the ``standard`` class with ``No Upfront`` payment for
``1yr`` and ``3yr`` leases, whose hourly dimension is the whole price (the convention of this
catalog's reserved prices). The date is the file's ``publicationDate``.
"""

from __future__ import annotations

from typing import Any

from ..errors import CatalogError
from .jsondoc import load, mapping
from .quotes import Batch, Quote, choose, clean_text, price

__all__ = ["FORMAT", "URL", "parse"]

FORMAT = "aws-offer"
URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/index.json"
_LABEL = "AWS Price List, EC2 offer"
_FAMILIES = ("Compute Instance", "Compute Instance (bare metal)")
_PLAIN = {"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
          "capacitystatus": "Used"}  # fmt: skip
_LEASES = {"1yr": "reserved_1y", "3yr": "reserved_3y"}


def _gpu_products(products: dict, file: str) -> tuple[dict[str, dict[str, Any]], int]:
    """SKU -> attributes of the plain Linux GPU instance products; and how many were skipped."""
    kept, skipped = {}, 0
    for sku, raw in products.items():
        product = mapping(raw, file, f"products.{sku}", "a product")
        attrs = mapping(product.get("attributes", {}), file, f"products.{sku}", "attributes")
        plain = all(attrs.get(k) == v for k, v in _PLAIN.items())
        try:
            gpus = float(attrs.get("gpu") or 0)
        except (TypeError, ValueError):  # not a number's text, or a list or a mapping
            raise CatalogError(
                f"{attrs.get('gpu')!r} is not a GPU count",
                file=file,
                row_id=f"products.{sku}",
                column="gpu",
            ) from None
        if product.get("productFamily") in _FAMILIES and plain and gpus > 0:
            if not attrs.get("instanceType"):
                raise CatalogError(
                    "names no instance type", file=file, row_id=f"products.{sku}",
                    column="instanceType",
                )  # fmt: skip
            column = "regionCode" if attrs.get("regionCode") else "location"
            row = f"products.{sku}"
            region = clean_text(attrs.get(column) or "", file=file, row=row, column=column)
            kept[sku] = {**attrs, "gpu": gpus, "region": region}
        else:
            skipped += 1
    return kept, skipped


def _hourly(term: dict, file: str, row: str) -> float | None:
    """The price of the term's hourly dimension [USD/h], None when it has none."""
    dims = mapping(term.get("priceDimensions", {}), file, row, "priceDimensions")
    for code, raw in dims.items():
        dim = mapping(raw, file, f"{row}.{code}", "a price dimension")
        if dim.get("unit") == "Hrs":
            usd = mapping(dim.get("pricePerUnit", {}), file, f"{row}.{code}", "pricePerUnit")
            return price(usd.get("USD"), file=file, row=f"{row}.{code}", column="pricePerUnit.USD")
    return None


def _pricing(kind: str, term: dict, file: str, row: str) -> str | None:
    if kind == "OnDemand":
        return "on_demand"
    attrs = mapping(term.get("termAttributes", {}), file, row, "termAttributes")
    if attrs.get("OfferingClass") != "standard" or attrs.get("PurchaseOption") != "No Upfront":
        return None
    lease = attrs.get("LeaseContractLength")
    return choose(lease, _LEASES, file=file, row=row, column="termAttributes.LeaseContractLength")


def _quotes(terms: dict, products: dict, file: str) -> list[Quote]:
    quotes = []
    for kind in ("OnDemand", "Reserved"):
        by_sku = mapping(terms.get(kind, {}), file, f"terms.{kind}", "terms by SKU")
        for sku, offers in by_sku.items():
            if sku not in products:
                continue
            attrs = products[sku]
            region = attrs["region"]
            for code, raw in mapping(offers, file, f"terms.{kind}.{sku}", "offer terms").items():
                row = f"terms.{kind}.{sku}.{code}"
                term = mapping(raw, file, row, "an offer term")
                pricing = _pricing(kind, term, file, row)
                value = _hourly(term, file, row) if pricing else None
                if value is not None:
                    name = str(attrs["instanceType"])
                    quotes.append(Quote("aws", name, pricing, value, region, row, "", attrs["gpu"]))
    return quotes


def parse(text: str, *, file: str, source_url: str = URL, file_date: str) -> Batch:
    """The on-demand and reserved prices of the GPU instances of an EC2 offer file.

    ``file_date`` is used only when the file has no ``publicationDate``.

    Raises:
        CatalogError: invalid or truncated JSON, a file without ``products`` or ``terms``, or a
            price that is not a positive number.
    """
    doc = mapping(load(text, file), file, "the file", "an offer file")
    if not isinstance(doc.get("products"), dict) or not isinstance(doc.get("terms"), dict):
        raise CatalogError("has no 'products' and 'terms': not a Price List offer file", file=file)
    products, skipped = _gpu_products(doc["products"], file)
    published = str(doc.get("publicationDate") or "")[:10]
    label = f"{_LABEL} {doc['version']}" if doc.get("version") else _LABEL
    quotes = tuple(_quotes(doc["terms"], products, file))
    return Batch(file, label, source_url, published or file_date, bool(published), quotes, skipped)
