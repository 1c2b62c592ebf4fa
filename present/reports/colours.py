"""The colours the report's charts share, the PNG charts and the XLSX workbook's alike
(``#rrggbb``): a side (buy, rent, a hosted API), a plan's layers of work and the marks drawn
over them."""

from __future__ import annotations

__all__ = [
    "API",
    "BUY",
    "HIGH",
    "LAYERS",
    "LOW",
    "MARK",
    "OTHER",
    "RENT",
    "RESERVED",
    "side_colour",
]

BUY, RENT, MARK = "#1f5fa8", "#d9620b", "#3a3a3a"
API = "#7b3fa0"  # a hosted API, the third side of an inference result
RESERVED = "#4f9a3a"  # a plan's reserved instances, between owned (BUY) and burst (RENT)
OTHER = "#a3acbb"  # a plan's candidates that are not on the frontier
LOW, HIGH = "#7fa7d6", "#a8324a"  # the P10 and the P90 end of a tornado bar
#: A plan's work on owned servers, reserved and burst instances (``plan_tables.WORK_LAYERS``).
LAYERS = (BUY, RESERVED, RENT)


#: The colour of each side a result compares.
_SIDES = {"buy": BUY, "rent": RENT, "api": API}


def side_colour(side: str) -> str:
    """The colour of side ``side`` (``buy``, ``rent``, ``api``); a further side's is grey."""
    return _SIDES.get(side, OTHER)
