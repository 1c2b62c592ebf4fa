"""Carbon of a plan that adds servers later (``own.add``): a staged candidate's emissions and
their price against hand arithmetic, a trigger that never fires equal to the plan that adds
nothing, and a purchase at once close to buying every server at month 0."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import scenarios
from costmodel.fleet import simulate_plan
from tests.test_plan_carbon import BURST_K0, BURST_K1, HAND, OWNED_OP, RESERVED
from tests.test_staging import _row, _staged, staged_and_plain

#: HAND (one server, a reserve of 0..1 instances, a spot burst, W = 2000 a month) over three
#: months, adding one more server bought at the end of month 1, in service from month 2.
STAGED = copy.deepcopy(HAND) | {"horizon_months": 3}
STAGED["own"] = HAND["own"] | {
    "servers": {"min": 1, "max": 1},
    "add": {"servers": {"min": 1, "max": 1}, "at_month": [1], "lead_time_months": 0},
}
# Months 2 and 3 (two servers, C = 2 x 1248.3 = 2496.6 > W): A = 2000, no reserved or burst
# work, each [2 x 0.21 x 730 + 0.64 x 2000 / 1.71] x 1.3 x 400 / 1000
#   = (306.6 + 748.5380117) x 0.52 = 548.6717661 kg.
BOTH = (2 * 0.21 * 730 + 0.64 * 2000 / 1.71) * 0.52
# Embodied: the first server 1000 x min(1, 3 / 60) = 50; the added one from its purchase at
# a = 1, 1000 x min(1, (3 - 1) / 60) = 33.3333 kg.
FIRST_EMB, ADDED_EMB = 1000 * 3 / 60, 1000 * 2 / 60


def _kg(result, key) -> float:
    return _row(result, *key).carbon.mean * 1000.0


def test_a_staged_candidates_emissions_against_hand_arithmetic():
    result = scenarios.evaluate(scenarios.load_mapping(copy.deepcopy(STAGED)))
    # month 1 as the one-month plan: 1 server, the rest reserved (K = 1) or burst (K = 0)
    added = 2 * BOTH + FIRST_EMB + ADDED_EMB
    assert _kg(result, (1, 0, 1, 1)) == pytest.approx(OWNED_OP + BURST_K0 + added, rel=1e-12)
    assert _kg(result, (1, 1, 1, 1)) == pytest.approx(
        OWNED_OP + RESERVED + BURST_K1 + added, rel=1e-12
    )
    # = 322.66 + 236.8284 + 1097.3435 + 83.3333 = 1740.1653 kg for K = 0
    assert _kg(result, (1, 0, 1, 1)) == pytest.approx(1740.1653, abs=5e-5)


def test_a_carbon_price_adds_the_staged_candidates_kg_at_their_dates():
    zero, priced = (
        simulate_plan(scenarios.load_mapping({**STAGED, "carbon": {"usd_per_tonne": p}}).inputs)
        for p in (0, 100)
    )
    d = 1.08 ** (-np.arange(1, 4) / 12)
    # 0.1 USD/kg: the first server's embodied 50 kg at m = 0 (no tax, not discounted), the
    # added one's 33.33 kg at a = 1 (d_1, no tax), and (1 - 0.25) of each month's kg,
    # discounted: month 1 322.66 + 236.82 (K = 0), months 2 and 3 548.67 each.
    monthly = (1 - 0.25) * (d[0] * (OWNED_OP + BURST_K0) + (d[1] + d[2]) * BOTH)
    by_hand = 0.1 * (FIRST_EMB + ADDED_EMB * d[0] + monthly)
    j = 2  # (1, 0) and (1, 1) add nothing; then (1, 0, 1, 1) and (1, 1, 1, 1)
    assert (zero.servers[j], zero.instances[j], zero.added[j]) == (1, 0, 1)
    assert priced.cost[j, 0] - zero.cost[j, 0] == pytest.approx(by_hand, rel=1e-12)
    np.testing.assert_allclose(zero.carbon, priced.carbon, rtol=1e-12)  # the price moves no kg


def _carbon(doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    doc["own"] |= {"grid": 400, "embodied_kg_co2e": 1000, "spare_share": 0.25}
    doc["reserve"] |= {"grid": 300, "pue": 1.2, "power_kw": 0.4, "embodied_kg_co2e": 600}
    doc["burst"] |= {"grid": 500, "pue": 1.1, "power_kw": 0.5, "embodied_kg_co2e": 500}
    doc["carbon"] = {"usd_per_tonne": 80}
    return doc


def test_a_trigger_that_never_fires_emits_as_the_plan_that_adds_nothing():
    doc = _carbon(_staged(when_demand_above=[10.0]))  # never 10x the first capacity
    doc["simulation"] = {"samples": 400, "seed": 5, "method": "lhs"}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 0.6}
    doc["own"]["grid"] = {"dist": "uniform", "low": 200, "high": 500}
    doc["own"]["repair_days"] = {"dist": "uniform", "low": 5, "high": 30}  # A(S) per draw
    sim = simulate_plan(scenarios.load_mapping(doc).inputs)
    for j, plain in staged_and_plain(sim):
        np.testing.assert_allclose(sim.carbon[j], sim.carbon[plain], rtol=1e-12)
        np.testing.assert_allclose(sim.cost[j], sim.cost[plain], rtol=1e-12)


def test_a_purchase_at_once_emits_close_to_buying_everything_at_month_0():
    # Triggered in month 1 with no lead time, the 2 added servers serve from month 2: against
    # 5 servers at month 0 they emit less by one month of their idle power,
    # 2 x 0.21 kW x 730 h x 1.3 x 400 g/kWh / 1000 = 159.432 kg, and by one month of their
    # embodied share: the pooled spares are ceil(0.25 x 3 x 2) = 2 and ceil(0.25 x 2 x 2) = 1
    # GPUs of 150 kg against ceil(0.25 x 5 x 2) = 3, so the added cohort is 2 x 1000 + 150 kg,
    # counted over 35 months of the 60 of its life against 36: (2150 / 60) = 35.8333 kg;
    # 195.2653 kg in all (the owned work is the same: 3 servers hold month 1's 2000).
    doc = _carbon(_staged(when_demand_above=[0.0], lead_time_months=0, price_annual_change=0.0))
    result = scenarios.evaluate(doc)
    later, now = _row(result, 3, 0, 2, 0.0), _row(result, 5, 0, 0, None)
    assert later.add.month.p50 == 2
    idle = 2 * 0.21 * 730 * 1.3 * 400 / 1000
    embodied = (2 * 1000 + 150) / 60
    difference = (now.carbon.mean - later.carbon.mean) * 1000
    assert difference == pytest.approx(idle + embodied, rel=1e-9)
    assert idle + embodied == pytest.approx(195.2653, abs=5e-5)


def test_a_candidate_that_repeats_a_better_placed_one_stays_off_the_carbon_frontier():
    # With no first servers every trigger fires in month 1 (the first month with work), so
    # "0 + 2 at 80 %" and "0 + 2 at 100 %" (beside 2 reservations) are the same purchase: only
    # the lower trigger is listed on either frontier.
    result = scenarios.evaluate(_carbon(_staged()))
    keys = [c.key for c in result.carbon_frontier]
    assert len(keys) == len(set(keys))
    for c in result.carbon_frontier:
        if c.add is not None and c.servers == 0:
            assert c.add.when_demand_above == 0.8, c.key
    a, b = (_row(result, 0, 2, 2, theta) for theta in (0.8, 1.0))
    assert (a.cost.mean, a.carbon.mean) == (b.cost.mean, b.carbon.mean)
    assert (0, 2, 2, 0.8) in keys and (0, 2, 2, 1.0) not in keys


def test_the_added_pool_of_spares_counts_from_the_purchase_and_a_late_one_adds_nothing():
    # spare_share 0.5 of 2 GPUs: each cohort pools one spare GPU of 150 kg (the inline GPU's
    # catalog estimate), the first's over 3 / 60 of its life, the added one's over 2 / 60:
    # 150 x (3 + 2) / 60 = 12.5 kg more than without spares.
    doc = copy.deepcopy(STAGED)
    doc["own"]["spare_share"] = 0.5
    with_spares, without = (scenarios.evaluate(copy.deepcopy(d)) for d in (doc, STAGED))
    more = _kg(with_spares, (1, 0, 1, 1)) - _kg(without, (1, 0, 1, 1))
    assert more == pytest.approx(150 * 5 / 60, rel=1e-12)
    # bought at the end of month 3 of 3, in service from month 4: nothing is added
    doc["own"]["add"]["at_month"] = [3]
    late = scenarios.evaluate(doc)
    assert _kg(late, (1, 0, 1, 3)) == pytest.approx(_kg(late, (1, 0, 0, None)), rel=1e-12)
    assert _row(late, 1, 0, 1, 3).add.month.prob_never == 1.0
