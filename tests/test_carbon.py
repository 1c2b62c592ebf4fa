"""Emissions beside cost (costmodel.carbon): the equations against hand computations, the
worked table, a carbon price folded into money, and no money figure moved without a price."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from costmodel import Fixed, InputError, simulate, summarise
from costmodel.carbon import carbon_values, emissions, priced_lines
from costmodel.cashflows import model_lines
from costmodel.distributions import Triangular, Uniform
from costmodel.engine import draw
from costmodel.inputs import ApiInputs, CarbonInputs, HostedCarbon, OwnedCarbon, RentedCarbon
from present import to_dict
from tests.helpers import _dists, buy, model, rent

REL = 1e-9
LEVELS = (0.0, 0.25, 0.5, 1.0)

# The carbon worked table of docs/model.md: the worked example with I_own 383.6 g/kWh falling
# 3 %/year, E_own 600 kg, L = 5 years; a rented V100 instance of 0.5 kW at PUE 1.14 on
# 367.8 g/kWh, E_inst 650 kg, L_p = 5 years; 100 USD/t.
KG_OWNED = [2993.4577, 4999.9017, 7006.3457, 11019.2337]
KG_RENTED = [0.0, 2522.0349, 5044.0698, 10088.1397]
TCO_BUY = [8267.1949, 9207.0192, 10146.8434, 12026.4919]
TCO_RENT = [640.8666, 27376.0392, 54111.2118, 107581.5569]
# Row u = 0.25, by hand:
#  owned: kW(0.25) = (2*(0.25*350 + 0.75*30) + 150)/1000 = 0.37 kW; a month at 383.6 g/kWh,
#   PUE 1.3: 0.37*730*1.3*383.6/1000 = 134.6925 kg; sum_{m=1..36} 0.97^((m-1)/12) = 34.447860;
#   134.6925*34.447860 = 4639.9017 kg, plus embodied 600*min(1, 36/60) = 360: 4999.9017 kg.
#  rented: hours_m = 0.25*730*1.71/1 = 312.075 h (T_own = 2*1.0*0.95*0.9 = 1.71);
#   312.075*0.5*1.14*367.8/1000 = 65.425275 kg + 312.075*650/(5*8760) = 4.63125 kg a month,
#   times 36 = 2522.0349 kg.
#  money: 27151.5548 + 0.1 USD/kg * 70.056525 kg * sum_m 1.08^(-m/12) (32.043331) = 27376.0392.


def _fixed(**kw) -> dict:
    return _dists(kw)


def _worked(price=100.0, **carbon) -> object:
    b = buy(
        2,
        gpu_price_usd=1500,
        platform_price_usd=2500,
        setup_usd=200,
        gpu_power_w=350,
        gpu_idle_w=30,
        platform_power_w=150,
        electricity_usd_per_kwh=0.15,
        electricity_annual_change=0.03,
        pue=1.3,
        maintenance_rate=0.05,
        gpu_annual_failure_rate=0.02,
        admin_usd_per_month=50,
        resale_annual_decay=0.35,
        scaling_efficiency=0.95,
        thermal_derate=0.9,
    )
    r = rent(1, price_usd_per_hour=3.06, price_annual_change=-0.10, storage_usd_per_month=20)
    c = CarbonInputs(
        buy=OwnedCarbon(**_fixed(grid=383.6, grid_annual_change=-0.03, embodied_kg_co2e=600)),
        rent=RentedCarbon(**_fixed(grid=367.8, pue=1.14, power_kw=0.5, embodied_kg_co2e=650)),
        usd_per_tonne=Fixed(price) if isinstance(price, float) else price,
        **carbon,
    )
    return model(b, r, horizon_months=36, discount_rate=0.08, utilisation=LEVELS, carbon=c)


def test_the_worked_table():
    result = to_dict(summarise(simulate(_worked())))
    carbon = result["carbon"]
    for k in ("mean", "p10", "p50", "p90"):
        assert carbon["buy"][k] == pytest.approx([x / 1000 for x in KG_OWNED], rel=1e-6)
        assert carbon["rent"][k] == pytest.approx([x / 1000 for x in KG_RENTED], rel=1e-6)
        assert result["buy_tco"][k] == pytest.approx(TCO_BUY, rel=1e-6)
        assert result["rent_tco"][k] == pytest.approx(TCO_RENT, rel=1e-6)
    assert "api" not in carbon and carbon["unknown"] == []


def test_per_unit_of_work():
    # u = 0.25: work = 0.25*730*36*1.71 = 11234.7 reference GPU-hours;
    # 4999.9017 kg / 11234.7 = 0.445042 kg = 445.042 g per reference GPU-hour
    per = to_dict(summarise(simulate(_worked())))["carbon"]["per_unit"]
    assert per["unit"] == "reference_gpu_hour"
    assert per["buy"]["p50"][0] is None  # no work at u = 0
    assert per["buy"]["p50"][1] == pytest.approx(4999.9017 * 1000 / 11234.7, rel=1e-6)
    assert per["rent"]["p50"][3] == pytest.approx(10088.1397 * 1000 / 44938.8, rel=1e-6)


def _one_month(**kw):
    """Every term in one month, no discounting: a 1-GPU build, 1000 W busy, 200 W idle, no
    platform, PUE 1.5; an instance of T_inst = 2 (twice the build's work)."""
    b = buy(1, gpu_power_w=1000, gpu_idle_w=200, pue=1.5)
    r = rent(1, relative_throughput=2.0)
    c = CarbonInputs(
        buy=OwnedCarbon(**_fixed(grid=400, embodied_kg_co2e=1200)),
        rent=RentedCarbon(**_fixed(grid=100, pue=1.2, power_kw=0.8, embodied_kg_co2e=876)),
        **kw,
    )
    return model(b, r, horizon_months=1, utilisation=(0.5,), carbon=c)


def test_one_month_of_each_term():
    m = _one_month(service_life_years=2, provider_service_life_years=4)
    values, _ = draw(m)
    e = emissions(m, values, model_lines(m, values))
    # owned at u = 0.5: kW = (0.5*1000 + 0.5*200)/1000 = 0.6; 0.6*730*1.5*400/1000 = 262.8 kg;
    # embodied 1200*min(1, 1/(12*2)) = 50 kg
    assert e.buy.kg(0.5) == pytest.approx(262.8 + 50.0, rel=REL)
    # rented: hours = 0.5*730*1/2 = 182.5 h; 182.5*0.8*1.2*100/1000 = 17.52 kg operational,
    # 182.5*876/(4*8760) = 4.5625 kg embodied
    assert e.rent.kg(0.5) == pytest.approx(17.52 + 4.5625, rel=REL)
    assert e.api is None


def test_the_embodied_share_stops_at_the_service_life():
    # 1 month of a 1-month life: all of it (min(1, 1/(12*(1/12))) = 1), not 12 times it
    m = _one_month(service_life_years=1 / 12)
    values, _ = draw(m)
    assert emissions(m, values, model_lines(m, values)).buy.kg(0.0) == pytest.approx(
        0.2 * 730 * 1.5 * 400 / 1000 + 1200, rel=REL
    )


def test_a_grid_change_applies_from_month_two():
    # 13 months at u = 0, idle 0.2 kW, 400 g/kWh falling 19 %/year: month 13 is 0.81 times
    # month 1; the sum is 87.6 kg * sum_{m=1..13} 0.81^((m-1)/12)
    b = buy(1, gpu_power_w=1000, gpu_idle_w=200, pue=1.0)
    c = CarbonInputs(
        buy=OwnedCarbon(**_fixed(grid=400, grid_annual_change=-0.19, embodied_kg_co2e=0)),
        rent=RentedCarbon(**_fixed(grid=0, pue=1, power_kw=0, embodied_kg_co2e=0)),
    )
    m = model(b, rent(), horizon_months=13, utilisation=(0.0,), carbon=c)
    values, _ = draw(m)
    got = emissions(m, values, model_lines(m, values)).buy.kg(0.0)
    month = 0.2 * 730 * 400 / 1000
    assert got == pytest.approx(month * sum(0.81 ** ((k - 1) / 12) for k in range(1, 14)), rel=REL)


def test_the_api_is_counted_only_where_its_emissions_are_given():
    b = buy(1, tokens_per_s_per_gpu=1000, relative_throughput=None)
    r = rent(1, tokens_per_s_per_gpu=1000, relative_throughput=None)
    api = ApiInputs(**_fixed(input_usd_per_mtok=1, output_usd_per_mtok=1), input_tokens=1,
                    output_tokens=1)  # fmt: skip
    owned = OwnedCarbon(**_fixed(grid=0, embodied_kg_co2e=0))
    rented = RentedCarbon(**_fixed(grid=0, pue=1, power_kw=0, embodied_kg_co2e=0))
    kw = {"horizon_months": 1, "utilisation": (0.0, 1.0), "unit": "million_tokens", "api": api}
    unknown = model(b, r, carbon=CarbonInputs(buy=owned, rent=rented), **kw)
    carbon = to_dict(summarise(simulate(unknown)))["carbon"]
    assert carbon["unknown"] == ["api"] and "api" not in carbon
    known = CarbonInputs(buy=owned, rent=rented, api=HostedCarbon(g_co2e_per_mtok=Fixed(500)))
    carbon = to_dict(summarise(simulate(model(b, r, carbon=known, **kw))))["carbon"]
    # 1000 tokens/s = 3.6 M tokens an hour; a month at u = 1: 730*3.6 = 2628 M tokens
    # at 500 g each = 1314 kg = 1.314 t
    assert carbon["api"]["mean"] == pytest.approx([0.0, 1.314], rel=REL)
    assert carbon["unknown"] == []


def test_a_reservation_counts_the_hours_used_not_those_committed():
    # 2 committed instances, the build's work fills a quarter of one at u = 0.25:
    # hours = 0.25*730*1/1 = 182.5 h a month; 182.5*1.0*1.0*1000/1000 = 182.5 kg, 12 months
    r = rent(
        1,
        pricing="reserved_1y",
        committed_instances=2,
        price_usd_per_hour=1.0,
        on_demand_price_usd_per_hour=2.0,
    )
    c = CarbonInputs(
        buy=OwnedCarbon(**_fixed(grid=0, embodied_kg_co2e=0)),
        rent=RentedCarbon(**_fixed(grid=1000, pue=1, power_kw=1, embodied_kg_co2e=0)),
        usd_per_tonne=Fixed(100.0),
    )
    m = model(buy(1), r, horizon_months=12, utilisation=(0.25, 1.0), carbon=c)
    values, _ = draw(m)
    assert emissions(m, values, model_lines(m, values)).rent.kg(0.25) == pytest.approx(182.5 * 12)
    # the priced line adds 0.1 USD/kg * 182.5 kg a month * 12, past the kink (u > 0.5) as below
    base, priced = model_lines(m, values).rent, priced_lines(m, values).rent
    for u in (0.25, 1.0):
        assert priced.tco(u) - base.tco(u) == pytest.approx(0.1 * 182.5 * 12 * u / 0.25, rel=REL)


def test_tax_applies_to_the_flows_not_to_the_embodied_carbon():
    # tau = 0.25, one month at u = 0: 0.1 USD/kg * (50 kg embodied + 0.75 * 87.6 kg operational)
    m = dataclasses.replace(_one_month(service_life_years=2), tax_rate=0.25)
    m = dataclasses.replace(m, carbon=dataclasses.replace(m.carbon, usd_per_tonne=Fixed(100.0)))
    values, _ = draw(m)
    moved = priced_lines(m, values).buy.tco(0.0) - model_lines(m, values).buy.tco(0.0)
    assert moved == pytest.approx(0.1 * (50 + 0.75 * 0.2 * 730 * 1.5 * 400 / 1000), rel=REL)


def _json(inputs) -> dict:
    out = to_dict(summarise(simulate(inputs)))
    out.pop("carbon", None)
    return out


@pytest.mark.parametrize("method", ["lhs", "random", "sobol"])
def test_without_a_price_no_money_figure_moves(method):
    """Bit for bit, with uncertain carbon inputs drawn beside uncertain costs."""
    base = _worked()
    uncertain = buy(**{**dict(base.buy.__dict__), "pue": Uniform(1.1, 1.5)})
    base = dataclasses.replace(base, buy=uncertain, samples=64, method=method)
    without = dataclasses.replace(base, carbon=None)
    grid = Triangular(300, 383.6, 500)
    c = dataclasses.replace(
        base.carbon,
        buy=dataclasses.replace(base.carbon.buy, grid=grid),
        usd_per_tonne=Fixed(0.0),
    )
    with_carbon = dataclasses.replace(base, carbon=c)
    assert json.dumps(_json(with_carbon)) == json.dumps(_json(without))
    result = to_dict(summarise(simulate(with_carbon)))["carbon"]
    assert result["buy"]["p10"][0] < result["buy"]["p90"][0]  # the grid is drawn


def test_unpriced_carbon_inputs_are_their_own_name_keyed_draws():
    m = dataclasses.replace(_worked(price=0.0), samples=50)
    c = dataclasses.replace(m.carbon, buy=dataclasses.replace(m.carbon.buy, grid=Uniform(0, 1)))
    m = dataclasses.replace(m, carbon=c)
    priced = dataclasses.replace(m, carbon=dataclasses.replace(c, usd_per_tonne=Uniform(0, 1)))
    apart = carbon_values(m)["buy.grid"]
    joint, _ = draw(priced)  # priced: drawn with the costs, from the same stream (LHS)
    np.testing.assert_array_equal(apart, joint["buy.grid"])
    assert carbon_values(priced) == {}


def test_draws_are_evaluated_one_by_one_as_fixed_inputs():
    m = dataclasses.replace(_worked(price=Uniform(0, 200)), samples=5, method="random")
    values, _ = draw(m)
    lines = priced_lines(m, values)
    for i in range(5):
        price = float(values["carbon.usd_per_tonne"][i])
        one = priced_lines(_worked(price=price), {**values, "carbon.usd_per_tonne": price})
        assert lines.buy.tco(0.5)[i] == pytest.approx(one.buy.tco(0.5), rel=1e-12)
        assert lines.rent.tco(0.5)[i] == pytest.approx(one.rent.tco(0.5), rel=1e-12)


def test_payback_with_a_price_meets_the_cumulative_cost():
    sim = simulate(dataclasses.replace(_worked(), utilisation=(0.5,)))
    f = sim.cum_buy[:, 0] - sim.cum_rent[:, 0]  # months 0..36 at u = 0.5, carbon included
    m = int(np.argmax(f <= 0))
    assert sim.payback[0, 0] == pytest.approx((m - 1) + f[m - 1] / (f[m - 1] - f[m]), rel=1e-9)
    unpriced = simulate(dataclasses.replace(_worked(price=0.0), utilisation=(0.5,)))
    # the embodied carbon is paid at month 0, before the rented side's carbon adds up
    assert sim.payback[0, 0] > unpriced.payback[0, 0]


def test_breakeven_with_a_price_is_where_the_priced_lines_cross():
    sim = simulate(_worked())
    u = float(sim.breakeven[0])
    assert sim.buy.tco(u) == pytest.approx(sim.rent.tco(u), rel=1e-9)


@pytest.mark.parametrize(
    ("side", "field", "value", "path"),
    [
        ("buy", "grid", -1.0, "buy.grid"),
        ("rent", "pue", 0.9, "rent.pue"),
        ("rent", "power_kw", -0.1, "rent.power_kw"),
        ("rent", "embodied_kg_co2e", -5.0, "rent.embodied_kg_co2e"),
    ],
)
def test_bad_carbon_inputs_name_their_key_path(side, field, value, path):
    kinds = {"buy": OwnedCarbon, "rent": RentedCarbon}
    good = {
        "buy": {"grid": 1, "embodied_kg_co2e": 1},
        "rent": {"grid": 1, "pue": 1, "power_kw": 1, "embodied_kg_co2e": 1},
    }[side]
    with pytest.raises(InputError) as err:
        kinds[side](**_fixed(**{**good, field: value}))
    assert err.value.path == path


def test_api_emissions_need_an_api_and_unpriced_carbon_is_not_correlated():
    c = _worked().carbon
    with pytest.raises(InputError, match="hosted API side only"):
        dataclasses.replace(
            _worked(), carbon=dataclasses.replace(c, api=HostedCarbon(g_co2e_per_mtok=Fixed(1)))
        )
    uncertain = dataclasses.replace(
        c, buy=dataclasses.replace(c.buy, grid=Uniform(300, 400)), usd_per_tonne=Fixed(0.0)
    )
    b = buy(**{**_worked().buy.__dict__, "pue": Uniform(1.1, 1.5)})
    pair = (("buy.pue", "buy.grid", 0.5),)
    with pytest.raises(InputError, match="drawn apart from the costs"):
        dataclasses.replace(_worked(), buy=b, carbon=uncertain, correlations=pair)
    priced = dataclasses.replace(uncertain, usd_per_tonne=Fixed(1.0))
    dataclasses.replace(_worked(), buy=b, carbon=priced, correlations=pair)  # accepted


def test_a_priced_line_through_the_origin_keeps_its_carbon_in_the_bands():
    # no storage: the rented TCO is a line through the origin, summarised once and scaled by u
    m = _worked()
    m = dataclasses.replace(m, rent=dataclasses.replace(m.rent, storage_usd_per_month=Fixed(0.0)))
    result = summarise(simulate(m))
    values, _ = draw(m)
    line = priced_lines(m, values).rent
    assert list(result.rent_tco.p50) == pytest.approx([line.tco(u) for u in LEVELS], rel=REL)
