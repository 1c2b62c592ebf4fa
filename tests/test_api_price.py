"""The blended API price per million tokens (costmodel.api_price) against hand arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from costmodel.api_price import blended_price


def test_worked_example_without_cache():
    # 0.60 in / 0.80 out, 1000 / 1000 tokens: (1000 * 0.60 + 1000 * 0.80) / 2000 = 0.70 USD/M
    assert blended_price(1000, 1000, 0.60, 0.80) == pytest.approx(0.70, abs=1e-15)


def test_cached_share_bills_part_of_the_input_at_the_cached_price():
    # half the input cached at 0.06: input 0.5 * 0.60 + 0.5 * 0.06 = 0.33;
    # (1000 * 0.33 + 1000 * 0.80) / 2000 = 0.565
    assert blended_price(1000, 1000, 0.60, 0.80, 0.06, 0.5) == pytest.approx(0.565, abs=1e-15)
    # a share without a cached price bills every input token at the input price
    assert blended_price(1000, 1000, 0.60, 0.80, None, 0.5) == pytest.approx(0.70, abs=1e-15)


def test_shape_weights_the_prices():
    # 8192 / 1024 at 3 in / 15 out: (8192 * 3 + 1024 * 15) / 9216 = (24576 + 15360) / 9216 = 4.3333
    assert blended_price(8192, 1024, 3.0, 15.0) == pytest.approx(39936 / 9216, abs=1e-12)
    assert blended_price(0, 512, 3.0, 15.0) == 15.0  # output only
    assert blended_price(512, 0, 3.0, 15.0) == 3.0  # input only


def test_broadcasts_over_draws():
    p_in = np.array([0.5, 0.6, 0.7])
    got = blended_price(1000, 3000, p_in, 0.8, cached_input_share=np.array([0.0, 0.0, 0.0]))
    np.testing.assert_allclose(got, (1000 * p_in + 3000 * 0.8) / 4000, rtol=1e-15)


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ((-1, 1000, 0.6, 0.8), "input_tokens"),
        ((0, 0, 0.6, 0.8), "not both 0"),
        ((1000, 1000, 0.6, 0.8, 0.1, 1.5), "cached_input_share"),
    ],
)
def test_bad_inputs_are_refused(args, problem):
    with pytest.raises(ValueError, match=problem):
        blended_price(*args)
