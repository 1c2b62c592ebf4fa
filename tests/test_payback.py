"""Payback, gathered for every level at once, against a plain loop over draws, levels and months;
and its compiled kernel against its numpy form, bit for bit.

The reference is the definition read literally: for each draw and level, walk the months until
the gap f_m(u) = net0_m + u * slope_m (less max(0, u - kink) * rent_m with a reservation) is at
or below zero, and interpolate from the month before (the capex before month 0). The gaps are
random walks on a grid of quarters, so that many f_m(u) are exactly 0 at the levels 0, 0.25,
0.5, 0.75 and 1 (ties), some never close (never paid back), some close at low utilisation and
open again at high, and some start at or below zero (paid back at once). The tests before the
last ones run with whichever form ``COSTMODEL_KERNELS`` chooses; the last ones run both.
"""

import importlib.util
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.cashflows import Gap, Workspace
from costmodel.compiled import KERNELS_VARIABLE
from costmodel.outcomes import payback


def _loop(gap: Gap, levels) -> np.ndarray:
    """The payback [month] of every level and draw, one month at a time in plain Python."""
    months, draws = gap.net0.shape
    out = np.empty((len(levels), draws))
    for j, u in enumerate(levels):
        for s in range(draws):
            capex = float(gap.capex[s])
            if capex <= 0.0:
                out[j, s] = 0.0
                continue
            t, prev = math.inf, capex
            for m in range(months):
                f = gap.net0[m, s] + u * gap.slope[m, s]
                if gap.rent_u is not None:
                    f -= max(0.0, u - gap.kink[s]) * gap.rent_u[m, s]
                if f <= 0.0:  # first month at or below zero: linear inside it
                    t = m + prev / (prev - f)
                    break
                prev = f
            out[j, s] = t
    return out


def _gap(seed: int, months: int, draws: int, kinked: bool = False) -> Gap:
    """A random gap of ``draws`` draws over ``months``: capex and monthly steps in quarters."""
    rng = np.random.default_rng(seed)
    capex = rng.integers(-2, 12, draws) / 4.0  # some at or below 0: paid back at once
    net0 = capex + np.cumsum(rng.integers(-3, 3, (months, draws)) / 4.0, axis=0)
    slope = np.cumsum(rng.integers(-4, 2, (months, draws)) / 4.0, axis=0)
    slope[:, : draws // 8] = np.abs(slope[:, : draws // 8])  # rising with u: never at high u
    rent_u, kink = None, np.zeros(draws)
    if kinked:
        rent_u = np.cumsum(rng.integers(0, 3, (months, draws)) / 4.0, axis=0)
        kink = rng.choice([0.0, 0.25, 0.5], draws)
    return Gap(capex, net0, slope, rent_u, kink, np.empty((months, draws)), Workspace())


_EVEN = (0.0, 0.25, 0.5, 0.75, 1.0)  # every level a tie somewhere


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "levels",
    [
        _EVEN,
        tuple(np.round(np.linspace(0.05, 1.0, 20), 2)),  # the engine's grid: counted evenly
        (1.0, 0.5, 0.5, 0.25, 0.3, 0.0),  # unsorted, repeated, uneven: counted level by level
        (0.5,),
    ],
)
def test_payback_equals_a_plain_loop(seed, levels):
    months = (1, 7, 36, 60, 120, 240)[seed]
    gap = _gap(seed, months, 400)
    want = _loop(gap, levels)
    got = payback(gap, np.array(levels))
    np.testing.assert_array_equal(got, want)
    # the cases the random walks must hold for the comparison to mean something
    assert np.any(np.isinf(want)) and np.any(want == 0.0)
    assert np.any((want > 0) & np.isfinite(want))


def test_payback_equals_a_plain_loop_with_a_reservation():
    gap = _gap(11, 48, 400, kinked=True)
    levels = (0.0, 0.25, 0.4, 0.5, 0.75, 1.0)
    np.testing.assert_array_equal(payback(gap, np.array(levels)), _loop(gap, levels))


def test_payback_ties_land_on_the_month_end():
    # one draw: capex 2, then the gap falls by 1 a month at u = 0 and by 2 more per unit of u:
    # f_m(u) = 2 - m - 2u*m for months m = 1, 2 (rows 0, 1). At u = 0.5, f_1 = 2 - 1 - 1 = 0:
    # a tie at the first month-end, t = 0 + 2/(2 - 0) = 1.0 month; at u = 0, f_1 = 1 and
    # f_2 = 0: t = 1 + 1/(1 - 0) = 2.0; at u = 0.25, f_1 = 0.5, f_2 = -1: t = 1 + 0.5/1.5.
    capex = np.array([2.0])
    net0 = np.array([[1.0], [0.0]])
    slope = np.array([[-2.0], [-4.0]])
    gap = Gap(capex, net0, slope, None, np.zeros(1), np.empty((2, 1)), Workspace())
    got = payback(gap, np.array([0.0, 0.25, 0.5]))
    np.testing.assert_array_equal(got[:, 0], [2.0, 1.0 + 0.5 / 1.5, 1.0])


def test_payback_on_a_tie_between_a_level_and_a_month_end():
    # at u = 0.2 the gap f_m = net0_m + 0.2 * netu_m is 2.3, 2.1, 1.25, 0.45, then exactly 0 at
    # month 5 (row 4: 0.75 + 0.2 * -3.75 = 0.75 - 0.75), then 0.25 and 0.3 again: the payback is
    # 4 + 0.45 / (0.45 - 0) = 5.0 months. The threshold -0.75 / -3.75 = 0.2 lies on the grid's
    # fourth level, where counting it arithmetically (3.0000000000000004 steps) once read the
    # gap as open in every month from the fifth on, and so as never paid back.
    net0 = np.array([2.5, 2.5, 1.75, 1.0, 0.75, 1.0, 1.0])[:, None]
    netu = np.array([-1.0, -2.0, -2.5, -2.75, -3.75, -3.75, -3.5])[:, None]
    gap = Gap(np.array([2.25]), net0, netu, None, np.zeros(1), np.empty((7, 1)), Workspace())
    levels = np.round(np.linspace(0.05, 1.0, 20), 2)
    assert payback(gap, levels)[3, 0] == 5.0
    np.testing.assert_array_equal(payback(gap, levels), _loop(gap, levels))


def test_payback_into_the_callers_rows():
    # written into a strided view of a larger array, as the engine fills its chunks
    gap = _gap(3, 60, 300)
    levels = np.array(_EVEN)
    whole = np.full((levels.size, 1000), -1.0)
    payback(gap, levels, out=whole[:, 100:400])
    np.testing.assert_array_equal(whole[:, 100:400], _loop(gap, levels))
    assert np.all(whole[:, :100] == -1.0) and np.all(whole[:, 400:] == -1.0)


def _payback_by(kernels: str, gap: Gap, levels, out=None) -> np.ndarray:
    """:func:`payback` with ``COSTMODEL_KERNELS=kernels`` (``"c"`` or ``"numpy"``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KERNELS_VARIABLE, kernels)
        return payback(gap, np.asarray(levels, dtype=float), out)


def _require_the_kernel() -> None:
    """Skip where the kernel was not built, unless it is required (CI sets
    ``COSTMODEL_KERNELS=c``: there a missing kernel fails the test)."""
    required = os.environ.get(KERNELS_VARIABLE, "").strip().lower() == "c"
    if not required and importlib.util.find_spec("costmodel._payback") is None:
        pytest.skip("costmodel._payback was not built (no C compiler at install): numpy only")


def test_compiled_payback_of_a_small_case_by_hand():
    _require_the_kernel()
    # levels unsorted (1, 0, 0.5); f_m(u) = net0_m + u * slope_m, months m = 0..3 (rows):
    # draw 0, capex 3: f_0 = 2 - 2u, f_1 = 1 - 4u, f_2 = 0.5 (flat), f_3 = -0.5 + u (rising, and
    #   closed at u = 0: scanned from there). u = 1: f_0 = 0, t = 0 + 3/(3 - 0) = 1;
    #   u = 0.5: f_0 = 1, f_1 = -1, t = 1 + 1/(1 + 1) = 1.5; u = 0: 2, 1, 0.5, then -0.5:
    #   t = 3 + 0.5/(0.5 + 0.5) = 3.5.
    # draw 1, capex 0: paid back at once, 0 at every level.
    # draw 2, capex 1: f_m = 1 - 0.5u, 0.5 at u = 1 at the least: never (inf).
    # draw 3, capex 2: f_0 = -1 + 4u (rising, closed at u = 0 only), f_1 = 1 - u,
    #   f_2 = 0.25 - 0.5u, f_3 = 5 + u. u = 0: f_0 = -1, t = 0 + 2/(2 + 1) = 2/3; u = 1: f_0 = 3,
    #   f_1 = 0, t = 1 + 3/(3 - 0) = 2; u = 0.5: f_0 = 1, f_1 = 0.5, f_2 = 0 (a tie),
    #   t = 2 + 0.5/(0.5 - 0) = 3.
    capex = np.array([3.0, 0.0, 1.0, 2.0])
    net0 = np.array([[2.0, 1.0, 1.0, -1.0], [1.0, 1.0, 1.0, 1.0], [0.5, 1.0, 1.0, 0.25],
                     [-0.5, 1.0, 1.0, 5.0]])  # fmt: skip
    slope = np.array([[-2.0, -1.0, -0.5, 4.0], [-4.0, -1.0, -0.5, -1.0], [0.0, -1.0, -0.5, -0.5],
                      [1.0, -1.0, -0.5, 1.0]])  # fmt: skip
    gap = Gap(capex, net0, slope, None, np.zeros(4), np.empty((4, 4)), Workspace())
    want = [[1.0, 0.0, np.inf, 2.0], [3.5, 0.0, np.inf, 2.0 / 3.0], [1.5, 0.0, np.inf, 3.0]]
    np.testing.assert_array_equal(_payback_by("c", gap, [1.0, 0.0, 0.5]), want)
    np.testing.assert_array_equal(_payback_by("numpy", gap, [1.0, 0.0, 0.5]), want)


@st.composite
def _levels(draw) -> np.ndarray:
    """Utilisation levels as the engine takes them and beyond: an evenly spaced grid (on
    quarters, where ties are exact, or the engine's 0.05 to 1), levels on quarters or anywhere
    in [0, 1], repeated, in any order."""
    kind = draw(st.sampled_from(["quarters", "engine", "on quarters", "anywhere"]))
    if kind == "quarters":
        start = draw(st.integers(0, 3))
        levels = np.arange(start, draw(st.integers(start, 4)) + 1) / 4.0
    elif kind == "engine":
        levels = np.round(np.linspace(0.05, 1.0, 20), 2)
    else:
        size = draw(st.integers(1, 12))
        quarters = st.integers(0, 4).map(lambda q: q / 4.0)
        level = quarters if kind == "on quarters" else st.floats(0.0, 1.0)
        levels = np.array(draw(st.lists(level, min_size=size, max_size=size)))
    order = draw(st.permutations(range(levels.size)))
    return levels[list(order)]


@st.composite
def _gaps(draw) -> Gap:
    """A random gap: random walks on quarters (exact ties with levels on quarters) or anywhere,
    falling or rising with u month by month, with a reservation's kink or without, some
    capexes at or below 0."""
    months, draws = draw(st.integers(1, 48)), draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = 4.0 if draw(st.booleans()) else rng.uniform(1.0, 7.0)
    rising = draw(st.floats(0.0, 1.0))  # the share of months whose slope steps up
    capex = rng.integers(-2, 12, draws) / scale
    net0 = capex + np.cumsum(rng.integers(-3, 3, (months, draws)) / scale, axis=0)
    steps = np.where(rng.random((months, draws)) < rising, 1, -1) * rng.integers(0, 5, (1, draws))
    slope = np.cumsum(steps / scale, axis=0)
    rent_u, kink = None, np.zeros(draws)
    if draw(st.booleans()):
        rent_u = np.cumsum(rng.integers(0, 3, (months, draws)) / scale, axis=0)
        kink = rng.choice([0.0, 0.25, 0.5, 0.3, 1.0], draws)
    return Gap(capex, net0, slope, rent_u, kink, np.empty((months, draws)), Workspace())


@settings(max_examples=300, deadline=None)
@given(gap=_gaps(), levels=_levels(), strided=st.booleans())
def test_compiled_payback_equals_numpy_bit_for_bit(gap, levels, strided):
    _require_the_kernel()
    want = _payback_by("numpy", gap, levels)
    out = None
    if strided:  # into the rows of a larger array, as the engine fills its last chunk
        out = np.full((levels.size, gap.capex.size + 3), -1.0)[:, 1:-2]
    got = _payback_by("c", gap, levels, out)
    assert got is out or out is None
    assert np.array_equal(got, want), np.argwhere(got != want)[:5]
    if out is not None:
        assert np.all(out.base[:, [0, -2, -1]] == -1.0)  # nothing written beside its rows


def test_compiled_payback_refuses_buffers_of_the_wrong_size():
    _require_the_kernel()
    from costmodel import _payback

    # f_m(u) = 0.5 - u every month, capex 1: open at u = 0 (never), closed at u = 0.5 in
    # month 0 (t = 0 + 1/(1 - 0) = 1)
    net0, slope, capex = np.full((3, 4), 0.5), -np.ones((3, 4)), np.ones(4)
    levels, order = np.array([0.0, 0.5]), np.arange(2)

    def call(out=None, levels=levels, order=order, months=3):
        out = np.empty((2, 4)) if out is None else out
        _payback.payback(net0, slope, None, capex, capex, levels, order, out, months, 4)
        return out

    assert np.array_equal(call(), [[np.inf] * 4, [1.0] * 4])
    with pytest.raises(ValueError, match="out holds 56 bytes, not 64"):
        call(out=np.empty(7))
    with pytest.raises(ValueError, match="net0 holds 96 bytes, not 128"):
        call(months=4)
    with pytest.raises(ValueError, match="ascending and at least 0"):
        call(levels=np.array([0.5, 0.0]))
    with pytest.raises(ValueError, match=r"order\[1\] = 2 is not a row of 2 levels"):
        call(order=np.array([0, 2]))
