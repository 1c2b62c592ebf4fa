"""The owned build (``buy``): GPUs in a platform, bought, powered, hosted and resold."""

from __future__ import annotations

from ..inputs import BuyInputs
from .registry import Side

__all__ = ["OWNED"]

OWNED = Side(name="buy", label="Buy", option="buy", doing="buying", inputs=BuyInputs)
