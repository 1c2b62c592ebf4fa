"""The market comparison: every way the catalog offers GPU compute at one utilisation, ranked by
cost per unit of work (:mod:`.market` holds it)."""

from .market import (
    API_UNCERTAINTY,
    GPU_COUNTS,
    UNCERTAINTY,
    ComparisonSchema,
    compare,
    option_count,
)
from .request import SORTS, CompareRequest, CompareSchema, load_request
from .result import (
    Citation,
    Comparison,
    Cost,
    Grams,
    LeftOut,
    Option,
    OwnedGrid,
    ServedModel,
    Unserved,
)
from .wording import Wording

# public outside __all__: an option by name, as the tables and the JSON show it (cli.tables)
from .wording import from_peaks as from_peaks
from .wording import option_name as option_name
from .wording import pricing_name as pricing_name

__all__ = [
    "API_UNCERTAINTY",
    "GPU_COUNTS",
    "SORTS",
    "UNCERTAINTY",
    "Citation",
    "CompareRequest",
    "CompareSchema",
    "Comparison",
    "ComparisonSchema",
    "Cost",
    "Grams",
    "LeftOut",
    "Option",
    "OwnedGrid",
    "ServedModel",
    "Unserved",
    "Wording",
    "compare",
    "load_request",
    "option_count",
]
