"""Monte Carlo properties: closed-form cases, seeds, stream independence, LHS marginals."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from costmodel import simulate, summarise
from costmodel.distributions import (
    Discrete,
    Fixed,
    LogNormal,
    Normal,
    Pert,
    Triangular,
    Uniform,
)
from costmodel.engine import draw
from costmodel.sampling import gaussian_copula, sample, stream
from present import to_dict
from tests.helpers import buy, model, rent


def _uncertain_model(method="lhs", samples=4000, seed=7, **extra):
    b = buy(
        4,
        gpu_price_usd=Pert(900, 1000, 1300),
        platform_price_usd=3000,
        gpu_power_w=250,
        gpu_idle_w=20,
        platform_power_w=300,
        electricity_usd_per_kwh=Uniform(0.08, 0.3),
        pue=Triangular(1.0, 1.2, 1.6),
        resale_annual_decay=Normal(0.25, 0.05, 0.05, 0.6),
        **extra,
    )
    r = rent(
        4,
        price_usd_per_hour=12.24,
        price_annual_change=Discrete((-0.2, 0.0), (0.3, 0.7)),
        relative_throughput=1.4,
    )
    return model(
        b,
        r,
        horizon_months=36,
        discount_rate=0.08,
        samples=samples,
        seed=seed,
        method=method,
        utilisation=(0.1, 0.5, 1.0),
    )


def test_all_fixed_percentiles_coincide_and_equal_the_equations():
    one = to_dict(
        summarise(
            simulate(
                model(
                    buy(2, platform_price_usd=5000, admin_usd_per_month=30),
                    rent(price_usd_per_hour=1.5),
                    samples=1,
                )
            )
        )
    )
    many = to_dict(
        summarise(
            simulate(
                model(
                    buy(2, platform_price_usd=5000, admin_usd_per_month=30),
                    rent(price_usd_per_hour=1.5),
                    samples=257,
                    method="lhs",
                )
            )
        )
    )
    for side in ("buy_tco", "rent_tco"):
        for k in ("mean", "p10", "p50", "p90"):
            assert many[side][k] == pytest.approx(one[side]["p50"], rel=1e-12)
    be = many["breakeven_utilisation"]
    assert be["p10"] == be["p50"] == be["p90"] == pytest.approx(one["breakeven_utilisation"]["p50"])


@pytest.mark.parametrize("method", ["random", "lhs", "sobol"])
def test_same_seed_same_numbers_different_seed_different_draws(method):
    a = to_dict(summarise(simulate(_uncertain_model(method, samples=512))))
    b = to_dict(summarise(simulate(_uncertain_model(method, samples=512))))
    c = to_dict(summarise(simulate(_uncertain_model(method, samples=512, seed=8))))
    assert a == b
    assert a["buy_tco"]["p50"] != c["buy_tco"]["p50"]


@pytest.mark.parametrize("method", ["random", "lhs"])
def test_adding_an_uncertain_input_leaves_other_draws_unchanged(method):
    base, _ = draw(_uncertain_model(method))
    more, _ = draw(_uncertain_model(method, admin_usd_per_month=Uniform(10, 200)))
    assert not np.all(more["buy.admin_usd_per_month"] == more["buy.admin_usd_per_month"][0])
    for name, values in base.items():
        if name != "buy.admin_usd_per_month":
            np.testing.assert_array_equal(values, more[name], err_msg=name)


def test_lhs_strata_hold_one_draw_each():
    drawn = sample(["a", "b"], 500, seed=3, method="lhs")
    for name, values in drawn.q.items():
        assert np.all((values > 0) & (values < 1))
        np.testing.assert_array_equal(np.sort(np.floor(values * 500)), np.arange(500))
        # the stratum permutation is each draw's rank
        np.testing.assert_array_equal(np.argsort(np.argsort(values)), drawn.ranks[name])
    # 1,000 draws: 16 replicates, 8 of 63 and 8 of 62, each a Latin hypercube of its own
    drawn = sample(["a", "b"], 1000, seed=3, method="lhs")
    assert drawn.blocks == (63,) * 8 + (62,) * 8
    for values in drawn.q.values():
        for part in np.split(values, np.cumsum(drawn.blocks)[:-1]):
            m = part.size
            np.testing.assert_array_equal(np.sort(np.floor(part * m)), np.arange(m))


@pytest.mark.parametrize("method, n", [("random", 700), ("lhs", 300), ("lhs", 1000)])
def test_draws_are_the_streams_bounded_integers(method, n):
    # The sampler reads each name's stream as its definition does, replicate by replicate: an
    # LHS replicate of m draws is a permutation of 0..m-1, then m integers in [0, 2**53)
    # (numpy's rng.integers), q = (stratum + (k + 0.5) / 2**53) / m; random is the integers
    # alone. Any change in how the stream is read would move every seed's result.
    drawn = sample(["a", "b"], n, seed=11, method=method)
    for name in ("a", "b"):
        rng = stream(11, name)
        if method == "random":
            expected = (rng.integers(0, 2**53, size=n, dtype=np.int64) + 0.5) / 2**53
        else:
            parts = []
            for m in drawn.blocks or (n,):
                perm = rng.permutation(m)
                k = rng.integers(0, 2**53, size=m, dtype=np.int64)
                parts.append((perm + (k + 0.5) * 2.0**-53) / m)
            expected = np.concatenate(parts)
        np.testing.assert_array_equal(drawn.q[name], expected, err_msg=name)


@pytest.mark.parametrize(
    "dist, cdf",
    [
        (Uniform(2, 5), stats.uniform(2, 3).cdf),
        (Triangular(1, 1.2, 1.6), stats.triang(1 / 3, loc=1, scale=0.6).cdf),
        (Pert(900, 1000, 1300), stats.beta(1 + 4 * 100 / 400, 1 + 4 * 300 / 400, 900, 400).cdf),
        (Normal(0.25, 0.05, 0.05, 0.6), stats.truncnorm(-4, 7, 0.25, 0.05).cdf),
        (
            LogNormal(median=0.12, p90=0.2),
            stats.lognorm(np.log(0.2 / 0.12) / stats.norm.ppf(0.9), scale=0.12).cdf,
        ),
    ],
)
def test_lhs_marginals_pass_ks(dist, cdf):
    q = sample(["x"], 5000, seed=11, method="lhs").q["x"]
    assert stats.kstest(dist.ppf(q), cdf).pvalue > 0.05


def test_distribution_parameters():
    assert LogNormal(median=2.0, p90=3.0).ppf(np.array([0.5, 0.9])) == pytest.approx([2.0, 3.0])
    ln = LogNormal(mean=10.0, sd=4.0)
    mean = stats.lognorm(ln.sigma, scale=np.exp(ln.mu)).mean()
    assert mean == pytest.approx(10.0)
    # beta-PERT mean = (low + 4*mode + high)/6 = (900 + 4000 + 1300)/6 = 1033.33
    q = (np.arange(200_000) + 0.5) / 200_000
    assert Pert(900, 1000, 1300).ppf(q).mean() == pytest.approx(6200 / 6, rel=1e-4)
    d = Discrete((-0.2, 0.0), (0.3, 0.7)).ppf(np.array([0.1, 0.29, 0.31, 0.9]))
    assert list(d) == [-0.2, -0.2, 0.0, 0.0]


def test_one_monotone_input_quantiles_map_through():
    # TCO_buy increases with the electricity price and nothing else is uncertain, so the
    # P10/P50/P90 of TCO are the TCO evaluated at the P10/P50/P90 of the sampled prices.
    b = buy(
        4,
        platform_price_usd=3000,
        gpu_power_w=250,
        gpu_idle_w=20,
        platform_power_w=300,
        electricity_usd_per_kwh=LogNormal(median=0.12, p90=0.2, high=10.0),
    )
    m = model(
        b,
        rent(price_usd_per_hour=3.0),
        horizon_months=36,
        discount_rate=0.05,
        samples=2001,
        method="random",
        utilisation=(0.6,),
    )
    sim = simulate(m)
    prices = sim.draws["buy.electricity_usd_per_kwh"]
    for q in (0.1, 0.5, 0.9):
        at = dataclasses.replace(
            m,
            samples=1,
            buy=dataclasses.replace(
                b, electricity_usd_per_kwh=Fixed(float(np.quantile(prices, q)))
            ),
        )
        assert np.quantile(sim.buy_tco(0.6), q) == pytest.approx(
            simulate(at).buy_tco(0.6)[0], rel=1e-9
        )


def test_rank_correlation_is_induced_in_a_latin_hypercube():
    # the copula on 5,000 LHS draws (16 replicates): the targets within 0.03, marginals uniform
    out = gaussian_copula(
        sample(["a", "b", "c"], 5000, seed=5, method="lhs"), [("a", "b", 0.6), ("b", "c", -0.3)]
    ).q
    assert stats.spearmanr(out["a"], out["b"]).statistic == pytest.approx(0.6, abs=0.03)
    assert stats.spearmanr(out["b"], out["c"]).statistic == pytest.approx(-0.3, abs=0.03)
    for k in out:
        assert stats.kstest(out[k], "uniform").pvalue > 0.001


@pytest.mark.parametrize("rho", [0.6, 0.95, -0.5])
def test_rank_correlation_hits_the_requested_spearman(rho):
    # The target is Spearman rho; used as the Pearson r of the normal scores it would come out
    # as (6/pi)*asin(rho/2): 0.582, 0.945, -0.483. The standard error of Spearman's rho at
    # n = 200,000 is about (1 - rho^2)/sqrt(n) < 0.0023, so 0.005 is two standard errors.
    out = gaussian_copula(sample(["a", "b"], 200_000, seed=11, method="lhs"), [("a", "b", rho)]).q
    assert stats.spearmanr(out["a"], out["b"]).statistic == pytest.approx(rho, abs=0.005)


@pytest.mark.parametrize("poison", [1.5, np.nan])
def test_fixed_inputs_take_their_one_value(monkeypatch, poison):
    # A discrete with a zero weight on 2.0, and a uniform with low == high, are point masses:
    # over 20,000 draws the discrete never yields 2.0 and the uniform never NaN. np.empty is
    # poisoned (as uninitialised memory may be) so that reading it anywhere would show.
    empty = np.empty

    def poisoned(*args, **kwargs):
        out = empty(*args, **kwargs)
        if out.dtype.kind == "f":
            out.fill(poison)
        return out

    monkeypatch.setattr(np, "empty", poisoned)
    m = _uncertain_model(
        samples=20_000,
        gpu_annual_failure_rate=Discrete((0.01, 0.02), (1.0, 0.0)),
        maintenance_rate=Uniform(0.05, 0.05),
    )
    draws, _ = draw(m)
    np.testing.assert_array_equal(draws["buy.gpu_annual_failure_rate"], 0.01)
    np.testing.assert_array_equal(draws["buy.maintenance_rate"], 0.05)


def test_chunking_does_not_change_numbers(monkeypatch):
    whole = simulate(_uncertain_model(samples=300))
    monkeypatch.setattr("costmodel.engine._CHUNK_ELEMENTS", 36 * 7)  # 7 draws per chunk
    chunked = simulate(_uncertain_model(samples=300))
    np.testing.assert_array_equal(whole.payback, chunked.payback)
    np.testing.assert_array_equal(whole.breakeven, chunked.breakeven)
    np.testing.assert_array_equal(whole.cum_buy, chunked.cum_buy)
    np.testing.assert_array_equal(whole.cum_rent, chunked.cum_rent)


@settings(max_examples=40, deadline=None)
@given(
    e_low=st.floats(0.01, 0.5),
    e_extra=st.floats(0.0, 0.5),
    price=st.floats(0.1, 40.0),
    capex=st.floats(0.0, 200_000.0),
    tau=st.floats(0.0, 0.5),
)
def test_outcomes_stay_in_their_ranges(e_low, e_extra, price, capex, tau):
    b = buy(
        4,
        platform_price_usd=capex,
        gpu_power_w=300,
        gpu_idle_w=30,
        electricity_usd_per_kwh=Uniform(e_low, e_low + e_extra),
    )
    m = model(
        b,
        rent(price_usd_per_hour=price),
        horizon_months=24,
        tax_rate=tau,
        samples=64,
        utilisation=(0.0, 0.3, 1.0),
    )
    sim = simulate(m)
    be = sim.breakeven
    assert np.all((be >= 0) & (be <= 1) | np.isinf(be))
    assert np.all((sim.payback >= 0) & (sim.payback <= 24) | np.isinf(sim.payback))
    # buying more hours never makes the owned side cheaper; renting more hours costs more
    buy_tco = np.column_stack([sim.buy_tco(u) for u in m.utilisation])
    rent_tco = np.column_stack([sim.rent_tco(u) for u in m.utilisation])
    assert np.all(np.diff(buy_tco, axis=1) >= -1e-6)
    assert np.all(np.diff(rent_tco, axis=1) >= -1e-6)
    # at the break-even utilisation the two sides cost the same
    finite = np.isfinite(be) & (be > 0)
    if finite.any():
        i = int(np.argmax(finite))
        one = dataclasses.replace(
            m,
            samples=1,
            utilisation=(float(be[i]),),
            buy=dataclasses.replace(
                b,
                electricity_usd_per_kwh=Fixed(
                    float(np.broadcast_to(sim.draws["buy.electricity_usd_per_kwh"], (64,))[i])
                ),
            ),
        )
        s1 = simulate(one)
        u = float(be[i])
        assert s1.buy_tco(u)[0] == pytest.approx(s1.rent_tco(u)[0], rel=1e-9, abs=1e-6)


def test_sensitivity_ranks_the_driving_input_first():
    # electricity is the only input that moves TCO_buy - TCO_rent monotonically upward, so its
    # rank correlation is exactly +1; the cloud price change moves the rent side only (a higher
    # change raises rent, so buy - rent falls: negative rho) but over a narrow range.
    b = buy(
        4,
        platform_price_usd=3000,
        gpu_power_w=250,
        gpu_idle_w=20,
        platform_power_w=300,
        electricity_usd_per_kwh=Uniform(0.05, 0.5),
    )
    m = model(
        b,
        rent(price_usd_per_hour=3.0, price_annual_change=Uniform(-0.01, 0.0)),
        horizon_months=36,
        samples=2000,
        utilisation=(0.2, 0.6),
    )
    only = model(
        b, rent(price_usd_per_hour=3.0), horizon_months=36, samples=2000, utilisation=(0.6,)
    )
    one = to_dict(summarise(simulate(only)))["sensitivity"]
    assert one["inputs"] == [{"input": "buy.electricity_usd_per_kwh", "spearman": 1.0}]
    two = to_dict(summarise(simulate(m)))["sensitivity"]
    assert two["utilisation"] == 0.6 and two["metric"] == "buy_tco - rent_tco"
    assert [r["input"] for r in two["inputs"]] == [
        "buy.electricity_usd_per_kwh",
        "rent.price_annual_change",
    ]
    assert two["inputs"][0]["spearman"] > 0.9 and two["inputs"][1]["spearman"] < 0
    fixed = to_dict(summarise(simulate(model(buy(platform_price_usd=1), rent(), samples=50))))
    assert fixed["sensitivity"]["inputs"] == []
