"""The reports' chart of a staged plan: the best plan's owned capacity against the work by
month, the work's P10-P90 band and the month the added servers arrive, as data series."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import scenarios
from costmodel.fleet import simulate_plan, summarise_plan
from present import from_dict, to_dict
from present.reports.capacity_chart import capacity_chart, capacity_series
from present.reports.plan_charts import render_plan_charts
from tests.test_staging import STAGED, _staged


def test_the_worked_examples_capacity_steps_up_when_the_added_servers_arrive():
    s = capacity_series(scenarios.evaluate(STAGED))
    # 3 servers hold C(3) = 3 x 730 x 1.71 = 3744.9 a month, 5 hold 6241.5 from month 22 on
    # (bought at the end of month 20, a month's lead time); one draw: the work's band is the
    # work, W_m = 2000 x 1.5^((m - 1)/12).
    months = np.arange(1, 37)
    np.testing.assert_array_equal(s.months, months)
    np.testing.assert_allclose(s.capacity, np.where(months >= 22, 6241.5, 3744.9), rtol=1e-12)
    work = 2000 * 1.5 ** ((months - 1) / 12)
    for series in (s.work, s.work_p10, s.work_p90):
        np.testing.assert_allclose(series, work, rtol=1e-12)
    assert s.arrival == (22, 22, 22) and s.never == 0.0


def _uncertain() -> dict:
    doc = _staged()
    doc["simulation"] = {"samples": 2000, "seed": 3, "method": "lhs"}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.2, "high": 0.8}
    return doc


def test_an_uncertain_plans_capacity_is_the_mean_over_the_draws_of_the_arrival():
    sim = simulate_plan(scenarios.load_mapping(_uncertain()).inputs)
    result = summarise_plan(sim)
    s = capacity_series(result)
    best = result.best
    assert best.add is not None
    j = next(
        j for j in range(sim.servers.size)
        if (sim.servers[j], sim.instances[j], sim.added[j]) == (best.servers, 0, best.add.servers)
        and sim.trigger[j] == best.add.when_demand_above
    )  # fmt: skip
    start = sim.start[j - (sim.servers.size - sim.start.shape[0])]
    # C_m = C(S0) + (C(S0 + S1) - C(S0)) x the share of draws serving from month m or before
    c0, c1 = best.servers * 1248.3, (best.servers + best.add.servers) * 1248.3
    share = (start[None, :] <= np.arange(1, 37)[:, None]).mean(axis=1)
    np.testing.assert_allclose(s.capacity, c0 + (c1 - c0) * share, rtol=1e-12)
    # the work's band: W_1 fixed and W_m rising with g_w, so its P10 and P90 are those of
    # g_w ~ U(0.2, 0.8), 0.26 and 0.74, to within the 2,000 draws' quantile error
    m = np.arange(36) / 12
    np.testing.assert_allclose(s.work_p10, 2000 * 1.26**m, rtol=2e-3)
    np.testing.assert_allclose(s.work_p90, 2000 * 1.74**m, rtol=2e-3)
    assert np.all(s.work_p10 <= s.work) and np.all(s.work <= s.work_p90)
    month = best.add.month
    assert s.arrival == (month.p10, month.p50, month.p90) and s.never == month.prob_never
    assert month.p10 < month.p50 < month.p90


def test_the_series_round_trip_through_json_and_the_chart_joins_the_reports():
    result = scenarios.evaluate(_uncertain())
    back = from_dict(to_dict(result))
    for name in ("capacity", "work_p10", "work_p90", "work"):
        np.testing.assert_array_equal(
            getattr(capacity_series(back), name), getattr(capacity_series(result), name)
        )
    charts = render_plan_charts(result)
    assert list(charts) == ["frontier", "cost_by_servers", "work_split", "capacity"]
    assert charts["capacity"].startswith("<svg ")


def test_a_plan_without_add_has_no_capacity_series_or_chart():
    plain = copy.deepcopy(STAGED)
    del plain["own"]["add"]
    result = scenarios.evaluate(plain)
    assert capacity_series(result) is None and capacity_chart(result) is None
    assert "capacity" not in to_dict(result)["work_split"]
    assert list(render_plan_charts(result)) == ["frontier", "cost_by_servers", "work_split"]


def test_a_best_plan_that_adds_nothing_draws_its_flat_capacity_and_no_arrival():
    result = scenarios.evaluate(_staged(when_demand_above=[10.0]))  # never fires
    s = capacity_series(result)
    assert result.best.add is None and s.never == 1.0 and np.isnan(s.arrival).all()
    assert s.capacity == pytest.approx(np.full(36, result.best.servers * 1248.3), rel=1e-12)
