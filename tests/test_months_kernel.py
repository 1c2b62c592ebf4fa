"""The month-major sums of the cash flows: the C kernel (costmodel._months) against its numpy
form (cashflows._fold_numpy), bit for bit, and both against a case done by hand.

The kernel must give the numpy form's numbers exactly (the same operations in the same order),
so every comparison is ``np.array_equal``: on random terms (outer products of month and draw
factors, growing sums of fixed and drawn annual changes, whole arrays, added and subtracted,
draw factors one value or one a draw, a single month), and on the payback's gap and the
cumulative costs of random builds and rented sides (cash, loan, lease; on demand, spot and
reserved; each input fixed or drawn).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel import cashflows
from costmodel.cashflows import (
    BuyDraws,
    RentDraws,
    Terms,
    _fold,
    _fold_numpy,
    _Growth,
    _growth,
    _Outer,
    cumulative_cost,
    gap,
)
from costmodel.compiled import KERNELS_VARIABLE
from costmodel.financing import FinancingDraws

if os.environ.get(KERNELS_VARIABLE, "").strip().lower() == "c":  # required: fail, not skip
    import costmodel._months as months
else:
    months = pytest.importorskip("costmodel._months", reason="the C kernel was not built")


def _with(choice: str, fn, *args):
    """``fn(*args)`` with ``COSTMODEL_KERNELS`` set to ``choice``."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KERNELS_VARIABLE, choice)
        return fn(*args)


def test_a_case_by_hand():
    # H = 3 months, S = 2 draws; every value exact in binary, so the sums are exact.
    # outer([1, 2, 3], [10, 20]):                      [10, 20], [20, 40], [30, 60]
    # growth step [2, 0.5], first [1, 4]: A_m = A_{m-1} * step + first
    #   draw 0: 1, 1*2 + 1 = 3, 3*2 + 1 = 7;  draw 1: 4, 4*0.5 + 4 = 6, 6*0.5 + 4 = 7
    # growth step 1 (a float), first [2, 1], times [0.25, 10]:
    #   A: draw 0: 2, 4, 6; draw 1: 1, 1*1 + 1 = 2, 2*1 + 1 = 3
    #   times: [0.5, 10], [1, 20], [1.5, 30]
    # the array [[0.5, 0], [0, 0.5], [1, 2]]
    # outer - growth + scaled + array:
    #   m1: 10 - 1 + 0.5 + 0.5 = 10,   20 - 4 + 10 + 0   = 26
    #   m2: 20 - 3 + 1   + 0   = 18,   40 - 6 + 20 + 0.5 = 54.5
    #   m3: 30 - 7 + 1.5 + 1   = 25.5, 60 - 7 + 30 + 2   = 85
    terms = [
        (1, _Outer(np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0]))),
        (-1, _Growth(np.array([2.0, 0.5]), np.array([1.0, 4.0]))),
        (1, _Growth(np.array([1.0]), np.array([2.0, 1.0]), np.array([0.25, 10.0]))),
        (1, np.array([[0.5, 0.0], [0.0, 0.5], [1.0, 2.0]])),
    ]
    want = np.array([[10.0, 26.0], [18.0, 54.5], [25.5, 85.0]])
    for fold in (_fold_numpy, lambda out, t: _with("c", _fold, out, t)):
        got = fold(np.full((3, 2), np.nan), terms)
        np.testing.assert_array_equal(got, want)


_value = st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)
_change = st.floats(-0.9, 1.5, allow_nan=False)  # an annual change [1/year]


@st.composite
def _terms(draw):
    """A random month-major sum: shape, terms and their signs (the first +1)."""
    h, s = draw(st.integers(1, 30)), draw(st.integers(0, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rate = draw(st.floats(-0.05, 0.3))

    def row():  # a draw factor: one value (a float) or one a draw
        return draw(_value) if draw(st.booleans()) else rng.uniform(-1e4, 1e4, s)

    terms = []
    for i in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["outer", "growth", "fixed", "scaled", "full"]))
        if kind == "outer":
            term = _Outer(rng.uniform(-2.0, 2.0, h), row())
        elif kind == "full":
            term = rng.uniform(-1e5, 1e5, (h, s))
        elif kind == "fixed":  # a fixed annual change: an outer product of closed-form sums
            term = _growth(draw(_change), rate, h, row())
        else:  # a drawn annual change, per draw
            term = _growth(rng.uniform(-0.9, 1.5, s), rate, h, row())
            if kind == "scaled":
                term = term._replace(times=row())
        terms.append((1 if i == 0 else draw(st.sampled_from([1, -1])), term))
    return (h, s), terms


@settings(max_examples=300, deadline=None)
@given(_terms())
def test_kernel_equals_numpy_form(case):
    shape, terms = case
    want = _fold_numpy(np.empty(shape), terms)
    got = _with("c", _fold, np.empty(shape), terms)
    assert np.array_equal(got, want)


#: The ranges of the build's and the rented side's inputs that are fixed or drawn.
_BUY = {
    "gpu_price_usd": (800, 2000),
    "platform_price_usd": (2000, 6000),
    "setup_usd": (0, 1000),
    "gpu_power_w": (200, 350),
    "gpu_idle_w": (10, 50),
    "platform_power_w": (100, 400),
    "electricity_usd_per_kwh": (0.05, 0.4),
    "electricity_annual_change": (-0.05, 0.1),
    "pue": (1.0, 1.8),
    "hosting_usd_per_kw_month": (0, 200),
    "maintenance_rate": (0, 0.1),
    "gpu_annual_failure_rate": (0, 0.1),
    "admin_usd_per_month": (0, 300),
    "resale_annual_decay": (0.1, 0.5),
    "relative_throughput": (0.5, 1.5),
    "scaling_efficiency": (0.8, 1.0),
}
_RENT = {
    "price_usd_per_hour": (2, 15),
    "price_annual_change": (-0.2, 0.05),
    "spot_interruption_overhead": (0, 0.2),
    "storage_usd_per_month": (0, 100),
    "egress_usd_per_month": (0, 100),
    "admin_usd_per_month": (0, 100),
    "relative_throughput": (0.5, 2.0),
    "scaling_efficiency": (0.8, 1.0),
}


def _sides(seed: int, s: int, financing: str, pricing: str, fixed: float, idle: bool):
    """A random build and rented side of ``s`` draws, each input fixed (a float) with
    probability ``fixed``, else drawn (an ``(S,)`` array)."""
    rng = np.random.default_rng(seed)

    def x(low, high):
        return float(rng.uniform(low, high)) if rng.random() < fixed else rng.uniform(low, high, s)

    paid = {
        "cash": FinancingDraws("cash", None, None, 0.0, None),
        "loan": FinancingDraws("loan", x(0.02, 0.15), 36, 0.1, None),
        "lease": FinancingDraws("lease", None, 24, 0.0, x(0.02, 0.05)),
    }[financing]
    b = BuyDraws(
        gpu_count=4,
        **{name: x(*bounds) for name, bounds in _BUY.items()},
        powered_when_idle=idle,
        depreciation="straight_line",
        depreciation_years=3,
        tokens_per_s_per_gpu=None,
        thermal_derate=1.0,
        spare_gpus=int(rng.integers(0, 2)),
        financing=paid,
    )
    r = RentDraws(
        gpu_count=4,
        pricing=pricing,
        **{name: x(*bounds) for name, bounds in _RENT.items()},
        on_demand_price_usd_per_hour=None if pricing in ("on_demand", "spot") else x(10, 25),
        committed_instances=None if rng.random() < 0.5 else int(rng.integers(1, 3)),
        tokens_per_s_per_gpu=None,
    )
    return b, r


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    draws=st.integers(1, 50),
    horizon=st.sampled_from([1, 2, 12, 36, 61]),
    financing=st.sampled_from(["cash", "loan", "lease"]),
    pricing=st.sampled_from(["on_demand", "spot", "reserved_1y", "reserved_3y"]),
    fixed=st.sampled_from([0.0, 0.5, 1.0]),
    idle=st.booleans(),
)
def test_gap_and_cumulative_cost_are_the_same_with_either(
    seed, draws, horizon, financing, pricing, fixed, idle
):
    b, r = _sides(seed, draws, financing, pricing, fixed, idle)
    terms = Terms(horizon, 0.08, 0.21)
    own, inst = cashflows.capacity(b), cashflows.capacity(r)
    for kinked in (None, True):
        c = _with("c", gap, b, r, own, inst, terms, draws, None, kinked)
        n = _with("numpy", gap, b, r, own, inst, terms, draws, None, kinked)
        assert np.array_equal(c.net0, n.net0)
        assert np.array_equal(c.slope, n.slope)
        assert (c.rent_u is None) == (n.rent_u is None)
        assert c.rent_u is None or np.array_equal(c.rent_u, n.rent_u)
    for u in (0.0, 0.7):
        c = _with("c", cumulative_cost, b, r, own, inst, terms, draws, u)
        n = _with("numpy", cumulative_cost, b, r, own, inst, terms, draws, u)
        assert np.array_equal(c[0], n[0]) and np.array_equal(c[1], n[1])


def test_the_kernel_refuses_what_does_not_fit():
    out = np.empty((3, 2))
    column, row = np.ones(3), np.ones(2)
    with pytest.raises(ValueError, match=r"column has 2 values, not 3 \(the months\)"):
        months.fold(out, 3, 2, [(0, 1, np.ones(2), row)])
    with pytest.raises(ValueError, match="a row has 3 values, not 1 or 2"):
        months.fold(out, 3, 2, [(0, 1, column, np.ones(3))])
    with pytest.raises(ValueError, match="out has 6 values, not 4 x 2"):
        months.fold(out, 4, 2, [(0, 1, np.ones(4), row)])
    with pytest.raises(ValueError, match="the array has 4 values, not 3 x 2"):
        months.fold(out, 3, 2, [(1, 1, np.ones((2, 2)))])
    with pytest.raises(ValueError, match="expected a float64 buffer"):
        months.fold(out, 3, 2, [(0, 1, column, np.ones(2, dtype=np.float32))])
    with pytest.raises(ValueError, match="the first term is the start"):
        months.fold(out, 3, 2, [(0, -1, column, row)])
    with pytest.raises(ValueError, match="takes 3 buffers"):
        months.fold(out, 3, 2, [(3, 1, row, row)])
    with pytest.raises(ValueError, match="unknown kind 7"):
        months.fold(out, 3, 2, [(7, 1, row)])
    with pytest.raises(ValueError, match="at least one term"):
        months.fold(out, 3, 2, [])
    frozen = np.empty((3, 2))
    frozen.flags.writeable = False
    with pytest.raises((TypeError, ValueError, BufferError), match="read-only"):
        months.fold(frozen, 3, 2, [(0, 1, column, row)])
