"""The hosted API as a third side (a rent line of one unit of work an hour at the blended price
per million tokens), checked against the worked inference example of the model guide: 8 GPUs at
2,500 tokens/s each, an 8-GPU instance at 24 USD/h and an API at 0.60 in / 0.80 out USD per M
tokens, 36 months at 8 %, no tax."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from costmodel import Fixed
from costmodel.cashflows import model_lines
from costmodel.engine import draw
from costmodel.inputs import ApiInputs, InputError
from costmodel.outcomes import breakeven_utilisation
from tests.helpers import buy, model, rent

REL = 1e-6
#: M tokens per GPU-hour: 2,500 tokens/s * 3,600 s / 1e6 = 9.
PER_GPU = 2500 * 3600 / 1e6

SERVER = buy(
    8,
    gpu_price_usd=25_000,
    platform_price_usd=50_000,
    setup_usd=5_000,
    gpu_power_w=700,
    gpu_idle_w=100,
    platform_power_w=2_000,
    electricity_usd_per_kwh=0.10,
    pue=1.3,
    hosting_usd_per_kw_month=150,
    maintenance_rate=0.05,
    gpu_annual_failure_rate=0.05,
    admin_usd_per_month=500,
    resale_annual_decay=0.30,
    relative_throughput=PER_GPU,
)
INSTANCE = rent(8, price_usd_per_hour=24, price_annual_change=-0.15, relative_throughput=PER_GPU)
API = ApiInputs(
    input_usd_per_mtok=Fixed(0.60),
    output_usd_per_mtok=Fixed(0.80),
    input_tokens=1000,
    output_tokens=1000,
    price_annual_change=Fixed(-0.30),
)
LEVELS = (0.0, 0.10, 0.25, 0.50, 1.00)
INPUTS = model(
    SERVER,
    INSTANCE,
    api=API,
    unit="million_tokens",
    horizon_months=36,
    discount_rate=0.08,
    utilisation=LEVELS,
)
#: The worked table: TCO_buy, TCO_rent, TCO_api [USD] and per M tokens buy / rent / api.
TABLE = {
    0.00: (308075.7492, 0.0, 0.0, None),
    0.10: (309535.3870, 45151.3434, 74956.4380, (1.635884, 0.238623, 0.396142)),
    0.25: (311724.8438, 112878.3585, 187391.0949, (0.658982, 0.238623, 0.396142)),
    0.50: (315373.9383, 225756.7170, 374782.1898, (0.333348, 0.238623, 0.396142)),
    1.00: (322672.1275, 451513.4339, 749564.3796, (0.170531, 0.238623, 0.396142)),
}


def _lines():
    values, _ = draw(INPUTS)
    return model_lines(INPUTS, values)


@pytest.mark.parametrize("u", LEVELS)
def test_the_worked_inference_table(u):
    lines = _lines()
    buy_tco, rent_tco, api_tco, per_mtok = TABLE[u]
    # u = 0.1, the API: 0.1 u * 730 h * 72 M tokens/h (8 GPUs x 9) = 5,256 M tokens a month at
    # p_api = (1000 * 0.60 + 1000 * 0.80) / 2000 = 0.70 USD, falling 30 %/year: 3,679.20 USD in
    # month 1, times sum_m 0.7^((m-1)/12) 1.08^(-m/12) = 20.3730 over 36 months = 74,956.44.
    assert float(lines.buy.tco(u)) == pytest.approx(buy_tco, rel=REL)
    assert float(lines.rent.tco(u)) == pytest.approx(rent_tco, rel=REL, abs=1e-9)
    assert float(lines.api.tco(u)) == pytest.approx(api_tco, rel=REL, abs=1e-9)
    if per_mtok is not None:
        work = u * 730 * 36 * float(lines.own)  # M tokens over the horizon
        got = [float(line.tco(u)) / work for line in (lines.buy, lines.rent, lines.api)]
        assert got == pytest.approx(per_mtok, abs=5e-7)  # the table's six decimals


def test_the_break_even_against_renting_and_against_the_api():
    lines = _lines()
    assert float(breakeven_utilisation(lines.buy, lines.rent, 1)[0]) == pytest.approx(
        0.7051127, rel=REL
    )
    assert float(breakeven_utilisation(lines.buy, lines.api, 1)[0]) == pytest.approx(
        0.4191689, rel=REL
    )


def test_a_scenario_without_an_api_has_no_api_line():
    values, _ = draw(model(SERVER, INSTANCE))
    assert model_lines(model(SERVER, INSTANCE), values).api is None


def test_the_cached_share_lowers_the_blended_price():
    # half the input from the cache at 0.06: input costs 0.5 * 0.60 + 0.5 * 0.06 = 0.33, so
    # p_api = (1000 * 0.33 + 1000 * 0.80) / 2000 = 0.565 USD per M tokens, 0.565 / 0.70 of before
    cached = ApiInputs(
        input_usd_per_mtok=Fixed(0.60),
        output_usd_per_mtok=Fixed(0.80),
        input_tokens=1000,
        output_tokens=1000,
        cached_input_share=Fixed(0.5),
        cached_input_usd_per_mtok=Fixed(0.06),
        price_annual_change=Fixed(-0.30),
    )
    m = model(
        SERVER, INSTANCE, api=cached, unit="million_tokens", horizon_months=36, discount_rate=0.08
    )
    values, _ = draw(m)
    got = float(model_lines(m, values).api.tco(1.0))
    assert got == pytest.approx(749564.3796 * 0.565 / 0.70, rel=REL)


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"input_tokens": 0, "output_tokens": 0}, "api.input_tokens"),
        ({"input_tokens": -1}, "api.input_tokens"),
        ({"cached_input_share": Fixed(1.5)}, "api.cached_input_share"),
        ({"output_usd_per_mtok": Fixed(-0.1)}, "api.output_usd_per_mtok"),
    ],
)
def test_bad_api_inputs_are_refused_at_their_path(changes, path):
    fields = {
        "input_usd_per_mtok": Fixed(0.6),
        "output_usd_per_mtok": Fixed(0.8),
        "input_tokens": 1000,
        "output_tokens": 1000,
        **changes,
    }
    with pytest.raises(InputError) as exc:
        ApiInputs(**fields)
    assert exc.value.path == path


def _result(inputs):
    from costmodel.engine import simulate, summarise

    return summarise(simulate(inputs))


def test_the_result_carries_the_api_side_of_the_worked_table():
    res = _result(INPUTS)
    assert res.unit == "million_tokens"
    assert res.sides == ("buy", "rent", "api")
    for j, u in enumerate(LEVELS):
        buy_tco, rent_tco, api_tco, per_mtok = TABLE[u]
        assert res.api_tco.p50[j] == pytest.approx(api_tco, rel=REL, abs=1e-9)
        # one draw: buying is cheaper than the API only where TCO_buy < TCO_api
        assert res.prob_buy_cheaper_than_api[j] == float(buy_tco < api_tco)
        # the cheapest of three: at u = 0 rent and the API both cost 0, a tie going to rent
        cheapest = min(range(3), key=lambda i: (buy_tco, rent_tco, api_tco)[i])
        shares = (
            res.cheapest_share["buy"][j],
            res.cheapest_share["rent"][j],
            res.cheapest_share["api"][j],
        )
        assert shares == tuple(float(i == cheapest) for i in range(3))
        if per_mtok is None:
            assert np.isnan(res.cost_per_unit["api"].p50[j])
        else:
            assert res.cost_per_unit["api"].p50[j] == pytest.approx(per_mtok[2], abs=5e-7)
    assert res.breakeven_vs_api.p50 == pytest.approx(0.4191689, rel=REL)
    assert res.breakeven_utilisation.p50 == pytest.approx(0.7051127, rel=REL)


def test_payback_against_the_api_is_that_of_renting_its_tokens():
    # The API is a rented "instance" of 1 M tokens an hour at p_api = 0.70 USD, -30 %/year:
    # paying back against it is paying back against such an instance, month by month.
    as_instance = rent(1, price_usd_per_hour=0.70, price_annual_change=-0.30)
    grid = (0.25, 0.5, 0.75, 1.0)
    with_api = _result(dataclasses.replace(INPUTS, utilisation=grid))
    renting = _result(dataclasses.replace(INPUTS, utilisation=grid, rent=as_instance, api=None))
    got, want = with_api.payback_vs_api_months, renting.payback_months
    np.testing.assert_array_equal(got.p50, want.p50)
    np.testing.assert_array_equal(got.prob_never, want.prob_never)
    assert np.isfinite(got.p50[-1]) and np.isnan(got.p50[0])  # pays back at u = 1, not 0.25


def test_a_result_without_an_api_has_no_api_outcomes():
    res = _result(dataclasses.replace(INPUTS, api=None, unit="reference_gpu_hour"))
    assert res.sides == ("buy", "rent")
    assert res.api_tco is None and res.cheapest_share is None and res.breakeven_vs_api is None
    assert res.cost_per_unit.get("api") is None and res.cost_per_unit.unit == "reference_gpu_hour"


def test_an_api_needs_tokens_as_the_unit():
    with pytest.raises(InputError) as exc:
        dataclasses.replace(INPUTS, unit="reference_gpu_hour")
    assert exc.value.path == "api"


def test_throughput_in_tokens_per_second_is_the_same_work_in_m_tokens_per_gpu_hour():
    # 2,500 tokens/s per GPU * 3,600 s / 1e6 = 9 M tokens per GPU-hour: the same lines
    in_tokens = dataclasses.replace(
        INPUTS,
        buy=dataclasses.replace(SERVER, relative_throughput=None, tokens_per_s_per_gpu=Fixed(2500)),
        rent=dataclasses.replace(
            INSTANCE, relative_throughput=None, tokens_per_s_per_gpu=Fixed(2500)
        ),
    )
    a, b = _lines(), model_lines(in_tokens, draw(in_tokens)[0])
    for u in LEVELS:
        for side in ("buy", "rent", "api"):
            got, want = float(getattr(b, side).tco(u)), float(getattr(a, side).tco(u))
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("given", [(), ("relative_throughput", "tokens_per_s_per_gpu")])
def test_a_side_gives_its_throughput_once(given):
    values = {"relative_throughput": None, "tokens_per_s_per_gpu": None}
    values |= {name: Fixed(9.0) for name in given}
    with pytest.raises(InputError) as exc:
        dataclasses.replace(SERVER, **values)
    assert exc.value.path == "buy.relative_throughput"


def test_tokens_per_second_need_tokens_as_the_unit():
    tokens = dataclasses.replace(SERVER, relative_throughput=None, tokens_per_s_per_gpu=Fixed(1))
    with pytest.raises(InputError) as exc:
        model(tokens, INSTANCE)
    assert exc.value.path == "buy.tokens_per_s_per_gpu"
