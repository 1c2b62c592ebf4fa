"""Builders for engine inputs in tests: zero costs unless a test sets them."""

from __future__ import annotations

from costmodel import BuyInputs, Fixed, ModelInputs, RentInputs

_BUY_ZERO = {
    "gpu_price_usd": 0.0,
    "platform_price_usd": 0.0,
    "gpu_power_w": 0.0,
    "gpu_idle_w": 0.0,
    "platform_power_w": 0.0,
    "electricity_usd_per_kwh": 0.0,
    "relative_throughput": 1.0,
    "resale_annual_decay": 1.0,
}


def _dists(values: dict) -> dict:
    return {
        k: (Fixed(float(v)) if isinstance(v, int | float) and not isinstance(v, bool) else v)
        for k, v in values.items()
    }


def buy(gpu_count: int = 1, **kw) -> BuyInputs:
    """BuyInputs with zero prices and power unless given; numbers become Fixed."""
    plain = {
        k: kw.pop(k) for k in ("powered_when_idle", "depreciation", "depreciation_years") if k in kw
    }
    return BuyInputs(gpu_count=gpu_count, **_dists({**_BUY_ZERO, **kw}), **plain)


def rent(gpu_count: int = 1, pricing: str = "on_demand", **kw) -> RentInputs:
    """RentInputs at price 0 unless given; numbers become Fixed."""
    plain = {k: kw.pop(k) for k in ("committed_instances",) if k in kw}
    values = {"price_usd_per_hour": 0.0, "relative_throughput": 1.0, **kw}
    return RentInputs(gpu_count=gpu_count, pricing=pricing, **_dists(values), **plain)


def model(b: BuyInputs, r: RentInputs, **kw) -> ModelInputs:
    """ModelInputs with one draw at u = 1, no discounting, unless given."""
    kw.setdefault("horizon_months", 12)
    kw.setdefault("utilisation", (1.0,))
    kw.setdefault("samples", 1)
    return ModelInputs(buy=b, rent=r, **kw)
