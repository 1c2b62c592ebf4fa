"""What every importer returns: the prices one public source file holds, before they are
matched to catalog ids.

An importer is a pure parser: it takes the text of one file (and the date to fall back on when
the source carries none) and returns a :class:`Batch` of :class:`Quote` records, one per price
it read, each located by its row. Every problem is a :class:`~pricing.errors.CatalogError`
naming the file, the row and the column.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from ..errors import CatalogError
from ..text import text_problem

__all__ = ["Batch", "Quote", "choose", "clean_text", "price"]


@dataclass(frozen=True)
class Quote:
    """One hourly price of one instance type in one region, as a source gives it.

    Attributes:
        provider: the catalog's provider id (``"aws"``, ``"lambda"``, ``"vastai"``).
        name: the provider's instance name as the source spells it (``"p3.2xlarge"``).
        pricing: ``"on_demand"``, ``"spot"``, ``"reserved_1y"`` or ``"reserved_3y"``.
        usd_per_hour: the price of one instance-hour [USD/h], positive.
        region: the region the price is for, as the source names it.
        row: where in the file (``"line 12"``, ``"Items[3]"``).
        accelerator: the source's accelerator name, ``""`` when it names none.
        gpu_count: GPUs per instance as the source says [GPU], ``None`` when it does not.
    """

    provider: str
    name: str
    pricing: str
    usd_per_hour: float
    region: str
    row: str
    accelerator: str = ""
    gpu_count: float | None = None

    @property
    def id(self) -> str:
        """The catalog instance id this quote would price: ``provider/name``, lowercase."""
        return f"{self.provider}/{self.name}".casefold()


@dataclass(frozen=True)
class Batch:
    """The prices of one source file.

    Attributes:
        file: the file as given. label: the source in words (``"SkyPilot catalog"``).
        url: where the source is published; every imported row names it.
        as_of: ISO date of the prices; ``dated`` says whether the source gave it (else it is
            the file's date).
        quotes: the prices read, in file order.
        skipped: rows that price no GPU instance (CPU-only types, other services).
        accelerators: the source's accelerator names -> catalog GPU id prefix, for sources
            that name accelerators (checked against the catalog); empty otherwise.
    """

    file: str
    label: str
    url: str
    as_of: str
    dated: bool
    quotes: tuple[Quote, ...]
    skipped: int = 0
    accelerators: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def source(self) -> str:
        """The ``source`` column of every row imported from this batch."""
        return f"{self.label} {self.url}"


_V = TypeVar("_V")


def choose(value: Any, table: Mapping[str, _V], *, file: str, row: str, column: str) -> _V:
    """``table[value]``, or an error naming the value the source gave and the ones it may."""
    if not isinstance(value, str) or value not in table:  # a list or a mapping: no key
        raise CatalogError(
            f"unknown {column.rsplit('.', 1)[-1]} {value!r}; expected {', '.join(table)}",
            file=file,
            row_id=row,
            column=column,
        )
    return table[value]


def price(text: object, *, file: str, row: str, column: str) -> float | None:
    """A price cell as a positive number [USD/h]; ``None`` for an empty cell.

    Raises:
        CatalogError: not a number, not finite, zero or negative (file, row, column named).
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    try:
        value = float(text.strip() if isinstance(text, str) else text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise CatalogError(
            f"{text!r} is not a number", file=file, row_id=row, column=column
        ) from None
    if not math.isfinite(value):
        raise CatalogError(f"{text!r} is not finite", file=file, row_id=row, column=column)
    if value <= 0:
        raise CatalogError(
            f"a price of {value:g} USD/h: a price must be above 0 (a free or refunded item is "
            "not a price to plan with)",
            file=file,
            row_id=row,
            column=column,
        )
    return value


def clean_text(value: object, *, file: str, row: str, column: str) -> str:
    """A text cell (a region's name), stripped, as it goes into the prices file's note.

    Raises:
        CatalogError: it holds a control character or is not valid Unicode (file, row, column
            named): the prices file could not be read back, nor shown on a terminal as written.
    """
    stripped = str(value).strip()
    problem = text_problem(stripped, "text")
    if problem is not None:
        raise CatalogError(problem, file=file, row_id=row, column=column)
    return stripped
