"""Each equation of docs/model.md against a hand computation (arithmetic in the comments)."""

import numpy as np
import pytest

from costmodel import simulate, summarise
from costmodel.cashflows import MACRS5, BuyLine, RentLine, depreciation_schedule
from costmodel.outcomes import breakeven_utilisation
from present import to_dict
from tests.helpers import buy, model, rent

REL = 1e-9


def tco(m, j=0):
    """(TCO_buy, TCO_rent) of the first draw at utilisation level j."""
    sim = simulate(m)
    u = m.utilisation[j]
    return sim.buy_tco(u)[0], sim.rent_tco(u)[0]


def test_energy_powered_when_idle():
    # 2 GPUs at 300 W busy / 50 W idle, 100 W platform, u = 0.5:
    # kW = (2*(0.5*300 + 0.5*50) + 100)/1000 = (350 + 100)/1000 = 0.45 kW
    # one month: 0.45 kW * 730 h * PUE 1.5 * 0.20 USD/kWh = 98.55 USD
    b = buy(
        2,
        gpu_power_w=300,
        gpu_idle_w=50,
        platform_power_w=100,
        pue=1.5,
        electricity_usd_per_kwh=0.2,
    )
    got, _ = tco(model(b, rent(), horizon_months=1, utilisation=(0.5,)))
    assert got == pytest.approx(98.55, rel=REL)


def test_energy_switched_off_when_idle():
    # powered only when busy: kW = u*(N*W_busy + W_platform)/1000 = 0.5*(600 + 100)/1000 = 0.35
    # one month: 0.35 * 730 * 1.5 * 0.20 = 76.65 USD
    b = buy(
        2,
        gpu_power_w=300,
        gpu_idle_w=50,
        platform_power_w=100,
        pue=1.5,
        electricity_usd_per_kwh=0.2,
        powered_when_idle=False,
    )
    got, _ = tco(model(b, rent(), horizon_months=1, utilisation=(0.5,)))
    assert got == pytest.approx(76.65, rel=REL)


def test_energy_price_change_applies_from_month_two():
    # 1 GPU at 1000 W, u = 1, e = 0.10, g_e = +21 %/year, 13 months, no discounting:
    # month m costs 1 kW * 730 h * 0.10 * 1.21^((m-1)/12); months 1..13 sum to
    # 73 * (1 + 1.21^(1/12) + ... + 1.21^(12/12)) = 73 * 14.1955... ; month 13 alone is 73 * 1.21
    b = buy(
        1,
        gpu_power_w=1000,
        gpu_idle_w=1000,
        electricity_usd_per_kwh=0.1,
        electricity_annual_change=0.21,
    )
    m = model(b, rent(), horizon_months=13)
    total = 73 * sum(1.21 ** ((k - 1) / 12) for k in range(1, 14))
    got, _ = tco(m)
    assert got == pytest.approx(total, rel=REL)
    twelve, _ = tco(model(b, rent(), horizon_months=12))
    assert got - twelve == pytest.approx(73 * 1.21, rel=REL)  # 88.33 USD in month 13


def test_hosting_on_peak_kw():
    # peak kW = (4*250 + 400)/1000 = 1.4 kW; 150 USD/(kW*month) -> 210 USD/month; 12 months
    # -> 2520 USD, whatever the utilisation (u = 0 here)
    b = buy(4, gpu_power_w=250, platform_power_w=400, hosting_usd_per_kw_month=150)
    got, _ = tco(model(b, rent(), utilisation=(0.0,)))
    assert got == pytest.approx(2520.0, rel=REL)


def test_maintenance_and_failures():
    # HW = 4*1000 + 2000 = 6000 USD; resale decay 1 -> no resale.
    # maintenance 6 %/year: 6000*0.06/12 = 30 USD/month; AFR 3 %/year on N*G = 4000 USD:
    # 4000*0.03/12 = 10 USD/month; 12 months: 6000 + 12*(30 + 10) = 6480 USD
    b = buy(
        4,
        gpu_price_usd=1000,
        platform_price_usd=2000,
        maintenance_rate=0.06,
        gpu_annual_failure_rate=0.03,
    )
    got, _ = tco(model(b, rent()))
    assert got == pytest.approx(6480.0, rel=REL)


def test_resale_geometric_decay():
    # HW = 6000, decay 35 %/year, H = 24: R = 6000*0.65^(24/12) = 6000*0.4225 = 2535
    # setup 500 is not resold: TCO = (6000 + 500) - 2535 = 3965 USD (no discounting)
    b = buy(1, gpu_price_usd=4000, platform_price_usd=2000, setup_usd=500, resale_annual_decay=0.35)
    got, _ = tco(model(b, rent(), horizon_months=24))
    assert got == pytest.approx(3965.0, rel=REL)


def test_discounting_monthly_factor():
    # admin 100 USD/month for 12 months at 8 %/year: sum 100*1.08^(-m/12), m = 1..12
    # = 1151.2857852... USD
    b = buy(1, admin_usd_per_month=100)
    got, _ = tco(model(b, rent(), discount_rate=0.08))
    assert got == pytest.approx(1151.2857852328934, rel=REL)


def test_depreciation_schedules():
    sl = depreciation_schedule("straight_line", 3, 40)
    assert sl[:36] == pytest.approx(np.full(36, 1 / 36)) and not sl[36:].any()
    macrs = depreciation_schedule("macrs5", 5, 72)
    assert macrs[0] == pytest.approx(0.20 / 12) and macrs[12] == pytest.approx(0.32 / 12)
    assert macrs.sum() == pytest.approx(1.0) and sum(MACRS5) == pytest.approx(1.0)


def test_macrs5_tax_shield():
    # C0 = HW = 9000, tau = 0.3, r = 12 %/year, H = 24, resale decay 40 %/year.
    # d_m = 1.12^(-m/12); sum d_1..12 = 11.2915160, sum d_13..24 = 10.0817107, d_24 = 0.7971939
    # MACRS: D = 9000*0.20/12 = 150/month in year 1, 9000*0.32/12 = 240/month in year 2
    # shield = 0.3*(150*11.2915160 + 240*10.0817107) = 1234.00139
    # R = 9000*0.6^2 = 3240; BV = 9000 - 12*150 - 12*240 = 4320
    # salvage = (3240 - 0.3*(3240 - 4320))*0.7971939 = 3564*0.7971939 = 2841.19898
    # TCO = 9000 - 1234.00139 - 2841.19898 = 4924.79963
    b = buy(1, platform_price_usd=9000, resale_annual_decay=0.4, depreciation="macrs5")
    got, _ = tco(model(b, rent(), horizon_months=24, discount_rate=0.12, tax_rate=0.3))
    assert got == pytest.approx(4924.799630116049, rel=1e-9)


def test_straight_line_tax_shield():
    # as above with straight line over 3 years: D = 9000/36 = 250/month for 24 months
    # shield = 0.3*250*(11.2915160 + 10.0817107) = 1602.99200; BV = 9000 - 24*250 = 3000
    # salvage = (3240 - 0.3*(3240 - 3000))*0.7971939 = 3168*0.7971939 = 2525.51020
    # TCO = 9000 - 1602.99200 - 2525.51020 = 4871.49779
    b = buy(1, platform_price_usd=9000, resale_annual_decay=0.4, depreciation_years=3)
    got, _ = tco(model(b, rent(), horizon_months=24, discount_rate=0.12, tax_rate=0.3))
    assert got == pytest.approx(4871.49779382322, rel=1e-9)


def test_tax_reduces_opex_and_rent():
    # tau = 0.25, admin 100/month buy side and storage 100/month rent side, 12 months, r = 0:
    # each side: 12*100*(1 - 0.25) = 900 USD
    got = tco(model(buy(admin_usd_per_month=100), rent(storage_usd_per_month=100), tax_rate=0.25))
    assert got == pytest.approx((900.0, 900.0), rel=REL)


def test_on_demand_price_change():
    # 1 instance-hour per owned-GPU-hour, u = 1, p = 2.00 USD/h, g_p = -10 %/year, 13 months:
    # months 1..12 at 730*2*0.9^((m-1)/12); month 13 at 730*2*0.9 = 1314 USD
    r12 = tco(model(buy(), rent(price_usd_per_hour=2.0, price_annual_change=-0.1)))[1]
    r13 = tco(
        model(buy(), rent(price_usd_per_hour=2.0, price_annual_change=-0.1), horizon_months=13)
    )[1]
    assert r13 - r12 == pytest.approx(1314.0, rel=REL)


def test_spot_interruption_overhead():
    # u = 0.5, one GPU each side at equal throughput: hours = 0.5*730*(1 + 0.2) = 438 h
    # at 1.00 USD/h -> 438 USD in one month
    r = rent(pricing="spot", price_usd_per_hour=1.0, spot_interruption_overhead=0.2)
    _, got = tco(model(buy(), r, horizon_months=1, utilisation=(0.5,)))
    assert got == pytest.approx(438.0, rel=REL)


def test_reservation_without_overflow():
    # T_own = 4 GPUs * 1.0 = 4, T_inst = 2 GPUs * 1.0 = 2 -> K = ceil(4/2) = 2 instances.
    # u = 0.5: hours = 0.5*730*4/2 = 730 h <= K*730 = 1460 h, so no overflow:
    # rent = 2*730*0.60 = 876 USD/month whatever u (also at u = 0); 12 months (the whole
    # 1-year term) -> 12*876 = 10,512 USD
    r = rent(2, "reserved_1y", price_usd_per_hour=0.6, on_demand_price_usd_per_hour=1.0)
    m = model(buy(4), r, horizon_months=12, utilisation=(0.0, 0.5))
    assert tco(m, 0)[1] == pytest.approx(10_512.0, rel=REL)
    assert tco(m, 1)[1] == pytest.approx(10_512.0, rel=REL)


def test_reservation_with_overflow():
    # K = 1 committed: u = 0.75 -> hours = 0.75*730*4/2 = 1095 h; 730 h reserved at 0.60
    # = 438 USD, 365 h overflow on demand at 1.00 = 365 USD -> 803 USD a month, 12 months
    # -> 9,636 USD
    r = rent(
        2,
        "reserved_1y",
        price_usd_per_hour=0.6,
        on_demand_price_usd_per_hour=1.0,
        committed_instances=1,
    )
    _, got = tco(model(buy(4), r, horizon_months=12, utilisation=(0.75,)))
    assert got == pytest.approx(9636.0, rel=REL)


def test_reservation_that_outlives_the_horizon_is_still_owed():
    # 1 instance reserved for 3 years at 1.00 USD/h = 730 USD/month, tau = 0.25, r = g = 0:
    # horizon 12 months: 12*730*0.75 = 6,570 within and months 13..36 still owed,
    # 24*730*0.75 = 13,140 -> TCO_rent = 19,710 USD at every u up to the reservation
    r = rent(pricing="reserved_3y", price_usd_per_hour=1.0, on_demand_price_usd_per_hour=2.0)
    m = model(buy(), r, horizon_months=12, utilisation=(0.0, 1.0), tax_rate=0.25)
    assert tco(m, 0)[1] == pytest.approx(19_710.0, rel=REL)
    assert tco(m, 1)[1] == pytest.approx(19_710.0, rel=REL)
    # a 1-year reservation over 30 months: the third term runs to month 36, 6 months owed:
    # (30 + 6)*730 = 26,280 USD with no tax
    r1 = rent(pricing="reserved_1y", price_usd_per_hour=1.0, on_demand_price_usd_per_hour=2.0)
    assert tco(model(buy(), r1, horizon_months=30))[1] == pytest.approx(26_280.0, rel=REL)
    # discounted and growing: months 2..12 owed after a 1-month horizon at r = 12 %/year,
    # g = +10 %/year: 730 * sum_{m=1..12} 1.1^((m-1)/12) * 1.12^(-m/12) = 730 * 11.78960 = 8,606.406
    grow = rent(
        pricing="reserved_1y",
        price_usd_per_hour=1.0,
        on_demand_price_usd_per_hour=2.0,
        price_annual_change=0.1,
    )
    expected = 730 * sum(1.1 ** ((m - 1) / 12) * 1.12 ** (-m / 12) for m in range(1, 13))
    got = tco(model(buy(), grow, horizon_months=1, discount_rate=0.12))[1]
    assert got == pytest.approx(expected, rel=REL)
    assert expected == pytest.approx(8606.4059, rel=1e-8)


def test_explicit_zero_reservation_means_none():
    # committed_instances: 0 -> every hour on demand at 2.00: u = 0.5 -> 365 h * 2 = 730 USD a
    # month, nothing owed after the horizon; at u = 0 nothing at all
    r = rent(
        pricing="reserved_3y",
        price_usd_per_hour=1.0,
        on_demand_price_usd_per_hour=2.0,
        committed_instances=0,
    )
    m = model(buy(), r, horizon_months=1, utilisation=(0.0, 0.5))
    assert tco(m, 0)[1] == 0.0
    assert tco(m, 1)[1] == pytest.approx(730.0, rel=REL)


def test_throughput_normalisation_between_gpus():
    # owned: 4 GPUs * 0.6 reference GPU-hours/h * scaling 0.9 * derate 0.8 = T_own 1.728
    # instance: 2 GPUs * 1.5 * scaling 0.95 = T_inst 2.85
    # u = 0.5: instance-hours = 0.5*730*1.728/2.85 = 221.305263 h; at 3.06 USD/h = 677.194105
    b = buy(4, relative_throughput=0.6, scaling_efficiency=0.9, thermal_derate=0.8)
    r = rent(2, price_usd_per_hour=3.06, relative_throughput=1.5, scaling_efficiency=0.95)
    _, got = tco(model(b, r, horizon_months=1, utilisation=(0.5,)))
    assert got == pytest.approx(0.5 * 730 * 1.728 / 2.85 * 3.06, rel=REL)
    assert got == pytest.approx(677.1941052631579, rel=REL)


def test_breakeven_interpolates_exactly():
    # buy: C0 = 1200, nothing else. rent: 730 h/month at u = 1 at 1.00 USD/h for 12 months
    # = 8760*u USD. Break-even where 1200 = 8760*u -> u = 0.1369863
    m = model(buy(platform_price_usd=1200), rent(price_usd_per_hour=1.0))
    got = to_dict(summarise(simulate(m)))["breakeven_utilisation"]
    assert got["p50"] == pytest.approx(1200 / 8760, rel=REL)
    assert got["prob_always"] == 0 and got["prob_never"] == 0


def test_breakeven_on_the_reservation_segment():
    # reserved: K = 1 instance at 0.5 USD/h = 365 USD/month fixed, 12 months = 4380 USD
    # for u <= 1 (T_own = T_inst). Overflow never happens (u <= 1 = K).
    # buy C0 = 3000 < 4380 -> always: break-even 0. With C0 = 5000 > 4380 -> never.
    r = rent(pricing="reserved_1y", price_usd_per_hour=0.5, on_demand_price_usd_per_hour=1.0)
    cheap = to_dict(summarise(simulate(model(buy(platform_price_usd=3000), r))))[
        "breakeven_utilisation"
    ]
    dear = to_dict(summarise(simulate(model(buy(platform_price_usd=5000), r))))[
        "breakeven_utilisation"
    ]
    assert cheap["p50"] == 0.0 and cheap["prob_always"] == 1.0
    assert dear["p50"] is None and dear["prob_never"] == 1.0


def test_breakeven_after_the_kink():
    # 2 owned GPUs, 1-GPU instances, K = 1 committed at 0.5 USD/h: fixed 365 USD/month;
    # hours(u) = u*730*2 = 1460u, overflow above 730 h, i.e. u > 0.5, at 1.00 USD/h:
    # rent(u) = 12*(365 + 1460*max(0, u - 0.5)) = 4380 + 17520*max(0, u - 0.5)
    # buy C0 = 8760: 8760 = 4380 + 17520*(u - 0.5) -> u = 0.5 + 4380/17520 = 0.75
    r = rent(
        pricing="reserved_1y",
        price_usd_per_hour=0.5,
        on_demand_price_usd_per_hour=1.0,
        committed_instances=1,
    )
    got = to_dict(summarise(simulate(model(buy(2, platform_price_usd=8760), r))))
    assert got["breakeven_utilisation"]["p50"] == pytest.approx(0.75, rel=REL)


def test_a_tie_at_zero_with_buying_dearer_above_it_is_not_always():
    # TCO_buy(u) = 0 + 100 u against an API TCO_api(u) = 0 + 80 u: equal at u = 0, the API
    # cheaper at every u > 0, so buying is never no dearer on all of [u, 1]: "never" (it read
    # "always", 0, because d(0) = 0 <= 0); with the API at 120 u buying is cheaper above 0 and
    # no dearer at 0: "always"
    buy = BuyLine(capex=0.0, at_zero=0.0, per_u=100.0)
    assert breakeven_utilisation(buy, RentLine(at_zero=0.0, slope=80.0, kink=0.0), 1)[0] == np.inf
    assert breakeven_utilisation(buy, RentLine(at_zero=0.0, slope=120.0, kink=0.0), 1)[0] == 0.0


def test_a_tie_broken_by_rounding_is_a_tie():
    # TCO_buy(u) = (0.1 + 0.2) u = 0.30000000000000004 u against TCO_rent(u) = 0.3 u: at u = 1
    # buying is dearer by 5.6e-17, far within 1e-9 x 0.3 = 3e-10, so the two tie on all of
    # [0, 1]: "always" (it was "never")
    buy = BuyLine(capex=0.0, at_zero=0.0, per_u=0.1 + 0.2)
    rent = RentLine(at_zero=0.0, slope=0.3, kink=0.0)
    assert buy.tco(1.0) > rent.tco(1.0)
    assert breakeven_utilisation(buy, rent, 1)[0] == 0.0
    # dearer by 1e-9 at u = 1 (more than 1e-9 x 0.3): "never"
    rent = RentLine(at_zero=0.0, slope=0.3 - 1e-9, kink=0.0)
    assert breakeven_utilisation(buy, rent, 1)[0] == np.inf


def test_buying_cheaper_idle_but_dearer_at_the_reservation_breaks_even_after_it():
    # rent: a reservation of 4380 USD covering u <= 0.5, then 17520 USD per unit of u:
    # TCO_rent(u) = 4380 + 17520 max(0, u - 0.5); buy: TCO_buy(u) = 4000 + 2000 u.
    # d(0) = -380 (buying cheaper idle), d(0.5) = 4000 + 1000 - 4380 = 620 (dearer),
    # d(1) = 6000 - 13140 = -7140: buying no dearer on [u, 1] from the crossing on [0.5, 1],
    # u = 0.5 + 0.5 x 620 / (620 + 7140) = 0.5399484536 (it read "always", 0, from d(0) < 0)
    buy = BuyLine(capex=4000.0, at_zero=4000.0, per_u=2000.0)
    rent = RentLine(at_zero=4380.0, slope=17520.0, kink=0.5)
    got = breakeven_utilisation(buy, rent, 1)[0]
    assert got == pytest.approx(0.5 + 0.5 * 620 / 7760, rel=REL)
    assert got == pytest.approx(0.5399484536082474, rel=REL)


def test_payback_linear_inside_month():
    # C0 = 1000, rent 0.5*730*... chosen as 300 USD/month at u = 1 (price 300/730 USD/h):
    # f(3) = 1000 - 900 = 100, f(4) = 1000 - 1200 = -200 -> t = 3 + 100/300 = 3.3333 months
    m = model(buy(platform_price_usd=1000), rent(price_usd_per_hour=300 / 730))
    got = to_dict(summarise(simulate(m)))["payback_months"]
    assert got["p50"][0] == pytest.approx(10 / 3, rel=REL)
    assert got["prob_never"] == [0.0]


def test_payback_never_within_horizon():
    # C0 = 5000 against 300 USD/month for 12 months (3600 USD): never pays back
    m = model(buy(platform_price_usd=5000), rent(price_usd_per_hour=300 / 730))
    got = to_dict(summarise(simulate(m)))["payback_months"]
    assert got["p50"] == [None] and got["prob_never"] == [1.0]


def test_cost_per_reference_gpu_hour():
    # u = 0.5, H = 12, T_own = 2 GPUs * 1.0: 0.5*730*12*2 = 8760 reference GPU-hours.
    # buy C0 = 8760 -> 1.00 USD per reference GPU-hour; rent at 2 USD/h for 1-GPU instances:
    # 0.5*730*2 h/month * 12 * 2 USD = 17520 USD -> 2.00 USD per reference GPU-hour
    m = model(buy(2, platform_price_usd=8760), rent(price_usd_per_hour=2.0), utilisation=(0.0, 0.5))
    got = to_dict(summarise(simulate(m)))["cost_per_reference_gpu_hour"]
    assert got["buy"]["p50"] == [None, pytest.approx(1.0, rel=REL)]
    assert got["rent"]["p50"] == [None, pytest.approx(2.0, rel=REL)]
