"""Rented instances (``rent``): cloud instances priced per instance-hour."""

from __future__ import annotations

from ..inputs import RentInputs
from .registry import Side

__all__ = ["RENTED"]

RENTED = Side(name="rent", label="Rent", option="rent", doing="renting", inputs=RentInputs)
