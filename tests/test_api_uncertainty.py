"""What decides buying against a hosted API: the sensitivity, tornado and value of information of
TCO_buy - TCO_api (``Result.rivals``), and the API's line in the cumulative cost by month."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import scenarios
from costmodel import Fixed, simulate, summarise
from costmodel.distributions import Discrete, Uniform
from costmodel.inputs import ApiInputs, CarbonInputs, HostedCarbon, OwnedCarbon, RentedCarbon
from costmodel.result import CatalogRef
from costmodel.uncertainty import median_interval
from present import Answer, from_dict, to_dict
from present.formatting import fmt_margin
from tests.helpers import buy, model, rent

EXAMPLE = "scenarios/examples/inference-70b-fp8-h100.yaml"


def _api(a_in, a_out=1.0) -> ApiInputs:
    """An API at ``a_in`` USD per M input and ``a_out`` per M output tokens, requests of one
    token in and one out: the blended price a = (a_in + a_out)/2; no cache, no price change."""

    def dist(x):
        return Fixed(x) if isinstance(x, float) else x

    return ApiInputs(
        input_usd_per_mtok=dist(a_in),
        output_usd_per_mtok=dist(a_out),
        input_tokens=1,
        output_tokens=1,
    )


def _model(api_price=None, rent_price=1.0, e=0.2, a_out=1.0, **kw):
    """TCO_buy(u) = 1000 + 8760*e*u (a 1 kW GPU doing 1 M tokens an hour, busy u of 12 months
    of 730 h, no idle draw, no resale, no discounting); TCO_rent(u) = 8760*p*u and
    TCO_api(u) = u*730*1*a*12 = 8760*a*u, a = (api_price + a_out)/2:
    gap_api(u) = 1000 + 8760*u*(e - a). ``api_price`` defaults to U(0.95, 1.05)."""
    api_price = Uniform(0.95, 1.05) if api_price is None else api_price
    return model(
        buy(1, gpu_price_usd=1000, gpu_power_w=1000, electricity_usd_per_kwh=e),
        rent(price_usd_per_hour=rent_price),
        api=_api(api_price, a_out),
        unit="million_tokens",
        samples=kw.pop("samples", 1000),
        utilisation=(0.25, 0.5, 0.75),
        report_utilisation=0.5,
        **kw,
    )


def _result(inputs):
    """The answer of ``inputs``, with a catalog reference as a scenario's has (to load back)."""
    return Answer(summarise(simulate(inputs)), catalog=CatalogRef("test", "2026-01-01"))


def test_an_input_that_moves_only_the_api_price_drives_only_buy_versus_api():
    res = _result(_model())
    (api,) = res.rivals
    assert api.versus == "api" and res.rival("api") is api
    assert api.sensitivity.metric == "buy_tco - api_tco"
    assert res.sensitivity.metric == "buy_tco - rent_tco"
    # The buy-rent gap is the same in every draw: no rank correlation at all.
    assert [(d.input, d.spearman) for d in res.sensitivity.inputs] == [
        ("api.input_usd_per_mtok", 0.0)
    ]
    # Against the API the gap 1000 + 4380*(0.2 - a) falls as the price rises, draw by draw:
    # a rank correlation of -1.
    ((name, rho),) = [(d.input, d.spearman) for d in api.sensitivity.inputs]
    assert name == "api.input_usd_per_mtok"
    assert rho == pytest.approx(-1.0, abs=1e-12)


def test_a_second_input_separates_the_two_rivals():
    # The cloud price drives buy-rent alone, the API price buy-API alone: each input's rank
    # correlation with its own rival's gap is -1, with the other's only chance (|r| < 0.1 at
    # 2,000 draws, over 4 standard deviations of 1/sqrt(2000) = 0.022).
    res = _result(_model(api_price=Uniform(0.5, 1.5), rent_price=Uniform(0.5, 1.5), samples=2000))
    rent_sens = {d.input: d.spearman for d in res.sensitivity.inputs}
    api_sens = {d.input: d.spearman for d in res.rival("api").sensitivity.inputs}
    assert rent_sens["rent.price_usd_per_hour"] == pytest.approx(-1.0, abs=1e-12)
    assert res.sensitivity.inputs[0].input == "rent.price_usd_per_hour"
    assert abs(rent_sens["api.input_usd_per_mtok"]) < 0.1
    assert abs(api_sens["rent.price_usd_per_hour"]) < 0.1
    assert res.rival("api").sensitivity.inputs[-1].input == "rent.price_usd_per_hour"


def test_the_tornado_against_the_api_by_hand():
    # e ~ U(0.1, 0.3): P10 0.12, P50 0.20, P90 0.28; a_in ~ U(0.95, 1.05): 0.96, 1.00, 1.04
    res = _result(_model(e=Uniform(0.1, 0.3)))
    t = res.rival("api").tornado
    # medians e = 0.2, a = 1.0: gap_api(0.5) = 1000 - 4380*0.8 = -2504, u* = 1000/(8760*0.8)
    assert t.utilisation == 0.5
    assert t.gap_at_median == pytest.approx(-2504.0, rel=1e-12)
    assert t.breakeven_at_median == pytest.approx(0.1426940639, rel=1e-9)
    bars = {bar.input: bar for bar in t.inputs}
    e, a = bars["buy.electricity_usd_per_kwh"], bars["api.input_usd_per_mtok"]
    # e: -2854.4 -> -2153.6 (swing 700.8); the input price a_in from 0.96 to 1.04 moves the
    # blend a = (a_in + 1)/2 from 0.98 to 1.02: 1000 - 4380*(a - 0.2) = -2416.4 -> -2591.6
    assert (e.gap_at_low, e.gap_at_high) == pytest.approx((-2854.4, -2153.6), rel=1e-12)
    assert (a.gap_at_low, a.gap_at_high) == pytest.approx((-2416.4, -2591.6), rel=1e-12)
    # u* at a = 0.98: 1000/(8760*0.78) = 0.1463529; at 1.02: 1000/(8760*0.82) = 0.1392137
    assert a.breakeven_at_low == pytest.approx(0.1463528861, rel=1e-9)
    assert a.breakeven_at_high == pytest.approx(0.1392137209, rel=1e-9)
    assert [bar.input for bar in t.inputs] == [
        "buy.electricity_usd_per_kwh",
        "api.input_usd_per_mtok",
    ]
    # Against renting (fixed at 1 USD/h) the API price moves nothing.
    flat = next(bar for bar in res.tornado.inputs if bar.input == "api.input_usd_per_mtok")
    assert flat.gap_at_low == flat.gap_at_high == res.tornado.gap_at_median
    assert flat.breakeven_at_low == flat.breakeven_at_high


def test_evpi_against_the_api_by_hand():
    # The input price is 0.20 USD per M tokens (40 %) or 1.00 (60 %), the output price 0.20,
    # every other input fixed, e = 0.2: the blend a = (a_in + 0.2)/2 is 0.2 or 0.6 and
    # gap_api(0.5) = 1000 + 4380*(0.2 - a) is +1000 (the API is cheaper) or
    # 1000 - 4380*0.4 = -752. E gap = 0.4*1000 - 0.6*752 = -51.2 < 0: without knowing a one
    # buys; knowing it one takes the API when a = 0.2 and saves 1000 there, so
    # EVPI = mean of max(0, gap) = 0.4*1000 + 0.6*0 = 400 USD. A Latin hypercube of 500 draws
    # (one replicate) puts exactly 200 of them at 0.20. Renting at 1 USD/h is dearer in every
    # draw: EVPI 0.
    res = _result(
        _model(api_price=Discrete((0.2, 1.0), (0.4, 0.6)), a_out=0.2, method="lhs", samples=500)
    )
    voi = res.rival("api").value_of_information
    assert voi.utilisation == 0.5
    assert voi.evpi == pytest.approx(400.0, rel=1e-12)
    (only,) = voi.by_input
    assert only.input == "api.input_usd_per_mtok"
    assert only.evppi == pytest.approx(400.0, rel=1e-12)  # one bin per value: exact
    assert res.value_of_information.evpi == 0.0


def test_the_api_voi_sentence_names_an_input_only_above_one_percent_of_the_evpi():
    # The case above: EVPI 400 USD, all of it the input price's. Scaled to 3 USD (below 1 %
    # of the EVPI, which would read "worth up to $3" beside noise), the input goes unnamed.
    from present.reports.uncertainty import rival_voi_sentence

    res = _result(
        _model(api_price=Discrete((0.2, 1.0), (0.4, 0.6)), a_out=0.2, method="lhs", samples=500)
    )
    text = rival_voi_sentence(res, "api")
    assert text.endswith(
        "would save $400 on average; the API's input price alone is worth up to $400."
    )
    rival = res.rival("api")
    voi = rival.value_of_information
    (only,) = voi.by_input
    small = dataclasses.replace(voi, by_input=(dataclasses.replace(only, evppi=3.0),))
    res = dataclasses.replace(
        res.result, rivals=(dataclasses.replace(rival, value_of_information=small),)
    )
    assert rival_voi_sentence(res, "api").endswith("would save $400 on average.")


def test_evpi_against_the_api_is_the_mean_of_the_positive_gaps_on_the_draws():
    # Whatever the draws, with E gap < 0 EVPI = mean of max(0, gap); here from the draws' own
    # lines, gap = TCO_buy - TCO_api at u = 0.5.
    m = _model(api_price=Uniform(0.1, 1.3), samples=500, seed=5)
    sim = simulate(m)
    g = sim.buy_tco(0.5) - sim.api.tco(0.5)
    assert g.mean() < 0
    assert summarise(sim).rival("api").value_of_information.evpi == pytest.approx(
        float(np.maximum(g, 0.0).mean()), rel=1e-12
    )


def _check_cumulative_end(res) -> None:
    cum = res.cumulative_cost
    j = res.level(cum.utilisation)
    for s in ("p10", "p50", "p90"):
        assert getattr(cum["api"], s)[-1] == pytest.approx(getattr(res.api_tco, s)[j], rel=1e-9)
    assert cum["api"].p50[0] == 0.0


def test_the_api_cumulative_line_ends_at_its_tco():
    _check_cumulative_end(scenarios.evaluate(EXAMPLE, samples=3000))


def test_the_api_cumulative_line_carries_its_priced_carbon():
    # A carbon price with the API's emissions known: month H is TCO_api with its carbon.
    c = CarbonInputs(
        buy=OwnedCarbon(grid=Fixed(400.0), embodied_kg_co2e=Fixed(500.0)),
        rent=RentedCarbon(
            grid=Fixed(300.0), pue=Fixed(1.2), power_kw=Fixed(1.0), embodied_kg_co2e=Fixed(0.0)
        ),
        api=HostedCarbon(g_co2e_per_mtok=Uniform(100, 900)),
        usd_per_tonne=Uniform(50, 200),
    )
    m = _model(api_price=Uniform(0.5, 1.5), samples=500, carbon=c, discount_rate=0.08)
    m = dataclasses.replace(m, horizon_months=24, tax_rate=0.2)
    res = _result(m)
    _check_cumulative_end(res)
    unpriced = _result(dataclasses.replace(m, carbon=None))
    assert res.cumulative_cost["api"].p50[-1] > unpriced.cumulative_cost["api"].p50[-1]
    assert simulate(m).carbon.api is not None


def test_same_seed_same_output_and_the_json_round_trips():
    m = _model(api_price=Uniform(0.5, 1.5), rent_price=Uniform(0.5, 1.5), samples=800, seed=3)
    one, two = (to_dict(_result(m)) for _ in range(2))
    assert one["rivals"] == two["rivals"]
    assert one["cumulative_cost"] == two["cumulative_cost"]
    assert [r["versus"] for r in one["rivals"]] == ["api"]
    assert set(one["rivals"][0]) == {
        "versus",
        "sensitivity",
        "tornado",
        "value_of_information",
        "convergence",
    }
    assert to_dict(from_dict(one)) == one
    # a result stored before the rival's convergence existed loads and is written back as it was
    old = {**one, "rivals": [{k: v for k, v in one["rivals"][0].items() if k != "convergence"}]}
    assert from_dict(old).rival("api").convergence is None
    assert to_dict(from_dict(old)) == old


def test_the_precision_against_the_api_is_that_of_its_break_even_gap_and_probability():
    # gap_api(u) = 1000 + 8760*u*(e - a) with a = (x + 1)/2, x ~ U(0.95, 1.05): per draw the
    # break-even is 1000/(8760*(a - 0.2)), in [0.1384, 0.1473]; the gap's standard deviation at
    # u is 8760*u*sd(a) = 8760*u*0.1/sqrt(12)/2, so at u = 0.5 its mean's standard error over
    # n = 1000 draws is 4380*0.0144338/sqrt(1000) = 1.99916 USD.
    m = _model(samples=1000, seed=5, method="random")
    sim = simulate(m)
    res = summarise(sim)
    c = res.rival("api").convergence
    assert c.breakeven_p50_ci95 == median_interval(np.array(sim.breakeven_api))
    assert 0.1384 < c.breakeven_p50_ci95[0] < res.breakeven_vs_api.p50 < c.breakeven_p50_ci95[1]
    assert c.breakeven_p50_ci95[1] < 0.1473
    for j, u in enumerate((0.25, 0.5, 0.75)):
        gap = np.asarray(sim.buy.tco(u)) - np.asarray(sim.api.tco(u))
        assert c.gap_mean_se[j] == pytest.approx(gap.std(ddof=1) / np.sqrt(1000), rel=1e-9)
        p = res.prob_buy_cheaper_than_api[j]
        assert c.prob_buy_cheaper_se[j] == pytest.approx(np.sqrt(p * (1 - p) / 1000), abs=1e-15)
    # (random draws: s of 1,000 draws lies within 3 x 1/sqrt(2000) = 6.7 % of sigma)
    assert c.gap_mean_se[1] == pytest.approx(
        4380 * 0.1 / np.sqrt(12) / 2 / np.sqrt(1000), rel=0.067
    )
    # the rent break-even is 1000/(8760*0.8) = 0.142694 in every draw: an interval of width 0
    assert res.convergence.breakeven_p50_halfwidth == 0.0


def test_a_target_halfwidth_doubles_the_draws_until_the_break_even_against_the_api_meets_it():
    # Renting's break-even is exact (0 wide), so only the API's keeps the draws doubling: at 100
    # draws its median's interval spans about 20 of the draws' ranks over a range of 0.009.
    m = _model(samples=100, seed=2, target_halfwidth=0.0002, method="random")
    res = summarise(simulate(m))
    c = res.rival("api").convergence
    assert res.samples > 100 and c.samples == res.samples and c.initial_samples == 100
    assert c.met is True and c.breakeven_p50_halfwidth <= 0.0002
    assert res.convergence.met is True and res.convergence.breakeven_p50_halfwidth == 0.0
    # and one doubling less would not have met it
    fewer = summarise(
        simulate(dataclasses.replace(m, samples=res.samples // 2, target_halfwidth=None))
    )
    assert fewer.rival("api").convergence.breakeven_p50_halfwidth > 0.0002


def test_the_cli_and_reports_give_the_precision_against_the_api(no_charts):
    import io

    from rich.console import Console

    from cli.tables import print_result
    from present.reports import render

    res = _result(_model(samples=1000, seed=5))
    c = res.rival("api").convergence
    margin = fmt_margin(res.breakeven_vs_api.p50, c.breakeven_p50_halfwidth)
    line = f"Break-even vs the API P50 {margin} (95 % interval, 1,000 draws)."
    out = io.StringIO()
    print_result(res, Console(file=out, width=10_000, color_system=None))
    assert line in out.getvalue()
    md = render(res, "md").decode("utf-8").replace("\\", "")
    assert line in md and md.index("### Against the API") < md.index(line)
    assert 'id="precision-api"' in render(res, "html").decode("utf-8")


def test_a_target_missed_against_the_api_is_a_warning_naming_the_api():
    from scenarios.advice import convergence_advice

    res = summarise(simulate(_model(samples=100, seed=2, target_halfwidth=0.0002, max_samples=400)))
    c = res.rival("api").convergence
    assert c.met is False and c.samples == 400
    (advice,) = convergence_advice(c, "api")
    assert advice.code == "convergence"
    assert advice.message.startswith("the 95 % interval of the break-even P50 against the API is ")
    assert convergence_advice(res.convergence) == ()  # renting's is exact


def test_a_result_without_an_api_has_no_rivals_and_no_api_line():
    res = _result(dataclasses.replace(_model(), api=None, unit="reference_gpu_hour"))
    assert res.rivals == () and res.rival("api") is None
    assert res.rival("rent").tornado is res.tornado
    data = to_dict(res)
    assert "rivals" not in data and "api" not in data["cumulative_cost"]
    assert to_dict(from_dict(data)) == data


def test_reports_show_the_swings_against_the_api_only_with_one(no_charts):
    from present.reports import render

    with_api = scenarios.evaluate(EXAMPLE, samples=500)
    text = render(with_api, "html").decode("utf-8")
    assert "Against the API" in text and "Buy − API at 50 %" in text
    assert 'class="tornado-api"' in text and "value-of-information-api" in text
    top = with_api.rival("api").tornado.inputs[0].input
    assert text.index(top, text.index('class="tornado-api"')) > 0
    without = render(scenarios.evaluate("tests/fixtures/golden.yaml", samples=500), "html")
    assert b"Against the API" not in without and b"tornado-api" not in without
