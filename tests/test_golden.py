"""Seeded regression: one uncertain scenario's key outputs pinned to printed values.

``tests/fixtures/golden.yaml`` uses every distribution form, a rank correlation, tax with MACRS
depreciation and spot pricing with an uncertain interruption overhead, at 4,000 LHS draws with
seed 2026. Any change to sampling, the distributions, the equations or the summaries moves these
numbers; a deliberate change must update them here and say why in its commit (the last: the
4,000 LHS draws became 16 independent Latin hypercubes of 250, correlated through a Gaussian
copula, so that their precision can be measured; the break-even P50 moved from 0.15092 to
0.15151, within its 95 % interval).
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
    "mean": 0.16225723451804744,
    "p10": 0.11276569295910928,
    "p50": 0.15150623058584778,
    "p90": 0.22178734624461618,
    "prob_always": 0.0,
    "prob_never": 0.0,
}
# per utilisation level 0.1, 0.4, 0.7, 1.0 [USD, present value]
BUY_TCO = {
    "mean": [10050.626544964553, 11332.231169435423, 12613.835793906292, 13895.44041837716],
    "p10": [7365.271173186323, 8376.3478961603, 9341.528320424286, 10239.535024795252],
    "p50": [9432.689730369115, 10786.669549477618, 12137.48048647974, 13473.85258010889],
    "p90": [13353.739509103692, 14812.740263239222, 16283.782384197648, 17815.021288444073],
}
RENT_TCO = {
    "mean": [6429.332139752892, 25717.328559011567, 45005.32497827023, 64293.32139752891],
    "p10": [5580.47668177187, 22321.90672708748, 39063.33677240309, 55804.7668177187],
    "p50": [6413.550941318004, 25654.203765272017, 44894.85658922603, 64135.50941318004],
    "p90": [7308.132580321291, 29232.530321285165, 51156.92806224903, 73081.32580321291],
}
PROB_BUY_CHEAPER = [0.027, 0.996, 1.0, 1.0]
PAYBACK = {  # [month]; NaN: not within the horizon
    "p10": [NAN, 10.439690546393287, 5.539003835629667, 3.755402501418637],
    "p50": [NAN, 12.575673207250023, 6.426645199796709, 4.326842690132731],
    "p90": [NAN, 16.56488248730275, 7.702109319958959, 5.071885538570501],
    "prob_never": [1.0, 0.0135, 0.0, 0.0],
}
DRIVERS = [
    ("buy.admin_usd_per_month", 0.5762383683898981),
    ("buy.thermal_derate", -0.43533132527070784),
    ("rent.price_annual_change", -0.41495893243493326),
    ("rent.spot_interruption_overhead", -0.344461983903874),
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
        "Buying breaks even at 15.2 % utilisation (P10-P90: 11.3 % to 22.2 %); at 40 % "
        "utilisation buying is cheaper in 99.6 % of draws and pays back in 12.6 months (P50)."
    )
