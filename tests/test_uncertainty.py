"""Decision-grade uncertainty: the precision of the break-even P50 and doubling the draws until it
is met, the tornado of one-at-a-time swings, and the value of information."""

from __future__ import annotations

import dataclasses
import io
import math
import re
from pathlib import Path

import numpy as np
import openpyxl
import pytest
import yaml
from scipy import stats

import scenarios
from costmodel import simulate, summarise
from costmodel.distributions import Discrete, Triangular, Uniform
from costmodel.result import Result
from costmodel.sampling import Sampler, sample
from costmodel.uncertainty import (
    binomial_half_cdf,
    median_interval,
    median_interval_ranks,
    select_ranks,
    tornado,
)
from present import from_dict, to_dict
from present.formatting import fmt_usd
from tests.helpers import buy, model, rent

GOLDEN = "tests/fixtures/golden.yaml"


def _four_inputs(samples: int, seed: int, method: str = "random", **kw):
    """One GPU against one instance over a year, four uncertain inputs, a continuous break-even
    (no "always" or "never" draws)."""
    return model(
        buy(
            1,
            gpu_price_usd=Uniform(800, 1200),
            gpu_power_w=Triangular(600, 1000, 1100),
            electricity_usd_per_kwh=Uniform(0.1, 0.3),
        ),
        rent(price_usd_per_hour=Uniform(0.8, 1.2)),
        samples=samples,
        seed=seed,
        method=method,
        utilisation=(0.5,),
        **kw,
    )


# --------------------------------------------------------------------------- the interval


@pytest.mark.parametrize("n", [6, 7, 20, 101, 2000, 99_999, 1_000_000])
def test_binomial_sums_match_scipy(n):
    for x in {0, 1, n // 4, n // 2 - 3 * math.isqrt(n), n // 2 - 1, n // 2}:
        if 0 <= x <= n // 2:
            expected = stats.binom.cdf(x, n, 0.5)
            assert binomial_half_cdf(x, n) == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize("n", [6, 9, 16, 100, 2000, 12_345, 1_000_000])
def test_the_order_statistics_are_the_narrowest_pair_with_95_percent(n):
    lo, hi = median_interval_ranks(n)
    assert hi == n - 1 - lo
    # coverage 1 - 2 P(B <= lo) >= 95 %, and one rank nearer the middle would fall short
    assert 1 - 2 * stats.binom.cdf(lo, n, 0.5) >= 0.95
    assert 1 - 2 * stats.binom.cdf(lo + 1, n, 0.5) < 0.95


def test_too_few_draws_for_an_interval():
    assert median_interval_ranks(5) is None  # even the range covers only 1 - 2/32 = 94 %
    assert median_interval(np.array([0.3, 0.3, 0.3])) == (0.3, 0.3)  # fixed: no doubt
    assert all(math.isnan(x) for x in median_interval(np.array([0.1, 0.2, 0.3])))


def test_the_interval_covers_the_true_p50_in_95_percent_of_runs():
    # Simple random sampling, for which the binomial interval is exact: 200 seeds at 2,000 draws
    # against the P50 of 1,000,000 Latin-hypercube draws (its own error is ~1/30 of the
    # interval's half-width). The pair of order statistics covers with 95.34 %; 200 runs give
    # a binomial standard error of 1.5 points, so the share must lie within 95.34 % +- 3 sd.
    truth = summarise(simulate(_four_inputs(1_000_000, 12345, "lhs"))).breakeven_utilisation.p50
    lo_rank, _ = median_interval_ranks(2000)
    nominal = 1 - 2 * stats.binom.cdf(lo_rank, 2000, 0.5)
    assert nominal == pytest.approx(0.9534, abs=1e-4)
    hits = 0
    for seed in range(200):
        lo, hi = summarise(simulate(_four_inputs(2000, seed))).convergence.breakeven_p50_ci95
        hits += lo <= truth <= hi
    sd = math.sqrt(nominal * (1 - nominal) / 200)
    assert abs(hits / 200 - nominal) <= 3 * sd, hits  # measured: 186 of 200 (93.0 %)


def test_latin_hypercube_precision_comes_from_its_replicates():
    # 2,048 LHS draws are 16 Latin hypercubes of 128: the standard error of the mean gap is
    # the standard deviation of the 16 replicates' mean gaps over sqrt(16) (equal sizes), and
    # the break-even interval is Woodruff's from the replicates' shares below the median
    sim = simulate(_four_inputs(2048, 5, "lhs"))
    c = summarise(sim).convergence
    assert sim.sample.blocks == (128,) * 16 and c.replicates == 16
    gap = sim.buy_tco(0.5) - sim.rent_tco(0.5)
    means = gap.reshape(16, 128).mean(axis=1)
    assert c.gap_mean_se[0] == pytest.approx(means.std(ddof=1) / 4, rel=1e-9)
    be = np.array(sim.breakeven)
    median = np.sort(be)[1023]  # the lower middle of 2,048
    shares = (be.reshape(16, 128) < median).mean(axis=1)
    h = stats.t.ppf(0.975, 15) * shares.std(ddof=1) / 4
    j = math.floor(2048 * (0.5 - h))  # 1-based rank of the lower end
    assert c.breakeven_p50_ci95 == (np.sort(be)[j - 1], np.sort(be)[2048 - j])
    # far narrower than the formulas of independent draws (about 8x here)
    assert c.gap_mean_se[0] < gap.std(ddof=1) / math.sqrt(2048) / 4


def test_standard_errors_are_those_of_independent_draws():
    result = summarise(simulate(_four_inputs(5000, 3)))
    c = result.convergence
    sim = simulate(_four_inputs(5000, 3))
    gap = sim.buy_tco(0.5) - sim.rent_tco(0.5)
    assert c.gap_mean_se[0] == pytest.approx(gap.std(ddof=1) / math.sqrt(5000), rel=1e-9)
    p = result.prob_buy_cheaper[0]
    assert c.prob_buy_cheaper_se[0] == pytest.approx(math.sqrt(p * (1 - p) / 5000), rel=1e-12)
    assert (c.samples, c.initial_samples, c.target_halfwidth, c.met) == (5000, 5000, None, None)
    lo, hi = c.breakeven_p50_ci95
    assert lo < result.breakeven_utilisation.p50 < hi
    assert c.breakeven_p50_halfwidth == pytest.approx((hi - lo) / 2)


def test_standard_errors_with_a_reservation_are_taken_level_by_level():
    # The kink of a reservation differs between draws when throughput does: no closed form
    m = model(
        buy(2, gpu_price_usd=1000, thermal_derate=Uniform(0.5, 1.0)),
        rent(
            1,
            "reserved_1y",
            price_usd_per_hour=Uniform(0.5, 0.7),
            on_demand_price_usd_per_hour=1.0,
        ),
        samples=3000,
        utilisation=(0.2, 0.6, 1.0),
        method="random",
    )
    sim = simulate(m)
    se = summarise(sim).convergence.gap_mean_se
    for j, u in enumerate(m.utilisation):
        gap = sim.buy_tco(u) - sim.rent_tco(u)
        assert se[j] == pytest.approx(gap.std(ddof=1) / math.sqrt(3000), rel=1e-9)
    # LHS in 16 replicates of 187 or 188 draws (3,000 = 8 x 188 + 8 x 187): the random-group
    # standard error of the replicates' mean gaps, sizes as weights
    sim = simulate(dataclasses.replace(m, method="lhs"))
    se = summarise(sim).convergence.gap_mean_se
    sizes = np.array([188] * 8 + [187] * 8)
    assert sim.sample.blocks == tuple(sizes)
    for j, u in enumerate(m.utilisation):
        gap = sim.buy_tco(u) - sim.rent_tco(u)
        means = np.array([part.mean() for part in np.split(gap, np.cumsum(sizes)[:-1])])
        spread = means - sizes @ means / 3000
        want = math.sqrt(sizes @ spread**2 / (15 * 3000))
        assert se[j] == pytest.approx(want, rel=1e-9)


# --------------------------------------------------------------------------- doubling


@pytest.mark.parametrize("method", ["random", "lhs", "sobol"])
def test_doubling_keeps_every_draw(method):
    names = ["a", "b", "c"]
    sampler = Sampler(names, 500, 9, method)
    first = sampler.sample.q
    start = sample(names, 500, 9, method)
    for name in names:  # the first round is the plain sample
        assert np.array_equal(first[name], start.q[name])
    sampler.double()
    sampler.double()
    assert sampler.n == 2000 and sampler.sample.blocks == ()  # 500 draws: one replicate
    for name in names:
        assert np.array_equal(sampler.sample.q[name][:500], first[name])
    if method == "random":  # the same streams: the draws of a plain run of 2,000
        plain = sample(names, 2000, 9, method)
        for name in names:
            assert np.array_equal(sampler.sample.q[name], plain.q[name])


@pytest.mark.parametrize("method", ["lhs", "sobol"])
def test_doubling_keeps_every_draw_of_each_replicate(method):
    # 512 draws are 16 replicates of 32; doubled twice, 16 of 128, each replicate's first 32
    # draws its old ones; Sobol' continues each replicate's sequence: a plain run of 2,048
    names = ["a", "b", "c"]
    sampler = Sampler(names, 512, 9, method)
    first = sampler.sample
    assert first.blocks == (32,) * 16
    sampler.double()
    sampler.double()
    drawn = sampler.sample
    assert drawn.blocks == (128,) * 16
    plain = sample(names, 2048, 9, method)
    for name in names:
        by_replicate = drawn.q[name].reshape(16, 128)
        assert np.array_equal(by_replicate[:, :32], first.q[name].reshape(16, 32))
        if method == "sobol":
            assert np.array_equal(drawn.q[name], plain.q[name])
        else:  # each replicate a Latin hypercube of 128
            strata = np.sort(np.floor(by_replicate * 128).astype(int), axis=1)
            assert np.array_equal(strata, np.tile(np.arange(128), (16, 1)))


def test_doubled_latin_hypercube_is_a_latin_hypercube():
    sampler = Sampler(["a", "b"], 300, 4, "lhs")
    for n in (600, 1200, 2400):
        sampler.double()
        drawn = sampler.sample
        for name in ("a", "b"):
            strata = np.floor(drawn.q[name] * n).astype(int)
            # each of the n strata of width 1/n holds exactly one draw of each input
            assert np.array_equal(np.sort(strata), np.arange(n))
            assert np.array_equal(drawn.ranks[name], strata)  # the stratum is the rank


def test_doubling_stops_at_the_target():
    m = _four_inputs(1000, 5, "lhs", target_halfwidth=0.001)
    result = summarise(simulate(m))
    c = result.convergence
    assert c.met is True and c.breakeven_p50_halfwidth <= 0.001
    assert c.initial_samples == 1000 and c.samples == result.samples > 1000
    doublings = math.log2(c.samples / 1000)
    assert doublings == int(doublings)
    # capped one doubling short, the same draws stop before the target: no round was skipped
    short = summarise(simulate(dataclasses.replace(m, max_samples=c.samples // 2 + 1)))
    assert short.convergence.samples == c.samples // 2
    assert short.convergence.met is False
    assert short.convergence.breakeven_p50_halfwidth > 0.001


def test_doubling_stops_at_the_cap_and_warns():
    doc = {
        "version": 1,
        "name": "cap",
        "buy": {
            "gpu": "rtx-2080-ti",
            "gpu_count": 4,
            "electricity_usd_per_kwh": {"dist": "uniform", "low": 0.1, "high": 0.4},
        },
        "rent": {"instance": "aws/p3.8xlarge"},
        "simulation": {
            "samples": 1000,
            "seed": 1,
            "target_halfwidth": 1e-6,
            "max_samples": 5000,
        },
    }
    result = scenarios.evaluate(doc)
    c = result.convergence
    assert (c.samples, c.max_samples, c.met) == (4000, 5000, False)
    (warning,) = [w for w in result.warnings if w.code == "convergence"]
    assert warning.severity == "warning"
    assert "4,000 draws" in warning.message and "simulation.max_samples = 5,000" in warning.message
    # the resolved scenario keeps the keys given, and the result the draws made
    assert result.document["simulation"]["samples"] == 1000
    assert result.document["simulation"]["max_samples"] == 5000
    assert result.samples == 4000


def test_no_target_no_new_keys_in_the_scenario():
    # keys of scenarios written before target_halfwidth existed must not change
    doc = scenarios.load_file(GOLDEN).document
    assert set(doc["simulation"]) == {"samples", "seed", "method"}


def test_a_target_met_at_once_changes_nothing():
    plain = to_dict(summarise(simulate(_four_inputs(4000, 2, "lhs"))))
    loose = to_dict(summarise(simulate(_four_inputs(4000, 2, "lhs", target_halfwidth=0.5))))
    assert loose["convergence"]["met"] is True
    for key in ("buy_tco", "rent_tco", "breakeven_utilisation", "payback_months", "sensitivity"):
        assert loose[key] == plain[key]


def test_correlations_hold_on_the_extended_sample():
    m = _four_inputs(1000, 8, "lhs", target_halfwidth=0.0005)
    m = dataclasses.replace(
        m, correlations=(("buy.electricity_usd_per_kwh", "rent.price_usd_per_hour", 0.6),)
    )
    sim = simulate(m)
    assert sim.inputs.samples > 1000
    rho = stats.spearmanr(
        sim.draws["buy.electricity_usd_per_kwh"], sim.draws["rent.price_usd_per_hour"]
    ).statistic
    assert rho == pytest.approx(0.6, abs=0.03)
    # still one draw per stratum in each replicate: the uncorrelated input, and the first
    # correlated one in name order, whose percentiles the copula keeps
    lows = {"buy.electricity_usd_per_kwh": (0.1, 0.2), "buy.gpu_price_usd": (800, 400)}
    start = 0
    for m_b in sim.sample.blocks:
        for name, (low, width) in lows.items():
            q = (sim.draws[name][start : start + m_b] - low) / width
            assert np.array_equal(np.sort(np.floor(q * m_b).astype(int)), np.arange(m_b))
        start += m_b
    assert start == sim.inputs.samples and len(sim.sample.blocks) == 16


# --------------------------------------------------------------------------- tornado


def _tornado_model(**kw):
    """TCO_buy(u) = 1000 + 8760*e*u (a 1 kW GPU busy u of 12 months of 730 h, no idle draw, no
    resale) and TCO_rent(u) = 8760*p*u (one equally fast instance at p USD/h), no discounting:
    gap(u) = 1000 + 8760*u*(e - p), break-even u* = 1000 / (8760*(p - e))."""
    kw.setdefault("electricity_usd_per_kwh", Uniform(0.1, 0.3))  # P10 0.12, P50 0.20, P90 0.28
    return model(
        buy(1, gpu_price_usd=1000, gpu_power_w=1000, **kw),
        rent(price_usd_per_hour=Uniform(0.95, 1.05)),  # P10 0.96, P50 1.00, P90 1.04
        samples=1000,
        utilisation=(0.25, 0.5, 0.75),
        report_utilisation=0.5,
    )


def test_tornado_by_hand():
    t = summarise(simulate(_tornado_model())).tornado
    assert t.utilisation == 0.5
    # medians: u* = 1000/(8760*0.80) = 0.142694; gap(0.5) = 1000 - 4380*0.80 = -2504
    assert t.breakeven_at_median == pytest.approx(0.1426940639, rel=1e-9)
    assert t.gap_at_median == pytest.approx(-2504.0, rel=1e-12)
    # electricity dominates: swings 0.028827 in u* and 700.8 USD in the gap, against 0.014305
    # and 350.4 USD for the cloud price
    assert [bar.input for bar in t.inputs] == [
        "buy.electricity_usd_per_kwh",
        "rent.price_usd_per_hour",
    ]
    e, p = t.inputs
    assert (e.low, e.high) == pytest.approx((0.12, 0.28))
    # e = 0.12: u* = 1000/(8760*0.88) = 0.129722, gap = 1000 - 4380*0.88 = -2854.4
    # e = 0.28: u* = 1000/(8760*0.72) = 0.158549, gap = 1000 - 4380*0.72 = -2153.6
    assert e.breakeven_at_low == pytest.approx(0.1297218763, rel=1e-9)
    assert e.breakeven_at_high == pytest.approx(0.1585489599, rel=1e-9)
    assert (e.gap_at_low, e.gap_at_high) == pytest.approx((-2854.4, -2153.6), rel=1e-12)
    assert (p.low, p.high) == pytest.approx((0.96, 1.04))
    # p = 0.96: u* = 1000/(8760*0.76) = 0.150204, gap = 1000 - 4380*0.76 = -2328.8
    # p = 1.04: u* = 1000/(8760*0.84) = 0.135899, gap = 1000 - 4380*0.84 = -2679.2
    assert p.breakeven_at_low == pytest.approx(0.1502042778, rel=1e-9)
    assert p.breakeven_at_high == pytest.approx(0.1358991085, rel=1e-9)
    assert (p.gap_at_low, p.gap_at_high) == pytest.approx((-2328.8, -2679.2), rel=1e-12)


def test_tornado_does_not_depend_on_the_sampling():
    m = _tornado_model()
    t = tornado(m, 0.5)
    resampled = dataclasses.replace(m, samples=777, seed=99, method="lhs", target_halfwidth=0.1)
    assert tornado(resampled, 0.5) is t  # remembered: the same scenario, seed after seed
    assert tornado(m, 0.25) != t
    dearer = _tornado_model(electricity_usd_per_kwh=Uniform(0.1, 0.4))
    assert tornado(dearer, 0.5).inputs[0].high == pytest.approx(0.37)  # P90 of U(0.1, 0.4)


def test_tornado_marks_never_and_skips_fixed_inputs():
    # electricity at 0.2 or 1.2 USD/kWh, even odds: P10 = P50 = 0.2, P90 = 1.2, where a busy
    # hour of the 1 kW GPU costs more than the 1.00 USD/h instance and buying never breaks even
    t = summarise(
        simulate(_tornado_model(electricity_usd_per_kwh=Discrete((0.2, 1.2), (0.5, 0.5))))
    ).tornado
    e = next(bar for bar in t.inputs if bar.input == "buy.electricity_usd_per_kwh")
    assert (e.low, e.high) == (0.2, 1.2)
    assert math.isnan(e.breakeven_at_high)  # 1000 + 8760*u*(1.2 - 1.0) > 0 at every u
    assert e.gap_at_high == pytest.approx(1000 + 4380 * 0.2)
    assert {bar.input for bar in t.inputs} == {
        "buy.electricity_usd_per_kwh",
        "rent.price_usd_per_hour",
    }


# --------------------------------------------------------------------------- value of information


def test_evpi_is_zero_when_one_option_always_wins():
    voi = summarise(simulate(_tornado_model())).value_of_information
    assert voi.utilisation == 0.5
    assert voi.evpi == 0.0  # renting is dearer at u = 0.5 in every draw
    assert [v.evppi for v in voi.by_input] == [0.0, 0.0]


def test_evpi_by_hand_on_a_two_point_input():
    # The cloud price is 0.20 USD/h (40 %) or 1.00 USD/h (60 %), the rest fixed at e = 0.2.
    # gap(0.5) = 1000 + 4380*(0.2 - p): +1000 at p = 0.20 (rent is cheaper), -2504 at p = 1.00.
    # Not knowing p one buys: E gap = 0.4*1000 - 0.6*2504 = -1102.4. Knowing it one rents when
    # p = 0.20 and saves 1000 there: EVPI = -1102.4 - (0.6*-2504) = 0.4*1000 = 400 USD. A Latin
    # hypercube of 500 draws (one replicate) puts exactly 200 of them at p = 0.20.
    m = _tornado_model(electricity_usd_per_kwh=0.2)
    m = dataclasses.replace(
        m,
        samples=500,
        rent=dataclasses.replace(m.rent, price_usd_per_hour=Discrete((0.2, 1.0), (0.4, 0.6))),
    )
    voi = summarise(simulate(m)).value_of_information
    assert voi.evpi == pytest.approx(400.0, rel=1e-12)
    (only,) = voi.by_input
    assert only.input == "rent.price_usd_per_hour"
    assert only.evppi == pytest.approx(400.0, rel=1e-12)  # one bin per value: exact


def test_every_evppi_is_at_most_the_evpi():
    inputs = scenarios.load_file(GOLDEN).resolved.inputs
    inputs = dataclasses.replace(inputs, report_utilisation=0.15)  # near the break-even
    voi = summarise(simulate(inputs)).value_of_information
    assert voi.evpi > 0
    values = [v.evppi for v in voi.by_input]
    assert values == sorted(values, reverse=True)
    assert all(0 <= v <= voi.evpi for v in values)
    assert voi.bins == math.isqrt(inputs.samples)
    # the input that decides most is worth most
    assert voi.by_input[0].input in {"buy.admin_usd_per_month", "rent.price_annual_change"}


def test_evppi_of_an_input_without_effect_is_small():
    # The GPU's idle draw is uncertain, but the build is switched off when idle, so it changes
    # nothing: its EVPPI is the noise of the bins only. At u = 0.15 the gap 1000 + 1314*(e - p)
    # runs from -380 to +277 USD, so the decision depends on the electricity price.
    m = _tornado_model(gpu_idle_w=Uniform(0, 100), powered_when_idle=False)
    m = dataclasses.replace(
        m,
        samples=4000,
        report_utilisation=0.15,
        buy=dataclasses.replace(m.buy, electricity_usd_per_kwh=Uniform(0.0, 0.4)),
    )
    voi = summarise(simulate(m)).value_of_information
    worth = {v.input: v.evppi for v in voi.by_input}
    assert voi.evpi > 0
    assert worth["buy.gpu_idle_w"] < 0.1 * worth["buy.electricity_usd_per_kwh"]


# --------------------------------------------------------------------------- contract


def test_same_seed_same_uncertainty_output():
    m = _four_inputs(2000, 21, "lhs", target_halfwidth=0.002)
    one, two = (to_dict(summarise(simulate(m))) for _ in range(2))
    for key in ("convergence", "tornado", "value_of_information"):
        assert one[key] == two[key]


def test_the_new_fields_round_trip_and_old_results_still_load():
    result = scenarios.evaluate(GOLDEN, samples=500)
    data = to_dict(result)
    assert to_dict(from_dict(data)) == data
    for key in ("convergence", "tornado", "value_of_information"):
        old = {k: v for k, v in data.items() if k != key}
        loaded = from_dict(old)
        assert getattr(loaded, key) is None
        assert to_dict(loaded) == old  # written back as it was read


def test_misaligned_standard_errors_are_refused():
    data = to_dict(scenarios.evaluate(GOLDEN, samples=200))
    data["convergence"]["gap_mean_se"] = data["convergence"]["gap_mean_se"][:-1]
    with pytest.raises(Exception, match="utilisation levels"):
        from_dict(data)


def test_a_service_can_bound_the_draws_before_running():
    doc = {
        "version": 1,
        "name": "bounded",
        "buy": {"gpu": "rtx-2080-ti", "gpu_count": 4},
        "rent": {"instance": "aws/p3.8xlarge"},
    }
    assert scenarios.load_mapping(doc).max_draws() == 10_000
    assert scenarios.load_mapping(doc).max_draws(samples=500) == 500
    doc["simulation"] = {"samples": 2000, "target_halfwidth": 0.001}
    assert scenarios.load_mapping(doc).max_draws() == 1_000_000
    doc["simulation"]["max_samples"] = 64_000
    assert scenarios.load_mapping(doc).max_draws() == 64_000
    assert scenarios.load_mapping(doc).max_draws(samples=100_000) == 100_000


def test_plans_do_not_take_a_target():
    from scenarios.errors import ScenarioError

    doc = yaml.safe_load(Path("scenarios/examples/plan-worked-example.yaml").read_text("utf-8"))
    doc["simulation"] = {"samples": 100, "target_halfwidth": 0.01}
    with pytest.raises(ScenarioError, match="target_halfwidth"):
        scenarios.load_mapping(doc)


# --------------------------------------------------------------------------- surfaces


@pytest.fixture(scope="module")
def contested() -> Result:
    """The golden scenario reported at 15 % utilisation, near its break-even: buying and
    renting each win in some draws."""
    inputs = dataclasses.replace(
        scenarios.load_file(GOLDEN).resolved.inputs, report_utilisation=0.15, samples=4000
    )
    return summarise(simulate(inputs))


def test_run_prints_the_precision_and_the_largest_swings(contested):
    from rich.console import Console

    from cli.tables import print_result

    out = io.StringIO()
    print_result(contested, Console(file=out, width=100, color_system=None))
    text = out.getvalue()
    p50 = contested.breakeven_utilisation.p50
    margin = contested.convergence.breakeven_p50_halfwidth
    line = re.search(r"Break-even P50 (\d+\.(\d+)) % ± (\d+\.\d+) % \(95 % interval", text)
    assert line, text
    shown = 0.5 * 10.0 ** -len(line.group(2))  # both to the margin's first significant digit
    assert float(line.group(1)) == pytest.approx(p50 * 100, abs=shown)
    assert float(line.group(3)) == pytest.approx(margin * 100, abs=shown)
    swings = text[text.index("Largest swings") :].splitlines()
    names = [bar.input for bar in contested.tornado.inputs[:3]]
    assert [next(n for n in names if row.startswith(n)) for row in swings[3:6]] == names


def test_run_prints_what_knowing_the_inputs_would_save(contested):
    from rich.console import Console

    from cli.tables import print_result
    from present.reports.uncertainty import voi_sentence

    out = io.StringIO()
    print_result(contested, Console(file=out, width=10_000, color_system=None))
    text = out.getvalue()
    sentence = voi_sentence(contested)
    assert sentence.startswith("At 15 % utilisation, knowing every uncertain input")
    assert sentence in text
    assert text.index("Largest swings") < text.index(sentence)


def test_the_voi_sentence_and_table_leave_out_inputs_below_one_percent_of_the_evpi(contested):
    # An EVPPI of $0.004 beside an EVPI of $100 is the estimate's noise: it read "is worth up
    # to $0.00"; at 1 % of the EVPI ($1.00) an input is named.
    from costmodel.result import InputValue
    from present.reports.uncertainty import voi_sentence, voi_table

    voi = dataclasses.replace(
        contested.value_of_information,
        evpi=100.0,
        by_input=(InputValue("buy.pue", 1.0), InputValue("rent.price_usd_per_hour", 0.004)),
    )
    res = dataclasses.replace(contested, value_of_information=voi)
    text = voi_sentence(res)
    assert text.endswith("save $100 on average. Pinning down the cooling overhead (PUE) is "
                         "worth up to $1.00.")  # fmt: skip
    assert [row[0] for row in voi_table(res).rows] == ["buy.pue"]
    only_noise = dataclasses.replace(voi, by_input=voi.by_input[1:])
    res = dataclasses.replace(contested, value_of_information=only_noise)
    assert voi_sentence(res).endswith("save $100 on average.")
    assert voi_table(res) is None


def test_reports_show_the_tornado_and_the_value_of_information(contested):
    from present.reports import render

    md = render(contested, "md").decode("utf-8").replace("\\", "")
    voi = contested.value_of_information
    top = voi.by_input[0]
    assert "How sure, and what would change it" in md
    assert f"would save {fmt_usd(voi.evpi)} on average" in md
    assert f"is worth up to {fmt_usd(top.evppi)}" in md
    assert md.count("data:image/svg+xml;base64,") == 4  # the tornado chart beside the three
    html = render(contested, "html").decode("utf-8")
    assert 'id="value-of-information"' in html and html.count("<svg ") == 4
    wb = openpyxl.load_workbook(io.BytesIO(render(contested, "xlsx")))
    rows = list(wb["tornado"].iter_rows(values_only=True))
    assert rows[0][0] == "input"
    assert [r[0] for r in rows[1:]] == [bar.input for bar in contested.tornado.inputs]
    assert [r[5] for r in rows[1:]] == pytest.approx(
        [bar.gap_at_low for bar in contested.tornado.inputs], rel=1e-15
    )
    summary = {r[0]: r[1] for r in wb["summary"].iter_rows(min_row=2, values_only=True)}
    assert summary["evpi_cost_usd"] == pytest.approx(voi.evpi, rel=1e-15)
    assert summary["breakeven_utilisation_p50_ci95_low"] == pytest.approx(
        contested.convergence.breakeven_p50_ci95[0], rel=1e-15
    )


def test_select_ranks_by_hand():
    # sorted: 1 2 3 4 5; rank 1 holds 2 and rank 3 holds 4, 1 before the first, 3 between
    values = select_ranks(np.array([5.0, 1.0, 4.0, 2.0, 3.0]), (1, 3))
    assert (values[1], values[3]) == (2.0, 4.0)
    assert values[0] == 1.0 and values[2] == 3.0 and values[4] == 5.0


@pytest.mark.parametrize("ranks", [(0,), (3, 3), (10, 500, 501, 999), (999,)])
def test_select_ranks_puts_each_order_statistic_in_place(ranks):
    x = np.random.default_rng(2).normal(size=1000)
    x[::7] = np.inf  # "never" ranks last
    values = select_ranks(np.array(x), ranks)
    ordered = np.sort(x)
    assert np.array_equal(np.sort(values), ordered)  # the same values
    for k in ranks:
        assert values[k] == ordered[k]
        assert np.all(values[:k] <= values[k]) and np.all(values[k + 1 :] >= values[k])
