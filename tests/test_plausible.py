"""Implausible inputs caught: an input the scenario gives far outside the range the reference
data gives gets ``input_far_from_typical``, naming that range and its source; a typical value,
a value left to its default and a value that says "not counted" get none."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import scenarios
from scenarios.plausible import TYPICAL

ROW = {row.key: row for row in TYPICAL}
API_EXAMPLE = Path(__file__).resolve().parents[1] / "scenarios/examples"
API_EXAMPLE /= "inference-8b-rtx6000ada-vs-api.yaml"


def _far(buy: dict | None = None, rent: dict | None = None) -> list:
    doc = {
        "version": 1,
        "name": "plausible",
        "buy": {"gpu": "rtx-3090", "gpu_count": 1, **(buy or {})},
        "rent": {"instance": "aws/p3.2xlarge", **(rent or {})},
    }
    return [w for w in scenarios.load_mapping(doc).warnings if w.code == "input_far_from_typical"]


# one far value per rule (each past its row's bound), and a typical one
CASES = [
    ("electricity_usd_per_kwh", 8, 0.12),  # cents typed as dollars; EIA's US commercial 12.5
    ("pue", 3.0, 1.5),
    ("hosting_usd_per_kw_month", 2000, 184.06),  # a year's fee; CBRE H2 2024
    ("maintenance_rate", 0.5, 0.05),
    ("gpu_annual_failure_rate", 0.9, 0.06),  # Llama 3: faulty GPU ~6 % a GPU-year
    ("repair_days", 120, 7),
    ("resale_annual_decay", 0.9, 0.2),
    ("admin_usd_per_month", 24_000, 500),
    ("grid", 0.38, 383.6),  # kg/kWh for g/kWh; the US average 383.6 g
]


@pytest.mark.parametrize(("key", "far", "typical"), CASES, ids=[c[0] for c in CASES])
def test_a_far_input_is_named_with_its_typical_range_and_source(key, far, typical):
    row = ROW[key]
    assert row.far(far) and not row.far(typical)
    (advice,) = _far({key: far})
    assert advice.severity == "warning" and advice.side == "buy"
    assert advice.message.startswith(f"buy.{key} = {far:,.6g}")
    assert f"typical {row.low:,.6g}-{row.high:,.6g}" in advice.message
    assert row.source in advice.message
    assert _far({key: typical}) == []


def test_cents_typed_as_dollars_says_what_they_would_be():
    # the case: 8 USD/kWh ran silently to "buying breaks even at 91.9 %"
    (advice,) = _far({"electricity_usd_per_kwh": 8})
    assert "typical 0.05-0.4 USD/kWh" in advice.message
    assert advice.message.endswith("perhaps typed in cents: read so, it is 0.08 USD/kWh")
    (advice,) = _far({"grid": 0.38})
    assert advice.message.endswith("perhaps given in kg/kWh: read so, it is 380 gCO2e/kWh")


def test_a_distribution_is_read_at_its_median_and_the_rent_side_is_checked():
    # uniform 6-10 USD/kWh: median 8; a lognormal given by its median 3.0 (PUE)
    assert len(_far({"electricity_usd_per_kwh": {"dist": "uniform", "low": 6, "high": 10}})) == 1
    pue = {"dist": "lognormal", "median": 3.0, "p90": 3.5, "low": 1.0, "high": 5.0}
    assert len(_far({"pue": pue})) == 1
    (advice,) = _far(rent={"admin_usd_per_month": 50_000})
    assert advice.side == "rent" and advice.message.startswith("rent.admin_usd_per_month")


def test_not_counted_defaults_and_grid_ids_are_never_far():
    # 0 says "no colocation", "no maintenance", "free power"; a decay of 1 "nothing resold"
    zero = {k: 0 for k in ("electricity_usd_per_kwh", "hosting_usd_per_kw_month", "repair_days")}
    assert _far({**zero, "resale_annual_decay": 1.0, "grid": "FR"}) == []
    assert _far() == []  # every default


@pytest.mark.parametrize(
    ("key", "far"), [("input_usd_per_mtok", 50), ("output_usd_per_mtok", 0.002)]
)
def test_api_prices_far_from_the_offers(key, far):
    # 50 USD per M input tokens is 10x the dearest offer; 0.002 per M output tokens is a price
    # per thousand tokens divided again
    doc = yaml.safe_load(API_EXAMPLE.read_text("utf-8"))
    doc["api"] = {"input_usd_per_mtok": 0.03, "output_usd_per_mtok": 0.05, key: far}
    warned = [w for w in scenarios.load_mapping(doc).warnings if w.code == "input_far_from_typical"]
    assert [w.side for w in warned] == ["api"] and f"api.{key} = {far:g}" in warned[0].message
