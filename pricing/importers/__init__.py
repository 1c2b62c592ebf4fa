"""Importers of public price sources into the prices-file format (:mod:`pricing.prices`).

One module per format, each a pure parser from a file's text to a
:class:`~pricing.importers.quotes.Batch` of quotes: :mod:`~pricing.importers.skypilot` (the
SkyPilot catalog's ``vms.csv``), :mod:`~pricing.importers.azure` (pages of the Azure Retail
Prices API) and :mod:`~pricing.importers.aws_offer` (the AWS Price List offer file of EC2).
:func:`~pricing.importers.match.match` lays the quotes onto the catalog's instance ids and
chooses the region; :func:`pricing.prices.write_prices` writes the result.
:func:`~pricing.importers.files.read` reads a file from disk in any of the :data:`FORMATS`.
"""

from . import files
from .files import FORMATS
from .match import CHEAPEST, Imported, Unmapped, match
from .quotes import Batch, Quote

__all__ = [
    "CHEAPEST",
    "FORMATS",
    "Batch",
    "Imported",
    "Quote",
    "Unmapped",
    "files",
    "match",
]
