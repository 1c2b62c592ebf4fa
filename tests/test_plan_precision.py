"""How precisely a plan's draws tell its best candidate from the runner-up: the difference of
their objective, its standard error (closed form for the mean, a bootstrap for P90 and
CVaR95), the share of draws the best is cheaper in, and the ``plan_close_call`` warning."""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import yaml

import scenarios
from costmodel.fleet import simulate_plan
from costmodel.plan_result import Precision
from costmodel.sampling import stream
from costmodel.stats import (
    _cells,
    _reads,
    _replicate_differences,
    bootstrap_difference_se,
    row_stats,
)
from present import from_dict, to_dict, to_json
from present.formatting import fmt_share, fmt_usd_margin
from present.reports import render
from present.verdict import plan_precision_text

ROOT = Path(__file__).resolve().parents[1]
PLAN = yaml.safe_load((ROOT / "scenarios" / "examples" / "plan-worked-example.yaml").read_text())


def _hand_plan(objective: str = "mean") -> dict:
    """The worked plan cut down to two candidates whose per-draw costs are known by hand: no
    servers, 0 or 1 reserved V100, 12 months undiscounted, flat prices and a flat demand that
    is 400 reference GPU-hours a month with weight 1 and 1000 with weight 3. Four Latin
    hypercube draws put one draw in each quarter of (0, 1), so exactly one draw is 400."""
    doc = copy.deepcopy(PLAN)
    doc.update(horizon_months=12, discount_rate=0.0, objective=objective)
    doc["simulation"] = {"samples": 4, "seed": 11, "method": "lhs"}
    work = {"dist": "discrete", "values": [400, 1000], "weights": [1, 3]}
    doc["demand"] = {"reference_gpu_hours_per_month": work, "annual_growth": 0.0}
    doc["own"]["servers"] = {"min": 0, "max": 0}
    doc["reserve"]["instances"] = {"min": 0, "max": 1}
    doc["burst"]["price_annual_change"] = 0.0
    return doc


def _uncertain_plan(samples: int, seed: int = 3, method: str = "lhs", **changes) -> dict:
    """The worked plan with its work's growth uniform from 0 to 100 %/year."""
    doc = copy.deepcopy(PLAN)
    doc["simulation"] = {"samples": samples, "seed": seed, "method": method}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.0}
    doc.update(changes)
    return doc


def test_the_mean_difference_its_standard_error_and_the_share_by_hand():
    # All-burst (0, 0): 12 months x W x 3.06 USD/h: 14,688 at W = 400, 36,720 at W = 1000.
    # One reserved V100 (0, 1): 12 x 730 h x 1.95 USD/h = 17,082 for the year's term, plus
    # the burst above its 730 h: 0 at W = 400, 12 x 270 x 3.06 = 9,914.4 at W = 1000, so
    # 17,082 and 26,996.4. Means: (0, 0) (14,688 + 3 x 36,720)/4 = 31,212; (0, 1)
    # (17,082 + 3 x 26,996.4)/4 = 24,517.8, the best; the difference is 6,694.2.
    # Per draw, second - first = -2,394 (W = 400) and 9,723.6 (three times): mean 6,694.2,
    # deviations -9,088.2 and +3,029.4, sum of squares 9,088.2^2 + 3 x 3,029.4^2
    # = 82,595,379.24 + 27,531,793.08 = 110,127,172.32 = 12 x 3,029.4^2, so
    # s^2 = SS/3 and se = s/sqrt(4) = sqrt(SS/12) = 3,029.4. The best is cheaper in 3 of 4.
    result = scenarios.evaluate(_hand_plan())
    p = result.precision
    assert (p.first, p.second, p.objective) == ((0, 1), (0, 0), "mean")
    assert p.difference == pytest.approx(6694.2, rel=1e-12)
    assert p.difference_se == pytest.approx(3029.4, rel=1e-12)
    assert p.prob_first_cheaper == 0.75
    # 1.96 x 3,029.4 = 5,937.6 < 6,694.2: the interval leaves out 0, no warning
    assert p.halfwidth == pytest.approx(5937.6, rel=1e-3) and not p.close_call
    assert "plan_close_call" not in {w.code for w in result.warnings}
    assert plan_precision_text(result) == (
        "Best against the runner-up (0 servers, 0 reserved): mean cost lower by $6,700 ± "
        "$5,900 (95 %, 4 draws); cheaper in 75 % of draws."
    )
    # the same pair as the value of information
    voi = result.value_of_information
    assert (voi.first, voi.second) == (p.first, p.second)


def test_the_p90_difference_by_hand_and_its_bootstrap_against_the_ideal_one():
    # P90 of 4 draws: position 0.9 x 3 = 2.7 of the sorted costs. (0, 0): 36,720 (positions 2
    # and 3 both 36,720); (0, 1): 26,996.4; the difference is 9,723.6.
    result = scenarios.evaluate(_hand_plan("p90"))
    p = result.precision
    assert (p.first, p.second) == ((0, 1), (0, 0))
    assert p.difference == pytest.approx(9723.6, rel=1e-12) and p.prob_first_cheaper == 0.75
    # The ideal bootstrap: of the 4 resampled draws, c ~ Binomial(4, 1/4) are the W = 400
    # draw. c <= 2 (243/256): positions 2 and 3 are W = 1000 draws, difference 9,723.6.
    # c = 3 (12/256): position 2 is the low draw, 3 a high one: (0, 0) 14,688 + 0.7 x 22,032
    # = 30,110.4, (0, 1) 17,082 + 0.7 x 9,914.4 = 24,022.08, difference 6,088.32.
    # c = 4 (1/256): 14,688 - 17,082 = -2,394. Its variance is sum p d^2 - (sum p d)^2.
    d = np.array([9723.6, 6088.32, -2394.0])
    w = np.array([243.0, 12.0, 1.0]) / 256.0
    ideal = math.sqrt(w @ d**2 - (w @ d) ** 2)  # 1,070.34
    sim = simulate_plan(scenarios.load_mapping(_hand_plan("p90")).inputs)
    first, second = sim.cost[1], sim.cost[0]
    # 100,000 replicates: the kurtosis of the three-point difference is 64.6, so the variance
    # is known to sqrt(63.6 / 1e5) = 2.5 % and the standard error to 1.3 %: 5 % is 4 sd.
    big = bootstrap_difference_se(first, second, "p90", np.random.default_rng(1), 100_000)
    assert big == pytest.approx(ideal, rel=0.05)


def test_the_bootstrap_reads_a_resample_exactly_as_row_stats_does():
    # The bootstrap picks one by one only the resampled draws near the statistic and counts
    # the others: given the counts and picks of full resamples, every replicate's statistic
    # must equal row_stats of the resampled rows, or the bands must be refused.
    rng = np.random.default_rng(5)
    refused = 0
    for n in (1, 2, 7, 50, 1000, 20011):
        x = rng.lognormal(size=n)
        a, b = 3 * x + rng.normal(size=n), 3.1 * x + 0.5 * rng.normal(size=n)
        a[: min(3, n)] = a[min(3, n) - 1]  # ties
        for objective in ("p90", "cvar95"):
            for reach in (1, 5, 50, 10**9):
                cells = _cells(a, b, objective, reach)
                idx = rng.integers(0, n, size=(6, n))
                cell = _cell_of(a, b, objective, reach)
                position = np.zeros(n, dtype=np.int64)
                for c in range(9):
                    position[cell == c] = np.arange(np.count_nonzero(cell == c))
                counts = np.stack([np.bincount(cell[r], minlength=9) for r in idx])
                picks = {
                    c: np.concatenate([position[r][cell[r] == c] for r in idx])
                    for c in cells.drawn()
                }
                got = _replicate_differences(cells, counts, picks)
                if got is None:
                    refused += 1
                    continue
                want = row_stats(b[idx])[objective] - row_stats(a[idx])[objective]
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    assert 0 < refused < 48  # narrow bands are refused, wide ones always do


def _cell_of(a: np.ndarray, b: np.ndarray, objective: str, reach: int) -> np.ndarray:
    """Each draw's cell, 3 x (place for a) + (place for b), computed apart from the engine."""
    n = a.size
    k0, k1, _ = _reads(objective, n)
    lo, hi = max(0, k0 - reach), min(n - 1, k1 + reach)
    cell = np.zeros(n, dtype=np.int64)
    for weight, x in ((3, a), (1, b)):
        s = np.sort(x)
        cell += weight * ((x >= s[lo]).astype(int) + (x > s[hi]))
    return cell


def test_bands_too_narrow_are_widened_until_every_replicate_reads_inside(monkeypatch):
    rng = np.random.default_rng(2)
    x = rng.lognormal(size=5000)
    a, b = 3 * x + rng.normal(size=5000), 3.1 * x
    normal = bootstrap_difference_se(a, b, "p90", np.random.default_rng(3))
    monkeypatch.setattr("costmodel.stats._REACH_SD", 0.01)  # bands a rank or two wide
    widened = bootstrap_difference_se(a, b, "p90", np.random.default_rng(3))
    # both are standard errors of the same difference from 200 replicates (each within
    # about 10 % of the truth), drawn from different random numbers
    assert widened == pytest.approx(normal, rel=0.4) and widened != normal


def test_the_p90_bootstrap_agrees_with_the_spread_over_independent_seeds():
    # 300 independent runs (random sampling, 1,000 draws each) of the uncertain plan with 4 to
    # 6 servers and no reservation: the standard deviation over runs of the P90 difference
    # between 5 and 6 servers is the true standard error, known to 1/sqrt(2 x 299) = 4 %. Each
    # run's bootstrap (200 replicates) varies by some 16 % from run to run, so their mean is
    # known to 1 %. The bootstrap of a sample quantile is consistent but biased upward at
    # these sizes (by about 15 % here, and the plain resampling of n indices per replicate
    # gives the same), so the tolerance is that bias and some 3 standard deviations beyond:
    # 30 %. A bootstrap that resampled the two candidates apart (other indices for each)
    # would be some 6 times the truth, and one without common draws no better.
    diffs, ses = [], []
    for seed in range(300):
        doc = _uncertain_plan(1000, seed, "random", objective="p90")
        doc["demand"]["reference_gpu_hours_per_month"] = {
            "dist": "triangular", "low": 1000, "mode": 2000, "high": 3000,
        }  # fmt: skip
        doc["own"]["servers"] = {"min": 4, "max": 6}
        doc["reserve"] = None
        sim = simulate_plan(scenarios.load_mapping(doc).inputs)
        five, six = sim.cost[1], sim.cost[2]
        p90 = row_stats(np.stack([five, six]))["p90"]
        diffs.append(p90[0] - p90[1])
        ses.append(bootstrap_difference_se(six, five, "p90", stream(seed, "test")))
    ratio = np.mean(ses) / np.std(diffs, ddof=1)
    assert 0.7 < ratio < 1.3, ratio


def test_the_same_seed_gives_the_same_precision_and_another_seed_another():
    doc = _uncertain_plan(500, objective="cvar95")
    one, two = scenarios.evaluate(doc), scenarios.evaluate(doc)
    assert one.precision == two.precision and to_json(one) == to_json(two)
    assert one.precision.objective == "cvar95" and one.precision.difference_se > 0
    other = scenarios.evaluate(doc, seed=4)
    assert other.precision.difference_se != one.precision.difference_se


def test_the_difference_is_never_negative_and_the_share_counts_draws():
    for objective in ("mean", "p90", "cvar95"):
        doc = _uncertain_plan(300, objective=objective)
        sim = simulate_plan(scenarios.load_mapping(doc).inputs)
        result = scenarios.evaluate(doc)
        p = result.precision
        assert p.difference >= 0
        pairs = zip(sim.servers.tolist(), sim.instances.tolist(), strict=True)
        j = {pair: i for i, pair in enumerate(pairs)}
        a, b = sim.cost[j[p.first]], sim.cost[j[p.second]]
        assert p.prob_first_cheaper == np.count_nonzero(a < b) / 300
        stats = row_stats(np.stack([a, b]))[objective]
        assert p.difference == pytest.approx(stats[1] - stats[0], rel=1e-12)


def test_json_round_trip_and_a_result_stored_before_precision_loads_without_it():
    result = scenarios.evaluate(_uncertain_plan(200, objective="p90"))
    data = json.loads(to_json(result))
    assert data["precision"]["first"] == {"servers": 6, "instances": 0}
    assert from_dict(data).precision == result.precision
    old = {k: v for k, v in data.items() if k != "precision"}
    loaded = from_dict(old)
    assert loaded.precision is None and "precision" not in to_dict(loaded)
    assert plan_precision_text(loaded) is None
    # from one draw of uncertain inputs the standard error is unknown: null, and back NaN
    single = scenarios.evaluate(_uncertain_plan(1))
    assert to_dict(single)["precision"]["difference_se"] is None
    assert math.isnan(from_dict(to_dict(single)).precision.difference_se)
    # a plan of one candidate has none, and no key
    doc = copy.deepcopy(PLAN)
    doc["own"]["servers"], doc["reserve"]["instances"] = {"min": 2, "max": 2}, {"min": 0, "max": 0}
    alone = scenarios.evaluate(doc)
    assert alone.precision is None and "precision" not in to_dict(alone)


def test_a_close_call_is_warned_at_few_draws_and_not_at_many():
    few = scenarios.evaluate(_uncertain_plan(20))
    (warning,) = [w for w in few.warnings if w.code == "plan_close_call"]
    assert warning.severity == "warning" and few.precision.close_call
    assert warning.message.startswith(
        "the best plan (6 servers, 0 reserved) and the runner-up (5 servers, 0 reserved) are "
        "not told apart by 20 draws: their mean cost differs by $"
    )
    # set against the best's mean cost: the difference and its margin as a share of it
    p, best = few.precision, few.best.cost.mean
    share = fmt_share((p.difference + p.halfwidth) / best)
    assert warning.message.endswith(
        f"(95 %), up to {share} of the best's; take either, or raise simulation.samples to tell "
        "them apart"
    )
    many = scenarios.evaluate(_uncertain_plan(4000))
    assert (many.precision.first, many.precision.second) == ((6, 0), (5, 0))
    assert not many.precision.close_call
    assert "plan_close_call" not in {w.code for w in many.warnings}
    # every input fixed: no spread, no close call, whatever the draws
    assert scenarios.evaluate(PLAN).precision.difference_se == 0.0
    assert "plan_close_call" not in {w.code for w in scenarios.evaluate(PLAN).warnings}


def test_close_calls_by_the_interval():
    def p(difference: float, se: float) -> Precision:
        return Precision((1, 0), (2, 0), "mean", difference, se, 0.5)

    assert p(100.0, 60.0).close_call  # 1.96 x 60 = 117.6 >= 100
    assert not p(100.0, 50.0).close_call  # 98 < 100
    assert p(100.0, math.nan).close_call  # unknown from one draw
    assert not p(0.0, 0.0).close_call  # the same in every draw: more draws would not part them


def test_money_and_its_margin():
    assert fmt_usd_margin(1947.3, 610.4) == "$1,950 ± $610"
    assert fmt_usd_margin(123456.0, 61.0) == "$123,456 ± $61"
    assert fmt_usd_margin(3.0612, 0.1234) == "$3.06 ± $0.12"
    assert fmt_usd_margin(2500.0, 9.96) == "$2,500.00 ± $9.96"
    assert fmt_usd_margin(3139.0, 0.0) == "$3,139 ± $0"
    assert fmt_usd_margin(3139.0, math.nan) == "$3,139"


def test_the_cli_and_the_reports_say_the_same_sentence(tmp_path):
    doc = _uncertain_plan(20)
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = scenarios.evaluate(doc)
    sentence = plan_precision_text(result)
    assert sentence.startswith("Best against the runner-up (5 servers, 0 reserved): mean cost")
    assert "(95 %, 20 draws); cheaper in" in sentence
    out = subprocess.run(
        [sys.executable, "-m", "cli", "plan", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert sentence in lines
    assert "plan_close_call" in out.stdout
    markdown = render(result, "md").decode("utf-8")
    assert f"\n{sentence}\n" in markdown
    html = render(result, "html").decode("utf-8")
    assert f'<p id="precision">{sentence}</p>' in html


def test_the_bootstrap_stays_within_64_mib_at_a_million_draws():
    rng = np.random.default_rng(7)
    x = rng.lognormal(size=1_000_000)
    a, b = 3 * x + rng.normal(size=x.size), 3.1 * x + rng.normal(size=x.size)
    for objective in ("p90", "cvar95"):
        tracemalloc.start()
        se = bootstrap_difference_se(a, b, objective, np.random.default_rng(1))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert se > 0 and peak < 64 * 2**20, (objective, peak)
