"""The daily load shape's closed form F (costmodel.load) against a numerical integral over a day,
hand-computed points, the worked plan's shares and its properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from costmodel.load import served_share


def _served_by_quadrature(x: float, k: float) -> float:
    """(1/24) int_0^24 min(x, 1 + a sin(2 pi t / 24)) dt with l_m = 1, a = k - 1, by quad, split
    at the hours where the load crosses the capacity (the integrand's kinks)."""
    a = k - 1

    def served(t: float) -> float:
        return min(x, 1 + a * math.sin(2 * math.pi * t / 24))

    kinks = []
    if a > 0 and abs((x - 1) / a) < 1:
        t0 = 24 * math.asin((x - 1) / a) / (2 * math.pi) % 24  # load rises through x
        kinks = sorted({t0, (12 - t0) % 24})  # and falls through it
    edges = [0.0, *kinks, 24.0]
    total = math.fsum(
        integrate.quad(served, lo, hi, epsabs=1e-12, epsrel=1e-12, limit=200)[0]
        for lo, hi in zip(edges, edges[1:], strict=False)
    )
    return total / 24


def _ratios(k: float) -> list[float]:
    """Capacity ratios either side of the trough 1 - a and the peak 1 + a, and at them."""
    a = k - 1
    points = {0.0, 0.5 * (1 - a), 1 - a, 1 - a + 0.02, 1.0, 1 + a - 0.02, 1 + a, 1 + a + 0.02}
    points |= {1 - a - 0.02, 1.5 * (1 + a), 0.7, 1.3}
    return sorted(p for p in points if p >= 0)


@pytest.mark.parametrize("k", [1.0, 1.3, 1.6, 2.0])
def test_closed_form_equals_the_integral_over_a_day(k):
    for x in _ratios(k):
        assert served_share(x, k - 1) == pytest.approx(_served_by_quadrature(x, k), abs=1e-9), x


def test_hand_computed_points():
    # x = 1 (capacity at the mean): z = 0, F = 1 - a (1 - 0) / pi; a = 0.6: 1 - 0.6/pi = 0.8090141
    assert served_share(1.0, 0.6) == pytest.approx(1 - 0.6 / math.pi, abs=1e-15)
    assert served_share(1.0, 0.6) == pytest.approx(0.8090140683, abs=1e-10)
    # a = 1, x = 0.5: z = -0.5, sqrt(0.75) = 0.8660254, -z arccos z = 0.5 * 2 pi / 3 = 1.0471976;
    # F = 1 - (0.8660254 + 1.0471976) / pi = 1 - 1.9132230 / pi = 0.3910022
    assert served_share(0.5, 1.0) == pytest.approx(0.3910022189, abs=1e-10)
    # below the trough every hour is served in full: F = x; above the peak: F = 1
    assert served_share(0.3, 0.6) == pytest.approx(0.3, abs=0)
    assert served_share(1.6, 0.6) == 1.0
    # a flat load (k = 1): min(1, x)
    np.testing.assert_array_equal(served_share(np.array([0.0, 0.4, 1.0, 3.0]), 0.0), [0, 0.4, 1, 1])


def test_the_worked_plans_owned_share_and_utilisation():
    """One owned server of 72 M tokens per hour against 20,000 M tokens per month growing 100 %
    a year, peak_to_mean 1.6, over 36 months: A_m = W_m F(72 / l_m), l_m = W_m / 730; share owned
    sum A / sum W = 0.621981 and owned utilisation sum A / (36 * 730 * 72) = 0.773927 (the worked
    plan's figures; with peak_to_mean 1 the split is min(W_m, C))."""
    months = np.arange(1, 37)
    demand = 20_000 * 2.0 ** ((months - 1) / 12)  # W_m [M tokens]
    owned = demand * served_share(72 * 730 / demand, 0.6)  # A_m [M tokens]
    assert owned.sum() / demand.sum() == pytest.approx(0.621981, abs=5e-7)
    assert owned.sum() / (36 * 730 * 72) == pytest.approx(0.773927, abs=5e-7)
    flat = np.minimum(demand, 72 * 730)
    np.testing.assert_allclose(demand * served_share(72 * 730 / demand, 0.0), flat, rtol=1e-15)


def test_broadcasts_over_draws_and_months():
    x = np.linspace(0, 2, 7)[None, :]  # (1, 7): months
    a = np.array([[0.0], [0.3], [1.0]])  # (3, 1): draws
    got = served_share(x, a)
    assert got.shape == (3, 7)
    for i in range(3):
        for j in range(7):
            assert got[i, j] == served_share(float(x[0, j]), float(a[i, 0]))
    assert served_share(1.0, 0.5).shape == ()


@pytest.mark.parametrize(
    ("x", "a", "problem"),
    [(-0.1, 0.5, "capacity_ratio"), (1.0, -0.1, "amplitude"), (1.0, 1.2, "amplitude")],
)
def test_out_of_range_inputs_are_refused(x, a, problem):
    with pytest.raises(ValueError, match=problem):
        served_share(x, a)
    with pytest.raises(ValueError, match=problem):
        served_share(np.array([1.0, x]), np.array([0.5, a]))
    with pytest.raises(ValueError):
        served_share(float("nan"), 0.5)


_X = st.floats(0, 4, allow_nan=False)
_A = st.floats(0, 1, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(_X, _X, _A)
def test_monotone_in_capacity(x1, x2, a):
    lo, hi = sorted((x1, x2))
    assert served_share(lo, a) <= served_share(hi, a) + 1e-12


@settings(max_examples=300, deadline=None)
@given(_X, _A, _A)
def test_a_peakier_day_serves_less(x, a1, a2):
    lo, hi = sorted((a1, a2))
    assert served_share(x, hi) <= served_share(x, lo) + 1e-12


@settings(max_examples=300, deadline=None)
@given(_X, _A)
def test_never_more_than_the_work_nor_the_capacity(x, a):
    share = served_share(x, a)
    assert 0 <= share <= min(1.0, x) + 1e-12
    # and never less than a flat load at the trough's capacity: min(x, 1 - a) of the work
    assert share >= min(x, 1 - a) - 1e-12
