"""Fleet planning: the worked example, hand-computed work splits, common random numbers, and
agreement with the rent-versus-buy engine."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import scenarios
from costmodel import Fixed
from costmodel.fleet import simulate_plan, summarise_plan, work_split
from costmodel.plan_result import PlanResult
from present import from_dict, to_dict, to_json

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "scenarios" / "examples"
PLAN = yaml.safe_load((EXAMPLES / "plan-worked-example.yaml").read_text("utf-8"))
WORKED = yaml.safe_load((EXAMPLES / "worked-example.yaml").read_text("utf-8"))

#: The worked example's table: (servers, reserved) -> (cost [USD], share owned, utilisation).
TABLE = {
    (0, 0): (308793.8920, 0.0, 0.0),
    (0, 2): (275994.6453, 0.0, 0.0),
    (1, 2): (191763.7806, 0.325131, 1.0),
    (3, 0): (74505.5790, 0.839655, 0.860839),
    (4, 0): (52958.7214, 0.952419, 0.732335),
    (5, 0): (49819.9289, 0.997456, 0.613572),
    (6, 0): (57208.4699, 1.0, 0.512614),
}


def _plan(**changes) -> dict:
    doc = copy.deepcopy(PLAN)
    for path, value in changes.items():
        node = doc
        *head, last = path.split("__")
        for key in head:
            node = node[key]
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return doc


def test_worked_example_table_and_best_plan():
    result = scenarios.evaluate(PLAN)
    assert isinstance(result.result, PlanResult)
    for (s, k), (cost, share, util) in TABLE.items():
        c = result.candidate(s, k)
        # the table prints 4 decimals of cost and 6 of the shares
        assert c.cost.mean == pytest.approx(cost, rel=1e-6, abs=5e-5), (s, k)
        assert c.share_owned == pytest.approx(share, abs=5e-7), (s, k)
        assert c.owned_utilisation == pytest.approx(util, abs=5e-7), (s, k)
    assert (result.best.servers, result.best.instances) == (5, 0)
    assert len(result.candidates) == 7 * 3
    assert result.verdict.startswith(
        "Own 5 servers and burst the rest (on-demand): P50 saving 84 %"
    )


def test_with_every_input_fixed_every_percentile_is_the_mean():
    result = scenarios.evaluate(PLAN)
    for c in result.candidates:
        assert c.cost.p10 == c.cost.p50 == c.cost.p90 == c.cost.cvar95 == c.cost.mean
        assert c.prob_cheaper_than_cloud in (0.0, 1.0)


def test_the_work_split_when_demand_exceeds_owned_plus_reserved():
    # Flat demand of 2000 reference GPU-hours a month. One server does 730 h * 1.71 = 1248.3,
    # one reserved V100 730 h * 1.0 = 730, so 2000 - 1248.3 - 730 = 21.7 is burst each month.
    plan = scenarios.load_mapping(_plan(demand__annual_growth=0.0, horizon_months=3))
    split = work_split(simulate_plan(plan.inputs), servers=1, instances=1)
    np.testing.assert_allclose(split.owned, [1248.3] * 3, rtol=1e-12)
    np.testing.assert_allclose(split.reserved, [730.0] * 3, rtol=1e-12)
    np.testing.assert_allclose(split.burst, [21.7] * 3, rtol=1e-9)
    # With 2 servers (2496.6 h) the owned servers take everything and the reservation idles.
    split = work_split(simulate_plan(plan.inputs), servers=2, instances=1)
    np.testing.assert_allclose(split.owned, [2000.0] * 3)
    np.testing.assert_allclose(split.reserved + split.burst, [0.0] * 3, atol=1e-12)


def test_the_cost_of_a_month_of_burst_by_hand():
    # One month, no servers, no reservation: 2000 h of V100 work at 3.06 USD/h, discounted
    # one month at 8 %/year: 2000 * 3.06 * 1.08^(-1/12) = 6120 * 0.993607... = 6080.8751...
    plan = scenarios.load_mapping(_plan(horizon_months=1))
    cost = simulate_plan(plan.inputs).cost[0, 0]
    assert cost == pytest.approx(2000 * 3.06 * 1.08 ** (-1 / 12), rel=1e-12)


def test_common_random_numbers_make_differences_less_noisy_than_costs():
    doc = _plan(
        simulation={"samples": 4000, "seed": 3, "method": "lhs"},
        demand={
            "reference_gpu_hours_per_month": {
                "dist": "triangular",
                "low": 1000,
                "mode": 2000,
                "high": 4000,
            },  # fmt: skip
            "annual_growth": {"dist": "uniform", "low": 0.0, "high": 1.0},
        },
    )
    doc["burst"]["price_annual_change"] = {"dist": "uniform", "low": -0.3, "high": 0.0}
    sim = simulate_plan(scenarios.load_mapping(doc).inputs)
    a, b = sim.cost[3 * 3], sim.cost[4 * 3]  # 3 and 4 servers, no reservation
    assert np.std(a - b) < 0.5 * min(np.std(a), np.std(b))
    result = summarise_plan(sim)
    c = result.candidate(4, 0).cost
    assert c.p10 < c.p50 < c.p90 <= c.cvar95
    assert c.cvar95 == pytest.approx(np.sort(b)[-200:].mean(), rel=1e-12)  # worst 5 % of 4000


def test_same_seed_same_numbers():
    doc = _plan(simulation={"samples": 500, "seed": 9, "method": "lhs"})
    doc["own"]["pue"] = {"dist": "uniform", "low": 1.1, "high": 1.6}
    one, two = scenarios.evaluate(doc), scenarios.evaluate(doc)
    assert to_json(one) == to_json(two)


def _scenario(u: float) -> dict:
    """The worked example's rent-versus-buy scenario at one utilisation, without rent extras."""
    doc = copy.deepcopy(WORKED)
    doc["utilisation"] = [u]
    doc["rent"]["storage_usd_per_month"] = 0
    return doc


@pytest.mark.parametrize("u", [0.25, 0.6, 1.0])
def test_one_server_at_constant_demand_costs_the_buy_tco(u):
    # constant demand of u times one server's capacity: 730 h * 1.71 * u a month
    demand = {"reference_gpu_hours_per_month": 730 * 1.71 * u, "annual_growth": 0.0}
    plan = scenarios.evaluate(_plan(demand=demand, own__servers={"min": 0, "max": 1},
                                    reserve=None))  # fmt: skip
    rvb = scenarios.evaluate(_scenario(u))
    assert plan.candidate(1, 0).cost.mean == pytest.approx(rvb.buy_tco.mean[0], rel=1e-12)
    assert plan.candidate(1, 0).owned_utilisation == pytest.approx(u, rel=1e-12)
    # S = 0, K = 0 is renting all the work on demand: the rent TCO at the same u
    assert plan.candidate(0, 0).cost.mean == pytest.approx(rvb.rent_tco.mean[0], rel=1e-12)
    assert plan.all_cloud.cost.mean == pytest.approx(rvb.rent_tco.mean[0], rel=1e-12)


def test_frontier_holds_no_candidate_beaten_on_both_mean_and_p90():
    doc = _plan(simulation={"samples": 2000, "seed": 1, "method": "lhs"})
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.5}
    result = scenarios.evaluate(doc)
    frontier = {(c.servers, c.instances) for c in result.frontier}
    for c in result.candidates:
        beaten = any(
            o.cost.mean < c.cost.mean and o.cost.p90 < c.cost.p90 for o in result.candidates
        )
        assert ((c.servers, c.instances) in frontier) is not beaten
    assert (result.best.servers, result.best.instances) in frontier


@pytest.mark.parametrize("objective", ["mean", "p90", "cvar95"])
def test_best_minimises_the_objective_ties_to_fewer_servers(objective):
    doc = _plan(objective=objective, simulation={"samples": 1000, "seed": 2, "method": "lhs"})
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.5}
    result = scenarios.evaluate(doc)
    key = lambda c: (getattr(c.cost, objective), c.servers, c.instances)  # noqa: E731
    assert result.best == min(result.candidates, key=key)


def test_json_round_trip_and_resolved_plan_is_a_valid_plan():
    result = scenarios.evaluate(PLAN)
    again = from_dict(to_dict(result))
    assert to_dict(again) == to_dict(result)
    assert scenarios.load_mapping(result.document).key() == scenarios.load_mapping(PLAN).key()
    assert not math.isnan(result.best.cost.mean)
    assert {a.key for a in result.assumptions} >= {
        "demand.annual_growth",
        "own.pue",
        "burst.price_usd_per_hour",
        "reserve.price_usd_per_hour",
    }


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        ({"own__servers": {"min": 0, "max": 5000}}, "own.servers.max", "1,000"),
        ({"own__servers": {"min": 4, "max": 2}}, "own.servers.min", "exceeds max"),
        ({"reserve__pricing": "on_demand"}, "reserve.pricing", "reserved_1y"),
        (
            {"burst__pricing": "spot", "burst__price_usd_per_hour": None},
            "burst.price_usd_per_hour",
            "no spot price",
        ),  # fmt: skip
        (
            {"demand__reference_gpu_hours_per_month": -5},
            "demand.reference_gpu_hours_per_month",
            "[0, 1,000,000,000]",
        ),  # fmt: skip
        ({"objective": "median"}, "objective", "mean"),
        ({"kind": "fleet"}, "kind", "valid kinds"),
        ({"demand__peak_to_mean": 2.5}, "demand.peak_to_mean", "[1, 2]"),
        (
            {"demand__peak_to_mean": {"dist": "uniform", "low": 0.5, "high": 1.5}},
            "demand.peak_to_mean",
            "[1, 2]",
        ),  # fmt: skip
        ({"demand__peak_to_mean": "high"}, "demand.peak_to_mean", "a number or a distribution"),
    ],
)
def test_bad_plans_are_errors_at_their_key_path(change, path, words):
    with pytest.raises(scenarios.ScenarioError) as info:
        scenarios.load_mapping(_plan(**change))
    errors = info.value.errors
    assert any(e["path"] == path and words in e["message"] for e in errors), errors


def test_the_daily_peak_is_resolved_with_its_assumption():
    flat = scenarios.load_mapping(PLAN)
    assert flat.inputs.demand.peak_to_mean == Fixed(1.0)
    (note,) = [a for a in flat.assumptions if a.key == "demand.peak_to_mean"]
    assert (note.value, note.source) == (1.0, "default: a flat load within each month")
    peaky = scenarios.load_mapping(_plan(demand__peak_to_mean=1.6))
    assert peaky.inputs.demand.peak_to_mean == Fixed(1.6)
    (note,) = [a for a in peaky.assumptions if a.key == "demand.peak_to_mean"]
    assert (note.value, note.source) == (1.6, "plan")
    assert peaky.document["demand"]["peak_to_mean"] == 1.6
    assert scenarios.load_mapping(peaky.document).key() == peaky.key()


def test_a_daily_peak_leaves_more_work_to_the_cloud():
    # Capacity below the peak serves less of a peaky day: every candidate with servers keeps a
    # smaller share owned than with a flat load; all-cloud is unchanged. By hand, k = 1.6, one
    # server (730 * 1.71 = 1,248.3 h a month) against month 1's 2,000 h: x = 0.62415, z = (x - 1)
    # / 0.6 = -0.626417, sqrt(1 - z^2) = 0.779488, -z arccos z = 0.626417 * 2.247744 = 1.408024,
    # F = 1 - 0.6 * 2.187513 / pi = 0.582216: 1,164.43 h owned (flat: all 1,248.3 h).
    one_month = scenarios.load_mapping(_plan(demand__peak_to_mean=1.6, horizon_months=1))
    split = work_split(simulate_plan(one_month.inputs), servers=1, instances=0)
    assert split.owned[0] == pytest.approx(1164.4317056, rel=1e-9)
    assert split.burst[0] == pytest.approx(2000 - 1164.4317056, rel=1e-9)
    flat = scenarios.evaluate(PLAN)
    explicit = scenarios.evaluate(_plan(demand__peak_to_mean=1.0))
    peaky = scenarios.evaluate(_plan(demand__peak_to_mean=1.6))
    assert [c.cost for c in explicit.candidates] == [c.cost for c in flat.candidates]
    assert peaky.all_cloud.cost == flat.all_cloud.cost
    for a, b in zip(flat.candidates, peaky.candidates, strict=True):
        assert b.share_owned <= a.share_owned + 1e-15
        if a.servers and a.share_owned < 1:
            assert b.share_owned < a.share_owned
    assert (peaky.best.servers, peaky.best.instances) == (6, 0)  # more servers for the peak
    assert "raise own.servers.max" in peaky.verdict
    wider = scenarios.evaluate(_plan(demand__peak_to_mean=1.6, own__servers={"min": 0, "max": 10}))
    best = wider.best  # the model guide's figures
    assert (best.servers, best.instances) == (6, 0) and "raise" not in wider.verdict
    assert best.cost.mean == pytest.approx(63383.4749, rel=1e-6, abs=5e-5)
    assert (best.share_owned, best.owned_utilisation) == pytest.approx(
        (0.975043, 0.499821), abs=5e-7
    )


def test_candidate_counts_and_shapes():
    sim = simulate_plan(scenarios.load_mapping(PLAN).inputs)
    assert sim.cost.shape == (21, 1)
    assert dataclasses.asdict(summarise_plan(sim).best)["servers"] == 5


def test_a_plan_reports_the_share_of_its_draws_done_after_each_chunk(monkeypatch):
    # chunks of 9,000 // 36 months = 250 draws: 1,100 draws are four chunks of 250 and one
    # of 100, so 250 / 1,100, 500 / 1,100, 750 / 1,100, 1,000 / 1,100 and 1
    plan = _plan(
        demand__annual_growth={"dist": "uniform", "low": 0.0, "high": 1.0},
        simulation={"samples": 1100, "seed": 3, "method": "random"},
    )
    whole = to_dict(scenarios.evaluate(plan))  # one chunk
    monkeypatch.setattr("costmodel.fleet._CHUNK_ELEMENTS", 36 * 250)
    seen: list[float] = []
    chunked = to_dict(scenarios.evaluate(plan, progress=seen.append))
    assert seen == pytest.approx([250 / 1100, 500 / 1100, 750 / 1100, 1000 / 1100, 1.0])
    assert seen == sorted(seen) and seen[-1] == 1.0
    # neither the chunks nor the callback move a number; the work split adds up its sums over
    # the draws chunk by chunk, in another order of the additions at another chunk size
    split, chunked_split = whole.pop("work_split"), chunked.pop("work_split")
    assert chunked == whole
    for side, months in split.items():
        assert chunked_split[side] == pytest.approx(months, rel=1e-12), side


# --------------------------------------------------------------------------- surfaces


@pytest.fixture
def client(tmp_path: Path):
    from api import create_app

    app = create_app({"TESTING": True, "DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": ""})
    return app.test_client()


def _error(response, code: int) -> dict:
    assert response.status_code == code, response.data[:300]
    body = response.get_json()
    assert set(body) == {"code", "status", "message", "errors"} and body["code"] == code
    return body


def test_post_plans_evaluates_a_plan(client):
    response = client.post("/v1/plans?samples=1", json=PLAN)
    assert response.status_code == 200
    body = response.get_json()
    assert body["kind"] == "plan" and body["best"]["servers"] == 5
    assert body == to_dict(scenarios.evaluate(PLAN))


def test_each_kind_has_its_route(client):
    body = _error(client.post("/v1/evaluate", json=PLAN), 422)
    assert body["errors"] == [
        {"path": "kind", "message": "the body is a plan; POST it to /v1/plans"}
    ]
    body = _error(client.post("/v1/plans", json=WORKED), 422)
    assert "POST it to /v1/evaluate" in body["errors"][0]["message"]


def test_a_plan_beyond_the_work_limit_is_422(client):
    doc = _plan(own__servers={"min": 0, "max": 100}, simulation={"samples": 200_000})
    body = _error(client.post("/v1/plans", json=doc), 422)
    assert body["errors"][0]["path"] == "own.servers"
    assert "samples x candidates x 4" in body["errors"][0]["message"]


def test_plans_are_stored_as_runs(client):
    created = client.post("/v1/runs", json=PLAN)
    assert created.status_code == 201
    run = client.get(created.headers["Location"]).get_json()
    assert run["result"]["kind"] == "plan" and run["result"]["best"]["servers"] == 5
    assert run["name"] == "plan-worked-example"
    listed = client.get("/v1/runs").get_json()
    assert [item["id"] for item in listed["items"]] == [run["id"]]


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"own__servers": {"min": 0, "max": 5000}}, "own.servers.max"),
        ({"reserve__pricing": "on_demand"}, "reserve.pricing"),
        ({"demand__reference_gpu_hours_per_month": -5}, "demand.reference_gpu_hours_per_month"),
    ],
)
def test_bad_plans_are_422_over_http_and_exit_2_on_the_cli(client, tmp_path, change, path):
    doc = _plan(**change)
    body = _error(client.post("/v1/plans", json=doc), 422)
    assert path in [e["path"] for e in body["errors"]]
    file = tmp_path / "bad-plan.yaml"
    file.write_text(yaml.safe_dump(doc), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "cli", "plan", str(file)], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 2 and f"{path}:" in out.stderr and "Traceback" not in out.stderr


def test_costmodel_plan_prints_the_candidates_and_json(tmp_path):
    example = str(EXAMPLES / "plan-worked-example.yaml")
    out = subprocess.run(
        [sys.executable, "-m", "cli", "plan", example], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0 and "Own 5 servers" in out.stdout and "best" in out.stdout
    out = subprocess.run(
        [sys.executable, "-m", "cli", "plan", example, "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert from_dict(json.loads(out.stdout)).best.servers == 5
    wrong = subprocess.run(
        [sys.executable, "-m", "cli", "run", example], capture_output=True, text=True, cwd=ROOT
    )
    assert wrong.returncode == 2 and "costmodel plan" in wrong.stderr


def test_a_best_plan_at_the_edge_of_the_range_says_so():
    result = scenarios.evaluate(_plan(own__servers={"min": 0, "max": 4}))
    assert result.best.servers == 4  # costs still fall at 4 servers (the table: 5 is best)
    assert "raise own.servers.max" in result.verdict
    assert "raise" not in scenarios.evaluate(PLAN).verdict


def test_value_of_information_between_the_two_best_candidates():
    # every input fixed: the best is cheaper in every draw, so information is worth nothing
    fixed = scenarios.evaluate(PLAN).value_of_information
    assert (fixed.first, fixed.second) == ((5, 0), (4, 0)) and fixed.evpi == 0.0
    # demand the only uncertainty, and discrete: knowing it is knowing everything, so its
    # EVPPI (one bin per value) equals the EVPI, which is min(E a, E b) - E[min(a, b)]
    doc = _plan(simulation={"samples": 1000, "seed": 4, "method": "random"})
    doc["demand"]["reference_gpu_hours_per_month"] = {
        "dist": "discrete",
        "values": [1000, 4000],
        "weights": [0.5, 0.5],
    }
    sim = simulate_plan(scenarios.load_mapping(doc).inputs)
    result = summarise_plan(sim)
    voi = result.value_of_information
    j = {
        (int(s), int(k)): i for i, (s, k) in enumerate(zip(sim.servers, sim.instances, strict=True))
    }
    a, b = sim.cost[j[voi.first]], sim.cost[j[voi.second]]
    evpi = min(a.mean(), b.mean()) - np.minimum(a, b).mean()
    assert voi.evpi == pytest.approx(evpi, rel=1e-12) and voi.evpi > 0
    (only,) = voi.by_input
    assert only.input == "demand.reference_gpu_hours_per_month"
    assert only.evppi == pytest.approx(voi.evpi, rel=1e-12)
    again = scenarios.evaluate(doc)  # through the scenario layer, so the JSON is complete
    assert from_dict(to_dict(again)).value_of_information == voi


def test_every_evppi_is_at_most_the_evpi():
    doc = _plan(simulation={"samples": 2000, "seed": 8, "method": "lhs"})
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.5}
    doc["own"]["pue"] = {"dist": "uniform", "low": 1.1, "high": 1.6}
    voi = scenarios.evaluate(doc).value_of_information
    assert voi.evpi >= 0 and all(0 <= v.evppi <= voi.evpi for v in voi.by_input)
    assert [v.evppi for v in voi.by_input] == sorted((v.evppi for v in voi.by_input), reverse=True)
