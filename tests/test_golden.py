"""Seeded regression: one uncertain scenario's key outputs pinned to printed values.

``tests/fixtures/golden.yaml`` uses every distribution form, a rank correlation, tax with MACRS
depreciation and spot pricing with an uncertain interruption overhead, at 4,000 LHS draws with
seed 2026. Any change to sampling, the distributions, the equations or the summaries moves these
numbers; a deliberate change must update them here and say why in its commit.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import scenarios

GOLDEN = Path(__file__).parent / "fixtures" / "golden.yaml"
REL = 1e-9
NAN = math.nan

BREAKEVEN = {
    "mean": 0.16215723785817387,
    "p10": 0.11358785267673671,
    "p50": 0.15092460054644186,
    "p90": 0.22230964338712353,
    "prob_always": 0.0,
    "prob_never": 0.0,
}
# per utilisation level 0.1, 0.4, 0.7, 1.0 [USD, present value]
BUY_TCO = {
    "mean": [10053.795705549312, 11335.620171979313, 12617.444638409332, 13899.269104839332],
    "p10": [7330.086092371153, 8347.924672895972, 9278.925522036903, 10180.933006153662],
    "p50": [9391.2910266326, 10767.359346160589, 12136.335285541707, 13497.992214381231],
    "p90": [13411.092827573937, 14850.379512328076, 16261.638578406042, 17804.539839812584],
}
RENT_TCO = {
    "mean": [6427.401604844547, 25709.60641937819, 44991.81123391185, 64274.01604844558],
    "p10": [5595.846463143178, 22383.385852572712, 39170.925242002246, 55958.46463143177],
    "p50": [6402.846906000738, 25611.387624002953, 44819.928342005165, 64028.46906000738],
    "p90": [7312.592265106134, 29250.369060424535, 51188.145855742936, 73125.92265106134],
}
PROB_BUY_CHEAPER = [0.03025, 0.99575, 1.0, 1.0]
PAYBACK = {  # [month]; NaN: not within the horizon
    "p10": [NAN, 10.41928981546739, 5.509371709192351, 3.73966960724318],
    "p50": [NAN, 12.580552811410982, 6.448466088806607, 4.32823965131987],
    "p90": [NAN, 16.47155176240406, 7.731295761564702, 5.092529615586489],
    "prob_never": [1.0, 0.01425, 0.00025, 0.0],
}
DRIVERS = [
    ("buy.admin_usd_per_month", 0.5648373585523349),
    ("buy.thermal_derate", -0.42007705181731564),
    ("rent.price_annual_change", -0.41286006892875426),
    ("rent.spot_interruption_overhead", -0.3273072658317041),
]


@pytest.fixture(scope="module")
def result():
    return scenarios.evaluate(GOLDEN)


def _close(got, expected) -> None:
    assert list(got) == pytest.approx(expected, rel=REL, nan_ok=True)


def test_breakeven(result):
    be = result.breakeven_utilisation
    for key, value in BREAKEVEN.items():
        assert getattr(be, key) == pytest.approx(value, rel=REL), key


def test_tco_bands_and_probability(result):
    for key, values in BUY_TCO.items():
        _close(getattr(result.buy_tco, key), values)
    for key, values in RENT_TCO.items():
        _close(getattr(result.rent_tco, key), values)
    _close(result.prob_buy_cheaper, PROB_BUY_CHEAPER)


def test_payback(result):
    for key, values in PAYBACK.items():
        _close(getattr(result.payback_months, key), values)


def test_what_drives_the_answer(result):
    got = [(d.input, d.spearman) for d in result.sensitivity.inputs[:4]]
    assert [name for name, _ in got] == [name for name, _ in DRIVERS]
    assert [rho for _, rho in got] == pytest.approx([rho for _, rho in DRIVERS], rel=REL)


def test_the_verdict(result):
    assert result.verdict == (
        "Buying breaks even at 15.1 % utilisation (P10-P90: 11.4 % to 22.2 %); at 40 % "
        "utilisation buying is cheaper in 99.6 % of draws and pays back in 12.6 months (P50)."
    )
