"""The plan engine's closed form over months against the per-candidate computation it replaced:
each candidate's monthly work split month by month (``Months.each``, the former ``_Load``) and
summed with the monthly weights, on random plans (flat and daily loads, growing and shrinking
demand, downtime and spares, carbon priced and not, an API burst, servers added later), and the
block-by-block summary against the summary of every draw at once."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

import scenarios
from costmodel.fleet import _bought, _chunk, run_plan, simulate_plan, summarise_plan
from costmodel.fleet_load import Above, Below, Months
from present import to_dict

EXAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "examples"


def _example(name: str) -> dict:
    return yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8"))


def _reference(inputs, sim) -> dict[str, np.ndarray]:
    """Every candidate's cost, owned share and utilisation (and kg) per draw, month by month:
    the monthly excess as arrays, weighted sums as matrix products (one chunk of draws)."""
    values = {**sim.draws}
    c = _chunk(inputs, values | _apart(inputs), inputs.samples)
    work, h = c.load.work, inputs.horizon_months
    total = work.sum(axis=0)
    months = np.arange(1, h + 1)[:, None]
    inst = np.asarray(c.instance_capacity, dtype=float)
    out = {k: np.empty_like(sim.cost) for k in ("cost", "share", "util", "kg")}
    for j, (s, k, s1, trigger) in enumerate(
        zip(sim.servers, sim.instances, sim.added, sim.trigger, strict=True)
    ):
        cap, k_owned, pool_cost, up = c.owned(int(s))
        later, energy, fixed = np.zeros((h, 1), dtype=bool), k_owned, pool_cost
        if s1:
            bought = _bought(c, inputs.add, cap, float(trigger))
            start = bought + inputs.add.lead_time_months + 1
            later = months >= start
            cap1, k1, up1 = c.grown(int(s), int(s1))
            cap, energy = np.where(later, cap1, cap), np.where(later, k1, k_owned)
            fixed = fixed + c.cohort.priced(
                int(s1), c.pool.spares(int(s1)), bought, start, c.price_change
            )
        owned = work - c.load.each(cap)
        rest = c.load.each(cap + k * inst)
        cost = s * c.server_cost + np.sum(_col(c.energy) * owned * energy, axis=0) + fixed
        cost = cost + k * c.instance_cost
        held = cap.sum(axis=0) if np.ndim(cap) == 2 else h * cap
        with np.errstate(divide="ignore", invalid="ignore"):
            out["share"][j] = np.clip(np.where(total > 0, owned.sum(0) / total, 0.0), 0, 1)
            out["util"][j] = np.clip(np.where(held > 0, owned.sum(0) / held, 0.0), 0, 1)
        if c.tally is None:
            out["cost"][j] = cost + c.k_burst * np.sum(_col(c.burst) * rest, axis=0)
            continue
        if s1:  # the months before and from the added servers' service, as arrays
            first, added = (int(s), c.pool.spares(int(s))), (int(s1), c.pool.spares(int(s1)))
            parts = ((owned * ~later, up), (owned * later, up1))
            kg = c.tally.staged(first, added, parts, bought, start)[int(k > 0)]
        else:
            kg = c.tally.servers(int(s), c.pool.spares(int(s)), owned, up)[int(k > 0)]
        out["cost"][j], out["kg"][j] = c.tally.candidate(cost, [rest], bool(k > 0), kg)
    return out


def _col(x: np.ndarray) -> np.ndarray:
    """Monthly weights (H,) or (H, n) as (H, 1) or (H, n)."""
    return x if x.ndim == 2 else x[:, None]


def _apart(inputs) -> dict:
    from costmodel.carbon import carbon_values

    return carbon_values(inputs)


def _random_plan(seed: int) -> dict:
    """A random plan over the shipped examples' sides: its horizon, ranges, load and risks."""
    rng = np.random.default_rng(seed)
    kind = ("worked", "carbon", "api", "staged", "staged carbon")[seed % 5]
    name = {
        "worked": "plan-worked-example",
        "carbon": "plan-lab-rtx4090-carbon",
        "api": "plan-inference-70b-api-burst",
        "staged": "plan-staged-growth",
        "staged carbon": "plan-staged-growth",
    }[kind]
    doc = copy.deepcopy(_example(name))
    doc["simulation"] = {"samples": 300, "seed": seed, "method": "random"}
    doc["horizon_months"] = int(rng.integers(1, 61))
    low, high = sorted(rng.uniform(-0.6, 1.5, 2))
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": low, "high": high}
    if rng.random() < 0.6:
        k = float(rng.uniform(1.0, 2.0))
        doc["demand"]["peak_to_mean"] = (
            {"dist": "uniform", "low": 1.0, "high": 2.0} if rng.random() < 0.5 else k
        )
    top = int(rng.integers(1, 9))
    doc["own"]["servers"] = {"min": int(rng.integers(0, top)), "max": top}
    if doc.get("reserve"):
        doc["reserve"]["instances"] = {"min": 0, "max": int(rng.integers(0, 4))}
    if kind != "api":
        doc["own"]["spare_share"] = float(rng.choice([0.0, 0.1, 0.25]))
        doc["own"]["repair_days"] = {"dist": "uniform", "low": 1, "high": 30}
    if kind == "carbon" and rng.random() < 0.5:
        doc["carbon"] = {"usd_per_tonne": 0}
    if kind == "staged carbon":  # priced, the added servers' embodied kg paid at purchase
        doc["carbon"] = {"usd_per_tonne": float(rng.choice([0.0, 80.0]))}
        doc["own"]["grid"] = {"dist": "uniform", "low": 200, "high": 500}
    if kind == "api":
        doc["carbon"] = {"usd_per_tonne": 50}
        doc["burst"]["api"]["g_co2e_per_mtok"] = 40
    return doc


@pytest.mark.parametrize("seed", range(15))
def test_the_closed_form_is_the_month_by_month_sum(seed):
    doc = _random_plan(seed)
    try:
        plan = scenarios.load_mapping(doc)
    except scenarios.ScenarioError:  # an add month beyond a short horizon: draw another
        pytest.skip("the random plan is not valid")
    sim = simulate_plan(plan.inputs)
    ref = _reference(plan.inputs, sim)
    scale = np.abs(ref["cost"]).max()
    np.testing.assert_allclose(sim.cost, ref["cost"], rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(sim.share_owned, ref["share"], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(sim.owned_utilisation, ref["util"], rtol=1e-12, atol=1e-13)
    if sim.carbon is not None:
        kg = np.abs(ref["kg"]).max()
        np.testing.assert_allclose(sim.carbon, ref["kg"], rtol=1e-12, atol=1e-12 * kg)


@pytest.mark.parametrize("seed", range(4))
def test_blocks_of_candidates_summarise_as_all_at_once(monkeypatch, seed):
    plan = scenarios.load_mapping(_random_plan(seed))
    whole = to_dict(summarise_plan(simulate_plan(plan.inputs)))
    monkeypatch.setattr("costmodel.fleet.BLOCK_BYTES", 8 * 5 * 300 * 3)  # 3 candidates
    blocks = to_dict(run_plan(plan.inputs))
    assert blocks == whole


def test_a_capacity_sums_what_each_month_leaves_and_serves():
    # W_m = 100 x 1.5^((m-1)/12) over 24 months for 3 draws, one shrinking (g = -0.3),
    # one flat (g = 0); weights 1 + m / 10. At c = 120 the flat-load excess of the draw
    # of g = 0.5 is sum over months with W_m > 120 of w_m (W_m - 120), as spelled out.
    h = 24
    g = np.array([0.5, -0.3, 0.0])
    work = 100.0 * (1.0 + g) ** (np.arange(h)[:, None] / 12.0)
    weights = 1.0 + np.arange(1, h + 1) / 10.0
    months = Months.of(work, g, None)
    over = np.maximum(work - 120.0, 0.0)
    np.testing.assert_allclose(Above(months, 120.0).sum(weights), weights @ over, rtol=1e-13)
    served = np.minimum(work, 120.0)
    np.testing.assert_allclose(Below(months, 120.0).sum(weights), weights @ served, rtol=1e-13)
    # by hand for the growing draw: W_m > 120 from m with 1.5^((m-1)/12) > 1.2,
    # (m - 1) > 12 ln 1.2 / ln 1.5 = 5.397, so months 7..24
    hand = sum((1 + m / 10) * (100 * 1.5 ** ((m - 1) / 12) - 120) for m in range(7, 25))
    assert Above(months, 120.0).sum(weights)[0] == pytest.approx(hand, rel=1e-13)
    # a span: months 4..10 only (0-based [3, 10)), at K = 3 capacities at once
    span = months.span(np.full(3, 3), np.full(3, 10))
    caps = np.array([[90.0], [120.0], [150.0]])
    part = Above(months, caps, span).sum(weights)
    expected = [(weights[3:10] @ np.maximum(work[3:10] - c, 0.0)) for c in caps[:, 0]]
    np.testing.assert_allclose(part, expected, rtol=1e-13, atol=1e-9)


@pytest.mark.parametrize("amplitude", [0.3, 1.0])
def test_a_daily_load_sums_its_band_month_by_month(amplitude):
    h = 36
    g = np.array([1.0, -0.5, 0.2, 0.0])
    work = 50.0 * (1.0 + g) ** (np.arange(h)[:, None] / 12.0)
    months = Months.of(work, g, np.full(4, amplitude))
    weights = np.linspace(1.0, 0.5, h)
    for c in (0.0, 30.0, 50.0, 80.0, 400.0):
        each = months.each(c)
        np.testing.assert_allclose(
            Above(months, c).sum(weights), weights @ each, rtol=1e-12, atol=1e-10
        )
        np.testing.assert_allclose(
            Below(months, c).sum(weights), weights @ (work - each), rtol=1e-12, atol=1e-10
        )


def test_progress_rises_over_the_blocks(monkeypatch):
    monkeypatch.setattr("costmodel.fleet.BLOCK_BYTES", 8 * 3 * 2000 * 100)  # 100 candidates
    doc = _example("plan-worked-example")
    doc["simulation"] = {"samples": 2000, "seed": 3, "method": "lhs"}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.5}
    doc["own"]["servers"] = {"min": 0, "max": 300}
    plan = scenarios.load_mapping(doc)
    seen = []
    result = run_plan(plan.inputs, seen.append)
    assert len(result.candidates) == 301 * 3
    assert seen[-1] == pytest.approx(1.0) and seen == sorted(seen)
