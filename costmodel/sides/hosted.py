"""A hosted API (``api``) billed per million tokens, doing the owned side's work: a rented
side that does one million tokens an hour at the blended price
(:meth:`costmodel.cashflows.ApiDraws.as_rented`), so its TCO is the rent line's. Its emissions
are per million tokens where the user gives them (:mod:`costmodel.carbon`), not the engine's
instance figures."""

from __future__ import annotations

from ..cashflows import ApiDraws, capacity, rent_line
from ..inputs import ApiInputs
from .registry import Side

__all__ = ["HOSTED"]

HOSTED = Side(
    name="api",
    label="API",
    option="API",
    doing="the API",
    inputs=ApiInputs,
    price="input_usd_per_mtok",
    drawn=lambda inputs, values, path: ApiDraws.sampled(inputs, values, path).as_rented(),
    capacity=capacity,
    line=rent_line,
)
