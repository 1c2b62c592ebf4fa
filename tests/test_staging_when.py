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
