"""The owned build (``buy``): GPUs in a platform, bought, powered, hosted and resold; its TCO
is :func:`costmodel.cashflows.buy_line`, its emissions :func:`costmodel.carbon.owned_emissions`."""

from __future__ import annotations

from ..carbon import owned_emissions
from ..cashflows import BuyDraws, buy_line, capacity
from ..inputs import BuyInputs
from .registry import Side

__all__ = ["OWNED"]

OWNED = Side(
    name="buy",
    label="Buy",
    option="buy",
    doing="buying",
    inputs=BuyInputs,
    price="gpu_price_usd",
    drawn=lambda inputs, values, path: BuyDraws.sampled(inputs, values, path),
    capacity=capacity,
    line=lambda b, own, inst, terms: buy_line(b, terms),
    emissions=lambda b, values, own, inst, life, h: owned_emissions(b, values, life, h),
    owned=True,
)
