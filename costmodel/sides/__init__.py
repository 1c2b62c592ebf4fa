"""The kinds of side a question compares, one registered record each.

A scenario compares an owned build (``buy``) with rented instances (``rent``) and, for work
billed per token, a hosted API (``api``); each kind of side is a :class:`Side` in its own
module (:mod:`.owned`, :mod:`.rented`, :mod:`.hosted`) and :data:`SIDES` lists them by the
side's name, which is its key in a scenario and in a result. What iterates over the sides of
a result (its JSON form, tables, reports, the page) reads their names and words here, so a
new kind of side is one record more.
"""

from __future__ import annotations

from .hosted import HOSTED
from .owned import OWNED
from .registry import SIDES, Side, SideError, by_month, further_lines, register, side
from .rented import RENTED

__all__ = [
    "HOSTED",
    "OWNED",
    "RENTED",
    "SIDES",
    "Side",
    "SideError",
    "by_month",
    "further_lines",
    "register",
    "side",
]

for _record in (OWNED, RENTED, HOSTED):
    register(_record)
