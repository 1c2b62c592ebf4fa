"""The price history of the run store: every imported price, kept per import.

One row per (import, catalog id, pricing) in the table ``price_history``: ``usd`` is the price
[USD/h for an instance, USD for a GPU], ``as_of`` the ISO date the source gives it, ``source``
who published it and ``imported_at`` when it was imported (ISO-8601 UTC).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["COLUMNS", "INSERT", "MIGRATION", "PriceObservation", "rows"]

#: The schema step that adds the table (appended to the store's migrations).
MIGRATION: tuple[str, ...] = (
    """
    CREATE TABLE price_history (
        import_id   TEXT{key} NOT NULL,
        imported_at TEXT{key} NOT NULL,
        item        TEXT{key} NOT NULL,
        pricing     TEXT{key} NOT NULL,
        usd         DOUBLE PRECISION NOT NULL,
        as_of       TEXT{key} NOT NULL,
        source      TEXT NOT NULL,
        PRIMARY KEY (import_id, item, pricing)
    )
    """,
    "CREATE INDEX price_history_item ON price_history (item, pricing, as_of)",
)
COLUMNS = "import_id, imported_at, item, pricing, usd, as_of, source"
INSERT = f"INSERT INTO price_history ({COLUMNS}) VALUES (?,?,?,?,?,?,?)"


class _Price(Protocol):
    id: str
    pricing: str
    value: float
    as_of: str
    source: str


@dataclass(frozen=True)
class PriceObservation:
    """One stored price: ``item`` (catalog id), ``pricing``, ``usd``, ``as_of`` (ISO date),
    ``source``, and the ``import_id`` and ``imported_at`` of the import that kept it."""

    import_id: str
    imported_at: str
    item: str
    pricing: str
    usd: float
    as_of: str
    source: str

    @property
    def date(self) -> dt.date:
        """``as_of`` as a date."""
        return dt.date.fromisoformat(self.as_of)

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> PriceObservation:
        """The observation of a row of :data:`COLUMNS`."""
        import_id, imported_at, item, pricing, usd, as_of, source = row
        return cls(import_id, imported_at, item, pricing, float(usd), as_of, source)


def rows(entries: Iterable[_Price], import_id: str, now: str) -> list[tuple[Any, ...]]:
    """The table rows of one import, checked: a positive finite price, an ISO date, a source.

    Raises:
        ValueError: an entry the history cannot keep.
    """
    out = []
    for e in entries:
        if not (isinstance(e.value, int | float) and math.isfinite(e.value) and e.value > 0):
            raise ValueError(f"price of {e.id} {e.pricing} must be positive, got {e.value!r}")
        dt.date.fromisoformat(e.as_of)  # ValueError for anything but an ISO date
        if not e.source:
            raise ValueError(f"price of {e.id} {e.pricing} has no source")
        out.append((import_id, now, e.id, e.pricing, float(e.value), e.as_of, e.source))
    return out
