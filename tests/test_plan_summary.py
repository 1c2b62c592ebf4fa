"""The plan summary computed over every candidate at once gives the numbers of the candidate-by-
candidate definitions: percentiles as the engine's results interpolate them, the CVaR as the
mean of the worst ceil(5 %) of draws, the frontier as "no other candidate beats it on both mean
and P90"."""

from __future__ import annotations

import math

import numpy as np
import pytest

from costmodel.stats import frontier, percentiles, row_stats


def _one_by_one(row: np.ndarray) -> dict[str, float]:
    worst = max(1, math.ceil(0.05 * row.size))
    tail = np.sort(row)[row.size - worst :]
    return {"mean": float(row.mean()), **percentiles(row.copy()), "cvar95": float(tail.mean())}


@pytest.mark.parametrize("draws", [1, 2, 7, 15, 16, 17, 20, 21, 41, 1000, 1001])
def test_statistics_of_every_row_at_once_match_each_row_alone(draws):
    rng = np.random.default_rng(draws)
    cost = rng.lognormal(11.0, 0.4, size=(37, draws))
    cost[3] = 5.0  # a fixed candidate: every statistic is the value
    cost[4, : draws // 2] = 2.0  # ties
    if draws > 2:
        cost[5, 0] = np.inf  # "never": a percentile touching it is NaN, as in the engine
    stats = row_stats(cost)
    for j in range(cost.shape[0]):
        expected = _one_by_one(cost[j])
        for name, value in expected.items():
            got = stats[name][j]
            if math.isnan(value):
                assert math.isnan(got), (j, name)
            else:
                assert got == pytest.approx(value, rel=1e-14, abs=0.0), (j, name)
    assert stats["p50"][3] == stats["cvar95"][3] == 5.0


def test_cvar_is_the_mean_of_the_worst_five_percent_by_hand():
    # 40 draws 1..40: ceil(0.05 * 40) = 2 worst draws, 39 and 40, mean 39.5; the P10 sits at
    # position 0.1 * 39 = 3.9 between the 4th and 5th order statistics: 4 + 0.9 * (5 - 4) = 4.9
    cost = np.arange(40, 0, -1, dtype=float)[None, :]
    stats = row_stats(cost)
    assert stats["cvar95"][0] == 39.5
    assert stats["p10"][0] == pytest.approx(4.9, rel=1e-15)
    assert stats["p50"][0] == 20.5 and stats["mean"][0] == 20.5


def _frontier_by_definition(mean: np.ndarray, p90: np.ndarray) -> list[bool]:
    return [
        not any(mean[o] < mean[c] and p90[o] < p90[c] for o in range(mean.size))
        for c in range(mean.size)
    ]


@pytest.mark.parametrize("seed", range(6))
def test_the_frontier_is_every_candidate_no_other_beats_on_both(seed):
    rng = np.random.default_rng(seed)
    size = 60
    mean = rng.integers(0, 12, size).astype(float)  # many ties
    p90 = mean + rng.integers(0, 6, size)
    if seed % 2:
        mean[rng.integers(0, size)] = np.nan
        p90[rng.integers(0, size)] = np.nan
    assert frontier(mean, p90).tolist() == _frontier_by_definition(mean, p90)


def test_equal_candidates_are_all_on_thefrontier():
    # nobody beats anybody: the case that made the pairwise search quadratic
    mean = np.full(5000, 7.0)
    assert frontier(mean, mean.copy()).all()
