"""The engine's fast paths against the slow, obvious computations they replace.

Closed-form monthly sums against month-by-month sums; one-pass payback against the scan of
every month at every level; Spearman correlations from the sampler's ranks against
``scipy.stats.spearmanr``; selected percentiles against ``numpy.percentile``; the tabulated
inverse beta CDF against ``scipy.special.betaincinv``.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from costmodel import simulate, summarise
from costmodel.cashflows import (
    BuyDraws,
    RentDraws,
    Terms,
    Workspace,
    discount_factors,
    gap,
    growth_sum,
)
from costmodel.distributions import Discrete, Pert, Triangular, Uniform, _beta_ppf
from costmodel.outcomes import payback, payback_by_scan
from costmodel.sampling import sample
from costmodel.stats import centred, input_ranks, pearson, percentiles
from tests.helpers import buy, model, rent


def _month_by_month(g: float, r: float, months: int) -> float:
    """sum_{m=1..M} (1 + g)^((m - 1)/12) * (1 + r)^(-m/12), one term at a time (math.fsum)."""
    return math.fsum((1 + g) ** ((m - 1) / 12) * (1 + r) ** (-m / 12) for m in range(1, months + 1))


@pytest.mark.parametrize(
    "g, r",
    [
        (0.0, 0.0),  # M terms of 1
        (0.08, 0.08),  # g = r: every term is (1 + r)^(-1/12)
        (-0.5, 0.0),  # halving each year, no discounting
        (-0.5, 0.1),
        (0.0, 0.12),  # flat
        (1e-12, 0.0),  # within rounding of g = r
        (0.05, 0.05 + 1e-12),
        (0.3, 0.02),
        (-0.99, 0.5),
    ],
)
def test_growth_sum_equals_the_month_by_month_sum(g, r):
    months = np.array([1, 2, 11, 12, 13, 36, 60, 119, 240])
    got = growth_sum(g, r, months)
    want = [_month_by_month(g, r, int(m)) for m in months]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_growth_sum_at_g_equal_r_is_m_times_the_first_discount():
    # g = r = 0.08: each term is (1.08)^((m-1)/12) / (1.08)^(m/12) = 1.08^(-1/12) = 0.993607...
    assert growth_sum(0.08, 0.08, 24) == pytest.approx(24 * 1.08 ** (-1 / 12), rel=1e-15)


@settings(max_examples=60, deadline=None)
@given(
    g=st.lists(st.floats(-0.9, 1.0), min_size=1, max_size=8),
    r=st.floats(0.0, 0.5),
    months=st.integers(1, 240),
)
def test_growth_sum_of_drawn_changes_matches_month_by_month(g, r, months):
    got = growth_sum(np.array(g), r, months)
    want = [_month_by_month(x, r, months) for x in g]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_growth_sum_with_no_change_is_the_sum_of_discount_factors():
    # 1 USD a month for 36 months at 8 %: sum of 1.08^(-m/12), m = 1..36 = 32.0... (fsum)
    assert growth_sum(0.0, 0.08, 36) == pytest.approx(
        math.fsum(discount_factors(0.08, 36)), rel=1e-13
    )


def _macrs_model(samples: int, pricing: str = "on_demand", own_speed: float = 1.0, **rent_kw):
    """Taxed MACRS purchases against cloud prices that fall fast: the front-loaded tax shield
    pulls the gap below zero early, falling cloud prices let it rise again later. Some cloud
    hours cost less than the owned box's power while the cloud's monthly fees are high, so
    the gap can also be closed at low utilisation and open at high."""
    b = buy(
        4,
        gpu_price_usd=Uniform(300.0, 6000.0),
        platform_price_usd=3000,
        gpu_power_w=350,
        gpu_idle_w=40,
        platform_power_w=300,
        electricity_usd_per_kwh=Uniform(0.05, 0.8),
        electricity_annual_change=Uniform(0.0, 0.3),
        depreciation="macrs5",
        relative_throughput=own_speed,
    )
    r = rent(
        4,
        pricing=pricing,
        price_usd_per_hour=Uniform(0.1, 8.0),
        price_annual_change=Uniform(-0.6, 0.1),
        storage_usd_per_month=Uniform(0.0, 2000.0),
        **rent_kw,
    )
    return model(
        b,
        r,
        horizon_months=72,
        discount_rate=0.05,
        tax_rate=0.45,
        samples=samples,
        seed=3,
        utilisation=tuple(np.round(np.linspace(0.05, 1.0, 20), 2)),
    )


def _gap_of(m):
    sim = simulate(m)
    b = BuyDraws.sampled(m.buy, sim.draws)
    r = RentDraws.sampled(m.rent, sim.draws)
    from costmodel.cashflows import throughput

    t_own = throughput(b.gpu_count, b.relative_throughput, b.scaling_efficiency, b.thermal_derate)
    t_inst = throughput(r.gpu_count, r.relative_throughput, r.scaling_efficiency)
    terms = Terms(m.horizon_months, m.discount_rate, m.tax_rate)
    return sim, gap(b, r, t_own, t_inst, terms, m.samples, Workspace())


def _crossings(g, u: float) -> np.ndarray:
    """Sign changes of f_m(u) over months, per draw (capex first)."""
    f = g.net0 + u * g.slope
    if g.rent_u is not None:
        f = f - np.maximum(0.0, u - g.kink) * g.rent_u
    f = np.vstack([g.capex, f]) <= 0
    return np.count_nonzero(f[1:] != f[:-1], axis=0)


def test_one_pass_payback_equals_the_scan_where_the_gap_crosses_zero_twice():
    m = _macrs_model(3000)
    sim, g = _gap_of(m)
    levels = np.asarray(m.utilisation)
    many = max(np.count_nonzero(_crossings(g, u) >= 2) for u in levels)
    assert many > 50, "the case must hold draws whose gap crosses zero more than once"
    low_only = np.any((g.slope >= 0) & (g.net0 <= 0), axis=0)  # closed at low u only
    assert np.count_nonzero(low_only) > 50
    np.testing.assert_array_equal(sim.payback, payback_by_scan(g, levels))
    np.testing.assert_array_equal(payback(g, levels), sim.payback)


def test_one_pass_payback_equals_the_scan_with_a_reservation():
    # owning the work of two instances and reserving one: the rent side kinks at u = 0.5
    m = _macrs_model(
        1000,
        pricing="reserved_1y",
        own_speed=2.0,
        committed_instances=1,
        on_demand_price_usd_per_hour=Uniform(6.0, 12.0),
    )
    sim, g = _gap_of(m)
    assert g.rent_u is not None  # the kinked case
    np.testing.assert_array_equal(sim.payback, payback_by_scan(g, np.asarray(m.utilisation)))


@pytest.mark.parametrize("levels", [(0.0, 0.3, 0.31, 0.9, 1.0), (1.0, 0.5, 0.05)])
def test_one_pass_payback_on_uneven_and_unsorted_levels(levels):
    m = _macrs_model(1000)
    _, g = _gap_of(m)
    np.testing.assert_array_equal(payback(g, np.array(levels)), payback_by_scan(g, levels))


@pytest.mark.parametrize("method", ["lhs", "random", "sobol"])
def test_spearman_from_sampler_ranks_equals_scipy(method):
    b = buy(
        4,
        gpu_price_usd=Pert(900, 1000, 1300),
        gpu_power_w=Triangular(200, 250, 300),
        electricity_usd_per_kwh=Uniform(0.08, 0.3),
        electricity_annual_change=Discrete((0.0, 0.02, 0.05), (0.5, 0.3, 0.2)),  # ties
    )
    r = rent(4, price_usd_per_hour=Uniform(8.0, 12.0), price_annual_change=Uniform(-0.2, 0.0))
    m = model(
        b,
        r,
        horizon_months=36,
        discount_rate=0.08,
        samples=2048,
        seed=5,
        method=method,
        utilisation=(0.2, 0.5, 0.8),
        correlations=(("buy.electricity_usd_per_kwh", "rent.price_annual_change", 0.4),),
    )
    sim = simulate(m)
    result = summarise(sim)
    u = result.sensitivity.utilisation
    target = sim.buy_tco(u) - sim.rent_tco(u)
    got = {d.input: d.spearman for d in result.sensitivity.inputs}
    assert len(got) == 6
    for name, rho in got.items():
        draws = np.broadcast_to(sim.draws[name], target.shape)
        assert rho == pytest.approx(stats.spearmanr(draws, target).statistic, abs=1e-12), name
        np.testing.assert_array_equal(input_ranks(sim, name), stats.rankdata(draws))


def test_pearson_of_centred_ranks_beyond_one_blas_block_equals_scipy():
    # 25,001 draws: three blocks of the dot product (10,000 + 10,000 + 5,001), added exactly;
    # with ties (a discrete input) and against a gap that depends on it
    rng = np.random.default_rng(8)
    x = rng.choice([1.0, 2.0, 3.0], 25_001)
    y = 2.0 * x + rng.standard_normal(25_001)
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    got = pearson(centred(rx.copy()), centred(ry))  # centred in place
    assert got == pytest.approx(stats.spearmanr(x, y).statistic, rel=1e-12)
    assert pearson(centred(rx), centred(np.ones(25_001))) == 0.0  # a constant: no correlation


def test_lhs_ranks_are_the_permutation():
    # one replicate (500 draws): each draw's stratum is its rank; in replicates (512 draws and
    # more) a stratum is a rank within its replicate only, so none is known
    drawn = sample(["a", "b", "c"], 500, seed=2, method="lhs")
    for name in "abc":
        np.testing.assert_array_equal(drawn.ranks[name], stats.rankdata(drawn.q[name]) - 1)
    assert drawn.blocks == () and sample(["a"], 512, seed=2, method="lhs").ranks == {}


@pytest.mark.parametrize("n", [1, 2, 5, 15, 16, 17, 100, 1001, 10_000])
def test_selected_percentiles_equal_numpy(n):
    values = np.random.default_rng(n).normal(size=n)
    values[::7] = values[0]  # ties
    ordered = np.sort(values)
    want = []  # linear interpolation between order statistics, as sorting gives them
    for q in (0.1, 0.5, 0.9):
        lo = math.floor(q * (n - 1))
        frac = q * (n - 1) - lo
        want.append(ordered[lo] + frac * (ordered[min(lo + 1, n - 1)] - ordered[lo]))
    got = percentiles(values.copy())
    np.testing.assert_array_equal([got["p10"], got["p50"], got["p90"]], want)
    np.testing.assert_allclose(want, np.percentile(values, [10, 50, 90]), rtol=1e-14)


def test_selected_percentiles_touching_infinity_are_nan():
    values = np.concatenate([np.arange(80.0), np.full(20, np.inf)])
    got = percentiles(values)
    assert got["p10"] == pytest.approx(9.9) and got["p50"] == pytest.approx(49.5)
    assert math.isnan(got["p90"])  # between 79 and inf


@pytest.mark.parametrize(
    "a, b", [(3.0, 2.2), (1.3, 4.7), (1.01, 4.99), (4.99, 1.01), (1.5, 1.5), (2.0, 4.0)]
)
def test_tabulated_beta_inverse_matches_betaincinv(a, b):
    q = np.random.default_rng(1).random(200_000)
    q[:4] = (1e-300, 1e-9, 1 - 1e-9, 0.5)
    got = _beta_ppf(a, b, q)
    want = special.betaincinv(a, b, q)
    np.testing.assert_allclose(got, want, rtol=2e-12, atol=1e-300)
