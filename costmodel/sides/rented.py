"""Rented instances (``rent``): cloud instances priced per instance-hour; their TCO is
:func:`costmodel.cashflows.rent_line`, their emissions :func:`costmodel.carbon.rented_emissions`."""

from __future__ import annotations

from ..carbon import rented_emissions
from ..cashflows import RentDraws, capacity, rent_line
from ..inputs import RentInputs
from .registry import Side

__all__ = ["RENTED"]

RENTED = Side(
    name="rent",
    label="Rent",
    option="rent",
    doing="renting",
    inputs=RentInputs,
    price="price_usd_per_hour",
    drawn=lambda inputs, values, path: RentDraws.sampled(inputs, values, path),
    capacity=capacity,
    line=rent_line,
    emissions=rented_emissions,
)
