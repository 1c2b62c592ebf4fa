"""An estimated throughput's error in the draws: where no value is given and no measured row
applies, a side serves at the calibrated estimate times E ~ LogNormal(0, sigma), the uncertain
input ``<side>.throughput_error``, rank-correlated at 0.5 between the estimated sides of one
question; an estimated training figure likewise, with the rule's leave-one-out sigma."""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import numpy as np
import pytest
import yaml
from scipy import stats

import scenarios
from costmodel.distributions import Fixed, LogNormal
from costmodel.engine import draw
from costmodel.inputs import THROUGHPUT_ERROR_RHO, ModelInputs, throughput_error_pairs
from costmodel.options import OptionInputs, evaluate_options
from present import to_dict
from pricing import load_catalog
from pricing.calibration import published
from pricing.estimate import Architecture, Targets, estimate
from pricing.training_error import leave_one_out
from pricing.training_error import published as training_error
from scenarios import ScenarioError
from scenarios.resolve import resolve
from scenarios.schema import ScenarioSchema

Z90 = 1.2815515655446004
#: Llama 3.1 8B at fp8 on four RTX 6000 Ada (the catalog measures it on no such card) against
#: one rented L40S, whose offline 1000/1000 row is measured.
ESTIMATED = {
    "version": 1,
    "name": "an estimated owned side",
    "horizon_months": 36,
    "report_utilisation": 0.15,
    "simulation": {"samples": 4000},
    "workload": {
        "kind": "inference",
        "model": "llama-3.1-8b",
        "precision": "fp8",
        "input_tokens": 1000,
        "output_tokens": 1000,
    },
    "buy": {"gpu": "rtx-6000-ada", "gpu_count": 4},
    "rent": {"instance": "runpod/1x_l40s_secure"},
}


def _doc(**sides) -> dict:
    doc = copy.deepcopy(ESTIMATED)
    for side, changes in sides.items():
        doc[side] = {**doc[side], **changes}
    return doc


def _resolved(doc: dict):
    return resolve(ScenarioSchema().load(doc), "test", load_catalog())


def _sigma_dense() -> float:
    return published().sigma_dense


# ------------------------------------------------------------------------- the estimated side


def test_an_estimated_side_serves_at_the_estimate_with_a_lognormal_error():
    r = _resolved(ESTIMATED)
    cat = load_catalog()
    arch = Architecture.of(cat.model("llama-3.1-8b"))
    e = estimate(
        arch, cat.gpu("rtx-6000-ada"), 4, "fp8", 1000, 1000, Targets(), published().calibration
    )
    assert r.buy.inputs.tokens_per_s_per_gpu == Fixed(e.tokens_per_s_per_gpu)
    error = r.buy.inputs.throughput_error
    assert isinstance(error, LogNormal) and error.median == 1.0
    # a dense model: the calibration's dense sigma, 0.315774 as published
    assert error.sigma == pytest.approx(_sigma_dense(), rel=1e-12)
    notes = {a.key: a for a in r.assumptions}
    source = notes["buy.throughput_error"].source
    pct = round(100 * _sigma_dense())
    assert source.startswith(f"estimated: calibrated roofline, leave-one-out error ±{pct} %")
    assert notes["buy.tokens_per_s_per_gpu"].source.startswith("estimated: calibrated roofline")
    # the measured side keeps its exact throughput: no error on it, none among the assumptions
    assert r.rent.inputs.throughput_error == Fixed(1.0)
    assert "rent.throughput_error" not in notes
    assert [k for k in notes if k.endswith("throughput_error")] == ["buy.throughput_error"]


def test_the_error_is_among_the_uncertain_inputs_and_its_value_of_information_names_it():
    answer = scenarios.evaluate(ESTIMATED)
    d = to_dict(answer)
    codes = [w["code"] for w in d["warnings"]]
    assert "estimated_throughput" in codes
    assert [i["input"] for i in d["tornado"]["inputs"]] == ["buy.throughput_error"]
    # at 15 % utilisation the break-even (15.6 %) is near: knowing the error is worth money
    voi = d["value_of_information"]
    assert voi["by_input"][0]["input"] == "buy.throughput_error"
    assert voi["by_input"][0]["evppi"] > 0.5 * voi["evpi"] > 100
    assert d["wording"]["worth_naming"] == ["buy.throughput_error"]


def test_the_error_does_not_matter_where_the_verdict_is_clear():
    # at 90 % utilisation buying is cheaper in every draw: perfect information is worth nothing
    d = to_dict(scenarios.evaluate({**ESTIMATED, "report_utilisation": 0.9}))
    assert d["value_of_information"]["evpi"] == pytest.approx(0.0, abs=1e-9)
    assert d["wording"]["worth_naming"] == []


def test_the_lognormal_p10_and_p90_are_exp_of_minus_and_plus_1_2816_sigma():
    inputs = _resolved(_doc(simulation={"samples": 20_000, "method": "random"})).inputs
    values, _ = draw(inputs)
    e = values["buy.throughput_error"]
    sigma = _sigma_dense()
    p10, p50, p90 = np.percentile(e, [10, 50, 90])
    # 20,000 independent draws: a percentile's standard error in ln terms is about
    # sqrt(0.1 * 0.9 / 20000) / phi(1.2816) * sigma = 0.0012 / 0.1755 * 0.316 = 0.0067 at P10/P90
    assert math.log(p10) == pytest.approx(-Z90 * sigma, abs=0.03)
    assert math.log(p90) == pytest.approx(Z90 * sigma, abs=0.03)
    assert math.log(p50) == pytest.approx(0.0, abs=0.02)
    assert np.std(np.log(e), ddof=1) == pytest.approx(sigma, rel=0.03)


def test_same_seed_same_output_and_another_seed_another():
    a = to_dict(scenarios.evaluate(ESTIMATED, samples=2000, seed=7))
    b = to_dict(scenarios.evaluate(ESTIMATED, samples=2000, seed=7))
    c = to_dict(scenarios.evaluate(ESTIMATED, samples=2000, seed=8))
    assert a == b
    assert a["breakeven_utilisation"] != c["breakeven_utilisation"]


def test_the_resolved_document_runs_again_to_the_same_result():
    first = scenarios.evaluate(ESTIMATED, samples=2000)
    again = scenarios.evaluate(first.document, samples=2000)
    assert to_dict(again)["breakeven_utilisation"] == to_dict(first)["breakeven_utilisation"]
    assert to_dict(again)["tornado"] == to_dict(first)["tornado"]


def test_two_estimated_sides_are_rank_correlated_at_one_half():
    # an A10G instance: the catalog measures Llama 3.1 8B at fp8 on no A10G either
    doc = _doc(rent={"instance": "aws/g5.xlarge"}, simulation={"samples": 20_000})
    inputs = _resolved(doc).inputs
    assert throughput_error_pairs(inputs.distributions()) == (
        ("buy.throughput_error", "rent.throughput_error", THROUGHPUT_ERROR_RHO),
    )
    values, _ = draw(inputs)
    rho = stats.spearmanr(values["buy.throughput_error"], values["rent.throughput_error"])[0]
    # 20,000 draws: the standard error of Spearman's rho near 0.5 is about
    # (1 - 0.5^2) / sqrt(20000) = 0.0053
    assert rho == pytest.approx(0.5, abs=0.02)


def test_a_correlation_the_document_gives_replaces_the_default():
    doc = _doc(rent={"instance": "aws/g5.xlarge"}, simulation={"samples": 20_000})
    doc["correlations"] = [["rent.throughput_error", "buy.throughput_error", 0.9]]
    inputs = _resolved(doc).inputs
    assert throughput_error_pairs(inputs.distributions(), inputs.correlations) == ()
    values, _ = draw(inputs)
    rho = stats.spearmanr(values["buy.throughput_error"], values["rent.throughput_error"])[0]
    assert rho == pytest.approx(0.9, abs=0.02)


def test_an_estimated_side_spreads_its_cost_wider_than_a_measured_one():
    estimated = to_dict(scenarios.evaluate(ESTIMATED, samples=4000))
    value = _resolved(ESTIMATED).buy.inputs.tokens_per_s_per_gpu.value
    exact = to_dict(scenarios.evaluate(_doc(buy={"tokens_per_s_per_gpu": value}), samples=4000))
    width = {}
    for name, d in (("estimated", estimated), ("exact", exact)):
        cost = d["cost_per_unit"]["buy"]
        width[name] = cost["p90"][-1] - cost["p10"][-1]
    assert width["exact"] == pytest.approx(0.0, abs=1e-12)  # every other input fixed
    assert width["estimated"] > 0
    # the median cost per token is the same: the error's median is 1
    p50 = estimated["cost_per_unit"]["buy"]["p50"][-1]
    assert p50 == pytest.approx(exact["cost_per_unit"]["buy"]["p50"][-1], rel=0.01)


def test_an_estimated_option_of_a_comparison_is_wider_than_the_same_measured():
    buy = _resolved(ESTIMATED).buy.inputs
    exact = replace(buy, throughput_error=Fixed(1.0))
    spreads = {"buy.gpu_price_usd": 0.10}
    figures = evaluate_options(
        [OptionInputs("buy", buy), OptionInputs("buy", exact)],
        utilisation=0.5,
        horizon=36,
        samples=4000,
        seed=0,
        spreads=spreads,
        lives=(5.0, 5.0),
    )
    spread = [np.percentile(f.cost, 90) - np.percentile(f.cost, 10) for f in figures]
    assert spread[0] > 3 * spread[1] > 0
    # its cost per unit is the exact one divided by the drawn error, draw by draw
    ratio = figures[1].cost / figures[0].cost
    assert np.median(ratio) == pytest.approx(1.0, abs=0.02)
    assert np.percentile(ratio, 90) == pytest.approx(math.exp(Z90 * _sigma_dense()), rel=0.02)


def test_a_given_throughput_or_error_is_used_as_given():
    r = _resolved(_doc(buy={"tokens_per_s_per_gpu": 5000}))
    assert r.buy.inputs.throughput_error == Fixed(1.0)
    r = _resolved(_doc(buy={"throughput_error": {"dist": "uniform", "low": 0.8, "high": 1.1}}))
    notes = {a.key: a for a in r.assumptions}
    assert notes["buy.throughput_error"].source == "scenario"
    assert r.buy.inputs.throughput_error.support() == (0.8, 1.1)


def test_a_fixed_zero_error_is_refused_at_its_key():
    with pytest.raises(ScenarioError) as info:
        scenarios.load_mapping(_doc(buy={"throughput_error": 0}))
    (error,) = info.value.errors
    assert error["path"] == "buy.throughput_error"
    assert "values must lie in [0.01, 100]" in error["message"]


def test_an_inline_gpu_with_specifications_is_estimated():
    # the RTX 6000 Ada's figures typed inline: the same estimate as the catalog card's
    card = {
        "name": "my card",
        "memory_gb": 48,
        "bandwidth_gbs": 960,
        "fp16_tflops": 364.3,
        "arch": "Ada Lovelace",
        "tdp_w": 300,
        "price_usd": 6800,
    }
    inline = _resolved(_doc(buy={"gpu": card})).buy
    catalog = _resolved(ESTIMATED).buy
    cat = load_catalog().gpu("rtx-6000-ada")
    assert (cat.memory_gb, cat.bandwidth_gbs, cat.fp16_tflops) == (48, 960, 364.3)
    assert inline.inputs.tokens_per_s_per_gpu == catalog.inputs.tokens_per_s_per_gpu
    assert isinstance(inline.inputs.throughput_error, LogNormal)
    # without its architecture the card has no fp8 tensor cores: fp8 runs at the fp16 rate
    plain = _resolved(_doc(buy={"gpu": {**card, "arch": None}})).buy
    assert plain.inputs.tokens_per_s_per_gpu.value < inline.inputs.tokens_per_s_per_gpu.value


def test_a_gpu_count_no_measured_row_holds_for_is_estimated():
    # Llama 3.1 70B at fp16: the catalog's A100 80 GB rows are of replicas of 4 and 8 GPUs,
    # which a 2-GPU build is no multiple of: its throughput is the estimate, at G = 2
    doc = _doc(
        buy={"gpu": "a100-sxm4-80gb", "gpu_count": 2}, rent={"instance": "aws/p4de.24xlarge"}
    )
    doc["workload"] = {**doc["workload"], "model": "llama-3.1-70b", "precision": "fp16"}
    buy = _resolved(doc).buy
    assert buy.throughput.origin == "estimated" and buy.throughput.point.gpus_per_replica == 2
    assert isinstance(buy.inputs.throughput_error, LogNormal)
    # at 4 GPUs the measured row holds and is kept exactly
    doc["buy"]["gpu_count"] = 4
    buy = _resolved(doc).buy
    assert buy.throughput.origin == "measured" and buy.inputs.throughput_error == Fixed(1.0)


def test_a_model_that_fits_nowhere_says_so_beside_the_rows_that_do_not_hold():
    doc = _doc(buy={"gpu": "rtx-4090", "gpu_count": 1}, rent={"instance": "aws/p4de.24xlarge"})
    doc["workload"] = {**doc["workload"], "model": "llama-3.1-70b", "precision": "fp16"}
    with pytest.raises(ScenarioError) as info:
        _resolved(doc)
    message = next(e for e in info.value.errors if e["path"] == "buy.tokens_per_s_per_gpu")
    assert "and no estimate" in message["message"] and "do not fit" in message["message"]


def test_an_inline_gpu_without_specifications_says_why_it_has_no_throughput():
    doc = _doc(buy={"gpu": {"name": "bare card", "memory_gb": 48, "tdp_w": 300, "price_usd": 1}})
    with pytest.raises(ScenarioError) as info:
        _resolved(doc)
    message = next(e for e in info.value.errors if e["path"] == "buy.tokens_per_s_per_gpu")
    assert "no serving rows for an inline GPU" in message["message"]
    assert "no memory bandwidth" in message["message"]


# --------------------------------------------------------------------------------- training


def test_the_training_rules_leave_one_out_error_is_published_as_a_refit_gives():
    refit, shipped = leave_one_out(load_catalog()), training_error()
    assert refit.figures == shipped.figures and refit.as_of == shipped.as_of
    assert refit.reference == shipped.reference == "v100-sxm2-16gb"
    assert refit.loo == pytest.approx(shipped.loo, rel=1e-5)  # published to 6 digits
    assert refit.sigma == pytest.approx(shipped.sigma, rel=1e-5)
    assert refit.loo_median_pct == pytest.approx(shipped.loo_median_pct, rel=1e-5)
    assert len(refit.loo) == 35 and refit.sigma == pytest.approx(0.313, abs=5e-4)


def test_one_figure_of_the_training_leave_one_out_by_hand():
    # the GTX 1080 Ti's fp32 figure hidden: the rule falls back to the two GPUs' fp32 peaks,
    # 11.34 / 15.7 = 0.72229 (the V100 runs fp32 on its CUDA cores, no TF32), against the
    # measured 0.5689: ratio 0.72229 / 0.5689 = 1.26963
    scored = training_error()
    k = scored.figures.index(("gtx-1080-ti", "fp32"))
    cat = load_catalog()
    peaks = cat.gpu("gtx-1080-ti").fp32_tflops / cat.reference.fp32_tflops
    measured = cat.gpu("gtx-1080-ti").measured["fp32"] / cat.reference.measured["fp32"]
    assert scored.loo[k] == pytest.approx(peaks / measured, rel=1e-5)
    assert peaks / measured == pytest.approx(1.26963, rel=1e-5)


def test_an_estimated_training_figure_draws_the_rules_error():
    plan = scenarios.load_file("scenarios/examples/plan-lab-rtx4090-growth.yaml")
    notes = {a.key: a for a in plan.assumptions}
    # the A10G's fp16 figure is the catalog's estimate; the RTX 4090's is measured
    assert plan.inputs.own.throughput_error == Fixed(1.0)
    error = plan.inputs.burst.throughput_error
    assert error.sigma == pytest.approx(training_error().sigma, rel=1e-12)
    assert notes["burst.throughput_error"].source.startswith(
        f"estimated: scaled or like-for-like peak ratios, leave-one-out error "
        f"±{round(100 * training_error().sigma)} %"
    )


def test_measured_inputs_keep_their_draws_when_an_error_is_added():
    # the draws are keyed by name: adding an uncertain error leaves every other input's draws
    doc = _doc(buy={"gpu_price_usd": {"dist": "uniform", "low": 6000, "high": 7000}})
    inputs = _resolved(doc).inputs
    exact = ModelInputs(
        **{
            **{f: getattr(inputs, f) for f in inputs.__dataclass_fields__},
            "buy": replace(inputs.buy, throughput_error=Fixed(1.0)),
        }
    )
    a, _ = draw(inputs)
    b, _ = draw(exact)
    assert np.array_equal(a["buy.gpu_price_usd"], b["buy.gpu_price_usd"])


def test_a_plans_estimated_sides_are_correlated_and_named_by_its_value_of_information():
    # own T4 servers (the catalog's T4 fp16 figure is an estimate) and the A10G burst: two
    # estimated sides of one plan; the reserved V100s are the reference itself
    with open("scenarios/examples/plan-lab-rtx4090-growth.yaml", encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    doc["own"] = {**doc["own"], "gpu": "t4"}
    doc["simulation"] = {"samples": 20_000, "seed": 7, "method": "lhs"}
    plan = scenarios.load_mapping(doc)
    dists = plan.inputs.distributions()
    pairs = throughput_error_pairs(dists)
    assert pairs == (("own.throughput_error", "burst.throughput_error", THROUGHPUT_ERROR_RHO),)
    values, _ = draw(plan.inputs)
    rho = stats.spearmanr(values["own.throughput_error"], values["burst.throughput_error"])[0]
    assert rho == pytest.approx(0.5, abs=0.02)  # standard error about 0.0053 (see above)
    d = to_dict(scenarios.evaluate(plan, samples=2000))
    named = [i["input"] for i in d["value_of_information"]["by_input"]]
    assert "own.throughput_error" in named and "burst.throughput_error" in named
