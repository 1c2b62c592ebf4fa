"""Carbon in fleet plans: each term against hand arithmetic, against the scenario model, the
price folded into the cost, unknown API emissions, errors at plan key paths, no change without
carbon keys."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

import scenarios
from costmodel.fleet import simulate_plan
from present import from_dict, to_dict

EXAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "examples"
WORKED = yaml.safe_load((EXAMPLES / "worked-example.yaml").read_text(encoding="utf-8"))
API_PLAN = yaml.safe_load(
    (EXAMPLES / "plan-inference-70b-api-burst.yaml").read_text(encoding="utf-8")
)
PLAN_WORKED = yaml.safe_load((EXAMPLES / "plan-worked-example.yaml").read_text(encoding="utf-8"))

_V100 = {"name": "1x V100", "gpu": "v100-sxm2-16gb", "gpu_count": 1, "on_demand_usd_per_hour": 3.06}

#: One month, every input fixed. Server: 2 inline GPUs of 350 W busy, 30 W idle, 150 W platform,
#: PUE 1.3, T_srv = 2 x 1.0 x 0.95 x 0.9 = 1.71 reference GPU-hours an hour, so C = 730 x 1.71 =
#: 1248.3 a month; a 1x V100 reserved (T_res = 1, V = 730) and a 1x V100 spot burst
#: (T_burst = 1, overhead 10 %). Demand W_1 = 2000.
HAND = {
    "version": 1,
    "kind": "plan",
    "name": "hand",
    "horizon_months": 1,
    "discount_rate": 0.08,
    "tax_rate": 0.25,
    "simulation": {"samples": 1, "seed": 1, "method": "random"},
    "workload": {"precision": "fp32"},
    "demand": {"reference_gpu_hours_per_month": 2000},
    "own": {
        "gpu": {"name": "card", "memory_gb": 24, "tdp_w": 350, "price_usd": 1500},
        "gpu_count": 2,
        "gpu_price_usd": 1500,
        "platform_price_usd": 2500,
        "gpu_power_w": 350,
        "gpu_idle_w": 30,
        "platform_power_w": 150,
        "powered_when_idle": True,
        "electricity_usd_per_kwh": 0.15,
        "pue": 1.3,
        "relative_throughput": 1.0,
        "scaling_efficiency": 0.95,
        "thermal_derate": 0.9,
        "grid": 400,
        "embodied_kg_co2e": 1000,
        "servers": {"min": 0, "max": 1},
    },
    "reserve": {
        "instance": {**_V100, "reserved_1y_usd_per_hour": 1.95},
        "price_usd_per_hour": 1.95,
        "relative_throughput": 1.0,
        "scaling_efficiency": 1.0,
        "grid": 300,
        "pue": 1.2,
        "power_kw": 0.4,
        "embodied_kg_co2e": 600,
        "instances": {"min": 0, "max": 1},
    },
    "burst": {
        "instance": {**_V100, "spot_usd_per_hour": 1.0},
        "pricing": "spot",
        "price_usd_per_hour": 1.0,
        "spot_interruption_overhead": 0.1,
        "relative_throughput": 1.0,
        "scaling_efficiency": 1.0,
        "grid": 500,
        "pue": 1.1,
        "power_kw": 0.5,
        "embodied_kg_co2e": 500,
    },
}
# Each term of month 1 [kg CO2e] (grids flat, service lives 5 years):
# owned operational: [S kW_idle 730 + kW_per_u A_1 / T_srv] PUE I / 1000, S = 1, A_1 = C = 1248.3
#   kW_idle = (2 x 30 + 150) / 1000 = 0.21, kW_per_u = 2 x 320 / 1000 = 0.64:
#   [0.21 x 730 + 0.64 x 1248.3 / 1.71] x 1.3 x 400 / 1000 = (153.3 + 467.2) x 0.52 = 322.66
OWNED_OP = 322.66
# owned embodied: E_own min(1, H / (12 L)) = 1000 x 1/60 = 16.6666...
OWNED_EMB = 1000 / 60
# reserved, K = 1: B_1 = min(W - A, V) = min(751.7, 730) = 730 hours used (T_res = 1):
#   730 x (0.4 x 1.2 x 300 / 1000 + 600 / (5 x 8760)) = 105.12 + 10.0 = 115.12
RESERVED = 115.12
# burst, K = 1: O_1 = 2000 - 1248.3 - 730 = 21.7 of work, 21.7 x 1.1 = 23.87 instance-hours:
#   23.87 x (0.5 x 1.1 x 500 / 1000 + 500 / 43800) = 6.56425 + 0.272488584... = 6.836738584
BURST_K1 = 23.87 * (0.275 + 500 / 43800)
# burst, K = 0: O_1 = 751.7, 826.87 instance-hours: 826.87 x 0.286415525 = 236.82...
BURST_K0 = 751.7 * 1.1 * (0.275 + 500 / 43800)
# all cloud (S = K = 0): 2000 x 1.1 x 0.286415525 = 630.114...
CLOUD = 2000 * 1.1 * (0.275 + 500 / 43800)


def _plan(doc: dict) -> scenarios.Plan:
    return scenarios.load_mapping(copy.deepcopy(doc))


def _kg(result, servers: int, instances: int) -> float:
    return result.candidate(servers, instances).carbon.mean * 1000.0


def test_each_term_of_a_month_against_hand_arithmetic():
    result = scenarios.evaluate(_plan(HAND))
    assert _kg(result, 1, 1) == pytest.approx(OWNED_OP + OWNED_EMB + RESERVED + BURST_K1, 1e-12)
    assert _kg(result, 1, 0) == pytest.approx(OWNED_OP + OWNED_EMB + BURST_K0, 1e-12)
    # no server: the reservation takes 730, the burst 1270 of work (1397 instance-hours)
    reserved_only = RESERVED + 1270 * 1.1 * (0.275 + 500 / 43800)
    assert _kg(result, 0, 1) == pytest.approx(reserved_only, 1e-12)
    assert result.all_cloud.carbon.mean * 1000 == pytest.approx(CLOUD, 1e-12)
    assert _kg(result, 0, 0) == pytest.approx(CLOUD, 1e-12)
    # per unit of work: 1000 g/kg x kg / 2000 reference GPU-hours
    c = result.candidate(1, 1).carbon
    assert c.per_unit == pytest.approx(c.mean * 1e6 / 2000, 1e-12)
    assert c.p10 == c.p50 == c.p90 == pytest.approx(c.mean, 1e-12)


def test_the_carbon_frontier_keeps_what_no_other_beats_on_cost_and_carbon():
    result = scenarios.evaluate(_plan(HAND))
    front = {(c.servers, c.instances) for c in result.carbon_frontier}
    cost = {(c.servers, c.instances): c.cost.mean for c in result.candidates}
    kg = {key: _kg(result, *key) for key in cost}
    for key in cost:  # beaten: another at most as dear and as emitting, better on one
        beaten = any(
            cost[o] <= cost[key] and kg[o] <= kg[key] and (cost[o], kg[o]) != (cost[key], kg[key])
            for o in cost
        )
        assert (key in front) == (not beaten)
    assert (1, 1) in front  # the least carbon: 461 kg against 576 to 630


def test_one_server_doing_all_the_work_emits_what_the_scenario_says():
    # a plan of S = 1, K = 0, flat load, no growth, demand u 730 T_srv at u = 0.4: the owned
    # build of the scenario at u = 0.4, with the grid falling 3 %/year over 36 months
    u, t_srv = 0.4, 2 * 1.0 * 0.95 * 0.9
    buy = {k: v for k, v in WORKED["buy"].items() if k != "spare_gpus"}
    buy |= {"grid": "DE", "grid_annual_change": -0.03, "embodied_kg_co2e": 600}
    scenario = {**copy.deepcopy(WORKED), "buy": buy, "utilisation": [u]}
    expected = scenarios.evaluate(scenarios.load_mapping(scenario)).carbon["buy"].mean[0]
    plan = copy.deepcopy(PLAN_WORKED)
    plan["own"] = {**buy, "servers": {"min": 1, "max": 1}}
    plan["reserve"] = None
    plan["demand"] = {"reference_gpu_hours_per_month": u * 730 * t_srv, "annual_growth": 0.0}
    result = scenarios.evaluate(_plan(plan))
    (c,) = result.candidates
    assert c.share_owned == pytest.approx(1.0, 1e-12)
    assert c.carbon.mean == pytest.approx(expected, rel=1e-9)


def test_a_price_of_zero_moves_no_cost_and_a_price_adds_the_hand_computed_amount():
    bare = copy.deepcopy(HAND)
    for block, keys in (
        ("own", ("grid", "embodied_kg_co2e")),
        ("reserve", ("grid", "pue", "power_kw", "embodied_kg_co2e")),
        ("burst", ("grid", "pue", "power_kw", "embodied_kg_co2e")),
    ):
        for key in keys:
            del bare[block][key]
    plain = simulate_plan(_plan(bare).inputs)
    assert plain.carbon is None
    zero = simulate_plan(_plan({**HAND, "carbon": {"usd_per_tonne": 0}}).inputs)
    assert np.array_equal(zero.cost, plain.cost) and np.array_equal(zero.cloud, plain.cloud)
    priced = simulate_plan(_plan({**HAND, "carbon": {"usd_per_tonne": 100}}).inputs)
    # p = 0.1 USD/kg: p E_emb at m = 0 + (1 - tau) p d_1 (operational + reserved + burst)
    d1 = 1.08 ** (-1 / 12)
    j = int(np.flatnonzero((priced.servers == 1) & (priced.instances == 1))[0])
    added = 0.1 * OWNED_EMB + 0.75 * 0.1 * d1 * (OWNED_OP + RESERVED + BURST_K1)
    assert priced.cost[j, 0] - plain.cost[j, 0] == pytest.approx(added, rel=1e-12)
    assert priced.cloud[0] - plain.cloud[0] == pytest.approx(0.75 * 0.1 * d1 * CLOUD, rel=1e-12)
    assert np.array_equal(priced.carbon, zero.carbon)  # the price moves money, not carbon


def _uncertain(doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    doc["simulation"] = {"samples": 400, "seed": 3, "method": "lhs"}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.0}
    doc["own"]["pue"] = {"dist": "uniform", "low": 1.1, "high": 1.5}
    return doc


def test_unpriced_carbon_draws_move_no_cost_draw_and_a_seed_repeats():
    base = _uncertain(PLAN_WORKED)
    carbon = copy.deepcopy(base)
    carbon["own"]["grid"] = {"dist": "uniform", "low": 200, "high": 500}
    carbon["burst"]["grid"] = {"dist": "triangular", "low": 300, "mode": 380, "high": 450}
    plain, counted = (simulate_plan(_plan(d).inputs) for d in (base, carbon))
    assert np.array_equal(plain.cost, counted.cost)
    assert counted.carbon.std(axis=1).max() > 0  # the grids vary the emissions
    first, again = (to_dict(scenarios.evaluate(_plan(carbon))) for _ in range(2))
    assert first == again
    assert from_dict(first).carbon_frontier is not None


def test_a_plan_without_carbon_keys_has_no_carbon_in_its_result():
    data = to_dict(scenarios.evaluate(_plan(PLAN_WORKED)))
    assert "carbon" not in repr(data)
    assert "carbon" not in scenarios.evaluate(_plan(PLAN_WORKED)).to_frame().columns[-1]


def test_an_api_burst_without_figures_makes_the_plan_carbon_unknown():
    doc = copy.deepcopy(API_PLAN)
    doc["simulation"] = {"samples": 64, "seed": 1, "method": "lhs"}
    doc["own"]["grid"] = "US"
    result = scenarios.evaluate(_plan(doc))
    assert all(c.carbon is None for c in result.candidates) and result.all_cloud.carbon is None
    assert result.carbon_frontier is None and result.carbon_unknown == ("burst.api",)
    (advice,) = [w for w in result.warnings if w.code == "api_carbon_unknown"]
    assert "burst.api.g_co2e_per_mtok" in advice.message
    data = to_dict(result)
    assert data["best"]["carbon"] is None and data["carbon_frontier"] is None
    assert from_dict(data).counts_carbon
    assert math.isnan(result.to_frame()["carbon_mean"].iloc[0])


def test_an_api_burst_emits_its_figure_per_million_tokens():
    doc = copy.deepcopy(API_PLAN)
    doc["simulation"] = {"samples": 64, "seed": 1, "method": "lhs"}
    doc["burst"]["api"]["g_co2e_per_mtok"] = 250.0
    doc["own"]["servers"] = {"min": 0, "max": 0}
    doc["reserve"] = None
    sim = simulate_plan(_plan(doc).inputs)
    work = sim.work  # all of it to the API: 250 g per M tokens
    assert np.allclose(sim.cloud_carbon, work * 250 / 1000, rtol=1e-12)
    assert np.allclose(sim.carbon[0], work * 250 / 1000, rtol=1e-12)


@pytest.mark.parametrize(
    ("block", "key", "value", "message"),
    [
        ("own", "grid", -5, "must lie in"),
        ("burst", "pue", 0.9, "must lie in"),
        ("reserve", "grid", "USA", "unknown grid id 'USA'; closest: US"),
        ("own", "grid", "aws/us-eest-1", "closest: aws/us-west-1, aws/us-east-1"),
    ],
)
def test_bad_carbon_keys_are_errors_at_plan_key_paths(block, key, value, message):
    doc = copy.deepcopy(HAND)
    doc[block][key] = value
    with pytest.raises(scenarios.ScenarioError) as err:
        _plan(doc)
    (error,) = err.value.errors
    assert error["path"] == f"{block}.{key}" and message in error["message"]


def test_defaults_come_from_the_catalog_at_plan_key_paths():
    doc = copy.deepcopy(PLAN_WORKED)
    doc["reserve"]["instance"] = "aws/p3.2xlarge"
    doc["own"]["grid"] = "FR"
    plan = _plan(doc)
    notes = {a.key: a for a in plan.assumptions}
    assert notes["own.grid"].source.startswith("plan: grid FR")
    assert "aws/p3.2xlarge" in notes["reserve.grid"].source
    assert notes["burst.pue"].source.startswith("default: the public-cloud average")
    assert plan.document["reserve"]["grid"] == notes["reserve.grid"].value or isinstance(
        plan.document["reserve"]["grid"], str
    )
    assert plan.document["carbon"]["usd_per_tonne"] == 0.0


def test_pooled_spares_add_the_gpus_embodied_carbon():
    doc = copy.deepcopy(HAND)
    doc["own"]["spare_share"] = 0.5  # 1 server of 2 GPUs: 1 spare, inline GPU 150 kg
    with_spare, without = (scenarios.evaluate(_plan(d)) for d in (doc, HAND))
    assert _kg(with_spare, 1, 1) - _kg(without, 1, 1) == pytest.approx(150 / 60, rel=1e-12)


def test_the_spare_gpus_embodied_figure_is_an_assumption_beside_the_given_servers():
    # own.embodied_kg_co2e = 1000 is given (one server); the spare keeps the GPU's 150 kg
    doc = copy.deepcopy(HAND)
    doc["own"]["spare_share"] = 0.5
    notes = {a.key: a for a in _plan(doc).assumptions}
    spare = notes["own.spare_gpu_kg_co2e"]
    assert spare.value == 150.0 and spare.unit == "[kg CO2e]"
    assert spare.source.startswith("catalog: inline GPU 'card' at 150 kg (estimated)")
    assert notes["own.embodied_kg_co2e"].value == 1000.0
    # no pooled spares: the figure enters nothing and is not listed
    assert "own.spare_gpu_kg_co2e" not in {a.key for a in _plan(HAND).assumptions}
    catalog_gpu = copy.deepcopy(PLAN_WORKED)
    catalog_gpu["own"] |= {"gpu": "rtx-4090", "spare_share": 0.1, "grid": "FR"}
    (note,) = [a for a in _plan(catalog_gpu).assumptions if a.key == "own.spare_gpu_kg_co2e"]
    assert note.source.startswith("catalog: rtx-4090 at 150 kg")


def test_an_uncertain_price_adds_between_its_taxed_discounted_and_full_amounts():
    doc = _uncertain(PLAN_WORKED)
    doc["tax_rate"] = 0.2
    doc["burst"]["power_kw"] = {"dist": "uniform", "low": 0.3, "high": 0.6}
    plain = simulate_plan(_plan(doc).inputs)
    doc["carbon"] = {"usd_per_tonne": {"dist": "uniform", "low": 50, "high": 150}}
    priced = simulate_plan(_plan(doc).inputs)
    price = priced.draws["carbon.usd_per_tonne"] / 1000  # [USD/kg]
    full = price * priced.carbon  # every kg at its undiscounted, untaxed price
    added = priced.cost - plain.cost
    low = full * 0.8 * 1.08 ** (-36 / 12)  # the least factor a kg is taken at
    assert np.all(added <= full * (1 + 1e-12)) and np.all(added >= low * (1 - 1e-12))
