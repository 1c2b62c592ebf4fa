"""Plans in the user's units: the daily load shape's split, an API as burst and demand in
millions of tokens, checked at engine level against the worked inference plan of the model
guide, a numerical integral over the day, and the flat load of plans without a peak."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate

import scenarios
from costmodel import Fixed
from costmodel.distributions import Uniform
from costmodel.fleet import simulate_plan, summarise_plan, work_split
from costmodel.inputs import Demand, InputError, PlanInputs
from tests.helpers import rent
from tests.test_api_side import API, PER_GPU, SERVER

REL = 1e-6
EXAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "examples"
#: One server and one instance: 8 GPUs x 9 M tokens per GPU-hour = 72 M tokens an hour.
CAPACITY = 8 * PER_GPU
#: The worked plan's reservation: the 8-GPU instance at 16 USD/h for a year, no price change.
RESERVE = rent(
    8,
    "reserved_1y",
    price_usd_per_hour=16,
    on_demand_price_usd_per_hour=24,
    relative_throughput=PER_GPU,
)


def _plan(peak_to_mean: float = 1.6, **changes) -> PlanInputs:
    """The worked plan: 20,000 M tokens in month 1 growing 100 %/year, 0..4 servers, 0..2
    reservations, the rest to the API (0.60 in / 0.80 out, -30 %/year), 36 months at 8 %."""
    fields = {
        "horizon_months": 36,
        "discount_rate": 0.08,
        "demand": Demand.given(
            million_tokens_per_month=Fixed(20_000),
            annual_growth=Fixed(1.0),
            peak_to_mean=Fixed(peak_to_mean),
        ),
        "own": SERVER,
        "servers": (0, 4),
        "reserve": RESERVE,
        "instances": (0, 2),
        "burst": API,
        "samples": 1,
        **changes,
    }
    return PlanInputs(**fields)


#: The worked plan's table: (servers, reserved) -> (cost [USD], share owned, owned utilisation).
TABLE = {
    (0, 0): (749739.3506, 0.0, 0.0),
    (0, 1): (598298.8168, 0.0, 0.0),
    (1, 0): (543217.6527, 0.621981, 0.773927),
    (1, 1): (764704.3798, 0.621981, 0.773927),
    (2, 0): (702659.7825, 0.865164, 0.538259),
    (3, 0): (958961.8532, 0.963789, 0.399745),
    (4, 0): (1251425.1037, 0.996392, 0.309951),
}


def test_the_worked_inference_plan_table():
    # Row (1 server, 0 reserved), k = 1.6, a = 0.6. W_m = 20,000 * 2^((m-1)/12) M tokens, mean
    # hourly load l_m = W_m / 730, one server 72 M tokens/h, x = 72 / l_m. Month 1: l = 27.40,
    # x = 2.628 >= 1 + a: all 20,000 owned. Month 12: W = 37,754.97, x = 1.392135, z = (x - 1)
    # / a = 0.653558, F = 1 - 0.6 (0.756877 - 0.561093) / pi = 0.962608: 36,343.24 owned and
    # 1,411.73 to the API. Month 36: W = 151,019.89, x = 0.348 <= 1 - a: 72 * 730 = 52,560
    # owned, 98,459.89 to the API. Over 36 months sum A = 1,464,394.04 of sum W = 2,354,401.52:
    # share 0.621981; utilisation 1,464,394.04 / (36 * 52,560) = 0.773927. Cost = TCO_buy(0) of
    # one server 308,075.7492 + busy power 4.8 kW * 730 h * 1.3 * 0.10 USD / (730 h * 72) =
    # 0.0086667 USD per owned M tokens, times sum_m 1.08^(-m/12) A_m: 11,109.1973 + the API
    # sum_m 1.08^(-m/12) O_m 0.70 * 0.7^((m-1)/12) = 224,032.7061: 543,217.6527.
    result = summarise_plan(simulate_plan(_plan()))
    for (s, k), (cost, share, util) in TABLE.items():
        c = result.candidate(s, k)
        assert c.cost.mean == pytest.approx(cost, rel=REL), (s, k)
        assert c.share_owned == pytest.approx(share, abs=5e-7), (s, k)  # 6 decimals
        assert c.owned_utilisation == pytest.approx(util, abs=5e-7), (s, k)
    assert (result.best.servers, result.best.instances) == (1, 0)
    assert result.all_cloud.cost.mean == pytest.approx(749739.3506, rel=REL)


def test_with_a_flat_load_the_best_is_the_same_mix_and_cheaper():
    # k = 1: A_m = min(W_m, 52,560); the daily peak costs 543,217.6527 - 510,137.0925
    flat = summarise_plan(simulate_plan(_plan(1.0)))
    assert (flat.best.servers, flat.best.instances) == (1, 0)
    assert flat.best.cost.mean == pytest.approx(510137.0925, rel=REL)
    assert flat.all_cloud.cost.mean == pytest.approx(749739.3506, rel=REL)  # no capacity, no peak


def _crossings(x: float, a: float) -> list[float]:
    """Hours of the day [h] at which the load 1 + a sin(2 pi t / 24) crosses x."""
    if a == 0 or abs((x - 1) / a) >= 1:
        return []
    t0 = 24 * math.asin((x - 1) / a) / (2 * math.pi) % 24
    return sorted({t0, (12 - t0) % 24})


def _split_by_quadrature(load: float, owned: float, reserved: float, a: float) -> list[float]:
    """Owned, reserved and burst work of a month [units/month] of mean hourly load ``load``
    under l(t) = load (1 + a sin(2 pi t / 24)): 730 h times the day's mean of min(l, C),
    min(V, (l - C)+) and (l - C - V)+, by quad split at the load's crossings of C and C + V."""
    hourly = lambda t: load * (1 + a * math.sin(2 * math.pi * t / 24))  # noqa: E731
    parts = (
        lambda t: min(hourly(t), owned),
        lambda t: min(reserved, max(hourly(t) - owned, 0.0)),
        lambda t: max(hourly(t) - owned - reserved, 0.0),
    )
    kinks = _crossings(owned / load, a) + _crossings((owned + reserved) / load, a)
    edges = [0.0, *sorted(kinks), 24.0]

    def mean(f) -> float:
        pieces = zip(edges, edges[1:], strict=False)
        return math.fsum(integrate.quad(f, lo, hi, epsabs=1e-12, limit=200)[0] for lo, hi in pieces)

    return [730 * mean(f) / 24 for f in parts]


@pytest.mark.parametrize("k", [1.3, 1.6, 2.0])
@pytest.mark.parametrize(("servers", "instances"), [(1, 0), (1, 1), (0, 2), (2, 1)])
def test_the_split_is_the_integral_of_the_daily_load(k, servers, instances):
    # 36 months growing 100 %/year: the load rises from 27 to 207 M tokens an hour, so the
    # capacities (72 and 144 M tokens an hour) pass from above the peak to below the trough
    plan = _plan(k)
    split = work_split(simulate_plan(plan), servers, instances)
    months = np.arange(36)
    loads = 20_000 * 2.0 ** (months / 12) / 730
    for m, load in enumerate(loads):
        want = _split_by_quadrature(load, servers * CAPACITY, instances * CAPACITY, k - 1)
        got = [split.owned[m], split.reserved[m], split.burst[m]]
        assert got == pytest.approx(want, rel=1e-9, abs=1e-6), m


def test_a_peak_draw_by_draw_matches_each_fixed_peak():
    # peak_to_mean uniform on [1, 2]: every draw's cost is the cost of a plan with that draw's
    # k fixed (the shaped split broadcasts over draws)
    plan = _plan(samples=5, method="random", seed=3)
    uncertain = dataclasses.replace(
        plan, demand=dataclasses.replace(plan.demand, peak_to_mean=Uniform(1.0, 2.0))
    )
    sim = simulate_plan(uncertain)
    for i, k in enumerate(np.atleast_1d(sim.draws["demand.peak_to_mean"])):
        one = simulate_plan(_plan(float(k)))
        np.testing.assert_allclose(sim.cost[:, i], one.cost[:, 0], rtol=1e-12)
        np.testing.assert_allclose(sim.share_owned[:, i], one.share_owned[:, 0], rtol=1e-12)


@pytest.mark.parametrize(
    "example", sorted(p.name for p in EXAMPLES.glob("plan-*.yaml")), ids=lambda p: p[:-5]
)
def test_a_peak_just_above_one_gives_the_flat_plan(example):
    # the shaped split at a -> 0 meets the flat one (min and max) that k = 1 takes
    for doc in scenarios.load_files(EXAMPLES / example):
        given = doc.inputs
        inputs = dataclasses.replace(
            given,
            samples=min(given.samples, 200),
            demand=dataclasses.replace(given.demand, peak_to_mean=Fixed(1.0)),
        )
        shaped = dataclasses.replace(
            inputs, demand=dataclasses.replace(inputs.demand, peak_to_mean=Fixed(1 + 1e-12))
        )
        one, two = simulate_plan(inputs), simulate_plan(shaped)
        np.testing.assert_allclose(two.cost, one.cost, rtol=1e-9)
        np.testing.assert_allclose(two.share_owned, one.share_owned, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(two.owned_utilisation, one.owned_utilisation, rtol=1e-9)


def test_no_work_costs_nothing_to_serve_at_any_peak():
    # W_1 = 0: every month's work is 0, so the split is 0 (no 0/0) and the cost is the fixed one
    plan = _plan(
        2.0, demand=Demand.given(million_tokens_per_month=Fixed(0.0), peak_to_mean=Fixed(2))
    )
    sim = simulate_plan(plan)
    assert np.all(np.isfinite(sim.cost)) and np.all(sim.share_owned == 0)
    assert np.all(sim.owned_utilisation == 0) and np.all(sim.cloud == 0)
    split = work_split(sim, 2, 1)
    assert not np.any(split.owned) and not np.any(split.reserved) and not np.any(split.burst)


def test_an_api_burst_costs_its_blended_price_per_m_tokens():
    # one month, no servers: 20,000 M tokens at 0.70 USD, discounted a month at 8 %/year:
    # 14,000 * 1.08^(-1/12) = 13,910.3...; the API's share of nothing else
    plan = _plan(1.0, horizon_months=1, servers=(0, 0), reserve=None, instances=(0, 0))
    assert simulate_plan(plan).cost[0, 0] == pytest.approx(14_000 * 1.08 ** (-1 / 12), rel=1e-12)


def test_the_api_is_sampled_under_burst():
    plan = _plan(1.0)
    uncertain = dataclasses.replace(
        plan, burst=dataclasses.replace(API, output_usd_per_mtok=Uniform(0.7, 0.9))
    )
    names = set(uncertain.distributions())
    assert "burst.api.output_usd_per_mtok" in names and "demand.million_tokens_per_month" in names
    assert "demand.reference_gpu_hours_per_month" not in names


@pytest.mark.parametrize(
    ("fields", "path", "words"),
    [
        ({}, "demand", "reference_gpu_hours_per_month or million_tokens_per_month"),
        (
            {"reference_gpu_hours_per_month": Fixed(1), "million_tokens_per_month": Fixed(1)},
            "demand.million_tokens_per_month",
            "not both",
        ),
        (
            {"million_tokens_per_month": Fixed(1), "peak_to_mean": Fixed(2.5)},
            "demand.peak_to_mean",
            "[1, 2]",
        ),
        (
            {"million_tokens_per_month": Fixed(1), "peak_to_mean": Uniform(0.9, 1.5)},
            "demand.peak_to_mean",
            "[1, 2]",
        ),
        ({"million_tokens_per_month": Fixed(-1)}, "demand.million_tokens_per_month", "[0, "),
    ],
)
def test_bad_demand_is_refused_at_its_path(fields, path, words):
    with pytest.raises(InputError) as exc:
        Demand.given(**fields)
    assert exc.value.path == path and words in exc.value.message


def test_the_work_per_month_whichever_unit():
    tokens = Demand.given(million_tokens_per_month=Fixed(5))
    hours = Demand.given(reference_gpu_hours_per_month=Fixed(7))
    assert (tokens.work_field, tokens.work_per_month) == ("million_tokens_per_month", Fixed(5))
    assert (hours.work_field, hours.work_per_month) == ("reference_gpu_hours_per_month", Fixed(7))
    assert tokens.peak_to_mean == Fixed(1.0)


def test_sides_in_tokens_need_demand_in_tokens():
    hours = Demand.given(reference_gpu_hours_per_month=Fixed(100))
    with pytest.raises(InputError) as exc:
        _plan(demand=hours)
    assert exc.value.path == "burst" and "million_tokens_per_month" in exc.value.message
    in_tokens = rent(8, price_usd_per_hour=24, relative_throughput=None, tokens_per_s_per_gpu=2500)
    with pytest.raises(InputError) as exc:
        _plan(demand=hours, burst=in_tokens, reserve=None, instances=(0, 0))
    assert exc.value.path == "burst.tokens_per_s_per_gpu"
    # with the demand in tokens a side may count tokens per second: one month, no servers,
    # 20,000 M tokens at 8 GPUs x 2,500 tokens/s = 72 M tokens per instance-hour: 277.78 h at
    # 24 USD = 6,666.67 USD, discounted a month at 8 %/year
    plan = _plan(burst=in_tokens, reserve=None, instances=(0, 0), servers=(0, 0), horizon_months=1)
    cost = simulate_plan(plan).cost[0, 0]
    assert cost == pytest.approx(20_000 / 72 * 24 * 1.08 ** (-1 / 12), rel=1e-12)
