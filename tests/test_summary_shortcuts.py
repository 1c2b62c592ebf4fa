"""The summary's shortcuts give the numbers of the long way: percentiles of a constant over
each draw's work from one sort (``stats.Reciprocals``), a Latin hypercube's arithmetic done once
for all replicates, the cost per unit of work of a line through the origin summarised once, and
a sort order from packed keys (``sampling.ascending``) and the percentiles of a line whose ends
rise together from one sort (``stats.RisingLine``), the emissions of every level selected in one
block and the cost per unit of work from each draw's reciprocal of its work."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import rankdata

import scenarios
from costmodel.engine import simulate, summarise
from costmodel.sampling import _EPS, Sampler, ascending, average_ranks, stream
from costmodel.stats import Paybacks, Reciprocals, RisingLine, percentiles
from tests.test_throughput_error import ESTIMATED

ROOT = Path(__file__).resolve().parents[1]


def test_reciprocals_by_hand():
    # w = 1, 2, 4, 5, c = 20, u = 0.5: c/(u*w) = 40, 20, 10, 8 -> sorted 8, 10, 20, 40.
    # P10 at 0.3: 8 + 0.3*(10 - 8) = 8.6; P50 at 1.5: 10 + 0.5*(20 - 10) = 15;
    # P90 at 2.7: 20 + 0.7*(40 - 20) = 34.
    got = Reciprocals(np.array([4.0, 1.0, 5.0, 2.0])).percentiles(20.0, 0.5)
    assert got == pytest.approx({"p10": 8.6, "p50": 15.0, "p90": 34.0}, rel=1e-15)


@pytest.mark.parametrize("n", [1, 2, 7, 15, 16, 17, 1000, 10_001])
@pytest.mark.parametrize("c", [3.7e5, -2.5, 0.0])
def test_reciprocals_equal_the_percentiles_of_the_ratios(n, c):
    w = np.random.default_rng(n).lognormal(3.0, 1.0, n)
    w[: n // 3] = w[0]  # ties
    for u in (0.05, 0.35, 1.0):
        long_way = percentiles(np.divide(c, np.multiply(u, w)))
        assert Reciprocals(w).percentiles(c, u) == long_way  # the same numbers, bit for bit


@pytest.mark.parametrize("n", [1, 7, 16, 1000])
def test_reciprocals_at_many_pairs_equal_them_pair_by_pair(n):
    w = np.random.default_rng(n).lognormal(3.0, 1.0, n)
    c = np.array([3.7e5, -2.5, 0.0, np.inf, 12.0])
    u = np.array([0.05, 0.35, 1.0, 1.0, 0.7])
    got = Reciprocals(w).percentiles(c, u)
    for i in range(c.size):
        one = Reciprocals(w).percentiles(float(c[i]), float(u[i]))
        for k, v in one.items():
            assert got[k][i] == v or (np.isnan(got[k][i]) and np.isnan(v))  # bit for bit


def test_reciprocals_of_an_infinite_constant_are_nan():
    got = Reciprocals(np.ones(20)).percentiles(np.inf, 1.0)
    assert all(np.isnan(v) for v in got.values())


@pytest.mark.parametrize("n", [100, 10_000, 12_345])
def test_latin_hypercube_replicates_as_drawn_one_by_one(n):
    sampler = Sampler(["a", "b"], n, 7, "lhs")
    for name in ("a", "b"):
        rng, parts = stream(7, name), []
        for m in sampler.sizes:  # the construction, replicate after replicate
            perm = rng.permutation(m)
            parts.append((perm + (rng.integers(0, 2**53, size=m) + 0.5) * _EPS) / m)
        assert np.array_equal(sampler.sample.q[name], np.concatenate(parts))


def test_latin_hypercube_doubled_keeps_its_draws():
    sampler = Sampler(["a"], 1000, 3, "lhs")
    first = sampler.sample.q["a"].copy()
    sampler.double()
    q = sampler.sample.q["a"]
    sizes = [m // 2 for m in sampler.sizes]
    ends = np.cumsum([0, *sampler.sizes])
    kept = np.concatenate([q[ends[b] : ends[b] + m] for b, m in enumerate(sizes)])
    assert np.array_equal(kept, first)


def _estimated(samples: int):
    inputs = scenarios.load_mapping(ESTIMATED).resolved.inputs
    return dataclasses.replace(inputs, samples=samples)


def test_cost_per_unit_of_a_line_through_the_origin_is_the_same_at_every_level():
    inputs = _estimated(2000)
    sim = simulate(inputs)
    assert np.ndim(sim.own_throughput) == 1 and not np.any(sim.rent.at_zero)
    result = summarise(sim)
    grid = np.asarray(result.utilisation)
    rent = result.cost_per_unit.sides["rent"]
    tco = np.asarray(sim.rent_tco(1.0))
    work = 730.0 * inputs.horizon_months * sim.own_throughput  # units of work at u = 1
    expected = percentiles(tco / work)
    for name in ("p10", "p50", "p90"):
        band = np.asarray(getattr(rent, name))
        assert np.all(np.isnan(band[grid == 0]))
        # the long way at each level: TCO(u) / (u*730*H*T_own), the same within rounding
        for j in np.flatnonzero(grid > 0):
            u = grid[j]
            at_u = percentiles(sim.rent_tco(u) / (u * work))
            assert band[j] == pytest.approx(at_u[name], rel=1e-14)
            assert band[j] == expected[name]


def _cases() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    return [
        rng.normal(size=50_000),
        -rng.lognormal(size=20_000),
        np.round(rng.normal(size=30_000), 2),  # many ties
        1.0 + rng.random(8192) * 1e-12,  # differ only in their low bits
        np.concatenate([rng.normal(size=5000), [0.0, -0.0, np.inf, -np.inf, 0.0]]),
        np.full(5000, 2.5),
        rng.normal(size=100),  # too few to pack
        np.concatenate([rng.normal(size=5000), [0.0, -0.0]]),  # one tie, of different bits
        np.repeat(1.0 + rng.random(4096) * 1e-9, [1] * 4095 + [2]),  # one tie among shared bits
        np.concatenate([rng.normal(size=5000), [np.nan]]),  # argsort's order
    ]


@pytest.mark.parametrize("case", range(10))
def test_ascending_sorts_as_argsort_does(case):
    x = _cases()[case]
    order = ascending(x)
    assert np.array_equal(np.sort(order), np.arange(x.size))  # each draw once
    assert np.array_equal(x[order], np.sort(x), equal_nan=True)


@pytest.mark.parametrize("case", range(9))
def test_average_ranks_from_packed_keys_equal_rankdata(case):
    x = _cases()[case]
    assert np.array_equal(average_ranks(x), rankdata(x))


def test_rising_line_by_hand():
    # a = 1, 2, 3, 4 and b = 10, 20, 30, 40 rise together; at u = 0.5, a + b*u = 6, 12, 18, 24.
    # P10 at 0.3: 6 + 0.3*(12 - 6) = 7.8; P50 at 1.5: 12 + 0.5*6 = 15;
    # P90 at 2.7: 18 + 0.7*6 = 22.2.
    line = RisingLine.of(np.array([3.0, 1.0, 4.0, 2.0]), np.array([30.0, 10.0, 40.0, 20.0]))
    assert line.percentiles(0.5) == pytest.approx({"p10": 7.8, "p50": 15.0, "p90": 22.2})


@pytest.mark.parametrize("n", [1, 5, 16, 1000, 20_001])
def test_rising_line_equals_the_percentiles_of_each_draw(n):
    factor = np.random.default_rng(n).triangular(1.1, 1.3, 1.6, n)  # a drawn PUE, say
    a, b = 600.0 + 2993.4577 * factor, 5000.0 * factor
    line = RisingLine.of(a, b)
    for u in (0.0, 0.05, 0.35, 1.0):
        assert line.percentiles(u) == percentiles(b * u + a)  # bit for bit


def test_a_line_whose_ends_do_not_rise_together_is_left_to_the_long_way():
    rng = np.random.default_rng(3)
    assert RisingLine.of(rng.random(100), rng.random(100)) is None


def test_sloped_line_by_hand():
    # a = 5 in every draw, b = 30, 10, 40, 20: at u = 0.5, a + b*u = 20, 10, 25, 15 -> sorted
    # 10, 15, 20, 25. P10 at 0.3: 10 + 0.3*5 = 11.5; P50 at 1.5: 15 + 0.5*5 = 17.5;
    # P90 at 2.7: 20 + 0.7*5 = 23.5.
    line = RisingLine.sloped(5.0, np.array([30.0, 10.0, 40.0, 20.0]))
    assert line.percentiles(0.5) == pytest.approx({"p10": 11.5, "p50": 17.5, "p90": 23.5})


@pytest.mark.parametrize("n", [1, 7, 16, 1000, 20_001])
def test_sloped_line_equals_the_percentiles_of_each_draw(n):
    slope = np.random.default_rng(n).triangular(2.5, 3.0, 3.06, n) * 730.0 * 60  # a rent price
    slope[: n // 4] = slope[0]  # ties
    line = RisingLine.sloped(1234.5, np.array(slope))
    for x in (0.0, 0.05, 0.35, 1.0):
        assert line.percentiles(x) == percentiles(slope * x + 1234.5)  # bit for bit


def _coded(months: np.ndarray, horizon: int, monkeypatch) -> Paybacks:
    """``months`` (U, S) held as codes, computed again from ``months`` itself."""
    monkeypatch.setattr("costmodel.stats.HELD_PAYBACKS", 0)
    paid = Paybacks(*months.shape, horizon, 7, lambda draws: months[:, draws])
    for start in range(0, months.shape[1], 7):
        rows = slice(start, start + 7)
        paid.put(rows, np.array(months[:, rows]))
    assert paid.codes is not None
    return paid


def test_payback_codes_by_hand(monkeypatch):
    # Months 2, 1, never, 4, 3 over a 6-month horizon: sorted 1, 2, 3, 4, inf. P10 at 0.4:
    # 1 + 0.4*(2 - 1) = 1.4; P50 at 2: 3; P90 at 3.6 touches "never": NaN; 1 in 5 never.
    q, never = _coded(np.array([[2.0, 1.0, np.inf, 4.0, 3.0]]), 6, monkeypatch).summary()
    assert q["p10"][0] == pytest.approx(1.4) and q["p50"][0] == 3.0 and np.isnan(q["p90"][0])
    assert never[0] == 0.2


def test_payback_codes_of_draws_that_never_pay_back(monkeypatch):
    # 20 draws, none paying back within the horizon: every percentile NaN, all of them never.
    q, never = _coded(np.full((1, 20), np.inf), 12, monkeypatch).summary()
    assert all(np.isnan(v[0]) for v in q.values()) and never[0] == 1.0


@pytest.mark.parametrize("n", [16, 1000, 20_001])
@pytest.mark.parametrize("shared", [0.1, 0.5])  # above a quarter: every draw computed again
def test_payback_codes_give_the_percentiles_of_the_months(n, shared, monkeypatch):
    rng = np.random.default_rng(n)
    months = rng.gamma(4.0, 3.0, (3, n)).clip(0.0, 36.0)
    months[0, : int(shared * n)] = months[0, 0]  # a month many draws share
    months[1, rng.random(n) < 0.3] = np.inf  # never
    months[2, : n // 10] = 36.0  # the horizon's last month
    q, never = _coded(months, 36, monkeypatch).summary()
    for j, row in enumerate(months):
        assert {k: v[j] for k, v in q.items()} == pytest.approx(
            percentiles(np.array(row)), rel=0, abs=0, nan_ok=True
        )  # bit for bit
        assert never[j] == np.count_nonzero(np.isinf(row)) / n


@pytest.mark.parametrize(
    "example", ["inference-8b-rtx6000ada-vs-api", "h100-8x-vs-p5-48xlarge-reserved-1y"]
)
def test_a_simulation_holding_codes_gives_the_numbers_of_one_holding_the_months(
    example, monkeypatch
):
    inputs = scenarios.load_file(scenarios.example(example)).resolved.inputs
    inputs = dataclasses.replace(inputs, samples=3000)
    held = simulate(inputs)
    monkeypatch.setattr("costmodel.stats.HELD_PAYBACKS", 0)
    coded = simulate(inputs)
    assert all(paid.codes is not None for paid in coded.paybacks.values())
    for side, paid in held.paybacks.items():  # computed again, draw by draw, the same
        np.testing.assert_array_equal(coded.paybacks[side].months(), paid.months())
    a, b = summarise(held), summarise(coded)
    for got, want in (
        (a.payback_months, b.payback_months),
        (a.payback_vs_api_months, b.payback_vs_api_months),
    ):
        if want is not None:
            for k in ("p10", "p50", "p90", "prob_never"):
                np.testing.assert_array_equal(getattr(got, k), getattr(want, k))


@pytest.mark.parametrize(
    "example",
    [
        "lab-4x-rtx2080ti-vs-p3-8xlarge",
        "server-8x-v100-vs-p3-16xlarge",
        "benchmarks/scenario-1m.yaml",
    ],
)
@pytest.mark.parametrize("block", [None, 0])  # all levels in one block; one level at a time
def test_carbon_of_a_line_per_draw_equals_the_long_way(example, block, monkeypatch):
    path = ROOT / example if example.endswith(".yaml") else scenarios.example(example)
    inputs = scenarios.load_file(path).resolved.inputs  # rising or not, work per draw or not
    grid = (0.0, *inputs.utilisation)  # u = 0 too: no work, no emissions per unit
    sim = simulate(dataclasses.replace(inputs, samples=3000, utilisation=grid))
    if block is not None:
        monkeypatch.setattr("costmodel.engine._UNIT_BLOCK_ELEMENTS", block)
    got = summarise(sim).carbon
    line = sim.carbon.buy
    assert np.ndim(line.at_zero) == 1  # emissions per draw
    work = 730.0 * inputs.horizon_months * sim.own_throughput  # units of work at u = 1
    for j, u in enumerate(grid):
        kg = line.at_zero + line.per_u * u
        tonnes, per_unit = got.sides["buy"], got.per_unit.sides["buy"]
        assert tonnes.mean[j] == pytest.approx(kg.mean() / 1000.0, rel=1e-14)
        for k, v in percentiles(kg / 1000.0).items():
            assert getattr(tonnes, k)[j] == pytest.approx(v, rel=1e-14)
        if u == 0:  # no work: no emissions per unit
            assert all(np.isnan(getattr(per_unit, k)[j]) for k in ("p10", "p50", "p90"))
            continue
        for k, v in percentiles(kg * 1000.0 / (u * work)).items():  # [g CO2e/unit]
            assert getattr(per_unit, k)[j] == pytest.approx(v, rel=1e-14)


# every level in one block; the same with u = 0 before them; one level at a time
@pytest.mark.parametrize(("zero", "block"), [(False, None), (True, None), (False, 0)])
def test_cost_per_unit_of_work_per_draw_equals_the_long_way(zero, block, monkeypatch):
    inputs = scenarios.load_file(scenarios.example("lab-4x-rtx2080ti-vs-p3-8xlarge")).resolved
    grid = (0.0, *inputs.inputs.utilisation) if zero else inputs.inputs.utilisation
    inputs = dataclasses.replace(inputs.inputs, samples=2000, utilisation=grid)
    sim = simulate(inputs)
    if block is not None:
        monkeypatch.setattr("costmodel.engine._UNIT_BLOCK_ELEMENTS", block)
    unit = summarise(sim).cost_per_unit.sides
    work = 730.0 * inputs.horizon_months * sim.own_throughput  # units of work at u = 1
    assert np.ndim(work) == 1  # a throughput per draw: each draw's ratio is selected
    for j, u in enumerate(np.asarray(inputs.utilisation)):
        if u == 0:  # no work: no cost per unit
            assert all(np.isnan(getattr(unit["buy"], k)[j]) for k in ("p10", "p50", "p90"))
            continue
        for side, tco in (("buy", sim.buy_tco(u)), ("rent", sim.rent_tco(u))):
            at_u = percentiles(tco / (u * work))  # within the rounding of the division
            for k, v in at_u.items():
                assert getattr(unit[side], k)[j] == pytest.approx(v, rel=1e-14)


@pytest.mark.parametrize(
    "example",
    [
        "lab-4x-rtx2080ti-vs-p3-8xlarge",  # a rent line per draw
        "h100-8x-vs-p5-48xlarge-reserved-1y",  # a reservation's kink
        "inference-8b-rtx6000ada-vs-api",  # a hosted API, through the origin
    ],
)
@pytest.mark.parametrize("block", [None, 0])  # all levels in one block; one level at a time
def test_mean_tco_from_the_means_of_its_parts_equals_the_mean_of_the_draws(
    example, block, monkeypatch
):
    inputs = scenarios.load_file(scenarios.example(example)).resolved.inputs
    sim = simulate(dataclasses.replace(inputs, samples=2000))
    if block is not None:
        monkeypatch.setattr("costmodel.engine._UNIT_BLOCK_ELEMENTS", block)
    result = summarise(sim)
    bands = {"buy": result.buy_tco, "rent": result.rent_tco, "api": result.api_tco}
    for side, line in sim.lines().items():
        for j, u in enumerate(inputs.utilisation):
            want = np.mean(np.broadcast_to(line.tco(u), (2000,)))  # each draw's TCO
            assert bands[side].mean[j] == pytest.approx(want, rel=1e-14)
