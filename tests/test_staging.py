"""Growing the fleet (``own.add``): the staged plan's worked example, its variants, the
cohort's cost by hand, and a later purchase that never happens or happens at once."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml

import scenarios
from costmodel import Fixed
from costmodel.cashflows import BuyDraws
from costmodel.engine import draw
from costmodel.fleet import simulate_plan, summarise_plan
from costmodel.staging import Cohort, first_month_above
from present import from_dict, to_dict
from scenarios.errors import ScenarioError

ROOT = Path(__file__).resolve().parents[1]
STAGED = yaml.safe_load((ROOT / "scenarios/examples/plan-staged-growth.yaml").read_text("utf-8"))

#: The worked example's table: (S0, K, S1, theta) -> (cost [USD], share owned, utilisation,
#: first month of service); S1 = 0 is section 8's plan of S0 servers bought at month 0.
TABLE = {
    (3, 0, 2, 1.0): (40511.6542, 0.995706, 0.798908, 22),
    (3, 0, 3, 1.0): (42981.9293, 0.998250, 0.722425, 22),
    (3, 0, 2, 0.8): (43015.1624, 0.997456, 0.726599, 15),
    (2, 0, 3, 1.0): (43591.1301, 0.996289, 0.721006, 10),
    (4, 0, 1, 1.0): (44087.5499, 0.993889, 0.733654, 31),
    (3, 0, 1, 1.0): (48568.7125, 0.950669, 0.855793, 22),
    (5, 0, 0, None): (49819.9289, 0.997456, 0.613572, None),
}


def _staged(**add) -> dict:
    doc = copy.deepcopy(STAGED)
    doc["own"]["add"].update(add)
    for key, value in list(doc["own"]["add"].items()):
        if value is None:
            del doc["own"]["add"][key]
    return doc


def _row(result, servers, instances, added, trigger):
    for c in result.candidates:
        if c.key == (servers, instances, added, trigger):
            return c
    raise AssertionError((servers, instances, added, trigger))


def test_the_worked_example_table_best_and_saving():
    result = scenarios.evaluate(STAGED)
    assert len(result.candidates) == 147  # 21 pairs, and each with 3 counts x 2 triggers
    for key, (cost, share, util, month) in TABLE.items():
        c = _row(result, *key)
        assert c.cost.mean == pytest.approx(cost, rel=1e-6, abs=5e-5), key
        assert c.share_owned == pytest.approx(share, abs=5e-7), key
        assert c.owned_utilisation == pytest.approx(util, abs=5e-7), key
        assert (c.add and c.add.month.p50) == month
    assert result.best.key == (3, 0, 2, 1.0)
    assert [c.key for c in result.frontier] == [(3, 0, 2, 1.0)]
    # 49,819.9289 (5 servers at month 0, section 8's best) - 40,511.6542 = 9,308.2747
    assert result.staging_saving.mean == pytest.approx(9308.2747, abs=5e-5)
    assert result.verdict.startswith(
        "Own 3 servers now and add 2 servers when the work passes 100 % of their capacity, "
        "in service from month 22 in the median draw"
    )


def test_the_trigger_months():
    # W_m = 2000 x 1.5^((m-1)/12) passes theta x C(S0), C(S0) = S0 x 730 x 1.71 = 1248.3 S0:
    # S0 = 3, theta = 1: 1.5^((m-1)/12) > 1.87245, (m-1)/12 > ln 1.87245 / ln 1.5 = 1.54717,
    # m = 20, in service from 20 + 1 + 1 = 22; the rest as the section's table.
    result = scenarios.evaluate(STAGED)
    expected = {
        (2, 0.8): 3, (3, 0.8): 15, (4, 0.8): 24, (5, 0.8): 31,
        (2, 1.0): 10, (3, 1.0): 22, (4, 1.0): 31, (5, 1.0): None,
    }  # fmt: skip
    for (s0, theta), month in expected.items():
        c = _row(result, s0, 0, 1, theta)
        if month is None:
            assert c.add.month.prob_never == 1.0 and np.isnan(c.add.month.p50)
        else:
            assert c.add.month.p50 == month and c.add.month.prob_never == 0.0
    work = 2000 * 1.5 ** (np.arange(36) / 12)
    assert first_month_above(work[:, None], 3 * 730 * 1.71)[0] == 20
    assert first_month_above(work[:, None], 1e9)[0] == 37  # never: H + 1


def test_the_added_cohort_by_hand():
    # One server of HW = 2 x 1500 + 2500 = 5500 bought at a = 20 at -20 %/year:
    # HW' = 5500 x 0.8^(20/12) = 3791.8051, C0' = 3991.8051, resale at H = 36
    # R' = 3791.8051 x 0.65^(16/12) = 2134.9964, from month 22 on.
    plan = scenarios.load_mapping(STAGED)
    values, _ = draw(plan.inputs)
    own = BuyDraws.sampled(plan.inputs.own, values, "own")
    d = 1.08 ** (-np.arange(1, 37) / 12)
    energy = d * 1.03 ** (np.arange(36) / 12)
    cohort = Cohort.of(own, 36, 0.08, 0.0, energy)
    a, s = np.array([20]), np.array([22])
    cost = cohort.priced(1, 0, a, s, -0.2)[0]
    hw = 5500 * 0.8 ** (20 / 12)
    assert hw == pytest.approx(3791.8051, abs=5e-5)
    resale = hw * 0.65 ** (16 / 12)
    assert resale == pytest.approx(2134.9964, abs=5e-5)
    # idle power 2 x 30 + 150 = 210 W: 0.21 kW x 730 x 1.3 x 0.15 USD/kWh a month, grown 3 %/y;
    # hosting 0, admin 50, maintenance 5 % of HW' a year, failures 2 % of 2 x 1500 x 0.8^(20/12)
    monthly = 50 + 0.05 * hw / 12 + 0.02 * 2 * 1500 * 0.8 ** (20 / 12) / 12
    running = 0.21 * 730 * 1.3 * 0.15 * energy[21:].sum() + monthly * d[21:].sum()
    by_hand = (hw + 200) * 1.08 ** (-20 / 12) + running - resale * d[-1]
    assert cost == pytest.approx(by_hand, rel=1e-12)
    # bought past the horizon: nothing paid
    assert cohort.priced(1, 0, np.array([36]), np.array([38]), -0.2)[0] == 0.0


@pytest.mark.parametrize(
    ("changes", "key", "cost"),
    [
        ({"price_annual_change": 0.0}, (3, 0, 2, 1.0), 42205.7896),
        ({"lead_time_months": 0}, (3, 0, 2, 1.0), 40282.2591),
        ({"lead_time_months": 2}, (3, 0, 2, 1.0), 41025.3201),
        ({"lead_time_months": 3}, (3, 0, 2, 1.0), 41824.2102),
        ({"when_demand_above": None, "at_month": [12, 24]}, (3, 0, 2, 24), 43370.1521),
    ],
)
def test_the_variants_of_the_worked_example(changes, key, cost):
    result = scenarios.evaluate(_staged(**changes))
    assert _row(result, *key).cost.mean == pytest.approx(cost, rel=1e-6, abs=5e-5)
    if "at_month" in changes:  # bought in month 24, in service from 26
        assert result.best.key == key and result.best.add.month.p50 == 26


def test_with_tax_and_straight_line_depreciation():
    doc = _staged()
    doc["tax_rate"] = 0.25
    doc["own"] |= {"depreciation": "straight_line", "depreciation_years": 5}
    result = scenarios.evaluate(doc)
    assert result.best.key == (3, 0, 2, 1.0)
    assert result.best.cost.mean == pytest.approx(31171.0718, rel=1e-6, abs=5e-5)
    assert _row(result, 5, 0, 0, None).cost.mean == pytest.approx(38422.3792, abs=5e-5)
    assert result.best.share_owned == pytest.approx(0.995706, abs=5e-7)


def staged_and_plain(sim, pairs: int = 21):
    """(j, plain) for each staged candidate j with first servers and the row of the plan
    (S0, K) it extends; a candidate without them triggers in the first month with work."""
    for j in range(pairs, sim.servers.size):
        if sim.servers[j]:
            same = (sim.servers[:pairs] == sim.servers[j]) & (
                sim.instances[:pairs] == sim.instances[j]
            )
            yield j, np.flatnonzero(same)[0]


def test_a_trigger_that_never_fires_is_the_plan_that_adds_nothing():
    doc = _staged(when_demand_above=[10.0])  # the work never passes 10x the first capacity
    doc["simulation"] = {"samples": 500, "seed": 4, "method": "lhs"}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 0.6}
    sim = simulate_plan(scenarios.load_mapping(doc).inputs)
    pairs = 21
    assert np.all(np.isinf(sim.start[:, :]) | (sim.servers[pairs:, None] == 0))
    for j, plain in staged_and_plain(sim, pairs):
        np.testing.assert_allclose(sim.cost[j], sim.cost[plain], rtol=1e-12)
    result = summarise_plan(sim)
    assert result.best.add is None  # a duplicate stays behind the plan it repeats
    assert all(c.add is None or c.servers == 0 for c in result.frontier)
    assert result.staging_saving.mean == 0.0


def test_a_purchase_at_once_is_close_to_buying_everything_at_month_0():
    # Triggered in month 1 (theta 0: any work) with no lead time and no price change, 2
    # servers serve from month 2. Against 5 servers at month 0 (the 3 first servers hold
    # month 1's 2000 h, so no work moves), the staged plan saves exactly:
    # - capex a month later: 2 x 5700 x (1 - 1.08^(-1/12)) = 72.8790;
    # - month 1 of the 2 servers' idle power and fixed costs: 2 x (0.21 kW x 730 x 1.3 x 0.15
    #   + 50 + 0.05 x 5500/12 + 0.02 x 3000/12) x 1.08^(-1/12) = 214.2419;
    # - a month less of resale ageing: 2 x 5500 x (0.65^(35/12) - 0.65^3) x 1.08^-3 = 87.6511;
    # 374.7720 in all, 0.75 % of the 49,819.93 of buying them at month 0.
    doc = _staged(when_demand_above=[0.0], lead_time_months=0, price_annual_change=0.0)
    result = scenarios.evaluate(doc)
    later = _row(result, 3, 0, 2, 0.0)
    now = _row(result, 5, 0, 0, None)
    assert later.add.month.p50 == 2
    d1 = 1.08 ** (-1 / 12)
    capex = 2 * 5700 * (1 - d1)
    running = 2 * (0.21 * 730 * 1.3 * 0.15 + 50 + 0.05 * 5500 / 12 + 0.02 * 3000 / 12) * d1
    resale = 2 * 5500 * (0.65 ** (35 / 12) - 0.65**3) * 1.08**-3
    assert now.cost.mean - later.cost.mean == pytest.approx(capex + running + resale, rel=1e-9)
    assert capex + running + resale == pytest.approx(374.7720, abs=5e-5)


def test_without_add_or_with_no_servers_added_the_plan_is_unchanged():
    plain = copy.deepcopy(STAGED)
    del plain["own"]["add"]
    base = to_dict(scenarios.evaluate(plain))
    none = to_dict(scenarios.evaluate(_staged(servers={"min": 0, "max": 0})))
    for key in ("candidates", "best", "frontier", "all_cloud", "work_split", "verdict"):
        assert none[key] == base[key], key
    assert "staging_saving" not in base


def test_uncertain_staged_plans_repeat_with_their_seed_and_round_trip():
    doc = _staged()
    doc["simulation"] = {"samples": 300, "seed": 9, "method": "lhs"}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.2, "high": 0.8}
    doc["own"]["add"]["price_annual_change"] = {"dist": "uniform", "low": -0.3, "high": 0.0}
    a, b = scenarios.evaluate(doc), scenarios.evaluate(doc)
    assert to_dict(a) == to_dict(b)
    month = a.best.add.month
    assert month.p10 <= month.p50 <= month.p90
    assert to_dict(from_dict(to_dict(a))) == to_dict(a)
    frame = a.to_frame()
    assert {"added", "when_demand_above", "added_month_p50"} <= set(frame.columns)
    assert any(x.key == "own.add.price_annual_change" for x in a.assumptions)


@pytest.mark.parametrize(
    ("add", "path"),
    [
        ({"servers": {"min": 0, "max": 2}}, "own.add.when_demand_above"),
        (
            {"servers": {"min": 0, "max": 2}, "when_demand_above": [1], "at_month": [3]},
            "own.add.when_demand_above",
        ),
        ({"servers": {"min": 0, "max": 2}, "at_month": [40]}, "own.add.at_month"),
        ({"servers": {"min": 0, "max": 2}, "at_month": [0]}, "own.add.at_month[0]"),
        ({"servers": {"min": 3, "max": 2}, "at_month": [3]}, "own.add.servers.min"),
        ({"servers": {"min": 0, "max": 2}, "at_month": [3], "colour": 1}, "own.add.colour"),
    ],
)
def test_bad_add_blocks_are_errors_at_their_key_paths(add, path):
    doc = copy.deepcopy(STAGED)
    doc["own"]["add"] = add
    with pytest.raises(ScenarioError) as exc:
        scenarios.load_mapping(doc)
    assert path in {e["path"] for e in exc.value.errors}, exc.value.errors


def test_the_engine_refuses_no_staged_candidate_count_past_its_limits():
    inputs = scenarios.load_mapping(STAGED).inputs
    assert inputs.candidates == 147
    assert dataclasses.replace(inputs, add=None).candidates == 21
    assert isinstance(inputs.add.price_annual_change, Fixed)
