"""Builders for engine inputs in tests: zero costs unless a test sets them."""

from __future__ import annotations

import pytest

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


def _lab(buy_changes: dict | None = None, rent_changes: dict | None = None, **top) -> dict:
    doc = {
        "version": 1,
        "name": "key-paths",
        "buy": {"gpu": "rtx-2080-ti", "gpu_count": 4, **(buy_changes or {})},
        "rent": {"instance": "aws/p3.8xlarge", **(rent_changes or {})},
    }
    doc.update(top)
    return doc


_INLINE = {"name": "hot card", "memory_gb": 24, "tdp_w": 2500, "price_usd": 1500}

#: Scenarios that cannot run, the key path to blame and a piece of the message: the same on the
#: command line and over HTTP.
KEY_PATH_CASES = [
    pytest.param(_lab({"gpu": _INLINE}), "buy.gpu.tdp_w", "must be <= 2,000 [W]", id="inline-tdp"),
    pytest.param(_lab({"gpu": "rtx-9999"}), "buy.gpu", "closest:", id="unknown-gpu"),
    pytest.param(
        _lab({"gpu_count": 12, "platform_power_w": 900, "scaling_efficiency": 0.85}),
        "buy.platform_price_usd",
        "no platform tier",
        id="no-tier",
    ),
    pytest.param(
        _lab(
            rent_changes={
                "instance": {
                    "name": "big",
                    "gpu": "t4",
                    "gpu_count": 63,
                    "on_demand_usd_per_hour": 30,
                }
            }
        ),  # fmt: skip
        "rent.scaling_efficiency",
        "table stops at 8 GPUs",
        id="no-scaling-data",
    ),
    pytest.param(
        _lab(
            rent_changes={
                "instance": {"name": "x", "gpu": "t5", "gpu_count": 1, "on_demand_usd_per_hour": 1}
            }
        ),  # fmt: skip
        "rent.instance.gpu",
        "unknown GPU id 't5'",
        id="inline-instance-gpu",
    ),
    pytest.param(
        _lab(correlations=[["buy.pue", "rent.price_annual_change", 0.3]]),
        "correlations[0]",
        "buy.pue is fixed",
        id="correlated-fixed-input",
    ),
    pytest.param(
        _lab(rent_changes={"committed_instances": 1}),
        "rent.committed_instances",
        "reserved pricing only",
        id="commitment-on-demand",
    ),
    pytest.param(
        _lab({"pue": {"dist": "lognormal", "median": 1.3, "p90": 1.5}}),
        "buy.pue",
        "give low/high bounds",
        id="unbounded-lognormal",
    ),
    pytest.param(
        _lab(rent_changes={"instance": "aws/p5.48xlarge", "pricing": "reserved_1y"}),
        "rent.price_usd_per_hour",
        "no reserved_1y price",
        id="missing-catalog-price",
    ),
    pytest.param(
        _lab({"financing": {"kind": "lease", "monthly_rate": 0.03, "term_months": 24}}),
        "buy.financing.term_months",
        "a lease must run at least the horizon (36 months), got 24",
        id="lease-shorter-than-horizon",
    ),
    pytest.param(
        _lab({"repair_days": -1}),
        "buy.repair_days",
        "must lie in [0, 365] [day]",
        id="negative-repair",
    ),
    pytest.param(
        _lab({"financing": {"kind": "loan", "rate": 0.1, "term_months": 0}}),
        "buy.financing.term_months",
        "must be >= 1 [month]",
        id="loan-term-0",
    ),
    pytest.param(
        _lab(
            {
                "financing": {
                    "kind": "loan",
                    "rate": 0.1,
                    "term_months": 36,
                    "down_payment_share": 1.5,
                }
            }
        ),
        "buy.financing.down_payment_share",
        "must be <= 1 [-]",
        id="down-payment-above-1",
    ),  # fmt: skip
    pytest.param(
        _lab({"financing": {"kind": "loan", "rate": 0.1, "term_months": 36, "monthly_rate": 0.03}}),
        "buy.financing.monthly_rate",
        "only for a lease, not for loan",
        id="lease-key-on-a-loan",
    ),  # fmt: skip
]


def package_data_files(package: str, folder) -> tuple[list, list]:
    """The non-Python files under ``folder`` (a Path) and those that pyproject.toml's
    package-data patterns of ``package`` do not install, as posix paths relative to
    ``folder``."""
    import fnmatch
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"][package]
    files = [p for p in folder.rglob("*") if p.is_file() and p.suffix != ".py"]
    files = [p for p in files if "__pycache__" not in p.parts]
    missing = [
        rel
        for rel in (p.relative_to(folder).as_posix() for p in files)
        if not any(
            fnmatch.fnmatch(rel, pat) and rel.count("/") == pat.count("/") for pat in patterns
        )
    ]
    return files, missing
