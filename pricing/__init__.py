"""Dated, versioned catalogs for the rent-versus-buy GPU cost model.

The catalogs (GPUs, cloud instances with price history, platform tiers, multi-GPU scaling, and
for inference: served models, measured serving throughput, hosted API prices; for carbon: grid
intensity, embodied carbon, cloud regions (records in :mod:`pricing.carbon`)) are CSV/JSON
package data in ``pricing/data``; ``data/NOTES.md`` explains conventions and sources and
``data/CHANGES.md`` the history. Units: [USD], [USD/h] per instance, [W], [GB], [TFLOPS]/[TOPS];
throughput figures are relative to the reference GPU ``v100-sxm2-16gb`` [-]; serving
throughput is [tokens/s per GPU] and API prices [USD per million tokens]; grid intensity is
[gCO2e/kWh] and embodied carbon [kg CO2e].

>>> from pricing import load_catalog, relative_throughput
>>> cat = load_catalog()
>>> relative_throughput(cat.gpu("rtx-2080-ti"), cat.reference, "fp16").value
0.6305
"""

from .catalog import Catalog, load_catalog, read_catalog
from .errors import CatalogError, UnknownIdError
from .models import GPU, ApiOffer, Instance, Model, PlatformTier, PriceRecord, ServingPoint
from .prices import PriceEntry, apply_prices, read_prices
from .serving import ServingThroughput, tokens_per_s
from .throughput import Throughput, relative_throughput
from .userserving import apply_serving, read_serving
from .vocabulary import (
    COOLING,
    INTERCONNECTS,
    PRECISIONS,
    PRICING_MODELS,
    RESERVATION_MONTHS,
    RESERVED_PRICINGS,
    SERVING_PRECISIONS,
    Bound,
)

__all__ = [
    "COOLING",
    "INTERCONNECTS",
    "PRECISIONS",
    "PRICING_MODELS",
    "RESERVATION_MONTHS",
    "RESERVED_PRICINGS",
    "SERVING_PRECISIONS",
    "ApiOffer",
    "Bound",
    "GPU",
    "Catalog",
    "CatalogError",
    "Instance",
    "Model",
    "PlatformTier",
    "PriceEntry",
    "PriceRecord",
    "ServingPoint",
    "ServingThroughput",
    "Throughput",
    "UnknownIdError",
    "apply_prices",
    "apply_serving",
    "load_catalog",
    "read_catalog",
    "read_prices",
    "read_serving",
    "relative_throughput",
    "tokens_per_s",
]
