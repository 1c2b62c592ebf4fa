"""The owned side as it is: downtime and spares, loans and leases (docs/model.md).

The worked table of the owned side reproduced through a scenario document to 1e-6 relative;
the missing GPUs against a brute-force Poisson sum; a loan that costs what cash costs when its
rate is the discount rate; a lease against cash plus the resale it gives up; payback and the
cumulative cost of financed builds against a month-by-month loop; drawn rates against fixed
ones draw by draw; and a build without downtime computed as it always was.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import scenarios
from costmodel import simulate, summarise
from costmodel.cashflows import BuyDraws, Terms, buy_line
from costmodel.distributions import Fixed, Uniform
from costmodel.downtime import availability, missing_gpus
from costmodel.fleet import simulate_plan
from costmodel.inputs import Financing
from present import from_dict, to_dict
from tests.helpers import buy, model, rent

EXAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "examples"

# --------------------------------------------------------------------------- the worked table

#: 36 months at 8 %, tax 25 %, straight line over 5 years; 8 GPUs at 25,000 USD, platform
#: 50,000, setup 5,000; AFR 9 %, 14 days of repair; an 8-GPU instance at 24 USD/h, -15 %/year.
SECTION = {
    "version": 1,
    "name": "owned-side-worked-example",
    "horizon_months": 36,
    "discount_rate": 0.08,
    "tax_rate": 0.25,
    "utilisation": [0.5, 1.0],
    "simulation": {"samples": 1, "seed": 1, "method": "random"},
    "buy": {
        "gpu": {"name": "module", "memory_gb": 80, "tdp_w": 700, "price_usd": 25000},
        "gpu_count": 8,
        "gpu_price_usd": 25000,
        "platform_price_usd": 50000,
        "setup_usd": 5000,
        "gpu_power_w": 700,
        "gpu_idle_w": 100,
        "platform_power_w": 2000,
        "powered_when_idle": True,
        "electricity_usd_per_kwh": 0.10,
        "electricity_annual_change": 0,
        "pue": 1.3,
        "hosting_usd_per_kw_month": 150,
        "maintenance_rate": 0.05,
        "gpu_annual_failure_rate": 0.09,
        "repair_days": 14,
        "admin_usd_per_month": 500,
        "resale_annual_decay": 0.30,
        "relative_throughput": 5.0,
        "scaling_efficiency": 1,
        "thermal_derate": 1,
    },
    "rent": {
        "instance": {
            "name": "8-GPU instance",
            "gpu": "v100-sxm2-16gb",
            "gpu_count": 8,
            "on_demand_usd_per_hour": 24,
        },
        "pricing": "on_demand",
        "price_usd_per_hour": 24,
        "price_annual_change": -0.15,
        "relative_throughput": 5.0,
        "scaling_efficiency": 1,
    },
}
LOAN_36 = {"kind": "loan", "rate": 0.10, "term_months": 36, "down_payment_share": 0.2}
LOAN_60 = {"kind": "loan", "rate": 0.10, "term_months": 60}
LEASE = {"kind": "lease", "monthly_rate": 0.032, "term_months": 36}

# Row "cash, no spare" by hand: mu = 8 * 0.09 * 14 / 365 = 0.0276164 GPU in repair, none
# covered, A = 1 - 0.0276164 / 8 = 0.99654795. The instance does 8 * 5 = 40 reference
# GPU-hours an hour, as the build does at A = 1, so at u = 0.5 it is rented 0.5 * 730 * A =
# 363.74 h a month at 24 USD * 0.85^((m-1)/12), after tax 0.75, discounted at 8 %: 168,733.04.
# Buying: HW = 8 * 25,000 + 50,000 = 250,000, C0 = 255,000; at u = 0.5 the build draws
# (8 * (0.5 * 700 + 0.5 * 100) + 2,000) / 1000 = 5.2 kW, energy 5.2 * 730 * 1.3 * 0.10 =
# 493.48 USD a month, hosting 150 * 7.6 kW peak = 1,140, maintenance 0.05 * 250,000 / 12 =
# 1,041.67, failures 0.09 * 200,000 / 12 = 1,500, admin 500: opex 4,675.15 USD a month;
# depreciation 255,000 / 60 = 4,250 a month, BV = 255,000 - 36 * 4,250 = 102,000; resale
# R = 250,000 * 0.7^3 = 85,750. TCO = 255,000 + sum_m (0.75 * 4,675.15 - 0.25 * 4,250) d_m
# - (85,750 - 0.25 * (85,750 - 102,000)) d_36 = 262,013.36.
WORKED = [
    # financing, spares, availability, TCO_buy at 0.5, TCO_rent at 0.5, TCO_buy at 1, at 1
    (None, 0, 0.99654795, 262013.3577, 168733.0443, 267486.9996, 337466.0886),
    (None, 1, 0.99995277, 279088.9817, 169309.5407, 284562.6236, 338619.0814),
    (LOAN_36, 1, 0.99995277, 278352.1658, 169309.5407, 283825.8077, 338619.0814),
    (LOAN_60, 1, 0.99995277, 277831.7830, 169309.5407, 283305.4248, 338619.0814),
    (LEASE, 1, 0.99995277, 330280.3424, 169309.5407, 335753.9842, 338619.0814),
]


def _section(financing: dict | None = None, spares: int = 0, **buy_changes) -> dict:
    doc = copy.deepcopy(SECTION)
    doc["buy"] |= buy_changes
    if spares:
        doc["buy"]["spare_gpus"] = spares
    if financing is not None:
        doc["buy"]["financing"] = dict(financing)
    return doc


@pytest.mark.parametrize("financing, spares, a, buy_half, rent_half, buy_full, rent_full", WORKED)
def test_the_worked_table_through_a_document(
    financing, spares, a, buy_half, rent_half, buy_full, rent_full
):
    result = to_dict(scenarios.evaluate(_section(financing, spares)))
    # the table prints 8 and 4 decimals: 1e-6 relative is the contract's tolerance
    assert result["availability"] == pytest.approx(dict.fromkeys(("mean", "p10", "p50", "p90"), a))
    assert result["buy_tco"]["mean"] == pytest.approx([buy_half, buy_full], rel=1e-6)
    assert result["rent_tco"]["mean"] == pytest.approx([rent_half, rent_full], rel=1e-6)


def test_the_first_row_by_hand():
    # the arithmetic of the comment above WORKED, term by term
    d = 1.08 ** (-np.arange(1, 37) / 12)
    mu = 8 * 0.09 * 14 / 365
    a = 1 - mu / 8
    rent_half = np.sum(0.5 * 730 * a * 24 * 0.85 ** (np.arange(36) / 12) * 0.75 * d)
    opex = 5.2 * 730 * 1.3 * 0.10 + 150 * 7.6 + 0.05 * 250_000 / 12 + 0.09 * 200_000 / 12 + 500
    salvage = (85_750 - 0.25 * (85_750 - 102_000)) * d[-1]
    buy_half = 255_000 + np.sum((0.75 * opex - 0.25 * 4_250) * d) - salvage
    assert (a, buy_half, rent_half) == pytest.approx(WORKED[0][2:5], rel=1e-6)


# --------------------------------------------------------------------------- downtime


def _brute_force(mu: float, spares: int) -> float:
    """sum_k (k - s)+ P(X = k) over every k with any weight, one term at a time."""
    top = int(mu + 40 * math.sqrt(mu) + 60)
    k = np.arange(spares + 1, top)
    return math.fsum((k - spares) * stats.poisson.pmf(k, mu))


@pytest.mark.parametrize("mu", [1e-4, 0.0276, 0.128, 0.552, 3.0, 25.0])
@pytest.mark.parametrize("spares", [0, 1, 2, 5])
def test_missing_gpus_against_the_poisson_sum(mu, spares):
    want = _brute_force(mu, spares)
    assert missing_gpus(mu, spares) == pytest.approx(want, rel=1e-12, abs=0)
    if want > 1e-6:  # where the documented form keeps its digits, it is the same number
        design = mu - spares + sum((spares - k) * stats.poisson.pmf(k, mu) for k in range(spares))
        assert design == pytest.approx(want, rel=1e-9)


def test_missing_gpus_per_draw_is_each_draws_value():
    mu = np.array([0.0, 1e-3, 0.552, 7.0])
    got = missing_gpus(mu, 2)
    assert got.shape == (4,) and got[0] == 0.0
    np.testing.assert_allclose(got[1:], [_brute_force(m, 2) for m in mu[1:]], rtol=1e-12)


def test_a_pooled_spare_in_a_fleet():
    # 20 servers of 8 such GPUs: mu = 160 * 0.09 * 14 / 365 = 0.552; one spare leaves 0.128
    mu = 160 * 0.09 * 14 / 365
    assert missing_gpus(mu, 0) == pytest.approx(0.552, abs=5e-4)
    assert missing_gpus(mu, 1) == pytest.approx(0.128, abs=5e-4)
    assert availability(160, 0.09, 14.0, 1) == pytest.approx(1 - missing_gpus(mu, 1) / 160)
    assert availability(0, 0.09, 14.0, 1) == 1.0  # no GPUs, none missing


def test_availability_over_drawn_repair_days():
    doc = _section(repair_days={"dist": "uniform", "low": 7, "high": 30}, spares=1)
    doc["simulation"] = {"samples": 400, "seed": 3, "method": "lhs"}
    sim = simulate(scenarios.load_mapping(doc).resolved.inputs)
    days = sim.draws["buy.repair_days"]
    each = 1 - missing_gpus(8 * 0.09 * days / 365, 1) / 8
    np.testing.assert_allclose(sim.availability, each, rtol=1e-13)
    band = summarise(sim).availability
    assert band.mean == pytest.approx(each.mean(), rel=1e-13)
    assert (band.p10, band.p50, band.p90) == pytest.approx(
        tuple(np.percentile(each, [10, 50, 90])), rel=1e-13
    )
    # the work, and with it renting, follows each draw's availability
    np.testing.assert_allclose(sim.own_throughput, 40 * each, rtol=1e-13)


def test_availability_round_trips_and_is_absent_without_downtime():
    result = scenarios.evaluate(_section(spares=1))
    data = to_dict(result)
    assert from_dict(data).availability == result.availability
    assert "availability" not in to_dict(scenarios.evaluate(_section(repair_days=0)))


def test_no_downtime_and_cash_change_no_number():
    # repair_days 0 and an explicit cash purchase give the result of a document without them,
    # to the bit, the resolved document and its assumptions included
    plain = copy.deepcopy(SECTION)
    del plain["buy"]["repair_days"]
    base = to_dict(scenarios.evaluate(plain))
    same = to_dict(scenarios.evaluate(_section({"kind": "cash"}, repair_days=0)))
    for key in (
        "buy_tco",
        "rent_tco",
        "payback_months",
        "breakeven_utilisation",
        "cumulative_cost",
    ):
        assert same[key] == base[key]
    assert "availability" not in same and "availability" not in base
    given = {"buy.repair_days", "buy.financing.kind"}
    assert {a["key"] for a in same["assumptions"]} - {
        a["key"] for a in base["assumptions"]
    } == given


def test_spares_are_hardware_without_power_or_failures():
    # at zero rates and no downtime one spare adds its price, less its resale, and its
    # maintenance: 25,000 * (1 - 0.7^3) + 0.05 * 25,000 * 3
    doc = _section(repair_days=0)
    doc["discount_rate"] = doc["tax_rate"] = 0.0
    one = scenarios.evaluate({**doc, "buy": {**doc["buy"], "spare_gpus": 1}}).buy_tco.mean
    none = scenarios.evaluate(doc).buy_tco.mean
    np.testing.assert_allclose(one - none, 25_000 * (1 - 0.7**3) + 0.05 * 25_000 * 3, rtol=1e-12)


# --------------------------------------------------------------------------- financing


def _fixed(b) -> BuyDraws:
    """The one draw of a build whose inputs are all fixed."""
    values = {k: d.support()[0] for k, d in model(b, rent()).distributions().items()}
    return BuyDraws.sampled(b, values)


def _build(financing: Financing, **kw):
    """8 GPUs at 25,000 USD, a 50,000 USD platform, 5,000 USD setup, 5 % maintenance,
    500 USD/month admin, resale losing 30 % a year; no power unless given."""
    prices = {"gpu_price_usd": 25_000, "platform_price_usd": 50_000, "setup_usd": 5_000}
    costs = {"maintenance_rate": 0.05, "admin_usd_per_month": 500, "resale_annual_decay": 0.3}
    b = buy(8, **prices, **costs, **kw)
    return dataclasses.replace(b, financing=financing)


def _owned(financing: Financing) -> BuyDraws:
    return _fixed(_build(financing))


@pytest.mark.parametrize("term, down", [(24, 0.0), (36, 0.2), (60, 0.0), (120, 0.5)])
@pytest.mark.parametrize("rate", [0.0, 0.06, 0.18])
def test_a_loan_at_the_discount_rate_costs_what_cash_costs(term, down, rate):
    # no tax and r = (1 + i)^12 - 1: the payments, and a balance settled early, are worth the
    # principal at present value
    effective = (1 + rate / 12) ** 12 - 1
    terms = Terms(36, effective, 0.0)
    loan = Financing(kind="loan", rate=rate, term_months=term, down_payment_share=down)
    cash = buy_line(_owned(Financing()), terms)
    financed = buy_line(_owned(loan), terms)
    assert financed.at_zero == pytest.approx(cash.at_zero, rel=1e-9)
    assert financed.per_u == cash.per_u


@pytest.mark.parametrize("term", [36, 48])
def test_a_lease_at_one_over_its_term_costs_cash_plus_the_resale_given_up(term):
    # zero rates: the lease pays HW over its term, as cash pays it at once, and resells nothing
    terms = Terms(36, 0.0, 0.0)
    lease = Financing(kind="lease", monthly_rate=1 / term, term_months=term)
    cash = buy_line(_owned(Financing()), terms)
    leased = buy_line(_owned(lease), terms)
    resale = 250_000 * 0.7**3
    assert leased.at_zero == pytest.approx(cash.at_zero + resale, rel=1e-12)


def _loop(b: BuyDraws, rate: float, tax: float, horizon: int, u: float, rent_month: float):
    """Cumulative buy and rent cost by month 0..H, month by month: what the financing owes
    (a loan's payments and balance, a lease's every payment), less the depreciation shield,
    plus the running costs; rent is a flat ``rent_month`` a month."""
    f = b.financing
    hw = 8 * 25_000 + 50_000
    c0 = hw + 5_000
    d = (1 + rate) ** (-np.arange(horizon + 1) / 12)
    opex = u * 8 * 700 / 1000 * 730 * 0.1 + 0.05 * hw / 12 + 500
    basis = 5_000 if f.kind == "lease" else c0
    buy_by_month, rent_by_month, shield, running = [], [], 0.0, 0.0
    balance, paid = (1 - f.down_payment_share) * c0, f.down_payment_share * c0
    if f.kind == "loan":
        i, n = f.rate / 12, f.term_months
        pmt = balance * i / (1 - (1 + i) ** -n) if i else balance / n
    for m in range(horizon + 1):
        if m:
            shield += tax * basis / 60 * d[m]
            running += (1 - tax) * opex * d[m]
        if f.kind == "loan":
            if 0 < m <= f.term_months:
                interest = balance * i
                balance -= pmt - interest
                paid += (pmt - tax * interest) * d[m]
            owed = paid + max(balance, 0.0) * d[m]
        elif f.kind == "lease":
            months = np.arange(1, f.term_months + 1)
            owed = 5_000 + math.fsum(f.monthly_rate * hw * (1 - tax) * (1 + rate) ** (-months / 12))
        else:
            owed = c0
        buy_by_month.append(owed - shield + running)
        rent_by_month.append(math.fsum(rent_month * (1 - tax) * d[1 : m + 1]))
    return np.array(buy_by_month), np.array(rent_by_month)


FINANCED = [
    Financing(),
    Financing(kind="loan", rate=0.10, term_months=24, down_payment_share=0.2),
    Financing(kind="loan", rate=0.07, term_months=60),
    Financing(kind="loan", rate=0.0, term_months=12),
    Financing(kind="lease", monthly_rate=0.03, term_months=48),
]


@pytest.mark.parametrize("financing", FINANCED, ids=lambda f: f"{f.kind}-{f.term_months}")
def test_payback_and_cumulative_cost_count_what_is_owed(financing):
    # an 8-GPU build against a flat 20,000 USD a month of renting, 36 months at 8 %, tax 25 %
    b = _build(financing, gpu_power_w=700, electricity_usd_per_kwh=0.1, powered_when_idle=False)
    r = rent(1, price_usd_per_hour=20_000 / (730 * 8))  # 20,000 USD a month at u = 1
    inputs = model(b, r, horizon_months=36, discount_rate=0.08, tax_rate=0.25,
                   utilisation=(0.5, 1.0), report_utilisation=1.0)  # fmt: skip
    sim = simulate(inputs)
    want_buy, want_rent = _loop(_fixed(b), 0.08, 0.25, 36, 1.0, 20_000)
    np.testing.assert_allclose(sim.cum_buy[:, 0], want_buy, rtol=1e-12)
    np.testing.assert_allclose(sim.cum_rent[:, 0], want_rent, rtol=1e-12)
    f = want_buy - want_rent
    month = int(np.argmax(f <= 0))
    assert 0 < month < 36, "the case must pay back within the horizon"
    want = month - 1 + f[month - 1] / (f[month - 1] - f[month])
    assert sim.payback[1, 0] == pytest.approx(want, rel=1e-10)
    # the TCO is the cost by the horizon less the resale after tax on its gain over book value
    # (a lease resells nothing and writes off the setup's book value)
    leased = financing.kind == "lease"
    resale, book = (0.0, 5_000 * 0.4) if leased else (250_000 * 0.7**3, 255_000 * 0.4)
    salvage = (resale - 0.25 * (resale - book)) * 1.08**-3
    assert sim.buy_tco(1.0)[0] == pytest.approx(want_buy[-1] - salvage, rel=1e-12)


@pytest.mark.parametrize(
    "financing",
    [
        Financing(kind="loan", rate=Uniform(0.02, 0.2), term_months=24, down_payment_share=0.1),
        Financing(kind="loan", rate=Uniform(0.0, 0.3), term_months=60),
        Financing(kind="lease", monthly_rate=Uniform(0.02, 0.04), term_months=36),
    ],
    ids=["loan-24", "loan-60", "lease"],
)
def test_drawn_rates_give_each_draw_what_its_fixed_rate_gives(financing):
    b = dataclasses.replace(
        buy(4, gpu_price_usd=2_000, platform_price_usd=3_000, setup_usd=500, gpu_power_w=350,
            electricity_usd_per_kwh=0.2, resale_annual_decay=0.3),
        financing=financing,
    )  # fmt: skip
    r = rent(1, price_usd_per_hour=3.0)
    inputs = model(b, r, horizon_months=36, discount_rate=0.08, tax_rate=0.25,
                   utilisation=(0.25, 0.5, 1.0), samples=6, method="random", seed=5)  # fmt: skip
    sim = simulate(inputs)
    name = "buy.financing.rate" if financing.kind == "loan" else "buy.financing.monthly_rate"
    field = name.rpartition(".")[2]
    for k, value in enumerate(sim.draws[name]):
        fixed = dataclasses.replace(financing, **{field: Fixed(float(value))})
        one = simulate(dataclasses.replace(inputs, buy=dataclasses.replace(b, financing=fixed),
                                           samples=1))  # fmt: skip
        assert sim.buy_tco(0.5)[k] == pytest.approx(one.buy_tco(0.5)[0], rel=1e-12)
        np.testing.assert_allclose(sim.payback[:, k], one.payback[:, 0], rtol=1e-12)
        np.testing.assert_allclose(sim.cum_buy[:, k], one.cum_buy[:, 0], rtol=1e-12)


# --------------------------------------------------------------------------- documents


def _problems(doc: dict) -> list[dict]:
    with pytest.raises(scenarios.ScenarioError) as err:
        scenarios.load_mapping(doc)
    return err.value.errors


def test_each_kind_of_financing_takes_its_own_keys():
    errors = _problems(_section({"kind": "lease", "rate": 0.1}))
    assert {e["path"]: e["message"] for e in errors} == {
        "buy.financing.monthly_rate": "required for a lease",
        "buy.financing.term_months": "required for a lease",
        "buy.financing.rate": "only for a loan, not for lease",
    }
    assert [e["path"] for e in _problems(_section({"rate": 0.1}))] == ["buy.financing.kind"]


def test_a_drawn_loan_rate_is_an_input_like_any_other():
    doc = _section({**LOAN_36, "rate": {"dist": "uniform", "low": 0.06, "high": 0.14}})
    doc["buy"]["pue"] = {"dist": "uniform", "low": 1.2, "high": 1.4}
    doc["correlations"] = [["buy.financing.rate", "buy.pue", 0.5]]
    doc["simulation"] = {"samples": 200, "seed": 2, "method": "lhs"}
    result = scenarios.evaluate(doc)
    assert "buy.financing.rate" in {d.input for d in result.sensitivity.inputs}
    rate = next(a for a in result.assumptions if a.key == "buy.financing.rate")
    assert rate.value == {"dist": "uniform", "low": 0.06, "high": 0.14}
    again = scenarios.evaluate(doc)
    np.testing.assert_array_equal(again.buy_tco.p50, result.buy_tco.p50)  # same seed, same result


# --------------------------------------------------------------------------- plans


def _plan(**own) -> dict:
    doc = scenarios.load_file(EXAMPLES / "plan-worked-example.yaml").document
    doc = copy.deepcopy(doc)
    del doc["reserve"]  # owned servers and on-demand burst: the month loop below
    doc["own"] |= own
    return doc


def _plan_by_hand(servers: int, spare_share: float, repair_days: float, g: float = 1500.0) -> float:
    """A plan candidate's cost (no reservation, no tax) month by month, from the plan's
    equations: the pooled spares s = ceil(share * S * N), A(S) from the Poisson sum, owned
    capacity C = S * 730 * T_srv * A(S), each server's opex at u_m = A_m / C, the spares'
    price and maintenance, resale of servers and spares, on-demand burst for the rest; GPUs
    of ``g`` [USD] each."""
    n, hw = 2, 2 * g + 2500.0
    spares = math.ceil(spare_share * servers * n - 1e-9)
    mu = servers * n * 0.02 * repair_days / 365
    a = 1 - _brute_force(mu, spares) / (servers * n) if servers else 1.0
    capacity = servers * 730 * (2 * 1.0 * 0.95 * 0.9) * a
    total = servers * (hw + 200) + spares * g
    for m in range(1, 37):
        d = 1.08 ** (-m / 12)
        work = 2000 * 1.5 ** ((m - 1) / 12)
        owned = min(work, capacity)
        u = owned / capacity if servers else 0.0
        kw = (n * (u * 350 + (1 - u) * 30) + 150) / 1000
        opex = kw * 730 * 1.3 * 0.15 * 1.03 ** ((m - 1) / 12) + 0.05 * hw / 12
        opex += 0.02 * n * g / 12 + 50
        burst = (work - owned) * 3.06 * 0.9 ** ((m - 1) / 12)
        total += (servers * opex + spares * 0.05 * g / 12 + burst) * d
    return total - (servers * hw + spares * g) * 0.65**3 * 1.08**-3


@pytest.mark.parametrize("share, days", [(0.0, 30.0), (0.1, 30.0), (0.25, 60.0)])
def test_a_plan_pools_its_spares_and_sizes_capacity_with_their_availability(share, days):
    result = scenarios.evaluate(_plan(spare_share=share, repair_days=days))
    for c in result.candidates:
        assert c.cost.mean == pytest.approx(_plan_by_hand(c.servers, share, days), rel=1e-10)
        spares = math.ceil(share * c.servers * 2 - 1e-9)
        mu = c.servers * 2 * 0.02 * days / 365
        want = 1 - _brute_force(mu, spares) / (c.servers * 2) if c.servers else 1.0
        assert c.availability == pytest.approx(want, rel=1e-12)
    assert result.all_cloud.availability == 1.0


def test_pooled_spares_of_an_uncertain_gpu_price_cost_each_draw_its_own():
    # the spares' cost is then one per draw: each draw's cost is the hand sum at its own price
    price = {"dist": "discrete", "values": [1500, 3000], "weights": [1, 1]}
    doc = _plan(gpu_price_usd=price, spare_share=0.25, repair_days=30.0)
    doc["simulation"] = {"samples": 8, "seed": 1, "method": "random"}
    sim = simulate_plan(scenarios.load_mapping(doc).inputs)
    g = sim.draws["own.gpu_price_usd"]
    assert set(g.tolist()) == {1500.0, 3000.0}
    for j, servers in enumerate(sim.servers.tolist()):
        want = [_plan_by_hand(servers, 0.25, 30.0, x) for x in g.tolist()]
        assert sim.cost[j] == pytest.approx(want, rel=1e-10)


def test_a_pooled_spare_covers_a_fleet_as_it_covers_its_gpus():
    # 20 servers of 8 GPUs at 9 %/year, 14 days: mu = 0.552; one spare (ceil(0.005 * 160))
    # leaves 0.128 of a GPU missing
    doc = _plan(gpu_count=8, gpu_annual_failure_rate=0.09, repair_days=14, spare_share=0.005,
                servers={"min": 20, "max": 20}, platform_price_usd=50_000)  # fmt: skip
    (fleet,) = scenarios.evaluate(doc).candidates
    assert fleet.availability == pytest.approx(1 - missing_gpus(160 * 0.09 * 14 / 365, 1) / 160)
    assert (1 - fleet.availability) * 160 == pytest.approx(0.128, abs=5e-4)


def test_a_plan_without_downtime_is_as_it_was():
    plan = _plan()
    base = to_dict(scenarios.evaluate(plan))
    same = to_dict(
        scenarios.evaluate(_plan(repair_days=0, spare_share=0, financing={"kind": "cash"}))
    )
    assert same["candidates"] == base["candidates"] and "availability" not in same["best"]
    assert same["work_split"] == base["work_split"]


def test_a_financed_fleet_costs_its_servers_financed():
    # a loan adds to each server what it adds to the TCO of one build, whatever the load
    loan = {"kind": "loan", "rate": 0.1, "term_months": 24, "down_payment_share": 0.2}
    plans = [scenarios.load_mapping(_plan(**f)) for f in ({}, {"financing": loan})]
    cash, financed = (scenarios.evaluate(p).candidates for p in plans)
    terms = Terms(36, 0.08, 0.0)
    lines = [buy_line(_fixed(p.inputs.own), terms).at_zero for p in plans]
    per_server = lines[1] - lines[0]
    assert per_server > 0.0
    for f, c in zip(financed, cash, strict=True):
        assert f.cost.mean - c.cost.mean == pytest.approx(f.servers * per_server, abs=1e-6)


def test_a_plan_takes_spare_share_not_spare_gpus():
    errors = _problems(_plan(spare_gpus=1))
    assert [e["path"] for e in errors] == ["own.spare_gpus"]
    assert [e["path"] for e in _problems(_plan(spare_share=1.5))] == ["own.spare_share"]
    lease = {"kind": "lease", "monthly_rate": 0.03, "term_months": 24}
    errors = _problems(_plan(financing=lease))
    assert (
        errors == [{"path": "own.financing.term_months", "message": errors[0]["message"]}]
        and "at least the horizon (36 months)" in errors[0]["message"]
    )
    note = next(a for a in scenarios.load_mapping(_plan(spare_share=0.1)).assumptions
                if a.key == "own.spare_share")  # fmt: skip
    assert note.value == 0.1 and note.source == "plan"


def test_the_reports_name_the_spares_financing_and_gpus_in_service():
    from present.reports.context import report_context

    facts = dict(report_context(scenarios.evaluate(_section(LOAN_36, spares=1)), {})["facts"])
    assert facts["Buy"] == (
        "8 × module + 1 spare, a 36-month loan at 10 %/year, 20 % down, 99.995 % of GPUs in service"
    )
    lease = {**LEASE, "monthly_rate": {"dist": "uniform", "low": 0.03, "high": 0.034}}
    facts = dict(report_context(scenarios.evaluate(_section(lease, repair_days=0)), {})["facts"])
    assert facts["Buy"] == "8 × module, leased at 3–3.4 %/month for 36 months"


def test_the_plan_table_and_json_carry_availability_only_with_downtime():
    from present.reports.plan_tables import candidates_table

    down = scenarios.evaluate(_plan(repair_days=14, spare_share=0.25))
    table = candidates_table(down)
    column = table.headers.index("GPUs in service")
    one = next(i for i, c in enumerate(down.candidates) if c.servers == 1)
    # 1 server, 2 GPUs, 1 pooled spare: mu = 2 * 0.02 * 14 / 365, A = 1 - E[(X - 1)+] / 2
    assert (
        table.rows[one][column] == f"{(1 - _brute_force(2 * 0.02 * 14 / 365, 1) / 2) * 100:.5g} %"
    )
    data = to_dict(down)
    assert from_dict(data).candidates == down.candidates
    assert ("availability", [c.availability for c in down.candidates]) in down.columns()
    flat = scenarios.evaluate(_plan())
    assert "GPUs in service" not in candidates_table(flat).headers
    assert "availability" not in dict(flat.columns())
