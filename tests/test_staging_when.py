"""When staging wins and when it does not: the table of docs/model.md ("Growing the fleet"),
the staged worked example with one change at a time."""

from __future__ import annotations

import pytest

import scenarios
from tests.test_staging import _staged

#: change (of own.add, or the demand's growth) -> (best (S0, K, S1, theta), its mean cost
#: [USD], the mean staging saving [USD]).
CASES = {
    "none": ({}, (3, 0, 2, 1.0), 40511.6542, 9308.2747),
    "flat": ({"growth": 0.0}, (2, 0, 0, None), 20869.2739, 0.0),
    "slow": ({"growth": 0.1}, (2, 0, 0, None), 22626.4745, 0.0),
    "prices +50 %": ({"price_annual_change": 0.5}, (4, 0, 1, 1.0), 46804.7569, 3015.1721),
    "prices +100 %": ({"price_annual_change": 1.0}, (5, 0, 0, None), 49819.9289, 0.0),
    "lead 12": ({"lead_time_months": 12}, (3, 0, 2, 0.8), 46009.1922, 3810.7367),
    "lead 18": ({"lead_time_months": 18}, (5, 0, 0, None), 49819.9289, 0.0),
}


@pytest.mark.parametrize("name", CASES)
def test_each_row_of_the_when_staging_wins_table(name):
    change, best, cost, saving = CASES[name]
    doc = _staged(**{k: v for k, v in change.items() if k != "growth"})
    doc["demand"]["annual_growth"] = change.get("growth", 0.5)
    result = scenarios.evaluate(doc)
    assert result.best.key == best
    assert result.best.cost.mean == pytest.approx(cost, rel=1e-6, abs=5e-5)
    assert result.staging_saving.mean == pytest.approx(saving, abs=5e-5)


def test_a_purchase_at_once_with_the_price_falling_saves_a_months_trend_more():
    # As test_staging's purchase at once (month 1, no lead time), with the example's -20 %/year:
    # the 2 added servers' hardware costs HW' = 5500 x 0.8^(1/12) = 5398.6709 (G' = 1472.3648),
    # so against 5 servers at month 0 the staged plan saves, d_m = 1.08^(-m/12):
    # - capex: 2 x 5700 - 2 x (HW' + 200) d_1 = 274.2416;
    # - month 1's idle power and fixed costs of 2 servers: 214.2419 (as without the trend);
    # - months 2..36 of maintenance and failures on the cheaper hardware:
    #   2 x (0.05 (5500 - HW') / 12 + 0.02 x 2 (1500 - G') / 12) sum_{m=2..36} d_m = 31.9391;
    # - resale at H: 2 HW' 0.65^(35/12) d_36 - 2 x 5500 x 0.65^3 d_36 = 41.8555 more;
    # 562.2782 in all (1.1 % of 49,819.93), against 374.7720 at a flat price.
    result = scenarios.evaluate(_staged(when_demand_above=[0.0], lead_time_months=0))
    costs = {c.key: c.cost.mean for c in result.candidates}
    d = lambda m: 1.08 ** (-m / 12)  # noqa: E731
    hw, gpu = 5500 * 0.8 ** (1 / 12), 1500 * 0.8 ** (1 / 12)
    capex = 2 * 5700 - 2 * (hw + 200) * d(1)
    month_1 = 2 * (0.21 * 730 * 1.3 * 0.15 + 50 + 0.05 * 5500 / 12 + 0.02 * 3000 / 12) * d(1)
    upkeep = 2 * (0.05 * (5500 - hw) / 12 + 0.02 * 2 * (1500 - gpu) / 12)
    later = upkeep * sum(d(m) for m in range(2, 37))
    resale = 2 * hw * 0.65 ** (35 / 12) * d(36) - 2 * 5500 * 0.65**3 * d(36)
    saved = costs[(5, 0, 0, None)] - costs[(3, 0, 2, 0.0)]
    assert saved == pytest.approx(capex + month_1 + later + resale, rel=1e-9)
    assert saved == pytest.approx(562.2782, abs=5e-4)
